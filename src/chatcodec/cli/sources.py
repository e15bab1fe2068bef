"""Where a command's template comes from: what a TEMPLATE / MODEL argument names (a model
directory, a bundled profile, a Hugging Face Hub model id, a file), and how a file holds its
templates (a chat template, a response template, or a JSON configuration with ``chat_template`` /
``response_template`` keys). A Hub id is read as the directory of its snapshot in the Hub cache
(:func:`model_path`, the one resolver every command calls).

Reading the bytes (size limits, UTF-8, JSON positions) is :mod:`chatcodec.cli.io`'s job.
"""

from __future__ import annotations

import json
import os

from chatcodec.cli.io import read_json, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from chatcodec.profiles import Profile

__all__ = [
    "CHAT_TEMPLATE_GIVEN",
    "NOT_A_TEMPLATE_FILE",
    "RESPONSE_TEMPLATE_KEYS",
    "TOKENIZER_CONFIG_WITHOUT_TEMPLATE",
    "ChatTemplateSource",
    "TemplateFile",
    "bundled_response_template",
    "end_of_sequence_text",
    "local_path",
    "looks_like_chat_template",
    "model_path",
    "no_response_template",
    "not_found",
    "read_chat_template_source",
    "read_response_template",
    "read_template_json",
    "resolve_source",
    "template_json_text",
]


# --- what a TEMPLATE / MODEL argument names ------------------------------------------------------

def resolve_source(source: str) -> str:
    """How a command resolves its template or model argument, as ``ChatCodec.from_pretrained`` does.

    A directory first, else the name (or alias) of a bundled profile, else a Hub model id
    (``org/name`` when no such file exists), else a file: a plain file named like a profile does not
    hide it (``./qwen3`` reaches the file).

    Args:
        source: the argument.

    Returns:
        ``"stdin"`` (``"-"``), ``"directory"``, ``"profile"``, ``"hub"`` or ``"file"`` (which may
        not exist).
    """
    if source == "-":
        return "stdin"
    path = local_path(source)
    if os.path.isdir(path):
        return "directory"
    if _could_name_a_profile(source):
        from chatcodec import profiles

        if profiles.resolve(source) is not None:
            return "profile"
    if os.path.exists(path):
        return "file"
    from chatcodec.model.hub import looks_like_hub_id  # only here: the module imports hashlib, tempfile

    return "hub" if looks_like_hub_id(source) else "file"


def local_path(source: str) -> str:
    """``source`` as ``str(pathlib.Path(source))`` names it, without importing :mod:`pathlib` (with
    ``urllib.parse`` and ``ipaddress``, its import costs every ``chatcodec parse`` a third of a bare
    interpreter's start): ``""`` is ``.``, and empty and ``.`` parts are dropped (``dir/`` is
    ``dir``, ``./a//b`` is ``a/b``), so the file tests and the messages see what they saw with a
    ``Path``.

    Args:
        source: a command's TEMPLATE / MODEL argument.

    Returns:
        The path, normalized as ``Path`` normalizes it (``..`` parts are kept, as ``Path`` keeps them).
    """
    if os.altsep:
        source = source.replace(os.altsep, os.sep)
    root = os.sep if source.startswith(os.sep) else ""
    if source.startswith(os.sep * 2) and not source.startswith(os.sep * 3):
        root = os.sep * 2  # POSIX leaves the meaning of exactly two leading slashes open: Path keeps them
    parts = [part for part in source.split(os.sep) if part not in ("", ".")]
    return (root + os.sep.join(parts)) or "."


def _could_name_a_profile(source: str) -> bool:
    """Whether ``source`` could be a bundled profile's name or alias: not a path with a folder in it
    (``examples/qwen3/response_template.json``), as no name or alias holds a separator. Such a path
    leaves the profiles package (its dataclasses, its marker patterns) unimported: ``chatcodec parse
    FILE OUTPUT`` starts faster."""
    return not any(sep in source for sep in ("/", os.sep, os.altsep or "/"))


def model_path(source: str, *, tokenizer: bool = False) -> str:
    """A command's MODEL argument as a local name: a Hub id becomes the folder of its snapshot in the
    Hub cache (the files chatcodec reads are fetched first when the Hub may be reached; with
    ``HF_HUB_OFFLINE=1`` the cache alone is read); anything else is returned unchanged.

    Args:
        source: the argument (resolved as :func:`resolve_source` says).
        tokenizer: fetch ``tokenizer.json`` too (for commands that need token ids).

    Returns:
        ``source``, or the snapshot folder of a Hub id.

    Raises:
        HubError: a Hub id without ``chatcodec[hub]``, unknown on the Hub, or not cached offline.
    """
    if resolve_source(source) != "hub":
        return source
    from chatcodec.model.hub import download_model

    return str(download_model(source, tokenizer=tokenizer))


