"""``ResponseParser(offsets=True)``: where each region's raw text lies in the generated text.

The engine plugins hand raw text on to the engines (the text after a reasoning region, the text
outside reasoning), so the offsets must be exact: checked on a hand-written case, then on every peer
vector of every bundled profile (whole, one character at a time, random splits): the regions' spans
follow each other without gaps or overlaps, start after the prefix and cover the output to its end,
and each span's text is what the region was made of (its chunks inside it, its delimiters around).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles
from chatcodec.events import merge_chunks
from tests.conftest import load_json

TEMPLATE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True},
        "content": {"close": "<|im_end|>"},
    },
}


def _events(template: Any, chunks: list[str], prefix: str, **options: Any) -> list[dict[str, Any]]:
    parser = ResponseParser(template, prefix=prefix, offsets=True, **options)
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.finalize()[1]
    return merge_chunks(events)


def test_offsets_of_each_region() -> None:
    output = '<think>a</think>Hi<tool_call>{"x": 1}</tool_call>ok<|im_end|>'
    assert _events(TEMPLATE, [output], "") == [
        {"type": "region_open", "field": "reasoning_content", "start": 0},
        {"type": "region_chunk", "field": "reasoning_content", "text": "a", "dirty": False},
        {"type": "region_close", "field": "reasoning_content", "value": "a", "end": 16},
        {"type": "region_open", "field": "content", "start": 16},
        {"type": "region_chunk", "field": "content", "text": "Hi", "dirty": False},
        {"type": "region_close", "field": "content", "value": "Hi", "end": 18},
        {"type": "region_open", "field": "tool_calls", "start": 18},
        {"type": "region_chunk", "field": "tool_calls", "text": '{"x": 1}', "dirty": True},
        {"type": "region_close", "field": "tool_calls", "value": {"x": 1}, "end": 49},
        {"type": "region_open", "field": "content", "start": 49},
        {"type": "region_chunk", "field": "content", "text": "ok", "dirty": False},
        {"type": "region_close", "field": "content", "value": "ok", "end": 61},
    ]


def test_a_region_the_prefix_opened_starts_inside_the_prefix() -> None:
    events = _events(TEMPLATE, ["why</think>Hi"], "<|im_start|>assistant\n<think>\n")
    assert events[0] == {"type": "region_open", "field": "reasoning_content", "start": -8}
    assert events[2] == {"type": "region_close", "field": "reasoning_content", "value": "why", "end": 11}


def test_a_failed_region_put_back_into_content_keeps_its_span() -> None:
    events = _events(TEMPLATE, ["Hi<tool_call>{bad</tool_call>"], "", errors="keep")
    assert [(e["type"], e.get("start"), e.get("end")) for e in events[3:]] == [
        ("region_open", 2, None), ("region_chunk", None, None), ("region_close", None, 29),
        ("region_open", 2, None), ("region_chunk", None, None), ("region_close", None, 29),
    ]
    assert events[-2]["text"] == "<tool_call>{bad</tool_call>"


def test_without_offsets_the_events_are_unchanged() -> None:
    parser = ResponseParser(TEMPLATE, prefix="")
    assert parser.feed("<think>a</think>") == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "a", "dirty": False},
        {"type": "region_close", "field": "reasoning_content", "value": "a"},
    ]


def test_resolved_stops_before_a_possible_delimiter() -> None:
    parser = ResponseParser(TEMPLATE, prefix="")
    parser.feed("Hi<|im_")
    assert parser.resolved == 2
    parser.feed("start")  # not a delimiter any more: everything is decided
    assert parser.resolved == 12


def _spans(events: list[dict[str, Any]], output: str) -> list[tuple[int, int]]:
    """Each region's span; checks that its chunks lie inside it (for regions after the prefix).

    A failed region put back into content (errors="keep") has its own span again: counted once.
    """
    spans: list[tuple[int, int]] = []
    start, chunks, failed = 0, "", False
    for event in events:
        if event["type"] == "region_open":
            start, chunks = event["start"], ""
        elif event["type"] == "region_chunk":
            chunks += event["text"]
        elif event["type"] == "region_close":
            restored, failed = failed, "error" in event
            if restored:
                assert spans[-1] == (start, event["end"])
                continue
            spans.append((start, event["end"]))
            if start >= 0:
                assert chunks in output[start : event["end"]], (chunks, start, event)
    return spans


def _check_spans(events: list[dict[str, Any]], output: str) -> None:
    """Spans follow each other without overlapping, within the output after the prefix."""
    spans = _spans(events, output)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans)), spans
    assert all(start < end <= len(output) for start, end in spans), spans


_VECTORS = [v for v in load_json("peer_vectors.json")["vectors"] if v["family"] in profiles.names()]


@pytest.mark.parametrize("vector", _VECTORS[::3], ids=lambda vector: vector["id"])
def test_spans_of_peer_vectors_any_chunking(vector: dict[str, Any]) -> None:
    profile = profiles.load(vector["family"])
    prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
    output, options = vector["output"], {"errors": "keep", "tools": vector["tools"]}
    whole = _events(profile.response_template, [output], prefix, **options)
    _check_spans(whole, output)
    rng = random.Random(vector["id"])
    cuts = sorted(rng.sample(range(1, len(output)), min(5, len(output) - 1))) if len(output) > 1 else []
    pieces = [output[a:b] for a, b in zip([0, *cuts], [*cuts, len(output)], strict=True)]
    assert _events(profile.response_template, pieces, prefix, **options) == whole
    assert _events(profile.response_template, list(output), prefix, **options) == whole


_PARTS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", "a", "{", "}", '"x"', ":", " ",
          "<"]


@given(st.lists(st.sampled_from(_PARTS), max_size=12), st.integers(1, 5))
def test_spans_cover_everything_but_stray_end_markers(parts: list[str], size: int) -> None:
    output = "".join(parts)
    whole = _events(TEMPLATE, [output], "", errors="keep")
    _check_spans(whole, output)
    covered = 0
    for start, end in _spans(whole, output):
        assert output[covered:start] == "<|im_end|>" * ((start - covered) // len("<|im_end|>"))
        covered = end
    assert output[covered:] == "<|im_end|>" * ((len(output) - covered) // len("<|im_end|>"))
    pieces = [output[i : i + size] for i in range(0, len(output), size)]
    assert _events(TEMPLATE, pieces, "", errors="keep") == whole
