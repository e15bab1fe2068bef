"""What a chat template sees: inputs rebuilt from plain JSON types, with the reference's normalisation.

Rules kept here (SPEC §2.2; reference: ``apply_chat_template`` + ``render_jinja_template``):

* Everything the template can see is rebuilt from plain types (:func:`plain_template_data`):
  ``str``/``int``/``float``/``bool``/``None``, dicts, lists and tuples are copied; subclasses
  (``StrEnum``, ``IntEnum``, numpy scalars) are reduced to their base type, dataclasses and
  pydantic models to dicts, other ``Enum`` members to their value; anything else becomes an inert
  ``"<TypeName>"`` placeholder. The caller's objects are never handed to the template, so the
  template can neither mutate them nor call their methods.
* Top-level message keys whose value is ``None`` are dropped (``content: None`` on a tool-call
  turn is absent, not the text ``"None"``).
* Reasoning given as ``reasoning_content``, ``thinking`` or ``reasoning`` is exposed under both
  ``reasoning_content`` and ``thinking``; an empty string never hides a non-empty alias.
* Tools are JSON schemas (Python functions are converted by :func:`chatcodec.tool_schemas.tool_to_schema`).
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chatcodec.errors import ChatCodecError

__all__ = [
    "REASONING_FIELDS",
    "ConversationError",
    "alias_reasoning",
    "check_prompt_ending",
    "plain_input",
    "plain_template_data",
    "prepare_documents",
    "prepare_messages",
    "prepare_tools",
]

#: The names a message's reasoning may be given under; the first is the one templates read most.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

_SCALARS = frozenset({str, int, float, bool, type(None)})


class ConversationError(ChatCodecError, ValueError, TypeError):
    """The messages, tools, documents or options given to a chat template are unusable.

    A ``ValueError`` and a ``TypeError``: the reference raises one or the other for these checks.
    """


def check_prompt_ending(add_generation_prompt: bool, continue_final_message: bool | str) -> None:
    """Refuse the two ways of ending a prompt at once (the reference's check and wording).

    Args:
        add_generation_prompt: append the header that starts an assistant turn.
        continue_final_message: leave the final message open (``True`` or a field name).

    Raises:
        ConversationError: both ``add_generation_prompt`` and ``continue_final_message`` are set.
    """
    if continue_final_message and add_generation_prompt:
        raise ConversationError(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
            "when you want the model to continue the final message, and add_generation_prompt when you want "
            "to add a header that will prompt it to start a new assistant message instead."
        )


def plain_template_data(value: Any) -> Any:
    """Rebuild ``value`` from plain JSON-like types (see the module docstring)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:  # the common case, with scalars copied inline (no call per key or value)
        return {
            key if type(key) in _SCALARS else plain_template_data(key):
                item if type(item) in _SCALARS else plain_template_data(item)
            for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in _SCALARS else plain_template_data(item) for item in value]
    return _plain_other(value)


def plain_input(value: Any, where: str) -> Any:
    """:func:`plain_template_data` for one input, refusing structures too deep to copy.

    Args:
        value: the input.
        where: what it is, for the message (``"messages[3]"``, ``"tools"``, ...).

    Returns:
        The rebuilt value.

    Raises:
        ConversationError: ``value`` nests deeper than Python's recursion limit allows.
    """
    try:
        return plain_template_data(value)
    except RecursionError:
        raise ConversationError(
            f"{where}: nested too deeply to copy for the template (past Python's recursion limit of "
            f"{sys.getrecursionlimit():,} levels)"
        ) from None


def _plain_other(value: Any) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_template_data(key): plain_template_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_template_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_template_data(item) for item in value)
    if isinstance(value, enum.Enum):
        return plain_template_data(value.value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        return plain_template_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_template_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return plain_template_data(model_dump())
    return f"<{type(value).__name__}>"


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value)


def alias_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    """Expose a message's reasoning under ``reasoning_content`` and ``thinking``.

    The reasoning is the first non-empty of ``reasoning_content``, ``thinking``, ``reasoning``
    (or, when all are empty strings, the first one present). ``reasoning_content`` is set to it;
    ``thinking`` keeps its own value when that is non-empty (gpt-oss templates read it). Keys are
    in the reference's order (``{"thinking": r, **message, "reasoning_content": r}``): ``thinking``
    first, then the message's keys, then ``reasoning_content`` when the message had none.

    Args:
        message: a message already rebuilt from plain data (it is not changed).

    Returns:
        A new message dict, or ``message`` itself when it carries no reasoning.
    """
    present = [message[key] for key in REASONING_FIELDS if message.get(key) is not None]
    if not present:
        return message
    reasoning = next((value for value in present if not _is_empty(value)), present[0])
    aliased = {"thinking": None, **message}
    if _is_empty(aliased["thinking"]):
        aliased["thinking"] = reasoning
    aliased["reasoning_content"] = reasoning
    return aliased


