"""The parser's buffer (``response_templates/buffer.py``): offsets, trims, the held tail.

The unit tests drive :class:`Buffer` directly; the parser tests check what its invariants promise
through ``ResponseParser``: offsets that do not move when the buffer trims, ``resolved`` negative
while the prompt's tail is undecided, and held text that reaches its region.
"""

from __future__ import annotations

import pytest

from chatcodec import ResponseParser
from chatcodec.response_templates.buffer import DEFER_AFTER, TRIM_THRESHOLD, Buffer
from chatcodec.response_templates.lookbehind import LOOKBEHIND_CONTEXT
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN

ANCHOR = "<|im_start|>assistant\n"


def test_a_new_buffer_is_empty_at_offset_zero() -> None:
    buffer = Buffer()
    assert (buffer.text, buffer.pos, buffer.origin, buffer.resolved) == ("", 0, 0, 0)
    assert buffer.held is None and buffer.zero_width == frozenset()


def test_resolved_is_the_offset_of_the_first_unresolved_character() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos, buffer.origin = "<think>\nab</thi", 10, -15
    assert buffer.resolved == -5  # "</thi" (5 characters) is undecided, and in the prompt
    buffer.text, buffer.pos, buffer.origin = "xyz<", 3, 40
    assert buffer.resolved == 43


def test_trim_drops_decided_text_and_keeps_every_offset() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos, buffer.origin = "a" * 1000 + "b" * 100 + "<tool_", 1100, -7
    assert buffer.trim() == 1100 - LOOKBEHIND_CONTEXT == 844
    assert buffer.text == "a" * 156 + "b" * 100 + "<tool_"
    assert (buffer.pos, buffer.origin, buffer.resolved) == (256, 837, 1093)
    # the character at offset 1093 was "<" before the trim and still is
    assert buffer.text[1093 - buffer.origin] == "<"
    assert buffer.text[buffer.pos - 101 : buffer.pos] == "a" + "b" * 100


def test_trim_keeps_the_look_behind_context_however_long_the_text() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos = "x" * 5000, 5000
    buffer.trim()
    assert (len(buffer.text), buffer.pos, buffer.origin, buffer.resolved) == (256, 256, 4744, 5000)


def test_a_short_tail_does_not_wait() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos = "Hi <tool_", 3
    buffer.hold("")
    assert buffer.held is None


def test_an_absorbed_whitespace_run_waits_while_only_that_whitespace_arrives() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos = "answer\n\n", 6
    buffer.hold(" \n")
    assert buffer.held == [] and buffer.hold_chars == frozenset(" \n") and not buffer.hold_wide
    assert buffer.room > 10**15  # no bound: a run of that whitespace never needs a new search
    assert buffer.wait("\n \n") is True
    assert buffer.wait(" ") is True
    assert buffer.held == ["\n \n", " "]
    assert buffer.wait("\n<") is False  # "<" is new: searched now
    assert buffer.wait("") is False  # empty text asks for a search (finalize, a caller's flush)
    assert buffer.held == ["\n \n", " "]
    assert buffer.release("\n<") == "\n \n \n<"
    assert buffer.held is None
    assert buffer.text == "answer\n\n"  # released text is the caller's to append


def test_a_tail_that_is_not_absorbed_whitespace_does_not_wait_as_one() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos = "answer\n\nx", 6
    buffer.hold(" \n")
    assert buffer.held is None


def test_a_long_tail_waits_until_a_new_character_or_until_it_doubles() -> None:
    tail = "<function=" + "name_" * 60  # 310 characters: at least DEFER_AFTER
    assert len(tail) == 310 >= DEFER_AFTER
    buffer = Buffer()
    buffer.text, buffer.pos = "Hi " + tail, 3
    buffer.hold("")
    assert buffer.held == [] and buffer.hold_chars == frozenset(tail) and buffer.room == 310
    assert not buffer.hold_wide
    assert buffer.wait("name_") is True
    assert buffer.wait("mean") is True
    assert (buffer.held, buffer.room) == (["name_", "mean"], 301)
    assert buffer.wait(">") is False  # new to the tail
    assert buffer.wait("n" * 302) is False  # more than the tail's length again
    assert buffer.wait("n" * 301) is True
    assert buffer.room == 0
    assert buffer.wait("n") is False  # the tail has doubled: searched again
    assert buffer.release("") == "name_mean" + "n" * 301


