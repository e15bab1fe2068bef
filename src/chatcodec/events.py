"""Streaming events: the shapes :class:`chatcodec.ResponseParser` emits, and helpers to combine them.

Events are plain ``dict`` objects at run time (a dict literal costs a fraction of a typed object,
and it runs once per generated token). The ``TypedDict`` classes below only describe them for
readers and type checkers::

    {"type": "region_open",  "field": "content"}
    {"type": "region_chunk", "field": "content", "text": "Hel", "dirty": False}
    {"type": "region_close", "field": "content", "value": "Hello"}

With ``ResponseParser(..., value_deltas=True)``, a region whose content parser has a value scanner
also streams its value as it grows (``docs/streaming_values.md``)::

    {"type": "region_value", "field": "tool_calls", "op": "begin", "path": ["arguments"], "kind": "object"}
    {"type": "region_value", "field": "tool_calls", "op": "text", "path": ["arguments", "city"], "text": "P"}
    {"type": "region_value", "field": "tool_calls", "op": "set", "path": ["arguments", "days"], "value": 3}
    {"type": "region_value", "field": "tool_calls", "op": "end", "path": ["arguments"]}

:func:`build_value` replays them; :func:`merge_values` merges adjacent ``text`` ops so that event
streams of the same output compare equal however it was split.

``dirty`` is ``False`` for regions whose content parser streams verbatim (``text``, ``int``,
``float``, ``bool``: every chunk is part of the final value, apart from whitespace stripped at
close) and ``True`` for structured ones (``json``, ``xml-inline``, ``kv-lines`` and ``x-``
extensions), whose parsed value only arrives with ``region_close``.

The ``value`` of a ``region_close`` event is a separate copy from the value stored in the final
message, so a consumer that mutates an event cannot change the message (and vice versa). Copying
costs one walk of the value per closed region, never per chunk.

With ``errors="keep"``, a region whose content cannot be parsed closes with ``"value": None`` and
one extra key, ``"error"``: the problem record (``{"field", "parser", "offset", "error", "text",
"raw", "span"}``) that is also listed under the final message's ``"parse_errors"``. Strict mode
never adds the key. When the template's implicit field is plain text, that close is followed by a
``region_open``, one ``region_chunk`` holding the record's ``raw`` text (the region with its
delimiters) and a ``region_close`` of the implicit field: the failed region's text goes back into
``content`` verbatim, in the final message as in the stream.

With ``ResponseParser(..., offsets=True)``, ``region_open`` also carries ``"start"`` and
``region_close`` ``"end"``: the span of the region's raw text (delimiters included) in the generated
text, negative inside the prefix. A failed region put back into ``content`` has the failed region's
span again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, TypedDict

__all__ = [
    "Event",
    "RegionChunk",
    "RegionClose",
    "RegionOpen",
    "RegionValue",
    "build_value",
    "join_chunks",
    "merge_chunks",
    "merge_values",
]


class RegionOpen(TypedDict):
    """A region (one occurrence of a field) started."""

    type: Literal["region_open"]
    field: str


class RegionChunk(TypedDict):
    """Raw text that belongs to the open region ``field``."""

    type: Literal["region_chunk"]
    field: str
    text: str
    dirty: bool


class _RegionCloseError(TypedDict, total=False):
    error: dict[str, Any]


class RegionClose(_RegionCloseError):
    """The region ``field`` ended; ``value`` is its parsed, transformed, typed value.

    Fields:
        type: ``"region_close"``.
        field: the field name.
        value: the value of this region alone (for ``join`` fields, without the separator; for a
            non-repeating text field, this region's text; the message holds all regions' text).
        error: only with ``errors="keep"`` when the region could not be parsed (``value`` is then
            ``None``).
    """

    type: Literal["region_close"]
    field: str
    value: Any


class _RegionValueOptional(TypedDict, total=False):
    kind: Literal["object", "array", "string"]
    text: str
    value: Any


class RegionValue(_RegionValueOptional):
    """A part of the value of the open region ``field`` became certain (``value_deltas=True`` only).

    Fields:
        type: ``"region_value"``.
        field: the field name.
        op: ``"begin"`` (with ``kind``: an object, array or string starts at ``path``, empty so far),
            ``"text"`` (with ``text``: characters appended to the string begun at ``path``),
            ``"set"`` (with ``value``: the complete value at ``path``, a separate copy) or ``"end"``
            (what was begun at ``path`` is complete).
        path: keys (``str``) and list indexes (``int``) into this region's value, the value its
            ``region_close`` carries; ``[]`` is that value itself.

    Events are append-only and in document order within each subtree a transform placeholder fills;
    replaying a region's events (:func:`build_value`) gives its ``region_close`` value whenever the
    region closes without an error.
    """

    type: Literal["region_value"]
    field: str
    op: Literal["begin", "text", "set", "end"]
    path: list[str | int]


Event = RegionOpen | RegionChunk | RegionValue | RegionClose


def merge_chunks(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge adjacent ``region_chunk`` events of the same field into one.

    Chunk boundaries depend on how the output was split; merging removes that difference, so two
    event streams of the same output compare equal however they were fed.

    Args:
        events: events in emission order.

    Returns:
        A new list; merged chunks are new dicts, other events are the original objects.
    """
    merged: list[dict[str, Any]] = []
    for event in events:
        if (
            event["type"] == "region_chunk"
            and merged
            and merged[-1]["type"] == "region_chunk"
            and merged[-1]["field"] == event["field"]
        ):
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + event["text"]}
        else:
            merged.append(event)
    return merged


