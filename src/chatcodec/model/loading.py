"""``ChatCodec.from_pretrained``: a model directory, a bundled profile or a Hub model.

What lives here: deciding between a directory, a profile name and a Hub id, reading a directory
(chat templates through :mod:`chatcodec.model.storage`, configuration through
:mod:`chatcodec.model.config`, ``tokenizer.json`` through :mod:`chatcodec.model.tokenizer`), and
attaching a detected profile's response template. A Hub model is a directory too: the snapshot
:mod:`chatcodec.model.hub` fetches into the Hub cache. Saving is :mod:`chatcodec.model.saving`'s.

Rules kept: the stored response template is validated at load time (its errors name the file);
a response template that did not come from the directory says where it came from
(``codec.response_template_source``: a bundled profile, or ``"derived"`` from the chat template when
no profile matches, :mod:`chatcodec.model.derived`); a directory shadows a profile name, and both
shadow a Hub id (``org/name`` is looked up on the Hub only when no such directory exists).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatcodec.errors import ResponseTemplateError
from chatcodec.model.config import (
    TOKENIZER_CONFIG_FILE,
    TokenizerConfig,
    is_directory,
    read_tokenizer_config,
    shown_name,
)
from chatcodec.model.tokenizer import Tokenizer, load_tokenizer, tokenizer_unavailable

if TYPE_CHECKING:
    from chatcodec.model.derived import Derivation

__all__ = ["LoadedModel", "find_response_template", "load_model"]


@dataclass(frozen=True)
class LoadedModel:
    """What ``from_pretrained`` read: the values a ``ChatCodec`` is built from.

    Attributes:
        chat_template: the template text, ``{name: text}``, or ``None``.
        special_tokens: the named special tokens.
        tokenizer: the tokenizer, or ``None``.
        tokenizer_missing: why there is no tokenizer (the message raised when ids are asked for), or
            ``None`` when there is one.
        config: the configuration files (an empty one for a profile).
        name_or_path: the directory, or the profile name as given.
        response_template: the response template, or ``None``.
        response_template_source: ``"tokenizer_config.json"``, ``"profile:<name>"``, ``"derived"`` or
            ``None``.
        profile: the bundled profile loaded or detected, or ``None``.
        template_variables: variables every render gets (a profile's ``template_kwargs``).
        hub_snapshot: for a Hub model, the Hub cache folder it was read from (``name_or_path`` is
            then the Hub id).
        response_template_capabilities: the labels of a derived response template (or of one that
            was derived and not attached), else ``None``.
        derivation_failure: why a derived response template was not attached, else ``None``.
    """

    chat_template: str | dict[str, str] | None
    special_tokens: dict[str, str]
    name_or_path: str
    tokenizer: Tokenizer | None = None
    tokenizer_missing: str | None = None
    config: TokenizerConfig = field(default_factory=TokenizerConfig)
    response_template: dict[str, Any] | None = None
    response_template_source: str | None = None
    profile: str | None = None
    template_variables: dict[str, Any] = field(default_factory=dict)
    hub_snapshot: Path | None = None
    response_template_capabilities: dict[str, dict[str, Any]] | None = None
    derivation_failure: str | None = None


def _validated(template: dict[str, Any], where: str) -> dict[str, Any]:
    """Load the template once so a broken one fails now, naming the file it came from."""
    from chatcodec.response_templates.template import load_response_template

    try:
        load_response_template(template)
    except ResponseTemplateError as error:
        raise ResponseTemplateError(f"{where}: response_template: {error}", field=error.field,
                                    key=error.key, path=error.path) from None
    except RecursionError:  # a regex of hundreds of nested groups: the regex module's parser recurses
        raise ResponseTemplateError(f"{where}: response_template: nested too deeply to load (past Python's "
                                    "recursion limit; a regex of hundreds of nested groups?)") from None
    return template


def _default_template(templates: str | dict[str, str] | None) -> str | None:
    if isinstance(templates, dict):
        return templates.get("default") or next(iter(templates.values()), None)
    return templates


def _detected_profile(templates: str | dict[str, str] | None) -> str | None:
    from chatcodec import profiles

    template = _default_template(templates)
    return profiles.detect(template) if template else None


def _chat_templates(path: Path) -> str | dict[str, str] | None:
    """The directory's chat templates, or ``None`` when it has none (a base model)."""
    from chatcodec.errors import ChatTemplateNotFoundError
    from chatcodec.model.storage import load_chat_templates

    try:
        return load_chat_templates(path)
    except ChatTemplateNotFoundError:
        return None


def _response_template_of(path: Path, config: TokenizerConfig, templates: str | dict[str, str] | None
                          ) -> tuple[dict[str, Any] | None, str | None, Derivation | None]:
    if config.response_template is not None:
        stored = _validated(config.response_template, str(path / TOKENIZER_CONFIG_FILE))
        return stored, TOKENIZER_CONFIG_FILE, None
    name = _detected_profile(templates)
    if name is None:
        if not templates:
            return None, None, None
        from chatcodec.model.derived import DERIVED_SOURCE, derive_for_model

        derivation = derive_for_model(templates, config.special_tokens, str(path))
        return derivation.template, DERIVED_SOURCE if derivation.template is not None else None, derivation
    import logging  # here: importing logging costs every cold start

    from chatcodec import profiles

    logging.getLogger("chatcodec").info(
        "%s has no response_template; using the bundled profile %r, detected from its chat template",
        path, name)
    return profiles.load(name).response_template, f"profile:{name}", None


def find_response_template(directory: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, str | None]:
    """The response template ``from_pretrained`` gives a model directory, without loading its tokenizer.

    ``tokenizer_config.json``'s ``response_template`` (validated), else the one of the bundled
    profile detected from the directory's chat template (what ``chatcodec parse DIR`` uses too),
    else one derived from its chat template (:mod:`chatcodec.model.derived`) when its content
    round trip verifies.

    Args:
        directory: the model directory.

    Returns:
        ``(template, source)``: ``source`` is ``"tokenizer_config.json"``, ``"profile:<name>"`` or
        ``"derived"``; ``(None, None)`` when there is none.

    Raises:
        ModelStorageError: a configuration or template file is malformed.
        ResponseTemplateError: the stored response template is invalid (the message names the file).
    """
    path = Path(directory)
    template, source, _ = _response_template_of(path, read_tokenizer_config(path), _chat_templates(path))
    return template, source


def _load_directory(path: Path, tokenizer_wanted: bool | None = None) -> LoadedModel:
    config = read_tokenizer_config(path)
    templates = _chat_templates(path)
    tokenizer: Tokenizer | None = None
    missing: str | None = str(tokenizer_unavailable(
        "from_pretrained(..., load_tokenizer=False) did not load one",
        "Load the model with load_tokenizer=True"))
    if tokenizer_wanted is not False:
        tokenizer, missing = load_tokenizer(path, lazy=True)  # read on first use
    template, source, derivation = _response_template_of(path, config, templates)
    detected = source is not None and source.startswith("profile:")
    profile = source.removeprefix("profile:") if source is not None and detected else None
    return LoadedModel(
        chat_template=templates, special_tokens=dict(config.special_tokens), name_or_path=str(path),
        tokenizer=tokenizer, tokenizer_missing=missing, config=config,
        response_template=template, response_template_source=source if template is not None else None,
        profile=profile,
        response_template_capabilities=derivation.capabilities or None if derivation is not None else None,
        derivation_failure=derivation.reason or None if derivation is not None else None)


def _load_profile(name: str) -> LoadedModel:
    from chatcodec import profiles

    profile = profiles.load(name)
    return LoadedModel(
        chat_template=profile.chat_template, special_tokens=dict(profile.special_tokens or {}),
        name_or_path=name,
        tokenizer_missing=str(tokenizer_unavailable(
            f"the bundled profile {profile.name!r} has no tokenizer",
            "Load a model directory that has a tokenizer.json")),
        response_template=profile.response_template, response_template_source=f"profile:{profile.name}",
        profile=profile.name, template_variables=dict(profile.template_kwargs or {}))


def load_model(path_or_profile: str | os.PathLike[str], *, revision: str | None = None,
               token: str | bool | None = None, cache_dir: str | os.PathLike[str] | None = None,
               local_files_only: bool = False, load_tokenizer: bool | None = None) -> LoadedModel:
    """Read a model directory, else a bundled profile, else a Hugging Face Hub model.

    Only a directory shadows a profile name: a plain file called ``mistral`` in the current
    directory does not stop ``from_pretrained("mistral")`` from loading the profile. A name written
    ``org/name`` that is neither is fetched from the Hub (:func:`chatcodec.model.hub.download_model`).

    Args:
        path_or_profile: a model directory, a bundled profile's name or alias, or a Hub id.
        revision, token, cache_dir, local_files_only: for a Hub id (see
            :meth:`chatcodec.ChatCodec.from_pretrained`); a directory or a profile ignores them.
        load_tokenizer: read ``tokenizer.json`` (``None``: when the ``tokenizers`` package is
            installed, so a Hub model fetches it only when it can be used).

    Returns:
        What was read; ``ChatCodec.from_pretrained`` builds the codec from it.

    Raises:
        ModelStorageError, ResponseTemplateError, UnknownProfileError, HubError: see
            :meth:`chatcodec.ChatCodec.from_pretrained`.
    """
    from chatcodec.errors import ModelStorageError, UnknownProfileError

    name = os.fspath(path_or_profile)
    if not name.strip():
        raise UnknownProfileError(
            "from_pretrained: empty name; pass a model directory (use '.' for the current one) or the name "
            "of a bundled profile (`chatcodec profiles` lists them)", name=name, available=[])
    path = Path(name)
    if is_directory(path):
        return _load_directory(path, load_tokenizer)
    try:
        return _load_profile(name)
    except UnknownProfileError as error:
        from chatcodec.model.hub import looks_like_hub_id

        if looks_like_hub_id(name) and not path.exists():
            return _load_hub(name, revision=revision, token=token, cache_dir=cache_dir,
                             local_files_only=local_files_only, load_tokenizer=load_tokenizer)
        if path.exists():
            raise ModelStorageError(f"{path}: not a directory; from_pretrained takes a model directory "
                                    "or the name of a bundled profile", path=str(path)) from None
        from chatcodec.model.config import broken_link

        broken = broken_link(path)
        if broken is not None:  # was: "neither a model directory nor a bundled profile"
            raise ModelStorageError(f"{path}: {broken}", path=str(path)) from None
        raise UnknownProfileError(_not_found(name, error.available), name=error.name,
                                  available=error.available) from None


def _load_hub(repo_id: str, *, revision: str | None, token: str | bool | None,
              cache_dir: str | os.PathLike[str] | None, local_files_only: bool,
              load_tokenizer: bool | None) -> LoadedModel:
    """A Hub model: its snapshot in the Hub cache, read as a directory; ``name_or_path`` is the id."""
    from dataclasses import replace

    from chatcodec.model.hub import download_model

    wanted = tokenizers_installed() if load_tokenizer is None else load_tokenizer
    snapshot = download_model(repo_id, revision=revision, token=token, cache_dir=cache_dir,
                              local_files_only=local_files_only, tokenizer=wanted)
    return replace(_load_directory(snapshot, wanted), name_or_path=repo_id, hub_snapshot=snapshot)


def tokenizers_installed() -> bool:
    """Whether the ``tokenizers`` package can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("tokenizers") is not None


def _not_found(name: str, available: list[str]) -> str:
    """The message for a name that is neither a directory nor a profile, with a close profile name
    (for a Hub id such as ``Qwen/Qwen3-0.6B``, close to its last part)."""
    import difflib

    message = (f"from_pretrained: {shown_name(name, quoted=True)} is neither a model directory nor a "
               "bundled profile, nor a Hub model id ('org/name'; `chatcodec profiles` lists the bundled "
               "profiles)")
    stem = name.strip().replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    close = difflib.get_close_matches(stem.lower().replace("-", "_"), available, n=1)
    return f"{message}. Did you mean {close[0]!r}?" if close else message
