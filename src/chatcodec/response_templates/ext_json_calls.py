"""The ``x-json-calls`` content parser: tool calls written as JSON objects, one or many.

Covers the JSON tool-call dialects: one object per region (Hermes), an array (Mistral before v11,
Granite, Jamba), objects separated by ``;`` or newlines (Llama 3.x, MiniMax-M1), an object per
marker (granite-20b-functioncalling), the function name as the key (Apertus:
``[{"get_time": {"city": "Paris"}}]``), and ``arguments`` serialized as a JSON *string* (Granite 4).
Each call becomes ``{"name": ..., "arguments": {...}}``, with ``"id"`` first when the object has one.

``content_args`` (all optional):

* ``name_keys`` (list, default ``["name"]``) and ``arguments_keys`` (list, default
  ``["arguments", "parameters"]``, the keys vLLM and SGLang read): the keys of the name and the
  arguments;
* ``id_keys`` (list, default ``["id", "tool_call_id", "call_id"]``): the keys of the call's id;
* ``name_as_key`` (bool): each object is ``{NAME: {arguments}}``;
* ``require_arguments`` (bool, default false): an object without an arguments key is not a call
  (otherwise its arguments are ``{}``);
* ``separators`` (list of strings, default ``[";"]``): literal text allowed between values besides
  whitespace (e.g. a repeated marker such as ``<|python_tag|>``);
* ``single`` (bool): the region holds exactly one call; the value is that call, not a list.

``arguments`` given as a string that holds a JSON object are decoded (the value is an object).

The keys of a call object (not with ``name_as_key``), a rule that loses nothing: one of the
``name_keys``, at most one of the ``arguments_keys``, at most one of the ``id_keys`` (a string,
kept as the call's ``id``; a profile's transform puts it on the tool call, OpenAI shape
``{"id", "type", "function"}``) and ``"type": "function"`` (which says nothing more). Any other key
(a misspelled ``"args"``, an extra ``"parameters"`` beside ``"arguments"``), two keys of one kind,
a non-string id or another ``type`` make the object "not a tool call", an error like the others
below: a key is never dropped silently.
The JSON is the ``json`` parser's: ``NaN`` and ``Infinity`` are not JSON and raise.

Nothing is dropped: text that is not JSON (before, between or after the values, other than
whitespace and the ``separators``), a value that is not a call and ``arguments`` that are not an
object all raise ``ValueError`` naming the offset, which the engine turns into a
``ResponseParseError`` (strict) or a ``parse_errors`` record with the raw text (keep). Framing
text that belongs to the format (a section end marker, an end-of-turn token) is the field's
``close`` or one of the ``separators``, never silently skipped.

The parser is registered ``string_aware``: the region's close delimiter written inside a JSON
string (``{"text": "use </tool_call> to end"}``) is text, not the end of the region.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.ext_common import ExtensionError, reject_skip_invalid
from chatcodec.response_templates.lax_json import finite_number, loads_json, reject_constant, unique_keys

__all__ = ["parse_json_calls", "validate_json_calls"]

# JSON has no NaN or Infinity, and a key given twice would lose the first value
_DECODER = json.JSONDecoder(parse_constant=reject_constant, object_pairs_hook=unique_keys,
                            parse_float=finite_number)
_LIST_KEYS = ("name_keys", "arguments_keys", "id_keys", "separators")
_NAME_KEYS = ["name"]
_ARGUMENTS_KEYS = ["arguments", "parameters"]
_ID_KEYS = ["id", "tool_call_id", "call_id"]
_ARTICLED = {"name": "a name", "arguments": "arguments", "id": "an id"}
_BOOL_KEYS = ("name_as_key", "require_arguments", "single")


def validate_json_calls(args: Mapping[str, Any], where: str) -> None:
    """Check the ``content_args`` of an ``x-json-calls`` region (see the module docstring).

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key or a value of the wrong type, named by its path.
    """
    reject_skip_invalid(args, where)
    known = sorted((*_LIST_KEYS, *_BOOL_KEYS))
    unknown = sorted(set(args) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for x-json-calls. Known: {known}")
    for key in _LIST_KEYS:
        value = args.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise ValueError(f"{where}.{key}: must be a list of non-empty strings")
    for key in _BOOL_KEYS:
        if not isinstance(args.get(key, False), bool):
            raise ValueError(f"{where}.{key}: must be a bool")


def parse_json_calls(text: str, args: Mapping[str, Any]) -> Any:
    """Parse the JSON tool calls in ``text``.

    Args:
        text: the region's raw text.
        args: the region's ``content_args`` (see the module docstring).

    Returns:
        A list of ``{"id"?: str, "name": str, "arguments": dict}`` (an empty text gives ``[]``), or
        with ``single`` the one call.

    Raises:
        ValueError: text that is not JSON, a value that is not a call, or (with ``single``) not
            exactly one call; the message names the offset in ``text``.
    """
    calls: list[dict[str, Any]] = []
    try:
        values = _values(text, list(args.get("separators", [";"])))
    except RecursionError:
        raise ValueError("x-json-calls: the JSON is nested too deeply") from None
    for offset, value in values:
        for item in value if isinstance(value, list) else [value]:
            call, problem = _to_call(item, args)
            if call is None:
                raise ExtensionError(
                    f"x-json-calls: the JSON value at offset {offset} is not a tool call{problem}: "
                    f"{json.dumps(item, ensure_ascii=False)[:80]}",
                    offset,
                )
            calls.append(call)
    if args.get("single"):
        if len(calls) != 1:
            raise ValueError(f"x-json-calls: expected exactly one tool call, found {len(calls)}")
        return calls[0]
    return calls


def _values(text: str, separators: list[str]) -> list[tuple[int, Any]]:
    values: list[tuple[int, Any]] = []
    position = _skip_separators(text, 0, separators)
    while position < len(text):
        try:
            value, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise ExtensionError(
                f"x-json-calls: invalid JSON at offset {error.pos}: {error.msg}", error.pos
            ) from None
        except ValueError as error:  # NaN / Infinity, a key given twice
            message = f"x-json-calls: invalid JSON at offset {position}: {error}"
            raise ExtensionError(message, position) from None
        values.append((position, value))
        position = _skip_separators(text, end, separators)
        if position < len(text) and text[position] not in "{[":
            excerpt = text[position : position + 40]
            raise ExtensionError(f"x-json-calls: unexpected text at offset {position}: {excerpt!r}", position)
    return values


def _skip_separators(text: str, position: int, separators: list[str]) -> int:
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        for separator in separators:
            if text.startswith(separator, position):
                position += len(separator)
                break
        else:
            return position
    return position


def _to_call(item: Any, args: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The call ``item`` encodes, or ``None`` and why not (`` (reason)``, or ``""``)."""
    if not isinstance(item, dict):
        return None, ""
    call: dict[str, Any] = {}
    if args.get("name_as_key"):
        if len(item) != 1:
            return None, " (expected one key, the function name)"
        ((name, arguments),) = item.items()
    else:
        kinds = {kind: list(args.get(f"{kind}_keys", default)) for kind, default in
                 (("name", _NAME_KEYS), ("arguments", _ARGUMENTS_KEYS), ("id", _ID_KEYS))}
        problem = _key_problem(item, kinds)
        if problem:
            return None, f" ({problem})"
        name = _first(item, kinds["name"])
        arguments = _first(item, kinds["arguments"])
        if arguments is None and not args.get("require_arguments"):
            arguments = {}
        id_key = next((key for key in kinds["id"] if key in item), None)
        if id_key is not None:
            if not isinstance(item[id_key], str):
                return None, f" (the id ({id_key!r}) is not a string)"
            call["id"] = item[id_key]
    if isinstance(arguments, str):
        try:
            arguments = loads_json(arguments)
        except ValueError:
            return None, " ('arguments' is a string that is not a JSON object)"
    if not isinstance(name, str):
        return None, " (no string name)"
    if arguments is None:
        return None, " (no arguments key)"
    if not isinstance(arguments, dict):
        return None, " ('arguments' is not an object)"
    return {**call, "name": name, "arguments": arguments}, ""


def _key_problem(item: dict[str, Any], kinds: dict[str, list[str]]) -> str:
    """Why the keys of ``item`` are not those of one call (``""`` when they are)."""
    known = {key for keys in kinds.values() for key in keys} | {"type"}
    unknown = [key for key in item if key not in known]
    if unknown:
        described = ", ".join(
            f"{_ARTICLED[kind]} ({', '.join(keys)})" for kind, keys in kinds.items() if keys
        )
        return f'unknown key(s) {unknown}; a call object has {described} and "type": "function"'
    for kind, keys in kinds.items():
        present = [key for key in keys if key in item]
        if len(present) > 1:
            return f"more than one {kind} key: {present}"
    if "type" in item and item["type"] != "function":
        return "'type' is not \"function\""
    return ""


def _first(item: dict[str, Any], keys: list[str]) -> Any:
    for key in keys:
        if key in item:
            return item[key]
    return None
