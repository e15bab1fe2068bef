"""The prompt is final text: what a delimiter the prompt ends with decides comes before any output
(``chatcodec.response_templates.prompt_end``, the parser's ``initial_events``).

Every case is fed whole, three characters and one character at a time; the events (chunks merged)
and the message are the same each way and are compared exactly.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from chatcodec import ResponseParser, parse_response
from chatcodec.events import merge_chunks

REASONING_OPEN = {"type": "region_open", "field": "reasoning_content"}


def _template(open_key: str, open_value: Any, close: str = "</think>", **extra: Any) -> dict[str, Any]:
    return {"version": 1, "start_anchor": "<|assistant|>", "fields": {
        "reasoning_content": {open_key: open_value, "close": close, "opens_once": True},
        "content": {}, **extra}}


def _chunk(field: str, text: str) -> dict[str, Any]:
    return {"type": "region_chunk", "field": field, "text": text, "dirty": False}


def _close(field: str, value: Any) -> dict[str, Any]:
    return {"type": "region_close", "field": field, "value": value}


def _stream(template: dict[str, Any], prefix: str, output: str, **options: Any,
            ) -> tuple[list[dict[str, Any]], int, dict[str, Any], list[dict[str, Any]]]:
    """``(initial_events, resolved before any output, message, merged events)``, the same fed whole,
    3 characters and 1 character at a time (asserted), and the message the same as ``parse_response``."""
    results = []
    for size in (max(len(output), 1), 3, 1):
        parser = ResponseParser(template, prefix=prefix, **options)
        initial, resolved = list(parser.initial_events), parser.resolved
        events = list(initial)
        for start in range(0, len(output), size):
            events += parser.feed(output[start:start + size])
        message, final = parser.finalize()
        results.append((initial, resolved, message, merge_chunks([*events, *final])))
    assert results[1] == results[0] and results[2] == results[0]
    assert results[0][2] == parse_response(output, template, prefix=prefix)
    return results[0]


# --- decided by the prompt: committed before any output ---------------------------------------------

def test_a_caret_look_ahead_alternative_does_not_hold_the_prompts_open() -> None:
    """``<think>|^(?=</think>)`` (DeepSeek V3.1's thinking-off form): the prompt's ``<think>`` matches
    the first alternative, which no output can change, so the prompt opens the reasoning. It used to
    stay undecided (resolved -7, no initial events) until the first output."""
    template = _template("open_pattern", "<think>|^(?=</think>)")
    initial, resolved, message, events = _stream(template, "<|assistant|><think>", "Plan.</think>Hi")
    assert initial == [REASONING_OPEN]
    assert resolved == 0
    assert message == {"reasoning_content": "Plan.", "content": "Hi"}
    assert events == [REASONING_OPEN, _chunk("reasoning_content", "Plan."),
                      _close("reasoning_content", "Plan."), {"type": "region_open", "field": "content"},
                      _chunk("content", "Hi"), _close("content", "Hi")]


def test_a_regex_open_at_the_end_of_the_prompt_opens_in_the_initial_events_unlike_the_reference() -> None:
    """transformers 5.24 holds every regex match that ends at the end of the prefix: for this template
    and prompt its ``initial_events`` are ``[]`` and the first ``feed("Plan.")`` returns the
    ``region_open`` (run on 5.24; the message is the same). chatcodec opens it before any output:
    the prompt is final text (docs/compatibility.md)."""
    template = _template("open_pattern", "<think>")
    initial, resolved, message, _ = _stream(template, "<|assistant|><think>", "Plan.</think>Hi")
    assert (initial, resolved) == ([REASONING_OPEN], 0)
    assert message == {"reasoning_content": "Plan.", "content": "Hi"}


def test_think_never_waits_for_thinking() -> None:
    """``<think>`` is not the start of ``<thinking>`` (``>`` is not ``i``): another field opened by
    ``<thinking>`` cannot take the prompt's ``<think>``."""
    template = _template("open_pattern", "<think>|^(?=</think>)",
                         plan={"open": "<thinking>", "close": "</thinking>"})
    initial, resolved, message, _ = _stream(template, "<|assistant|><think>", "ing>x</think>y")
    assert (initial, resolved) == ([REASONING_OPEN], 0)
    assert message == {"reasoning_content": "ing>x", "content": "y"}


def test_the_region_before_a_decided_open_closes_before_any_output() -> None:
    """The content the prompt wrote before its ``<think>`` closes there, in the initial events."""
    template = _template("open_pattern", "<think>|^(?=</think>)")
    initial, resolved, message, _ = _stream(template, "<|assistant|>Hi<think>", "a</think>b")
    assert initial == [{"type": "region_open", "field": "content"}, _chunk("content", "Hi"),
                       _close("content", "Hi"), REASONING_OPEN]
    assert resolved == 0
    assert message == {"content": "Hib", "reasoning_content": "a"}


# --- the field is decided, the delimiter's end is not: the region opens, the end waits --------------

def test_a_repeatable_open_opens_its_region_and_takes_a_repeat_from_the_output() -> None:
    """``(?:<think>)+`` (Hermes, Qwen3) on a prompt a server ended with ``<think>``: the output may
    write ``<think>`` again, which is still the open, so only the open's end is undecided; the
    region opens before any output and the repeat is not reasoning."""
    template = _template("open_pattern", "(?:<think>)+")
    for output in ("<think>Plan.</think>Hi", "Plan.</think>Hi"):
        initial, resolved, message, events = _stream(template, "<|assistant|><think>", output)
        assert (initial, resolved) == ([REASONING_OPEN], -7)
        assert message == {"reasoning_content": "Plan.", "content": "Hi"}
        assert events == [REASONING_OPEN, _chunk("reasoning_content", "Plan."),
                          _close("reasoning_content", "Plan."), {"type": "region_open", "field": "content"},
                          _chunk("content", "Hi"), _close("content", "Hi")]


def test_a_repeat_cut_off_between_two_iterations_is_left_to_the_output() -> None:
    """``(?:<think>)+`` on a prompt ending ``<think><think>``: a third ``<think>`` from the output is
    still the open (the ``regex`` module's partial match does not say so there: the engine does not
    ask it), so only the region opens before the output."""
    template = _template("open_pattern", "(?:<think>)+")
    initial, resolved, message, _ = _stream(template, "<|assistant|><think><think>", "<think>Plan.</think>Hi")
    assert (initial, resolved) == ([REASONING_OPEN], -14)
    assert message == {"reasoning_content": "Plan.", "content": "Hi"}


def test_an_open_literal_that_a_longer_one_extends_opens_its_region_with_offsets() -> None:
    """``["<think>", "<think>\\n"]``: the output's ``\\n`` belongs to the open, so the body starts
    after it; the region opened at the prompt's ``<think>`` (``start`` -7) before any output, and
    the content before it closed there."""
    template = _template("open", ["<think>", "<think>\n"])
    initial, resolved, message, events = _stream(template, "<|assistant|>Hi<think>", "\nPlan.</think>A",
                                                 offsets=True)
    opening = {"type": "region_open", "field": "reasoning_content", "start": -7}
    assert initial == [{"type": "region_open", "field": "content", "start": -9}, _chunk("content", "Hi"),
                       {**_close("content", "Hi"), "end": -7}, opening]
    assert resolved == -7
    assert message == {"content": "HiA", "reasoning_content": "Plan."}
    assert events[3:] == [opening, _chunk("reasoning_content", "Plan."),
                          {**_close("reasoning_content", "Plan."), "end": 14},
                          {"type": "region_open", "field": "content", "start": 14}, _chunk("content", "A"),
                          {**_close("content", "A"), "end": 15}]


def test_a_prompt_that_ends_in_an_open_and_nothing_more_comes() -> None:
    template = _template("open_pattern", "(?:<think>)+")
    initial, _, message, events = _stream(template, "<|assistant|><think>", "")
    assert initial == [REASONING_OPEN]
    assert message == {}
    assert events == [REASONING_OPEN, _close("reasoning_content", "")]


# --- left to the output ----------------------------------------------------------------------------

def test_what_the_output_can_still_change_waits_for_it() -> None:
    """A delimiter only partly written, another field's longer delimiter the output may complete, a
    match that leans on an end assertion, a close that may still grow: none is decided by the
    prompt (no initial events for it; ``resolved`` stays before it)."""
    cases = [
        (_template("open", "<think>"), "<|assistant|><thi", "nk>a</think>b", -4,
         {"reasoning_content": "a", "content": "b"}),
        (_template("open", "<t>", plan={"open": "<t>x", "close": "</t>"}), "<|assistant|><t>", "xa</t>b", -3,
         {"plan": "a", "content": "b"}),
        (_template("open_pattern", "<think>(?!\n)"), "<|assistant|><think>", "\na", -7,
         {"content": "<think>\na"}),
    ]
    for template, prefix, output, resolved_before, expected in cases:
        initial, resolved, message, _ = _stream(template, prefix, output)
        assert (initial, resolved, message) == ([], resolved_before, expected), prefix
    template = {"version": 1, "start_anchor": "<|assistant|>", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*"}, "content": {}}}
    initial, resolved, message, _ = _stream(template, "<|assistant|><think>a</think>", "  b")
    assert initial == [REASONING_OPEN, _chunk("reasoning_content", "a")]
    assert resolved == -8
    assert message == {"reasoning_content": "a", "content": "b"}


# --- for every prompt and output --------------------------------------------------------------------

_TEMPLATES = [
    _template("open_pattern", "<think>|^(?=</think>)"),
    _template("open_pattern", "(?:<think>)+"),
    _template("open", ["<think>", "<think>\n"]),
    _template("open", "<think>", plan={"open": "<think>x", "close": "</x>"}),
    _template("open_pattern", "(?:<think>\\s*)+"),
    _template("open_pattern", "(?:<think>)+(?!<)"),
    _template("open_pattern", "<think>|<think>x(?=y)"),
    _template("open_pattern", "<think>\\n?", plan={"open_pattern": "<think>\\n?x", "close": "</x>"}),
]
_PIECES = st.sampled_from(["<think>", "</think>", "<thi", "nk>", "\n", " ", "x", "y", "</x>", "a", "<"])


@example(template=_TEMPLATES[1], tail="a<think>", output="<think>x</think>a", size=2)
@example(template=_TEMPLATES[1], tail="<think><think>", output="<think>", size=1)
@example(template=_TEMPLATES[2], tail="<think>", output="\nx</think>a", size=1)
@given(template=st.sampled_from(_TEMPLATES), tail=st.lists(_PIECES, max_size=4).map("".join),
       output=st.lists(_PIECES, max_size=5).map("".join), size=st.integers(1, 4))
def test_the_prompt_end_decision_never_changes_what_the_text_means(
        template: dict[str, Any], tail: str, output: str, size: int) -> None:
    """Whatever the prompt decides before the output, the parse is that of the prompt's tail and the
    output read as one text: the same message and the same events (chunks merged), in the same order."""
    parser = ResponseParser(template, prefix=f"<|assistant|>{tail}")
    events = list(parser.initial_events)
    for start in range(0, len(output), size):
        events += parser.feed(output[start:start + size])
    message, final = parser.finalize()
    whole = ResponseParser(template, prefix="")
    expected_events = [*whole.feed(tail + output)]
    expected_message, expected_final = whole.finalize()
    assert message == expected_message
    assert merge_chunks([*events, *final]) == merge_chunks([*expected_events, *expected_final])
