"""Checks of the partial-value protocol (``region_value`` events), run three ways.

``check_values`` feeds an output whole, one character at a time and at seeded random splits to a
parser made with ``value_deltas=True`` and asserts, for every chunking:

* replaying each region's ``region_value`` events (``build_value``) gives its ``region_close``
  value whenever the region closed without an error;
* the merged ``region_value`` events (``merge_values``) are the same for every chunking (when
  parsing does not raise: a strict parser that raises loses the events of the failing feed);
* every event is well formed and fits the ones before it (``build_value`` raises otherwise), and
  the parser never warns that a region's value stream stopped (``ValueStreamWarning``);
* the message and the region events other than ``region_value`` are those of a parser made
  without ``value_deltas`` (the option adds events, it changes nothing else).
"""

from __future__ import annotations

import warnings
from typing import Any

from chatcodec import ResponseParser
from chatcodec.errors import ChatCodecError
from chatcodec.events import build_value, merge_chunks, merge_values
from chatcodec.response_templates.scanners.shadow import same_value
from chatcodec.response_templates.value_stream import ValueStreamWarning
from tests.response_templates.helpers import random_splits


def run(template: Any, chunks: list[str], *, prefix: str = "", tools: Any = None, errors: str = "strict",
        value_deltas: bool = True) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Feed ``chunks``; the message (``None`` when parsing raised) and every event in order."""
    parser = ResponseParser(template, prefix=prefix, tools=tools, errors=errors, value_deltas=value_deltas)
    events = list(parser.initial_events)
    try:
        for chunk in chunks:
            events += parser.feed(chunk)
        message, final = parser.finalize()
    except ChatCodecError:
        return None, events
    return message, events + final


def regions(events: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]]:
    """Each region's ``(field, region_value events, region_close event or None)``."""
    out: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]] = []
    current: tuple[str, list[dict[str, Any]], dict[str, Any] | None] | None = None
    for event in events:
        if event["type"] == "region_open":
            current = (event["field"], [], None)
        elif event["type"] == "region_value":
            assert current is not None and event["field"] == current[0], event
            current[1].append(event)
        elif event["type"] == "region_close" and current is not None:
            out.append((current[0], current[1], event))
            current = None
    if current is not None:
        out.append(current)
    return out


def check_events(events: list[dict[str, Any]]) -> int:
    """Assert every closed region's replay equals its value; return how many regions streamed values."""
    streamed = 0
    for field, values, close in regions(events):
        replayed = build_value(values)
        if close is None or "error" in close or not values:
            continue
        streamed += 1
        assert same_value(replayed, close["value"]), (
            f"field {field!r}: replayed {replayed!r} != region_close value {close['value']!r}")
    return streamed


def check_values(template: Any, output: str, *, prefix: str = "", tools: Any = None, errors: str = "strict",
                 splits: int = 12) -> list[dict[str, Any]]:
    """Run the checks of the module docstring; return the merged ``region_value`` events."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ValueStreamWarning)
        plain_message, plain_events = run(template, [output], prefix=prefix, tools=tools, errors=errors,
                                          value_deltas=False)
        plain = merge_chunks(plain_events)
        expected: list[dict[str, Any]] | None = None
        chunkings = [[output], list(output)] + [random_splits(output, seed) for seed in range(splits)]
        for chunks in chunkings:
            message, events = run(template, chunks, prefix=prefix, tools=tools, errors=errors)
            assert same_value(message, plain_message)
            check_events(events)
            merged = merge_values(events) if message is not None else []
            if expected is None:
                expected = merged
                assert same_value(merge_chunks([e for e in events if e["type"] != "region_value"]), plain)
            else:
                assert merged == expected, f"chunks {chunks!r}"
    assert expected is not None
    return expected