def none_key_note(messages: Sequence[Any], error_message: str) -> str | None:
    """Say which message's ``None`` value left the template without the key its error names.

    A key set to ``None`` is left out before rendering (transformers 5.24 does the same), so
    ``{"role": "system", "content": None}`` reaches the template without ``content`` and the
    template fails with ``'dict object' has no attribute 'content'``, naming no message.

    Args:
        messages: the caller's conversation, as given to the render.
        error_message: the template's error message (Jinja's undefined-attribute or -key text).

    Returns:
        One line naming the first message whose value for that key was ``None``, or ``None``.
    """
    quoted = error_message.rsplit("'", 2)
    if len(quoted) != 3 or not isinstance(messages, Sequence):
        return None
    key = quoted[1]
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and key in message and message[key] is None:
            role = message.get("role")
            who = f" ({role})" if isinstance(role, str) else ""
            return (f"messages[{index}]{who} has {key}: None, and keys set to None are left out before "
                    f"rendering (as transformers does), so the template found no {key!r}: give a value "
                    f"(\"\" for an empty {key})")
    return None


def prepare_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Rebuild a conversation for a template: plain data, ``None`` keys dropped, reasoning aliased.

    Args:
        messages: the conversation: a list, or an object with a ``messages`` attribute holding one
            (transformers 5.24 ``_normalize_chat_messages``).

    Returns:
        New message dicts; the caller's objects are never handed on.

    Raises:
        ConversationError: ``messages`` is empty or not a list, or a message is not a dict
            (dataclasses and pydantic models count as dicts).
    """
    if not isinstance(messages, (str, bytes, Mapping, Sequence)):
        messages = getattr(messages, "messages", messages)
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise ConversationError(
            f"messages: expected a list of message dicts, got {type(messages).__name__}"
        )
    if not messages:
        raise ConversationError(
            "messages: cannot apply a chat template to an empty conversation. Provide at least one message."
        )
    prepared: list[dict[str, Any]] = []
    try:  # around the loop: a try per message would slow every render down
        for index, message in enumerate(messages):
            plain = plain_template_data(message)
            if type(plain) is not dict:
                raise ConversationError(
                    f"messages[{index}]: chat messages should be dicts, dataclasses or pydantic models, "
                    f"but got {message!r:.80}"
                )
            if None in plain.values():
                plain = {key: value for key, value in plain.items() if value is not None}
            if "reasoning_content" in plain or "thinking" in plain or "reasoning" in plain:
                plain = alias_reasoning(plain)
            prepared.append(plain)
    except RecursionError:
        raise ConversationError(
            f"messages[{len(prepared)}]: nested too deeply to copy for the template (past Python's "
            f"recursion limit of {sys.getrecursionlimit():,} levels)"
        ) from None
    return prepared


def prepare_tools(tools: Sequence[dict[str, Any] | Callable[..., Any]] | None) -> list[Any] | None:
    """Turn ``tools`` (JSON schemas or Python functions) into plain JSON schemas.

    Args:
        tools: the tools of the render, or ``None``.

    Returns:
        New plain JSON schemas, or ``None`` when ``tools`` is ``None``.

    Raises:
        ConversationError: ``tools`` is not a list, a tool is neither a dict nor a function (the
            error is also the ``TypeError`` ``tool_to_schema`` raises) or nests too deeply.
        TypeHintParsingException, DocstringParsingException: a function cannot be converted.
    """
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise ConversationError(
            f"tools: expected a list of JSON schemas or functions, got {type(tools).__name__}"
        )
    converted = []
    if tools:
        from chatcodec.tool_schemas import tool_to_schema  # here: conversations without tools never need it

        for index, tool in enumerate(tools):
            try:
                converted.append(tool_to_schema(tool))
            except TypeError as error:
                raise ConversationError(f"tools[{index}]: {str(error).removeprefix('tools: ')}") from None
    schemas: list[Any] = plain_input(converted, "tools")
    return schemas


def prepare_documents(documents: Sequence[Any] | None) -> list[Any] | tuple[Any, ...] | None:
    """Rebuild ``documents`` (a list of dicts, typically with ``title`` and ``text``).

    Args:
        documents: the retrieval documents, or ``None``.

    Returns:
        New plain dicts (in a tuple when ``documents`` is one), or ``None`` when ``documents`` is ``None``.

    Raises:
        ConversationError: ``documents`` is not a list of dicts.
    """
    if documents is None:
        return None
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Sequence):
        raise ConversationError(f"documents: expected a list of dicts, got {type(documents).__name__}")
    for index, document in enumerate(documents):
        if not isinstance(document, Mapping):
            raise ConversationError(
                f"documents[{index}]: documents should be a list of dicts with 'title' and 'text' keys, "
                f"got {type(document).__name__}"
            )
    # a tuple stays a tuple, as in the reference (a template printing it shows "(...)")
    plain = documents if type(documents) in (list, tuple) else list(documents)
    result: list[Any] | tuple[Any, ...] = plain_input(plain, "documents")
    return result
