"""A call argument never closed, then a newline, then the call's end: the value events end too.

``xml-inline`` value patterns that end with ``$`` (GLM-4.5's ``<arg_value>``, Seed-OSS's
``<parameter=...>``) match before a final newline, as Python's ``$`` does: the whole-text value
of ``<arg_value>1\\n</tool_call>`` is ``"1"``. The stream must hold that newline until the text
after it decides, so chunked feeding gives the events of whole-text feeding and never warns.
"""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles

GLM = "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1\n</tool_call>"
SEED = "<seed:tool_call><function=f><parameter=a>1\n</function></seed:tool_call>"
ARG = ["function", "arguments", "a"]
GLM_VALUE_EVENTS = [
    {"type": "region_value", "field": "tool_calls", "op": "begin", "path": [], "kind": "object"},
    {"type": "region_value", "field": "tool_calls", "op": "set", "path": ["type"], "value": "function"},
    {"type": "region_value", "field": "tool_calls", "op": "begin", "path": ["function"], "kind": "object"},
    {"type": "region_value", "field": "tool_calls", "op": "set", "path": ["function", "name"], "value": "f"},
    {"type": "region_value", "field": "tool_calls", "op": "begin", "path": ["function", "arguments"],
     "kind": "object"},
    {"type": "region_value", "field": "tool_calls", "op": "begin", "path": ARG, "kind": "string"},
    {"type": "region_value", "field": "tool_calls", "op": "text", "path": ARG, "text": "1"},
    {"type": "region_value", "field": "tool_calls", "op": "end", "path": ARG},
    {"type": "region_value", "field": "tool_calls", "op": "end", "path": ["function", "arguments"]},
    {"type": "region_value", "field": "tool_calls", "op": "end", "path": ["function"]},
    {"type": "region_value", "field": "tool_calls", "op": "end", "path": []},
]
MESSAGE = {"role": "assistant",
           "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": "1"}}}]}


def _run(profile: str, chunks: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The events of feeding ``chunks`` then finalizing, the message, and the warnings raised."""
    p = profiles.load(profile)
    parser = ResponseParser(p.response_template, prefix=p.generation_prompt_ending(None), value_deltas=True)
    events: list[dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for chunk in chunks:
            events += parser.feed(chunk)
        message, last = parser.finalize()
        events += last
    return events, message, [str(w.message) for w in caught]


def _values(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "region_value"]


def _merged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The value events with each run of ``text`` events on one path joined (chunking splits text)."""
    out: list[dict[str, Any]] = []
    for event in _values(events):
        last = out[-1] if out else None
        joins = last is not None and last["op"] == "text" and last["path"] == event["path"]
        if last is not None and joins and event["op"] == "text":
            out[-1] = {**last, "text": last["text"] + event["text"]}
        else:
            out.append(event)
    return out


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_glm_value_ends_for_every_chunk_size() -> None:
    for size in (1, 3, len(GLM)):
        events, message, warned = _run("glm45", _pieces(GLM, size))
        assert warned == []
        assert _values(events) == GLM_VALUE_EVENTS
        assert message == MESSAGE


def test_glm_newline_is_not_streamed_as_value_text() -> None:
    events, _, _ = _run("glm45", list(GLM))
    texts = [e["text"] for e in _values(events) if e["op"] == "text"]
    assert texts == ["1"]


def test_seed_oss_value_ends_for_every_chunk_size() -> None:
    for size in (1, 3, len(SEED)):
        events, message, warned = _run("seed_oss", _pieces(SEED, size))
        assert warned == []
        assert _values(events) == GLM_VALUE_EVENTS  # the same call, the same events
        assert message == MESSAGE


def _chunks(text: str) -> st.SearchStrategy[list[str]]:
    cuts = st.lists(st.integers(1, len(text) - 1), unique=True, max_size=len(text) - 1).map(sorted)
    return cuts.map(lambda cs: [text[a:b] for a, b in zip([0, *cs], [*cs, len(text)], strict=True)])


_TEXTS = [
    GLM, SEED, GLM.replace("1\n", "1\n\n"), SEED.replace("1\n", "x y\n"), GLM.replace("1\n", "1 \n"),
    GLM.replace("1\n", "1\n<arg_key>b</arg_key>\n<arg_value>2\n"),
    SEED.replace("1\n", "1\n<parameter=b>2\n"), SEED.replace("1\n", "1\n\n"),
]


@given(st.sampled_from(_TEXTS).flatmap(lambda t: st.tuples(st.just(t), _chunks(t))))
def test_any_chunking_gives_the_whole_text_events(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    profile = "glm45" if text.startswith("<tool_call>") else "seed_oss"
    whole, whole_message, _ = _run(profile, [text])
    events, message, warned = _run(profile, chunks)
    assert warned == []
    assert _merged(events) == _merged(whole)
    assert message == whole_message
