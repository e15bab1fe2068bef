"""The ``x-named-call`` content parser: one tool call written as its name, then its JSON arguments.

Mistral's tokenizers from v11 on write a call after ``[TOOL_CALLS]`` as ``NAME{arguments}``,
``NAME[ARGS]{arguments}`` or ``NAME[CALL_ID]ID[ARGS]{arguments}``; the earlier ones write a JSON
list of call objects instead, and a checkpoint served with the other tokenizer's template writes
the other form. Under ``x-switch`` a profile reads both: a region that starts with ``[`` or ``{``
is JSON calls (``x-json-calls``), any other a named call (this parser).

The grammar (after leading whitespace): the name (one or more characters other than whitespace,
``[`` and ``{``), then optionally ``id_marker`` and the id (the same characters; the marker may
stand without one), then optionally ``arguments_marker``, then whitespace, then a JSON object, then
only whitespace. ``content_args`` (both optional,
non-empty strings): ``id_marker`` (e.g. ``"[CALL_ID]"``) and ``arguments_marker`` (e.g.
``"[ARGS]"``); without them the format is ``NAME{...}``.

The value is a list of one call, ``[{"id"?: str, "name": str, "arguments": {...}}]``, the shape
``x-json-calls`` gives, so the two share one ``transform_each``. Nothing is lost: a missing name,
an unknown marker, arguments that are not a JSON object and text after them raise ``ValueError``
naming the offset. The parser is registered ``string_aware``; its value scanner
(:mod:`.scanners.named_call_scan`) streams the arguments as written and knows where the value ends
(``close_at_value_end``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import regex

from chatcodec.response_templates.ext_common import ExtensionError, reject_skip_invalid
from chatcodec.response_templates.lax_json import loads_json

__all__ = ["NAME_STOP", "parse_named_call", "validate_named_call"]

#: The characters that end a name or an id.
NAME_STOP = frozenset(" \t\r\n\f\v[{")
_WORD = regex.compile(r"[^\s\[{]+")
_SPACE = regex.compile(r"\s*")
_KEYS = ("id_marker", "arguments_marker")


def validate_named_call(args: Mapping[str, Any], where: str) -> None:
    """Check ``x-named-call``'s ``content_args`` when the template loads.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, or a marker that is not a non-empty string starting with ``[``
            (a name ends at ``[``, so only such a marker can follow it).
    """
    reject_skip_invalid(args, where)
    unknown = sorted(set(args) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for x-named-call. Known: {list(_KEYS)}")
    for key in _KEYS:
        value = args.get(key, "[")
        if not isinstance(value, str) or not value.startswith("["):
            raise ValueError(f"{where}.{key}: must be a non-empty string starting with '['")


def parse_named_call(text: str, args: Mapping[str, Any]) -> Any:
    """Parse one call written ``NAME[id_marker ID][arguments_marker]{arguments}``.

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        ``[{"id"?: str, "name": str, "arguments": dict}]``.

    Raises:
        ValueError: the text is not such a call; an ``ExtensionError`` at the offset of the problem.
    """
    at = _SPACE.match(text).end()
    name = _WORD.match(text, at)
    if name is None:
        raise ExtensionError(f"x-named-call: expected the function's name at offset {at}: "
                             f"{text[at : at + 40]!r}", at)
    call: dict[str, Any] = {}
    at = name.end()
    id_marker, arguments_marker = args.get("id_marker"), args.get("arguments_marker")
    if id_marker and text.startswith(id_marker, at):
        at += len(id_marker)
        ident = _WORD.match(text, at)
        if ident is not None:  # the marker may stand without an id
            call["id"] = ident.group()
            at = ident.end()
    if arguments_marker and text.startswith(arguments_marker, at):
        at += len(arguments_marker)
    start = _SPACE.match(text, at).end()
    if not text.startswith("{", start):
        raise ExtensionError(f"x-named-call: expected the JSON arguments at offset {start}: "
                             f"{text[start : start + 40]!r}", start)
    try:
        arguments = loads_json(text[start:])
    except json.JSONDecodeError as error:
        at = start + error.pos
        message = f"x-named-call: invalid JSON arguments at offset {at}: {error.msg}"
        raise ExtensionError(message, at) from None
    except ValueError as error:  # NaN / Infinity, a key given twice
        message = f"x-named-call: invalid JSON arguments at offset {start}: {error}"
        raise ExtensionError(message, start) from None
    return [{**call, "name": name.group(), "arguments": arguments}]
