"""A structured region cut off right after its open is a parse problem, never silently dropped.

``hello<tool_call>`` (generation stopped right after the call marker) gave ``content: "hello"``:
``x-json-calls`` reads an empty text as no calls, so the marker vanished with no record, in strict
and keep mode alike (docs/profiles.md, "Cut-off calls": a call cut off inside is a parse problem).

The same holds for such a region ended by the next delimiter rather than by its own close:
``a<tool_call><tool_call>b`` gave ``content: "a<tool_call>b"``, the first open gone (the next open
is the hermes region's zero-width close), and ``<tool_call>`` three times kept only one.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ChatCodec, ResponseParseError, ResponseParser, parse_response, profiles
from chatcodec.events import join_chunks

OUTPUT = "hello<tool_call>"
RECORD = {"field": "tool_calls", "parser": "x-switch", "offset": 16,
          "error": "field 'tool_calls' (content parser 'x-switch'): the output ends right after "
                   "this region's open (nothing of its value was written)",
          "text": "", "raw": "<tool_call>", "span": [5, 16]}


@pytest.mark.parametrize("chunk", [len(OUTPUT), 1, 3])
def test_keep_records_the_open_and_keeps_it_as_content(chunk: int) -> None:
    parser = ChatCodec.from_pretrained("hermes").get_response_parser(prefix="", errors="keep")
    for start in range(0, len(OUTPUT), chunk):
        parser.feed(OUTPUT[start:start + chunk])
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "content": "hello<tool_call>", "parse_errors": [RECORD]}


def test_strict_raises() -> None:
    parser = ChatCodec.from_pretrained("hermes").get_response_parser(prefix="")
    parser.feed(OUTPUT)
    with pytest.raises(ResponseParseError, match="ends right after this region's open"):
        parser.finalize()


def test_a_closed_empty_region_and_an_empty_text_region_are_unchanged() -> None:
    codec = ChatCodec.from_pretrained("qwen3")
    parser = codec.get_response_parser(prefix="")
    parser.feed("hello<tool_call></tool_call><|im_end|>")
    assert parser.finalize()[0] == {"role": "assistant", "content": "hello"}
    parser = codec.get_response_parser(prefix="<|im_start|>assistant\n")
    parser.feed("<think>")
    assert parser.finalize()[0] == {"role": "assistant"}  # an empty reasoning is no reasoning


def _problem(offset: int, ended: str, raw: str, span: list[int], text: str = "") -> dict[str, Any]:
    return {"field": "tool_calls", "parser": "x-switch", "offset": offset,
            "error": f"field 'tool_calls' (content parser 'x-switch'): {ended} right after this "
                     "region's open (nothing of its value was written)",
            "text": text, "raw": raw, "span": span}


NEXT = "the next delimiter comes"
ENDS = "the output ends"
#: Outputs where an open is followed by the next delimiter, and the message ``errors="keep"`` gives.
ENDED_BY_NEXT = {
    "<tool_call>" * 3: {
        "role": "assistant", "content": "<tool_call>" * 3,
        "parse_errors": [_problem(11, NEXT, "<tool_call>", [0, 11]),
                         _problem(22, NEXT, "<tool_call>", [11, 22]),
                         _problem(33, ENDS, "<tool_call>", [22, 33])]},
    "a<tool_call><tool_call>b": {
        "role": "assistant", "content": "a<tool_call><tool_call>b",
        "parse_errors": [_problem(12, NEXT, "<tool_call>", [1, 12]),
                         {"field": "tool_calls", "parser": "x-switch", "offset": 23,
                          "error": "field 'tool_calls' (content parser 'x-switch'): x-json-calls: "
                                   "invalid JSON at offset 0: Expecting value",
                          "text": "b", "raw": "<tool_call>b", "span": [12, 24]}]},
    "a<tool_call>\n<|im_end|>": {
        "role": "assistant", "content": "a<tool_call>\n",
        "parse_errors": [_problem(13, NEXT, "<tool_call>\n", [1, 13], "\n")]},
    'a<tool_call> <tool_call>{"name": "f", "arguments": {}}</tool_call>': {
        "role": "assistant", "content": "a<tool_call> ",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
        "parse_errors": [_problem(13, NEXT, "<tool_call> ", [1, 13], " ")]},
}


def _stream(output: str, chunk: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parser = ResponseParser(profiles.load("hermes").response_template, prefix="", errors="keep")
    events = []
    for start in range(0, len(output), chunk):
        events += parser.feed(output[start:start + chunk])
    message, final = parser.finalize()
    return message, [*events, *final]


@pytest.mark.parametrize("output", list(ENDED_BY_NEXT))
def test_keep_records_an_open_ended_by_the_next_delimiter(output: str) -> None:
    template = profiles.load("hermes").response_template
    assert parse_response(output, template, prefix="", errors="keep") == ENDED_BY_NEXT[output]
    whole, events = _stream(output, len(output))
    by_character, streamed = _stream(output, 1)
    assert whole == by_character == ENDED_BY_NEXT[output]
    failed = [event["error"] for event in events if event.get("error")]
    assert failed == [event["error"] for event in streamed if event.get("error")] \
        == ENDED_BY_NEXT[output]["parse_errors"]
    assert join_chunks(events)["content"] == join_chunks(streamed)["content"] \
        == ENDED_BY_NEXT[output]["content"]


def test_strict_raises_on_an_open_ended_by_the_next_open() -> None:
    parser = ChatCodec.from_pretrained("hermes").get_response_parser(prefix="")
    with pytest.raises(ResponseParseError, match="the next delimiter comes right after this region's open") \
            as raised:
        parser.feed("a<tool_call><tool_call>b")
        parser.finalize()
    assert (raised.value.offset, raised.value.raw, raised.value.span) == (12, "<tool_call>", (1, 12))


PIECES = ["<tool_call>", "</tool_call>", " ", "\n", "x", "{", "<tool_c"]


@given(st.lists(st.sampled_from(PIECES), max_size=10))
def test_keep_loses_no_open_however_they_repeat(pieces: list[str]) -> None:
    """hermes, no call ever complete: the content is the output, every delimiter kept, but for
    empty regions closed by their own close (no calls) and whitespace-only text between regions
    (layout); one character at a time gives the same message."""
    output = "".join(pieces)
    template = profiles.load("hermes").response_template
    message = parse_response(output, template, prefix="", errors="keep")
    expected = re.sub(r"\s", "", re.sub(r"<tool_call>\s*</tool_call>", "", output))
    assert re.sub(r"\s", "", message.get("content", "")) == expected
    assert "tool_calls" not in message
    assert _stream(output, 1)[0] == message
