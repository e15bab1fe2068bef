"""Shared checks for the profile tests: the three-way stream check and the corpus comparison rules.

``parse_three_ways`` is h11's ``tr()`` applied to characters: every parse is run on the whole
output, one character at a time and at seeded random splits, and must give the same final message
and the same joined chunk text per region. ``same_json`` compares JSON values with their types
(``1`` is not ``1.0``, ``true`` is not ``1``), as the corpus README requires for arguments.
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import chatcodec
from chatcodec.events import join_chunks

#: Random splits per parse, on top of the whole output and one character at a time.
RANDOM_SPLITS = 8


def _stream(
    template: Any, chunks: list[str], prefix: str, tools: Any, errors: str
) -> tuple[dict[str, Any], dict[str, str]]:
    parser = chatcodec.ResponseParser(template, prefix=prefix, tools=tools, errors=errors)
    events = list(parser.initial_events)
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    message, final_events = parser.finalize()
    return message, join_chunks([*events, *final_events])


def _random_chunks(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    cuts = (
        sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12))))
        if len(text) > 1
        else []
    )
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def parse_three_ways(
    template: Any, text: str, *, prefix: str, tools: Any = None, errors: str = "strict"
) -> dict[str, Any]:
    """Parse ``text`` whole, one character at a time and at seeded random splits; all must agree.

    Returns:
        The message of :func:`chatcodec.parse_response`.
    """
    expected = chatcodec.parse_response(text, template, prefix=prefix, tools=tools, errors=errors)
    whole, joined = _stream(template, [text], prefix, tools, errors)
    assert whole == expected, "feeding the whole output differs from parse_response"
    splits = {"one character at a time": list(text)}
    splits.update(
        {f"random split (seed {seed})": _random_chunks(text, seed) for seed in range(RANDOM_SPLITS)}
    )
    for name, chunks in splits.items():
        message, chunk_text = _stream(template, chunks, prefix, tools, errors)
        assert message == expected, f"{name}: the final message differs from parse_response"
        assert chunk_text == joined, f"{name}: the joined chunk text per region differs"
    return expected


def same_json(left: Any, right: Any) -> bool:
    """JSON equality that keeps types apart (``1`` vs ``1.0`` vs ``True``)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_json(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same_json(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def peer_view(message: dict[str, Any]) -> dict[str, Any]:
    """A parsed message in the corpus's form: content, reasoning_content, tool_calls as {name, arguments}."""
    return {
        "content": message.get("content"),
        "reasoning_content": message.get("reasoning_content"),
        "tool_calls": [
            {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            for call in message.get("tool_calls", [])
        ],
    }


def whitespace_is_exact(note: str) -> bool:
    """Whether a vector's note says content/reasoning whitespace is exact (``EXACT`` or ``(exact``)."""
    return re.search(r"EXACT|\(exact", note) is not None


def matches(got: dict[str, Any], expected: dict[str, Any], *, exact_whitespace: bool) -> bool:
    """The corpus README's comparison of a parsed message (``peer_view``) with an expected one."""
    for key in ("content", "reasoning_content"):
        ours, theirs = got[key] or "", expected[key] or ""
        if not exact_whitespace:
            ours, theirs = ours.strip(), theirs.strip()
        if ours != theirs:
            return False
    calls, expected_calls = got["tool_calls"], expected["tool_calls"]
    return len(calls) == len(expected_calls) and all(
        call["name"] == other["name"] and same_json(call["arguments"], other["arguments"])
        for call, other in zip(calls, expected_calls, strict=True)
    )