# --- chat-template inputs (chatcodec render / lint) ---------------------------------------------

class ChatTemplateSource:
    """Where ``chatcodec render`` gets its template: a model directory or a template file.

    Attributes:
        templates: the template text, or ``{name: template}`` for a directory with named templates.
        special_tokens: ``{"bos_token": ..., ...}`` from the directory's configuration files
            (:func:`chatcodec.model.config.read_tokenizer_config`, as ``ChatCodec`` reads them).
        origin: the path, for messages.
        response_template: the ``response_template`` key of a ``tokenizer_config.json``-style file
            (not yet validated), or ``None``; a directory's is read by ``ChatCodec``.
    """

    __slots__ = ("origin", "response_template", "special_tokens", "templates")

    def __init__(self, templates: str | dict[str, str], special_tokens: dict[str, str], origin: str,
                 response_template: Any = None) -> None:
        self.templates = templates
        self.special_tokens = special_tokens
        self.origin = origin
        self.response_template = response_template


def read_chat_template_source(source: str) -> ChatTemplateSource:
    """Read a chat template from a model directory (any storage format), a Hub model id, a bundled
    profile, or a template file, resolved as :func:`resolve_source` says (``chatcodec render qwen3 ...``). A
    ``.json`` file is a ``tokenizer_config.json`` or legacy ``chat_template.json``
    (:func:`read_template_json`).

    Args:
        source: a model directory, a template file, ``"-"`` for stdin, or a profile name.

    Returns:
        The template(s) with the special tokens to render them with.

    Raises:
        OSError, ValueError: the file cannot be read, the profile bundles no chat template, or a
            ``.json`` file holds none;
            ``ChatTemplateNotFoundError`` / ``ModelStorageError`` for a directory without a usable template.
    """
    from pathlib import Path  # render's path: parse never reads a chat template

    path = Path(model_path(source)) if source != "-" else Path(source)
    if source != "-" and path.is_dir():
        from chatcodec.model.config import read_tokenizer_config
        from chatcodec.model.storage import load_chat_templates

        special_tokens = read_tokenizer_config(path).special_tokens
        return ChatTemplateSource(load_chat_templates(path), special_tokens, source)
    profile = _bundled_profile(source) if source != "-" else None
    if profile is not None:
        if profile.chat_template is None:
            raise ValueError(f"{source}: profile {profile.name!r} bundles no chat template "
                             f"({profile.license}); pass a model directory or a template file")
        tokens = dict(profile.special_tokens)
        return ChatTemplateSource(profile.chat_template, tokens, f"profile {profile.name}")
    if source != "-" and source.endswith(".json"):
        return _json_chat_template_source(read_template_json(source), source)
    if source != "-" and not path.exists():
        raise OSError(not_found(source, "a chat template file, a model directory"))
    text = read_text(source, limit="MAX_CHAT_TEMPLATE_BYTES")
    held = template_json_text(text, source) if source != "-" else None
    if held is not None:  # a configuration file without the .json extension
        return _json_chat_template_source(held, source)
    return ChatTemplateSource(text, {}, source)


def _json_chat_template_source(held: TemplateFile, source: str) -> ChatTemplateSource:
    """The chat template(s) and special tokens of a ``tokenizer_config.json`` / ``chat_template.json``."""
    if not held.chat_templates:
        if held.kind == "response":
            raise ValueError(f"{source}: this is a response template (chatcodec parse reads it), not a chat "
                             "template")
        raise ValueError(f"{source}: this JSON file holds no chat template (no 'chat_template' key); pass "
                         "a chat template file (.jinja), a chat_template.json or tokenizer_config.json that "
                         "has one, or a model directory")
    templates = held.chat_templates
    return ChatTemplateSource(templates["default"] if list(templates) == ["default"] else templates,
                              held.special_tokens, source, held.response_template)


#: The top-level keys of a response template (a JSON object with one of them is one).
RESPONSE_TEMPLATE_KEYS = frozenset({"fields", "start_anchor", "start_anchor_pattern"})


