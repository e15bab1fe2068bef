"""Streaming events: the shapes :class:`chatcodec.ResponseParser` emits, and helpers to combine them.

Events are plain ``dict`` objects at run time (a dict literal costs a fraction of a typed object,
and it runs once per generated token). The ``TypedDict`` classes below only describe them for
readers and type checkers::

    {"type": "region_open",  "field": "content"}
    {"type": "region_chunk", "field": "content", "text": "Hel", "dirty": False}
    {"type": "region_close", "field": "content", "value": "Hello"}

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

__all__ = ["Event", "RegionChunk", "RegionClose", "RegionOpen", "join_chunks", "merge_chunks"]


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


Event = RegionOpen | RegionChunk | RegionClose


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
