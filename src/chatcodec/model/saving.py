"""``ChatCodec.save_pretrained``: a codec's current state written as a model directory.

What gets written (as transformers 5.24 writes a tokenizer's current configuration):

* the chat templates in the modern format (:func:`chatcodec.model.storage.save_chat_templates`);
* ``tokenizer_config.json``: the configuration the codec was loaded with (or, for a codec that has
  none, such as a bundled profile, the configuration already in the directory), with the codec's
  current special tokens and response template and without ``chat_template``. A special token
  that did not change keeps the form it was stored in (a string or an ``AddedToken`` object);
* a legacy ``special_tokens_map.json`` already in the directory gets the same special tokens,
  since it overrides the config when the config has no ``added_tokens_decoder`` (the reference's
  loading rule);
* ``tokenizer.json`` when the codec has a tokenizer (replacing the directory's), and
  ``generation_config.json`` from the source directory when the target has none.

A response template that uses chatcodec extensions is written as it is, with a ``UserWarning``
naming each extension: transformers refuses or misreads it, so the directory needs chatcodec to
be parsed as intended.

Rules kept: everything is checked before anything is written, so a save that fails (a template
name that would escape its folder, an unreadable configuration file, a symbolic link that leads
out of the target) leaves the target as it was, and does not create it; every file is written the
same way, to a temporary file then renamed over its target (:mod:`chatcodec.model.file_changes`),
so nothing is ever written through a link and nothing outside the target is touched; each path
written is listed once.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatcodec.errors import ModelStorageError
from chatcodec.model.config import (
    GENERATION_CONFIG_FILE,
    SPECIAL_TOKENS_ATTRIBUTES,
    SPECIAL_TOKENS_MAP_FILE,
    TOKENIZER_CONFIG_FILE,
    TokenizerConfig,
    json_file_text,
    read_json_file,
)
from chatcodec.model.tokenizer import TOKENIZER_FILE, Tokenizer

__all__ = ["CodecState", "save_codec"]


@dataclass(frozen=True)
class CodecState:
    """A codec's current state, as ``save_pretrained`` writes it (``ChatCodec`` builds it).

    Attributes:
        chat_template: the template text, ``{name: text}``, or ``None``.
        special_tokens_map: the current named special tokens.
        config: the configuration the codec was loaded with (``files`` says which files it read).
        padding_side, truncation_side: ``"right"`` or ``"left"``.
        response_template: the response template, or ``None``.
        tokenizer: the tokenizer, or ``None``.
        name_or_path: where the codec came from (its ``generation_config.json`` is copied).
        source_directory: the folder its files were read from when that is not ``name_or_path`` (the
            Hub cache snapshot of a Hub model), else ``None``.
    """

    chat_template: str | dict[str, str] | None
    special_tokens_map: Mapping[str, str]
    config: TokenizerConfig
    padding_side: str = "right"
    truncation_side: str = "right"
    response_template: dict[str, Any] | None = None
    tokenizer: Tokenizer | None = None
    name_or_path: str = ""
    source_directory: Path | None = None



def _stored_text(value: Any) -> str | None:
    """The text of a stored special token (a string or an object with ``content``), else ``None``."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _json_object(path: Path) -> dict[str, Any]:
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise ModelStorageError(f"{path}: expected a JSON object", path=str(path))
    return dict(data)


def _with_special_tokens(state: CodecState, data: dict[str, Any], *, remove: bool) -> dict[str, Any]:
    """``data`` with the state's named special tokens; ``remove`` drops the tokens it does not have."""
    for key in SPECIAL_TOKENS_ATTRIBUTES:
        token = state.special_tokens_map.get(key)
        if token is None:
            if remove:
                data.pop(key, None)
        elif _stored_text(data.get(key)) != token:
            data[key] = token
    return data


def _config_to_save(state: CodecState, directory: Path) -> dict[str, Any]:
    """The ``tokenizer_config.json`` to write (see the module docstring)."""
    own = TOKENIZER_CONFIG_FILE in state.config.files
    path = directory / TOKENIZER_CONFIG_FILE
    data = dict(state.config.data) if own else (_json_object(path) if path.is_file() else {})
    data = _with_special_tokens(state, data, remove=own)
    data.pop("chat_template", None)
    for key, side in (("padding_side", state.padding_side), ("truncation_side", state.truncation_side)):
        if key in data or side != "right":  # the default stays implicit, so an unchanged file stays so
            data[key] = side
    if state.response_template is not None:
        data["response_template"] = state.response_template
    else:
        data.pop("response_template", None)
    return data