class TemplateFile:
    """The templates of a ``.json`` file, read as the model loader reads a model directory's files.

    Attributes:
        kind: ``"response"`` (the file is a response template), ``"holder"`` (it has a
            ``chat_template`` or ``response_template`` key) or ``"other"`` (neither: another JSON file).
        chat_templates: ``{name: template}`` from a ``chat_template`` key (``{}`` when there is none).
        special_tokens: the named special tokens of a ``tokenizer_config.json``.
        response_template: the file itself when it is a response template, else its
            ``response_template`` key, or ``None``.
    """

    __slots__ = ("chat_templates", "kind", "response_template", "special_tokens")

    def __init__(self, kind: str, chat_templates: dict[str, str], special_tokens: dict[str, str],
                 response_template: Any) -> None:
        self.kind = kind
        self.chat_templates = chat_templates
        self.special_tokens = special_tokens
        self.response_template = response_template


def read_template_json(source: str) -> TemplateFile:
    """Read a ``.json`` file given where a template is expected: a ``tokenizer_config.json`` or a
    legacy ``chat_template.json`` (its ``chat_template`` string or named list, its special tokens,
    its ``response_template``), or a response template.

    Args:
        source: the path.

    Returns:
        What the file holds.

    Raises:
        OSError, ValueError: the file cannot be read or is not a JSON object.
        ModelStorageError: a ``chat_template`` or special-token value has the wrong shape.
    """
    data = read_json(source, "JSON object")
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object (a response template, a tokenizer_config.json or "
                         f"a chat_template.json), got {type(data).__name__}")
    return _template_file(data, source)


def template_json_text(text: str, source: str) -> TemplateFile | None:
    """What a template file's text holds when it is a JSON configuration whatever the file's name: a
    JSON object with a ``chat_template`` or ``response_template`` key (and not a response template).

    Args:
        text: the file's text.
        source: the path, for messages.

    Returns:
        The file read as :func:`read_template_json` reads a ``.json`` file, or ``None`` when the text
        is not such an object (it is then a template).

    Raises:
        ModelStorageError: a ``chat_template`` or special-token value has the wrong shape.
    """
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON (a chat template), or nested past the recursion limit
        return None
    if not isinstance(data, dict) or RESPONSE_TEMPLATE_KEYS & data.keys():
        return None
    held = _template_file(data, source)
    return held if held.kind == "holder" else None


def _template_file(data: dict[str, Any], source: str) -> TemplateFile:
    """What the JSON object ``data`` (read from ``source``) holds."""
    from chatcodec.model.config import config_special_tokens
    from chatcodec.model.storage import chat_templates_from_config

    if RESPONSE_TEMPLATE_KEYS & data.keys():
        return TemplateFile("response", {}, {}, data)
    if "chat_template" not in data and "response_template" not in data:
        return TemplateFile("other", {}, {}, None)
    return TemplateFile("holder", chat_templates_from_config(data, source),
                        config_special_tokens(data, source), data.get("response_template"))


#: Why a ``.json`` file that is neither kind cannot be linted (after ``PATH: ``).
NOT_A_TEMPLATE_FILE = ("this JSON file is neither a response template (no 'fields', 'start_anchor' or "
                       "'start_anchor_pattern') nor a file holding templates (no 'chat_template' or "
                       "'response_template' key)")


#: Why a chat template cannot be used where a response template is expected (after ``PATH: ``).
CHAT_TEMPLATE_GIVEN = (
    "this is a chat template (Jinja: it has {% ... %} or {{ ... }}), not a response template. A response "
    "template is JSON that says how to read the model's output (`chatcodec profiles NAME "
    "--response-template` prints one); pass it, or the model directory or bundled profile name, which "
    "bring their own")


def looks_like_chat_template(text: str) -> bool:
    """Whether ``text`` (which is not JSON) reads as a Jinja chat template."""
    return "{%" in text or "{{" in text


def not_found(source: str, expected: str) -> str:
    """The message for a TEMPLATE / MODEL argument that names nothing: what was expected, and the
    bundled profile whose name is close (a typo such as ``qwen33``)."""
    from pathlib import Path

    from chatcodec import profiles
    from chatcodec.model.config import broken_link

    broken = broken_link(Path(source))
    if broken is not None:  # a link to nothing, or in a loop: "no such file" would send the user looking
        return f"{source}: {broken}"
    message = (f"{source}: no such file or directory, nor a bundled profile (expected {expected} or a "
               "profile name")
    close = profiles.close_name(source)
    return f"{message}). Did you mean {close!r}?" if close else f"{message}; `chatcodec profiles` lists them)"


