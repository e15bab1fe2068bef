"""Command-line input: files or stdin read up to documented size limits, JSON with errors that
name the file and position, tools, conversations and ``--var`` values. Where a template comes from
is :mod:`chatcodec.cli.sources`."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_CHAT_TEMPLATE_BYTES",
    "MAX_INPUT_BYTES",
    "MAX_OUTPUT_BYTES",
    "Conversation",
    "parse_variable",
    "read_conversation",
    "read_json",
    "read_text",
    "read_tools",
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
        ValueError: the file is empty, not valid JSON (the message names the file, line and column),
            nested too deeply or holds an integer of more than 4,300 digits (the message names the
            file). A leading byte-order mark is skipped.
    """
    text = read_text(source).removeprefix("\ufeff")
    if not text.strip():
        where = "stdin is empty" if source == "-" else f"{source}: the file is empty"
        article = "" if what.endswith("s") else "a "  # tools, documents: no "a"
        raise ValueError(f"{where}; expected {article}{what} (JSON)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{source}: invalid {what} (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
    except RecursionError:
        raise ValueError(f"{source}: invalid {what}: nested too deeply") from None
    except ValueError as error:  # an integer past Python's conversion limit (4,300 digits)
        raise ValueError(f"{source}: invalid {what}: {error}") from None


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


class Conversation:
    """A conversation file: the messages, and the tools and documents it may carry.

    Attributes:
        request: the whole file as a Chat Completions request (``{"messages": [...]}`` for a list).
    """

    __slots__ = ("documents", "messages", "request", "tools")

    def __init__(self, messages: list[Any], tools: list[Any] | None = None,
                 documents: list[Any] | None = None, request: dict[str, Any] | None = None) -> None:
        self.messages = messages
        self.tools = tools
        self.documents = documents
        self.request: dict[str, Any] = {} if request is None else request


def read_conversation(source: str) -> Conversation:
    """Read a conversation file: a list of messages, or a Chat Completions request (an object with
    ``messages``, and ``tools``, ``documents``, ``reasoning_effort``, ... as a client sends it).

    Args:
        source: a path or ``"-"``.

    Returns:
        The conversation, with its tools and documents when the file has them, and the request.

    Raises:
        ValueError: the file is not JSON, or not one of the two shapes, or an object with a key that
            is no Chat Completions field (a typo would be ignored silently); the message names the file.
    """
    from chatcodec.chat_templates.requests import PROMPT_FIELDS, SAMPLING_FIELDS

    data = read_json(source, "conversation")
    if isinstance(data, list):
        return Conversation(data, request={"messages": data})
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        unknown = sorted(set(data) - {*PROMPT_FIELDS, *SAMPLING_FIELDS})
        if unknown:
            raise ValueError(
                f"{source}: unknown keys {unknown} in the request; expected Chat Completions fields: "
                f"{', '.join(PROMPT_FIELDS)} (and sampling fields such as model or temperature)"
            )
        return Conversation(data["messages"], data.get("tools"), data.get("documents"), dict(data))
    raise ValueError(
        f"{source}: a conversation file holds a list of messages, or a Chat Completions request: an object "
        "with 'messages' (and optionally 'tools', 'documents', 'reasoning_effort', ...)"
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
        ValueError: there is no ``=``, the key is not a valid name, or the value is JSON nested past
            Python's recursion limit (``json`` cannot read it, and a string it was not meant to be).
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
    except RecursionError:
        raise ValueError(f"--var {key}: the value is JSON nested too deeply") from None
