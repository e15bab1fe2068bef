"""Command-line input: files or stdin, JSON with errors that name the file and position, and the
places a response template can come from (a JSON file, a model directory, a bundled profile)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatcodec.profiles import Profile

__all__ = [
    "MAX_CHAT_TEMPLATE_BYTES",
    "MAX_INPUT_BYTES",
    "MAX_OUTPUT_BYTES",
    "ChatTemplateSource",
    "Conversation",
    "TemplateFile",
    "bundled_response_template",
    "parse_variable",
    "read_chat_template_source",
    "read_conversation",
    "read_json",
    "read_response_template",
    "read_template_json",
    "read_text",
    "read_tools",
    "resolve_source",
    "template_json_text",
]


#: Largest chat template file ``chatcodec render`` reads, in bytes (real templates are a few
#: dozen kilobytes; the cap keeps ``render /dev/zero`` from reading forever).
MAX_CHAT_TEMPLATE_BYTES = 4 * 1024 * 1024

#: Largest model output ``chatcodec parse`` reads (a file, stdin, or a live stream), in bytes.
MAX_OUTPUT_BYTES = 256 * 1024 * 1024

#: Largest conversation, tools, documents, prompt (``--prefix``) or response template file, in bytes.
MAX_INPUT_BYTES = 64 * 1024 * 1024

#: What each limit is for, in its error message ("more than ... holds").
_LIMITS = {
    "MAX_CHAT_TEMPLATE_BYTES": "a chat template",
    "MAX_OUTPUT_BYTES": "a model output",
    "MAX_INPUT_BYTES": "a conversation, tools, documents or prompt file",
}


def read_text(source: str, *, limit: str = "MAX_INPUT_BYTES", replace: bool = False) -> str:
    """Read a UTF-8 text file, or standard input when ``source`` is ``"-"``, up to a size limit.

    At most one byte more than the limit is read, so a device or an endless pipe is bounded.

    Args:
        source: a path or ``"-"``.
        limit: the name of the constant of this module that caps the size (``"MAX_OUTPUT_BYTES"``,
            ``"MAX_INPUT_BYTES"`` or ``"MAX_CHAT_TEMPLATE_BYTES"``); the message names it.
        replace: bytes that are not UTF-8 become U+FFFD, with a ``UserWarning`` naming the first
            (``chatcodec parse --errors keep``: model output never fails as a whole) instead of
            an error.

    Returns:
        The text, exactly (no newline translation).

    Raises:
        OSError: the file cannot be read (the message names it).
        ValueError: the bytes are not UTF-8 (the message names the file and byte offset; not with
            ``replace``), or there are more than ``limit``.
    """
    name = "<stdin>" if source == "-" else source
    size = int(globals()[limit])
    try:
        if source == "-":
            data = sys.stdin.buffer.read(size + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(size + 1)
    except OSError as error:
        raise OSError(f"{source}: cannot read: {error.strerror or error}") from None
    if len(data) > size:
        raise too_large(name, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        problem = not_utf8(name, error.start, error.reason)
        if not replace:
            raise ValueError(problem) from None
        warn_replaced(problem)
        return data.decode("utf-8", errors="replace")


def not_utf8(name: str, offset: int, reason: str) -> str:
    """The message for bytes that are not UTF-8 at ``offset`` of the input ``name``."""
    return f"{name}: not UTF-8 text (byte {offset}: {reason})"


def warn_replaced(problem: str) -> None:
    """Warn that bytes that are not UTF-8 were replaced (``--errors keep``)."""
    import warnings

    warnings.warn(f"{problem}; every invalid byte sequence is read as U+FFFD (--errors keep)",
                  UserWarning, stacklevel=2)


def too_large(name: str, limit: str) -> ValueError:
    """The error for an input larger than the constant called ``limit``.

    Args:
        name: the file (``"<stdin>"`` for standard input).
        limit: the constant's name, such as ``"MAX_OUTPUT_BYTES"``.

    Returns:
        ``ValueError("NAME: larger than N bytes, more than ... holds (chatcodec.cli.io.LIMIT)")``.
    """
    size = int(globals()[limit])
    return ValueError(f"{name}: larger than {size:,} bytes, more than {_LIMITS[limit]} holds "
                      f"(chatcodec.cli.io.{limit})")


def read_json(source: str, what: str = "JSON") -> Any:
    """Read and parse a JSON file (or stdin with ``"-"``).

    Args:
        source: a path or ``"-"``.
        what: what the file should hold, for messages (``"conversation"``, ``"tools"``, ...).

    Returns:
        The parsed value.

    Raises:
        OSError: the file cannot be read.
        ValueError: the file is empty, not valid JSON (the message names the file, line and column)
            or nested too deeply. A leading byte-order mark is skipped.
    """
    text = read_text(source).removeprefix("\ufeff")
    if not text.strip():
        where = "stdin is empty" if source == "-" else f"{source}: the file is empty"
        raise ValueError(f"{where}; expected a {what} (JSON)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{source}: invalid {what} (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
    except RecursionError:
        raise ValueError(f"{source}: invalid {what}: nested too deeply") from None


def read_tools(source: str | None) -> list[Any] | None:
    """Read a tools file: a JSON list of tool schemas, or an object with a ``tools`` list.

    Args:
        source: a path, ``"-"`` for stdin, or ``None`` (no tools).

    Returns:
        The tool schemas, or ``None`` when ``source`` is ``None``.

    Raises:
        ValueError: the file is not JSON, or holds no list of tool schemas (objects with ``type``,
            ``function`` or ``name``); the message names the file.
    """
    if source is None:
        return None
    tools = read_json(source, "tools")
    if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]
    if not isinstance(tools, list):
        raise ValueError(f"{source}: tools must be a JSON list of tool schemas, got {type(tools).__name__}")
    for index, tool in enumerate(tools):
        if not (isinstance(tool, dict) and tool.keys() & {"type", "function", "name"}):
            looks_like_a_message = isinstance(tool, dict) and "role" in tool
            hint = "; it has 'role': is this a conversation file?" if looks_like_a_message else ""
            raise ValueError(f"{source}: tools[{index}] is not a tool schema (an object with 'type', "
                             f"'function' or 'name'){hint}")
    return tools


# --- what a TEMPLATE / MODEL argument names ------------------------------------------------------

def resolve_source(source: str) -> str:
    """How a command resolves its template or model argument, as ``ChatCodec.from_pretrained`` does.

    A directory first, else the name (or alias) of a bundled profile, else a file: a plain file
    named like a profile does not hide it (``./qwen3`` reaches the file).

    Args:
        source: the argument.

    Returns:
        ``"stdin"`` (``"-"``), ``"directory"``, ``"profile"`` or ``"file"`` (which may not exist).
    """
    if source == "-":
        return "stdin"
    if Path(source).is_dir():
        return "directory"
    return "profile" if _bundled_profile(source) is not None else "file"


# --- chat-template inputs (chatcodec render / lint) ---------------------------------------------

@dataclass(frozen=True)
class ChatTemplateSource:
    """Where ``chatcodec render`` gets its template: a model directory or a template file.

    Attributes:
        templates: the template text, or ``{name: template}`` for a directory with named templates.
        special_tokens: ``{"bos_token": ..., ...}`` from the directory's configuration files
            (:func:`chatcodec.model.config.read_tokenizer_config`, as ``ChatCodec`` reads them).
        origin: the path, for messages.
    """

    templates: str | dict[str, str]
    special_tokens: dict[str, str]
    origin: str


def read_chat_template_source(source: str) -> ChatTemplateSource:
    """Read a chat template from a model directory (any storage format), a bundled profile, or a
    template file, resolved as :func:`resolve_source` says (``chatcodec render qwen3 ...``). A
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
    path = Path(source)
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
                              held.special_tokens, source)