def _bundled_profile(name: str) -> Profile | None:
    """The bundled profile called ``name`` (or an alias), or ``None``."""
    if not _could_name_a_profile(name):
        return None
    from chatcodec import profiles

    folder = profiles.resolve(name)
    return None if folder is None else profiles.load(folder)


#: Why a ``tokenizer_config.json`` without a response template cannot be parsed with (after ``PATH: ``).
TOKENIZER_CONFIG_WITHOUT_TEMPLATE = (
    "a tokenizer configuration without a 'response_template' key; pass its model directory (a bundled "
    "profile may match its chat template) or a bundled profile name (chatcodec profiles lists them)")

#: Keys that mark a JSON file as a tokenizer configuration rather than a response template.
_TOKENIZER_CONFIG_KEYS = frozenset({"chat_template", "tokenizer_class", "added_tokens_decoder", "bos_token",
                                    "eos_token", "model_max_length"})


def end_of_sequence_text(source: str) -> str | None:
    """The ``eos_token`` of a JSON file that holds a response template beside it (a
    ``tokenizer_config.json``, or what ``chatcodec profiles NAME --response-template`` prints), or
    ``None`` (any other file, or no such key).

    Raises:
        ModelStorageError: the token has the wrong shape.
    """
    try:
        data = read_json(source, "response template")
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or "response_template" not in data or "fields" in data:
        return None
    from chatcodec.model.config import config_special_tokens

    return config_special_tokens(data, source).get("eos_token")


def read_response_template(source: str) -> dict[str, Any]:
    """Find the response template that ``source`` names (resolved as :func:`resolve_source` says).

    Args:
        source: a JSON file holding a response template (or a whole ``tokenizer_config.json`` with a
            ``response_template`` key), a model directory or Hub id (its stored response template,
            or the bundled profile detected from its chat template, as
            ``ChatCodec.from_pretrained``), or the name of a bundled profile (see
            :func:`bundled_response_template`).

    Returns:
        The template as a JSON object (not yet validated: ``load_response_template`` does that).

    Raises:
        OSError: nothing by that name exists.
        ValueError: the file is not JSON, is a tokenizer configuration without a response
            template, or the model directory has no response template.
        ModelStorageError: the model directory's configuration files are malformed.
    """
    path = local_path(model_path(source))
    if os.path.isdir(path):
        return _directory_response_template(path)
    bundled = bundled_response_template(source)
    if bundled is not None:
        return bundled
    if os.path.exists(path):  # a regular file, or a device / pipe (read up to MAX_INPUT_BYTES)
        try:
            data = read_json(source, "response template")
        except ValueError as error:
            if looks_like_chat_template(read_text(source)):
                raise ValueError(f"{source}: {CHAT_TEMPLATE_GIVEN}") from None
            raise error from None
        if isinstance(data, dict) and "response_template" in data and "fields" not in data:
            data = data["response_template"]  # a tokenizer_config.json
        elif isinstance(data, dict) and "fields" not in data and not _TOKENIZER_CONFIG_KEYS.isdisjoint(data):
            raise ValueError(f"{source}: {TOKENIZER_CONFIG_WITHOUT_TEMPLATE}")
        return _expect_object(data, source)
    raise OSError(not_found(source, "a response template JSON file, a model directory"))


def _directory_response_template(directory: str) -> dict[str, Any]:
    """The response template ``ChatCodec.from_pretrained(directory)`` would use (the stored one, or
    the bundled profile detected from the chat template)."""
    from chatcodec.model.loading import find_response_template

    template, _ = find_response_template(directory)
    if template is None:
        raise ValueError(no_response_template(directory))
    return template


def no_response_template(directory: str) -> str:
    """The message for a model directory that has no response template."""
    return (f"{directory}: no response template (no 'response_template' key in tokenizer_config.json, and "
            "no bundled profile matches its chat template). Add one, or pass a response template JSON file "
            "or a bundled profile name instead")


def bundled_response_template(name: str) -> dict[str, Any] | None:
    """The response template of the bundled profile called ``name`` (or an alias), or ``None``.

    The one place where command-line response-template lookup reaches the bundled profiles.

    Args:
        name: a profile name or alias.

    Returns:
        A fresh copy of the profile's response template, or ``None`` when no profile has the name.
    """
    profile = _bundled_profile(name)
    return None if profile is None else profile.response_template


def _expect_object(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a response template must be a JSON object, got {type(data).__name__}")
    return data