def join_chunks(events: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Concatenate the chunk text of every field.

    Args:
        events: events in emission order.

    Returns:
        ``{field: all region_chunk text of that field, in order}``; fields without chunks are absent.
    """
    joined: dict[str, list[str]] = {}
    for event in events:
        if event["type"] == "region_chunk":
            joined.setdefault(event["field"], []).append(event["text"])
    return {field: "".join(parts) for field, parts in joined.items()}


def merge_values(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``region_value`` events alone, adjacent ``text`` ops of the same field and path merged.

    Args:
        events: events in emission order.

    Returns:
        A new list; merged events are new dicts, other events are the original objects. Two streams
        of the same output give equal lists however the output was split.
    """
    merged: list[dict[str, Any]] = []
    for event in events:
        if event["type"] != "region_value":
            continue
        last = merged[-1] if merged else None
        if (event["op"] == "text" and last is not None and last["op"] == "text"
                and last["field"] == event["field"] and last["path"] == event["path"]):
            merged[-1] = {**last, "text": last["text"] + event["text"]}
        else:
            merged.append(event)
    return merged


_ROOT = object()  # the key of the region's value in build_value's holder


class _Open:
    """A string being built from ``text`` ops (joined once when it ends)."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[str] = []


def build_value(events: Iterable[dict[str, Any]]) -> Any:
    """Replay the ``region_value`` events of one region into the value they describe.

    Strings still open are included with their text so far; containers as they stand.

    Args:
        events: the ``region_value`` events of one region, in order (other events are skipped).

    Returns:
        The value (``None`` when there were no events).

    Raises:
        ValueError: an event that does not fit the ones before it (a path that does not exist, a
            key set twice, text for something that is not an open string).
    """
    root: dict[Any, Any] = {}
    for event in events:
        if event["type"] != "region_value":
            continue
        op, path = event["op"], event["path"]
        parent: Any = root
        key: Any = _ROOT
        for step in path:
            parent, key = _child(parent, key, path), step
        if op == "text":
            target = _get(parent, key, path)
            if not isinstance(target, _Open):
                raise ValueError(f"region_value text at {path}: no open string there")
            target.parts.append(event["text"])
        elif op == "end":
            target = _get(parent, key, path)
            if isinstance(target, _Open):
                _put(parent, key, "".join(target.parts), path, replace=True)
        else:
            kind = event.get("kind")
            value = event["value"] if op == "set" else _Open() if kind == "string" else \
                {} if kind == "object" else []
            _put(parent, key, value, path)
    return _strings(root.get(_ROOT))


def _child(parent: Any, key: Any, path: list[Any]) -> Any:
    child = _get(parent, key, path)
    if not isinstance(child, (dict, list)):
        raise ValueError(f"region_value at {path}: a parent is not an object or array")
    return child


def _get(parent: Any, key: Any, path: list[Any]) -> Any:
    try:
        return parent[key]
    except (KeyError, IndexError, TypeError):
        raise ValueError(f"region_value at {path}: nothing begun there") from None


def _put(parent: Any, key: Any, value: Any, path: list[Any], replace: bool = False) -> None:
    if (isinstance(parent, dict) and (replace or key not in parent)) or (
            isinstance(parent, list) and replace and isinstance(key, int) and key < len(parent)):
        parent[key] = value
    elif isinstance(parent, list) and isinstance(key, int) and key == len(parent):
        parent.append(value)
    else:
        raise ValueError(f"region_value at {path}: cannot place a value there")


def _strings(value: Any) -> Any:
    """``value`` with open strings joined (iterative)."""
    if isinstance(value, _Open):
        return "".join(value.parts)
    stack = [value] if isinstance(value, (dict, list)) else []
    while stack:
        item = stack.pop()
        keys = list(item) if isinstance(item, dict) else range(len(item))
        for key in keys:
            child = item[key]
            if isinstance(child, _Open):
                item[key] = "".join(child.parts)
            elif isinstance(child, (dict, list)):
                stack.append(child)
    return value