#: The top-level keys of a response template (a JSON object with one of them is one).
RESPONSE_TEMPLATE_KEYS = frozenset({"fields", "start_anchor", "start_anchor_pattern"})


@dataclass(frozen=True)
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

    kind: str
    chat_templates: dict[str, str]
    special_tokens: dict[str, str]
    response_template: Any


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
    except ValueError:
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


def _bundled_profile(name: str) -> Profile | None:
    """The bundled profile called ``name`` (or an alias), or ``None``."""
    from chatcodec import profiles
    from chatcodec.errors import UnknownProfileError

    try:
        return profiles.load(name)
    except UnknownProfileError:
        return None


@dataclass(frozen=True)
class Conversation:
    """A conversation file: the messages, and the tools and documents it may carry."""

    messages: list[Any]
    tools: list[Any] | None = None
    documents: list[Any] | None = None


def read_conversation(source: str) -> Conversation:
    """Read a conversation file: a list of messages, or ``{"messages", "tools"?, "documents"?}``.

    Args:
        source: a path or ``"-"``.

    Returns:
        The conversation, with its tools and documents when the file has them.

    Raises:
        ValueError: the file is not JSON, or not one of the two shapes (the message names the file).
    """
    data = read_json(source, "conversation")
    if isinstance(data, list):
        return Conversation(data)
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        unknown = sorted(set(data) - {"messages", "tools", "documents"})
        if unknown:
            raise ValueError(
                f"{source}: unknown keys {unknown} in the conversation; expected messages, tools, documents"
            )
        return Conversation(data["messages"], data.get("tools"), data.get("documents"))
    raise ValueError(
        f"{source}: a conversation file holds a list of messages, or an object with 'messages' "
        "(and optionally 'tools' and 'documents')"
    )


