"""``flatten`` (a chatcodec extension): a repeating field whose every match is a list gives one list.

Formats such as LFM2 and Llama 4 may write several blocks of calls in one turn
(``<|tool_call_start|>[f()]<|tool_call_end|> ... <|tool_call_start|>[g(), h()]<|tool_call_end|>``);
``repeats`` alone would give a list of lists, which is not a ``tool_calls`` value.
"""

from __future__ import annotations

import pytest

import chatcodec
from tests.response_templates.helpers import assert_same, check_stream

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
