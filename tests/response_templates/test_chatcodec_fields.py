"""The field options only chatcodec reads: ``flatten``, ``require_close``, ``opens_once`` and
``"strip": "blank"``.

* ``flatten``: formats such as LFM2 and Llama 4 may write several blocks of calls in one turn
  (``<|tool_call_start|>[f()]<|tool_call_end|> ... <|tool_call_start|>[g(), h()]<|tool_call_end|>``);
  ``repeats`` alone would give a list of lists, which is not a ``tool_calls`` value.
* ``require_close``: a region cut off by the end of the output is a parse problem.
* ``opens_once``: once a region of the field closed, its open is plain text (a ``<think>`` quoted in
  the answer after the reasoning, which vLLM's and SGLang's reasoning parsers leave in the content).
* ``"strip": "blank"``: text as written, but whitespace alone (and the prompt's layout) is no value.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chatcodec
from chatcodec import profiles
from chatcodec.response_templates.chatcodec_only import chatcodec_only_features
from tests.response_templates.helpers import assert_same, check_stream, join_chunks, stream

CALLS = {
    "start_anchor": "A",
    "fields": {
        "tool_calls": {
            "open": "<calls>", "close": "</calls>", "repeats": True, "flatten": True,
            "content": "python-call-list",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
            "transform_each": True,
        },
        "content": {},
    },
}


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def test_blocks_of_calls_give_one_flat_list_in_order() -> None:
    output = "Checking.<calls>[f(a=1)]</calls> then <calls>[g(), h(b='x')]</calls><calls>[]</calls>"
    expected = {"content": "Checking. then", "tool_calls": [_call("f", a=1), _call("g"), _call("h", b="x")]}
    check_stream(CALLS, output, expected)


def test_each_region_close_carries_its_own_block() -> None:
    parser = chatcodec.ResponseParser(CALLS, prefix="")
    events = parser.feed("<calls>[f()]</calls><calls>[g()]</calls>")
    closes = [event["value"] for event in events if event["type"] == "region_close"]
    assert_same(closes, [[_call("f")], [_call("g")]])
    message, _ = parser.finalize()
    assert_same(message["tool_calls"], [_call("f"), _call("g")])


def test_without_flatten_repeats_keeps_a_list_per_match_as_the_reference_does() -> None:
    template = {**CALLS, "fields": {**CALLS["fields"], "tool_calls": {
        key: value for key, value in CALLS["fields"]["tool_calls"].items() if key != "flatten"}}}
    message = chatcodec.parse_response("<calls>[f()]</calls><calls>[g()]</calls>", template, prefix="")
    assert_same(message["tool_calls"], [[_call("f")], [_call("g")]])


def test_a_match_that_is_not_a_list_is_a_parse_problem_never_dropped() -> None:
    template = {"start_anchor": "A", "fields": {
        "x": {"open": "<x>", "close": "</x>", "repeats": True, "flatten": True, "content": "json"},
        "content": {}}}
    with pytest.raises(chatcodec.ResponseParseError, match="'flatten' requires each match to be a list"):
        chatcodec.parse_response('<x>[1]</x><x>{"a": 2}</x>', template, prefix="")
    kept = chatcodec.parse_response('<x>[1]</x><x>{"a": 2}</x>', template, prefix="", errors="keep")
    assert kept["x"] == [1]
    assert kept["content"] == '<x>{"a": 2}</x>'


XML_CALL = {
    "start_anchor": "A",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<function=(?P<name>\w+)>", "close": "</function>", "repeats": True,
            "require_close": True, "content": "xml-inline",
            "content_args": {"tag_pattern": r"<p=(?P<key>\w+)>(?P<value>.*?)</p>", "skip_tags": []},
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {},
    },
}


def test_require_close_makes_a_region_cut_off_by_the_end_a_parse_problem() -> None:
    """``require_close`` (a chatcodec extension): the text of a cut-off call cannot show it is
    incomplete (``<p=a>1</p>`` may have been followed by more arguments), so it is not a call."""
    closed = "<function=f><p=a>1</p></function>"
    check_stream(XML_CALL, closed, {"tool_calls": [{"name": "f", "arguments": {"a": "1"}}]})
    with pytest.raises(chatcodec.ResponseParseError, match=r"at offset 25 of the output: the output ends "
                       r"before this region's close \('tool_calls' has require_close"):
        chatcodec.parse_response("Hi <function=f><p=a>1</p>", XML_CALL, prefix="")
    kept = chatcodec.parse_response("Hi <function=f><p=a>1</p>", XML_CALL, prefix="", errors="keep")
    assert kept["content"] == "Hi <function=f><p=a>1</p>"
    assert [record["field"] for record in kept["parse_errors"]] == ["tool_calls"]


def test_require_close_needs_an_explicit_region_with_a_close() -> None:
    template = {"start_anchor": "A", "fields": {"x": {"open": "<x>", "require_close": True}}}
    with pytest.raises(chatcodec.ResponseTemplateError, match=r"fields\.x\.require_close: 'require_close' "
                       "needs both an open and a close"):
        chatcodec.load_response_template(template)


THINK = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content_args": {"strip": "blank"}},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json"},
        "content": {"close": "<|im_end|>", "content_args": {"strip": "blank"}},
    },
}


def test_strip_blank_keeps_what_the_model_wrote_and_drops_layout() -> None:
    output = '<think>\nHm.\n</think>\n\n<tool_call>{"a": 1}</tool_call>\n<tool_call>{"b": 2}</tool_call>\n'
    check_stream(THINK, output, {"reasoning_content": "\nHm.\n", "tool_calls": [{"a": 1}, {"b": 2}]})
    check_stream(THINK, " Sure.\n\n<tool_call>{}</tool_call> Done. ", {
        "content": " Sure.\n\n Done. ", "tool_calls": [{}]})


def test_whitespace_the_prompt_wrote_at_a_region_start_is_not_part_of_the_value() -> None:
    pre_opened = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    check_stream(THINK, "Hm.\n</think>\n\nHello.", {"reasoning_content": "Hm.\n", "content": "\n\nHello."},
                 prefix=pre_opened)
    thinking_off = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    check_stream(THINK, "Hello.", {"content": "Hello."}, prefix=thinking_off)
    prefill = "<|im_start|>assistant\nSure, "  # text the prompt wrote is kept: only its whitespace is layout
    check_stream(THINK, "here.", {"content": "Sure, here."}, prefix=prefill)


ONCE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "opens_once": True},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json"},
        "content": {"close": "<|im_end|>"},
    },
}
#: ``ONCE`` without the flag: a quoted ``<think>`` opens reasoning again (its text is concatenated).
REOPENS = {**ONCE, "fields": {**ONCE["fields"],
                              "reasoning_content": {"open": "<think>", "close": "</think>"}}}


def test_opens_once_makes_a_later_open_plain_text_of_the_answer() -> None:
    output = ('<think>plan</think>Use <think> like this: <think>x</think>.<tool_call>{"a": 1}</tool_call>'
              "<|im_end|>")
    check_stream(ONCE, output, {"reasoning_content": "plan",
                                "content": "Use <think> like this: <think>x</think>.",
                                "tool_calls": [{"a": 1}]})
    check_stream(REOPENS, output, {"reasoning_content": "plan like this: <think>x",
                                   "content": "Use .", "tool_calls": [{"a": 1}]})


def test_opens_once_events_show_the_quoted_open_as_content() -> None:
    parser = chatcodec.ResponseParser(ONCE, prefix="")
    parser.feed("<think>a</think>")
    assert parser.feed("b <think> c") == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "b <think> c", "dirty": False}]
    closing = {"type": "region_close", "field": "content", "value": "b <think> c"}
    assert parser.finalize() == ({"reasoning_content": "a", "content": "b <think> c"}, [closing])


def test_opens_once_counts_a_region_the_prompt_closed_and_not_one_it_left_open() -> None:
    thinking_off = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    check_stream(ONCE, "Say <think>.", {"content": "Say <think>."}, prefix=thinking_off)
    pre_opened = "<|im_start|>assistant\n<think>\n"
    check_stream(ONCE, "hm</think>Say <think>.", {"reasoning_content": "hm", "content": "Say <think>."},
                 prefix=pre_opened)


def test_opens_once_counts_a_zero_width_close_too() -> None:
    template = {**ONCE, "fields": {**ONCE["fields"], "reasoning_content": {
        "open": "<think>", "close_pattern": "</think>|(?=<tool_call>)", "opens_once": True}}}
    output = '<think>plan<tool_call>{"a": 1}</tool_call>Then <think>.'
    check_stream(template, output,
                 {"reasoning_content": "plan", "tool_calls": [{"a": 1}], "content": "Then <think>."})


def test_several_fields_each_open_once_whatever_the_order_they_close_in() -> None:
    template = {"start_anchor": "A", "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "opens_once": True},
        "summary": {"open": "<sum>", "close": "</sum>", "opens_once": True},
        "content": {}}}
    check_stream(template, "<sum>s</sum><think>r</think>a <sum> b <think> c",
                 {"summary": "s", "reasoning_content": "r", "content": "a <sum> b <think> c"})
    check_stream(template, "<think>r</think>a <think> <sum>s</sum> b <sum> c",
                 {"reasoning_content": "r", "content": "a <think>  b <sum> c", "summary": "s"})


def test_lint_and_save_say_opens_once_needs_chatcodec() -> None:
    assert [str(feature) for feature in chatcodec_only_features(ONCE)] == [
        "fields.reasoning_content.opens_once: 'opens_once' (transformers refuses to load the template)"]
    assert profiles.load("kimi_vl").needs_chatcodec


@pytest.mark.parametrize(("field", "problem"), [
    ({"close": "</think>", "opens_once": True}, "needs an open and a close"),
    ({"open": "<think>", "opens_once": True}, "needs an open and a close"),
    ({"open": "<think>", "close": "</think>", "repeats": True, "opens_once": True}, "and no 'repeats'"),
    ({"open": "<think>", "close": "</think>", "opens_once": 1}, "must be true or false, got int"),
])
def test_opens_once_needs_an_explicit_non_repeating_region_with_a_close(field: dict[str, object],
                                                                       problem: str) -> None:
    template = {"start_anchor": "A", "fields": {"r": field}}
    with pytest.raises(chatcodec.ResponseTemplateError, match=rf"fields\.r\.opens_once: .*{problem}"):
        chatcodec.load_response_template(template)


_PIECES = st.sampled_from(["<think>", "</think>", "<tool_call>", "</tool_call>", "{}", "<", "think", ">",
                           "a", " ", "\n", "<|im_end|>", "<|im_"])


@given(pieces=st.lists(_PIECES, max_size=14), cuts=st.lists(st.integers(0, 60), max_size=6))
def test_opens_once_streaming_equals_whole_at_any_chunking(pieces: list[str], cuts: list[int]) -> None:
    """Whatever the text and the chunking, the stream gives the one-shot message and chunk text."""
    output = "".join(pieces)
    whole, whole_events = stream(ONCE, [output], errors="keep")
    bounds = sorted({0, len(output), *(cut for cut in cuts if cut < len(output))})
    chunks = [output[start:end] for start, end in itertools.pairwise(bounds)]
    message, events = stream(ONCE, chunks, errors="keep")
    assert_same(message, whole)
    assert join_chunks(events) == join_chunks(whole_events)
    assert_same(chatcodec.parse_response(output, ONCE, prefix="", errors="keep"), whole)