#: ``--var`` values spelled the Python way, read as what they mean.
_PYTHON_LITERALS: dict[str, Any] = {"True": True, "False": False, "None": None}


def parse_variable(assignment: str) -> tuple[str, Any]:
    """Parse ``--var key=value``: the value is JSON when it parses as JSON, else the string itself.

    ``enable_thinking=false`` gives ``False``, ``n=3`` gives ``3``, ``name=Ada`` gives ``"Ada"``,
    ``name='"3"'`` gives the string ``"3"``. The Python spellings ``True``, ``False`` and ``None``
    mean what they mean in Python (the string ``"False"`` would be true in a template).

    Args:
        assignment: the ``key=value`` text.

    Returns:
        ``(key, value)``.

    Raises:
        ValueError: there is no ``=`` or the key is not a valid name.
    """
    key, sep, value = assignment.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise ValueError(f"--var {assignment!r}: expected key=value with a template variable name as key")
    if value in _PYTHON_LITERALS:
        return key, _PYTHON_LITERALS[value]
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


#: Keys that mark a JSON file as a tokenizer configuration rather than a response template.
_TOKENIZER_CONFIG_KEYS = frozenset({"chat_template", "tokenizer_class", "added_tokens_decoder", "bos_token",
                                    "eos_token", "model_max_length"})


def read_response_template(source: str) -> dict[str, Any]:
    """Find the response template that ``source`` names (resolved as :func:`resolve_source` says).

    Args:
        source: a JSON file holding a response template (or a whole ``tokenizer_config.json`` with a
            ``response_template`` key), a model directory (its stored response template, or the
            bundled profile detected from its chat template, as ``ChatCodec.from_pretrained``), or
            the name of a bundled profile (see :func:`bundled_response_template`).

    Returns:
        The template as a JSON object (not yet validated: ``load_response_template`` does that).

    Raises:
        OSError: nothing by that name exists.
        ValueError: the file is not JSON, is a tokenizer configuration without a response
            template, or the model directory has no response template.
        ModelStorageError: the model directory's configuration files are malformed.
    """
    path = Path(source)
    if path.is_dir():
        return _directory_response_template(path)
    bundled = bundled_response_template(source)
    if bundled is not None:
        return bundled
    if path.exists():  # a regular file, or a device / pipe (read up to MAX_INPUT_BYTES)
        data = read_json(source, "response template")
        if isinstance(data, dict) and "response_template" in data and "fields" not in data:
            data = data["response_template"]  # a tokenizer_config.json
        elif isinstance(data, dict) and "fields" not in data and not _TOKENIZER_CONFIG_KEYS.isdisjoint(data):
            raise ValueError(f"{source}: a tokenizer configuration without a 'response_template' key; pass "
                             "its model directory (a bundled profile may match its chat template) or a "
                             "bundled profile name (chatcodec profiles lists them)")
        return _expect_object(data, source)
    raise OSError(f"{source}: no such file or directory (expected a response template JSON file or a model "
                  "directory)")


def _directory_response_template(directory: Path) -> dict[str, Any]:
    """The response template ``ChatCodec.from_pretrained(directory)`` would use (the stored one, or
    the bundled profile detected from the chat template)."""
    from chatcodec.model.loading import find_response_template

    template, _ = find_response_template(directory)
    if template is None:
        raise ValueError(f"{directory}: no response template (no 'response_template' key in "
                         "tokenizer_config.json, and no bundled profile matches its chat template). Add one, "
                         "or pass a response template JSON file or a bundled profile name instead")
    return template


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
