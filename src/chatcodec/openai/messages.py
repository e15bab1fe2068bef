"""A parsed message as an OpenAI Chat Completions assistant message (messages out).

The parsed message (``{"role", "reasoning_content", "content", "tool_calls": [{"id"?, "type",
"function": {"name", "arguments": {...}}}], ...}``) becomes the wire form a client reads:

* ``content``: the text, or ``None`` when there is none (``""`` too: OpenAI writes ``null``);
* the reasoning under the key the caller names (``reasoning_content`` by default, as SGLang,
  llama.cpp's server and DeepSeek's API write it; ``reasoning`` as vLLM writes it since it removed
  ``reasoning_content``; the message's own key may be ``reasoning_content``, ``thinking`` or
  ``reasoning``);
* ``tool_calls``: ``{"id", "type": "function", "function": {"name", "arguments"}}`` with the
  arguments as one JSON text, :func:`arguments_text` (the streams write exactly the same text);
  the id the model wrote, else one from ``ids`` (:class:`~chatcodec.openai.ToolCallIds`);
* every other key of the message (gpt-oss's ``builtin_tool_calls``) unchanged, except the
  diagnostics ``parse_errors`` (``errors="keep"``: the failed region's text is already in
  ``content``) and ``parse_warnings`` (calls to functions not among ``tools``: the calls are
  kept), and ``role`` (always ``"assistant"``).

Rule kept: this module is the one place a parsed value becomes wire text, so a stream and a
whole message can never disagree on how arguments or ids are written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from chatcodec.openai.ids import IdFactory, ToolCallIds

__all__ = [
    "REASONING_KEYS",
    "arguments_text",
    "call_parts",
    "chat_tool_call",
    "check_reasoning_key",
    "extra_keys",
    "generated_id",
    "json_text",
    "message_reasoning",
    "to_chat_message",
]

#: Keys a parsed message may hold its reasoning under (SPEC §2.2's aliases), in the order read.
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
#: Keys that are never passed through as they are.
_HANDLED = frozenset({"role", "content", "tool_calls", "parse_errors", "parse_warnings", *REASONING_KEYS})


#: A JSON string, or the ``Infinity`` Python's ``json.dumps`` writes for a float past the range.
_STRING_OR_INFINITY = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity')


def _json_infinity(match: re.Match[str]) -> str:
    token = match.group()
    if token[0] == '"':
        return token
    return "-1e999" if token[0] == "-" else "1e999"


#: ``json.dumps(value, ensure_ascii=False, allow_nan=False)`` is this encoder's ``encode(value)``; made
#: once, not per call (``json.dumps`` builds an encoder for every call with options: it runs for every
#: call's arguments at the end of its region)
_STRICT = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def json_text(value: Any) -> str:
    """``value`` as JSON text: ``json.dumps(value, ensure_ascii=False)``, except that a float past
    the range (``inf``, which the JSON content parser reads from ``1e999``) is written ``1e999`` /
    ``-1e999``: JSON numbers that read back as the same float, where ``json.dumps`` writes
    ``Infinity``, which is no JSON (``JSON.parse`` and strict parsers refuse the whole arguments).

    Raises:
        TypeError: a value JSON cannot write (a set, an object).
        ValueError: ``NaN``, which no JSON number reads as (no JSON parser gives it), or a cycle.
    """
    try:
        return _STRICT.encode(value)
    except ValueError:  # a non-finite float somewhere (rare: the plain call above is the fast path)
        written = json.dumps(value, ensure_ascii=False)
    if "NaN" in _STRING_OR_INFINITY.sub('""', written):  # outside every string: the float
        raise ValueError("NaN is no JSON number")
    return _STRING_OR_INFINITY.sub(_json_infinity, written)


def arguments_text(arguments: Any) -> str:
    """The one serialization of a call's arguments: ``json.dumps(arguments, ensure_ascii=False)``.

    A string passes through unchanged (arguments the model wrote as text that did not parse, kept by
    a lax content parser; OpenAI's ``arguments`` is text anyway), and missing arguments (``None``)
    are ``"{}"``, as OpenAI writes a call without parameters. Keys keep the order the model wrote
    them in; separators are ``", "`` and ``": "``.

    Args:
        arguments: the parsed (typed) arguments.

    Returns:
        The JSON text.

    Raises:
        TypeError: the arguments hold a value JSON cannot write (never from the bundled parsers).
        ValueError: the arguments hold ``NaN`` (see :func:`json_text`; floats past the range are
            written ``1e999``).
    """
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return "{}"
    return json_text(arguments)


def _arguments_at(arguments: Any, index: int) -> str:
    try:
        return arguments_text(arguments)
    except (TypeError, ValueError) as error:
        raise TypeError(f"tool_calls[{index}].function.arguments: {error}") from None


def call_parts(call: Any, where: str) -> tuple[str, Any, str | None]:
    """The ``(name, arguments, id or None)`` of one parsed tool call.

    Accepts the OpenAI shape ``{"id"?, "type", "function": {"name", "arguments"}}`` that every
    bundled profile gives, and the flat ``{"name", "arguments", "id"?}`` some templates give.

    Args:
        call: the parsed call.
        where: where it is (``"tool_calls[1]"``), for messages.

    Raises:
        TypeError: the call is not a dict, or its name is not a string.
    """
    if not isinstance(call, Mapping):
        raise TypeError(f"{where}: a tool call must be a dict, got {type(call).__name__}")
    function = call.get("function", call)
    if not isinstance(function, Mapping):
        raise TypeError(f"{where}.function: must be a dict, got {type(function).__name__}")
    name = function.get("name")
    if not isinstance(name, str):
        raise TypeError(f"{where}.function.name: must be a string, got {type(name).__name__}")
    own = call.get("id")
    return name, function.get("arguments"), own if isinstance(own, str) and own else None


def message_reasoning(message: Mapping[str, Any]) -> str | None:
    """The reasoning text of a parsed message (the first of :data:`REASONING_KEYS` it has), or ``None``."""
    for key in REASONING_KEYS:
        value = message.get(key)
        if value is not None:
            return _text(value, key)
    return None


#: Keys of a Chat Completions message or delta that the reasoning must not take (it would replace the
#: role, or pass as the answer or the calls).
_MESSAGE_KEYS = frozenset(
    {"role", "content", "tool_calls", "refusal", "function_call", "audio", "annotations"})


def check_reasoning_key(reasoning_key: Any) -> None:
    """Refuse a ``reasoning_key`` that is not a string or is a key the message already has.

    Raises:
        TypeError: not a string (nor ``None``).
        ValueError: ``"content"``, ``"role"``, ``"tool_calls"``, ...: the reasoning would replace
            the role or be read as the answer.
    """
    if reasoning_key is None:
        return
    if not isinstance(reasoning_key, str):
        raise TypeError(f"reasoning_key: expected a string or None, got {type(reasoning_key).__name__}")
    if reasoning_key in _MESSAGE_KEYS or not reasoning_key:
        raise ValueError(f"reasoning_key: {reasoning_key!r} is a key of the message itself; name the "
                         "reasoning's own key (\"reasoning_content\", or \"reasoning\" as vLLM writes it)")


def generated_id(ids: IdFactory, name: str, index: int) -> str:
    """``ids(name, index)``, checked: the id of a call the model wrote without one.

    Raises:
        TypeError: the factory did not return a non-empty string (an id the SDK types and every
            client require).
    """
    made = ids(name, index)
    if not isinstance(made, str) or not made:
        raise TypeError(f"ids({name!r}, {index}): a tool-call id factory must return a non-empty string, "
                        f"got {made!r}")
    return made


def to_chat_message(message: Mapping[str, Any], *, reasoning_key: str | None = "reasoning_content",
                    ids: IdFactory | None = None) -> dict[str, Any]:
    """Turn a parsed message into an OpenAI Chat Completions assistant message.

    Args:
        message: a message from :func:`chatcodec.parse_response`, a parser's ``finalize()`` or
            ``ChatCodec.parse_response``.
        reasoning_key: the key the reasoning goes under (``"reasoning_content"``, ``"reasoning"``);
            ``None`` leaves the reasoning out.
        ids: ``(function name, call index) -> id`` for calls the model wrote without an id; default
            :class:`~chatcodec.openai.ToolCallIds` (``call_`` + 24 random alphanumerics). Use
            ``ToolCallIds.for_profile(codec.profile)`` so the id goes back through the model's chat
            template (Mistral's needs 9 alphanumerics), and ``ToolCallIds(seed=0)`` for fixed ids.

    Returns:
        ``{"role": "assistant", "content": str | None, <reasoning_key>: str (when there is
        reasoning), "tool_calls": [...] (when there are calls), **other keys}``: a dict that
        validates as the ``openai`` SDK's ``ChatCompletionMessage``.

    Raises:
        TypeError: ``content`` or the reasoning is not text, or a tool call is not a call (a
            response template that does not give messages of this shape); ``ids`` gave no
            string id.
        ValueError: ``reasoning_key`` is a key of the message itself (``"content"``, ``"role"``).

    Example:
        >>> to_chat_message({"role": "assistant", "tool_calls": [{"type": "function",
        ...     "function": {"name": "f", "arguments": {"city": "Paris"}}}]},
        ...     ids=lambda name, index: f"call_{index}")
        {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_0', 'type': 'function', \
'function': {'name': 'f', 'arguments': '{"city": "Paris"}'}}]}
    """
    if not isinstance(message, Mapping):
        raise TypeError(f"message: expected a parsed message (a mapping), got {type(message).__name__}")
    check_reasoning_key(reasoning_key)
    ids = ids or ToolCallIds()
    content = message.get("content")
    chat: dict[str, Any] = {"role": "assistant", "content": _text(content, "content") or None}
    reasoning = message_reasoning(message)
    if reasoning_key is not None and reasoning:
        chat[reasoning_key] = reasoning
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise TypeError(f"tool_calls: must be a list, got {type(calls).__name__}")
    if calls:
        chat["tool_calls"] = [chat_tool_call(call, index, ids) for index, call in enumerate(calls)]
    chat.update(extra_keys(message, reasoning_key))
    return chat


def extra_keys(message: Mapping[str, Any], reasoning_key: str | None) -> list[tuple[str, Any]]:
    """The keys of a parsed message OpenAI has no field for, passed through unchanged (gpt-oss's
    ``builtin_tool_calls``): every key but ``role``, ``content``, ``tool_calls``, the reasoning,
    ``parse_errors`` and ``parse_warnings``."""
    return [(key, value) for key, value in message.items() if key not in _HANDLED and key != reasoning_key]


def chat_tool_call(call: Any, index: int, ids: IdFactory) -> dict[str, Any]:
    """One parsed call (call ``index`` of the message) in the Chat Completions form."""
    name, arguments, own = call_parts(call, f"tool_calls[{index}]")
    return {"id": own or generated_id(ids, name, index), "type": "function",
            "function": {"name": name, "arguments": _arguments_at(arguments, index)}}


def _text(value: Any, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{key}: expected text, got {type(value).__name__} (the response template gives "
                    "this field another shape; convert it before to_chat_message)")