def _special_tokens_map_to_save(state: CodecState, directory: Path,
                                config: dict[str, Any]) -> dict[str, Any] | None:
    """The legacy ``special_tokens_map.json`` to write, or ``None`` when it is absent or not read."""
    path = directory / SPECIAL_TOKENS_MAP_FILE
    if "added_tokens_decoder" in config or not path.is_file():
        return None
    data = _json_object(path)
    for key in SPECIAL_TOKENS_ATTRIBUTES:
        token = state.special_tokens_map.get(key)
        if key in data and token is None:
            del data[key]
        elif key in data and _stored_text(data[key]) != token:
            data[key] = token
    return data


def _same_file(source: Path, target: Path) -> bool:
    return target.exists() and os.path.samefile(source, target)


def _tokenizer_bytes(state: CodecState, directory: Path) -> bytes | None:
    """The ``tokenizer.json`` to write, or ``None`` (no tokenizer, or the target is its own file)."""
    if state.tokenizer is None:
        return None
    source = state.tokenizer.path
    if source is not None and source.is_file():
        return None if _same_file(source, directory / TOKENIZER_FILE) else source.read_bytes()
    return str(state.tokenizer.backend.to_str(pretty=True)).encode("utf-8")


def _warn_if_chatcodec_only(template: Any, path: Path) -> None:
    """Say so when the response template written needs chatcodec (transformers cannot read it as is)."""
    if not isinstance(template, dict):
        return
    from chatcodec.response_templates.chatcodec_only import chatcodec_only_features

    features = chatcodec_only_features(template)
    if features:
        listed = "; ".join(str(feature) for feature in features)
        warnings.warn(
            f"{path}: the response_template written uses chatcodec extensions, so it needs chatcodec "
            f"(transformers and the engines that follow it cannot read it as chatcodec does): {listed}",
            UserWarning, stacklevel=4)


def save_codec(state: CodecState, directory: Path) -> tuple[str, ...]:
    """Write a codec's state to ``directory``; see :meth:`chatcodec.ChatCodec.save_pretrained`.

    Args:
        state: what to save.
        directory: the target model directory (created when missing).

    Returns:
        The paths written, each once.

    Raises:
        ModelStorageError: a template name would escape its folder, or a configuration file of
            the target cannot be read; nothing is written then.

    Warns:
        UserWarning: the response template written uses chatcodec extensions
            (``x-`` parsers, ``flatten``, ...), which transformers cannot read as chatcodec does.
    """
    from chatcodec.model.file_changes import apply_file_changes
    from chatcodec.model.storage import plan_chat_template_save, remove_empty_template_folder

    changes: list[tuple[str, str | bytes | None]] = []
    if state.chat_template is not None:  # refuses bad names before any write
        changes += [(change.path, change.content) for change in
                    plan_chat_template_save(state.chat_template, directory)
                    if change.path != TOKENIZER_CONFIG_FILE]  # written whole below
    config = _config_to_save(state, directory)
    changes.append((TOKENIZER_CONFIG_FILE, json_file_text(config)))
    legacy = _special_tokens_map_to_save(state, directory, config)
    if legacy is not None:
        changes.append((SPECIAL_TOKENS_MAP_FILE, json_file_text(legacy)))
    tokenizer = _tokenizer_bytes(state, directory)
    if tokenizer is not None:
        changes.append((TOKENIZER_FILE, tokenizer))
    origin = state.source_directory or (Path(state.name_or_path) if state.name_or_path else None)
    source = origin / GENERATION_CONFIG_FILE if origin is not None else None
    if source is not None and source.is_file() and not (directory / GENERATION_CONFIG_FILE).exists():
        changes.append((GENERATION_CONFIG_FILE, source.read_bytes()))
    apply_file_changes(directory, changes)  # every file replaced atomically; links leading out refused
    remove_empty_template_folder(directory)
    _warn_if_chatcodec_only(config.get("response_template"), directory / TOKENIZER_CONFIG_FILE)
    written = [str(directory / path) for path, content in changes if content is not None]
    return tuple(dict.fromkeys(written))