def test_a_tail_one_character_short_of_the_threshold_does_not_wait() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos = "ab" + "c" * (DEFER_AFTER - 1), 2
    buffer.hold("")
    assert buffer.held is None
    buffer.text += "c"
    buffer.hold("")
    assert buffer.held == [] and buffer.room == DEFER_AFTER


def test_a_non_ascii_tail_lets_any_non_ascii_text_wait() -> None:
    tail = '{"name": "' + "天气" * 200
    buffer = Buffer()
    buffer.text, buffer.pos = tail, 0
    buffer.hold("")
    assert buffer.hold_wide is True and buffer.room == 410
    assert buffer.wait("巴黎") is True  # characters the tail does not hold, but non-ASCII
    assert buffer.wait("晴 ") is True  # " " is in the tail
    assert buffer.wait("晴}") is False  # "}" is new
    assert buffer.held == ["巴黎", "晴 "] and buffer.room == 406


def test_an_ascii_tail_does_not_let_non_ascii_text_wait() -> None:
    buffer = Buffer()
    buffer.text, buffer.pos = "x" * 300, 0
    buffer.hold("")
    assert buffer.hold_wide is False
    assert buffer.wait("é") is False


def test_a_buffer_is_small_and_has_no_instance_dict() -> None:
    buffer = Buffer()
    assert not hasattr(buffer, "__dict__")
    with pytest.raises(AttributeError):
        buffer.other = 1  # type: ignore[attr-defined]
    # eight slots, one pointer each, after the object's header (64-bit CPython)
    assert Buffer.__basicsize__ == object.__basicsize__ + 8 * 8


# -- through the parser -----------------------------------------------------------------------------


def test_resolved_is_negative_while_the_prompts_tail_is_undecided() -> None:
    parser = ResponseParser(QWEN, prefix=ANCHOR + "<think>\nabc</thi")
    assert parser.resolved == -5
    assert [(e["type"], e.get("text")) for e in parser.initial_events] == [
        ("region_open", None), ("region_chunk", "\nabc")]
    # the prompt's layout (the newline after <think>) is not part of the value
    assert parser.feed("nk>") == [{"type": "region_close", "field": "reasoning_content", "value": "abc"}]
    assert parser.resolved == 3


def test_offsets_do_not_move_when_the_buffer_trims() -> None:
    words = "word " * 600  # 3,000 characters: the buffer trims twice before the call
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    parser = ResponseParser(QWEN, prefix="", offsets=True)
    events = []
    for index in range(0, len(words), 4):
        events += parser.feed(words[index : index + 4])
    assert parser._buffer.origin > 0  # it did trim
    events += parser.feed(call)
    events += parser.finalize()[1]
    assert [{k: v for k, v in e.items() if k in ("type", "field", "start", "end")}
            for e in events if e["type"] != "region_chunk"] == [
        {"type": "region_open", "field": "content", "start": 0},
        {"type": "region_close", "field": "content", "end": 3000},
        {"type": "region_open", "field": "tool_calls", "start": 3000},
        {"type": "region_close", "field": "tool_calls", "end": 3053},
    ]
    assert parser.resolved == 3053


def test_the_buffer_holds_no_more_than_the_threshold_of_decided_text() -> None:
    parser = ResponseParser(QWEN, prefix="")
    for _ in range(2000):
        parser.feed("abc ")
        buffer = parser._buffer
        assert buffer.pos <= TRIM_THRESHOLD and buffer.pos == len(buffer.text)
    assert parser.resolved == 8000


def test_text_kept_while_the_tail_waits_reaches_its_region() -> None:
    template = {"start_anchor": "A", "fields": {
        "calls": {"open": "<tc>", "close_pattern": r"</tc>\s*", "repeats": True}, "content": {}}}
    parser = ResponseParser(template, prefix="")
    assert [e["type"] for e in parser.feed("<tc>x</tc>")] == ["region_open", "region_chunk"]
    for _ in range(126):  # the close may still grow: the tail is searched on every feed...
        assert parser.feed("\n ") == []
    assert parser._buffer.held == []  # ...until it holds DEFER_AFTER characters ("</tc>" + 252)
    assert parser._buffer.room == 257
    for _ in range(4):  # then it waits, unsearched, while only characters it holds arrive
        assert parser.feed("\n ") == []
    assert parser._buffer.held == ["\n "] * 4
    assert parser.resolved == 5
    events = parser.feed("done")
    assert parser._buffer.held is None
    assert events == [
        {"type": "region_close", "field": "calls", "value": "x"},
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "done", "dirty": False},
    ]
    assert parser.resolved == 274
    assert parser.finalize()[0] == {"calls": ["x"], "content": "done"}
