"""Test helpers for decoding: exact (type-aware) comparison and the three-way streaming check.

``check_stream`` is h11's ``tr()`` applied to characters: an output is parsed one-shot, fed whole,
fed one character at a time and fed at 20 seeded random splits; every way must give the same
message and the same concatenated chunk text per field.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

from chatcodec import ResponseParser, parse_response
from chatcodec.events import join_chunks

#: For modules that run every corpus vector: ``up-prefix-anchor-not-found`` has a prefix without
#: the start anchor, which warns (the warning itself is tested in ``test_prefix_anchor.py``).
IGNORE_NO_ANCHOR = pytest.mark.filterwarnings(
    "ignore:the prefix does not contain the response template's start anchor:UserWarning")

#: Random splits per output in ``check_stream``.
RANDOM_SPLITS = 20


def decode_expected(value: Any) -> Any:
    """Turn the corpus' ``{"$float": "NaN"}`` encoding back into floats."""
    if isinstance(value, dict):
        if set(value) == {"$float"}:
            return float(value["$float"].replace("Infinity", "inf"))
        return {key: decode_expected(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_expected(item) for item in value]
    return value


def typed(value: Any) -> Any:
    """A form of ``value`` in which ``1``, ``1.0`` and ``True`` differ and ``NaN`` equals ``NaN``."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [typed(item) for item in value]
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, int):
        return ("int", value)
    return value


def assert_same(actual: Any, expected: Any) -> None:
    """Assert equality with JSON types respected (``1`` is not ``1.0``, ``true`` is not ``1``)."""
    assert typed(actual) == typed(expected), f"\nactual:   {actual!r}\nexpected: {expected!r}"


def loadable(case: dict[str, Any]) -> bool:
    """Whether a corpus vector's template loads (load-error vectors are checked elsewhere)."""
    try:
        ResponseParser(case["template"], prefix="")
    except ValueError:
        return False
    return True


def stream(
    template: Any, chunks: list[str], prefix: str = "", tools: Any = None, errors: str = "strict"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Feed ``chunks``; return the message and every event (initial, per feed, final) in order."""
    parser = ResponseParser(template, prefix=prefix, tools=tools, errors=errors)
    events = list(parser.initial_events)
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    message, final = parser.finalize()
    return message, events + final


def random_splits(text: str, seed: int) -> list[str]:
    """``text`` cut at a seeded random number of random positions."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(0, len(text) - 1))) if len(text) > 1 else []
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def check_stream(
    template: Any,
    output: str,
    expected: dict[str, Any] | None = None,
    *,
    prefix: str = "",
    tools: Any = None,
    errors: str = "strict",
) -> dict[str, str]:
    """Assert one-shot, whole, 1-char and random-split parsing agree (and equal ``expected``).

    Returns:
        The concatenated chunk text per field (identical for every chunking).
    """
    one_shot = parse_response(output, template, prefix=prefix, tools=tools, errors=errors)
    if expected is not None:
        assert_same(one_shot, expected)
    message, events = stream(template, [output], prefix, tools, errors)
    assert_same(message, one_shot)
    joined = join_chunks(events)
    chunkings = [list(output)] + [random_splits(output, seed) for seed in range(RANDOM_SPLITS)]
    for chunks in chunkings:
        message, events = stream(template, chunks, prefix, tools, errors)
        assert_same(message, one_shot)
        assert join_chunks(events) == joined, f"chunks {chunks!r}"
    return joined
