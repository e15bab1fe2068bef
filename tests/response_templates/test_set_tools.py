"""``ResponseParser.set_tools``: tools given after the parser was made act exactly as if given at
the start, or are refused (``ParserStateError``, the parser unchanged) when it is too late."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles
from chatcodec.errors import ParserStateError

QWEN3 = profiles.load("qwen3").response_template
QWEN3_PROMPT = "<|im_start|>assistant\n"
DEEPSEEK_V3 = profiles.load("deepseek_v3").response_template
DEEPSEEK_V3_PROMPT = "<｜Assistant｜>"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}}}}}]
OTHER_TOOLS = [{"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}]
CALL = '<tool_call>\n{"name": "f", "arguments": {"a": "1"}}\n</tool_call>'
DS_CALL = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": "2"}\n```<｜tool▁call▁end｜>'
OUTPUT = f"<think>\nwhy\n</think>\n\nChecking.{CALL}{CALL}Done."
LATE_ERROR = ("set_tools: too late, the open region of field 'tool_calls' already streamed part of a call's "
              "arguments, typed by the earlier tools; give the tools when the parser is made")
CLOSED_ERROR = ("set_tools: too late, a region of field 'tool_calls' already closed with its tool calls "
                "typed by the earlier tools; give the tools when the parser is made")


def _qwen3(tools: Any = None) -> ResponseParser:
    return ResponseParser(QWEN3, prefix=QWEN3_PROMPT, tools=tools, value_deltas=True, errors="keep")


def _arguments(events: list[dict[str, Any]]) -> list[tuple[str, list[Any], Any]]:
    """The ``region_value`` events inside calls' arguments: (op, path, value or text)."""
    return [(event["op"], event["path"], event.get("value", event.get("text")))
            for event in events if event["type"] == "region_value" and "arguments" in event["path"]]


def test_tools_given_before_the_first_feed_type_the_arguments() -> None:
    parser = _qwen3()
    parser.set_tools(TOOLS)
    events = parser.feed(CALL)
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}
    assert _arguments(events) == [
        ("begin", [0, "function", "arguments"], None),
        ("set", [0, "function", "arguments", "a"], 1),
        ("end", [0, "function", "arguments"], None),
    ]


def test_tools_given_after_a_call_opened_but_before_its_arguments_type_them() -> None:
    parser = _qwen3()
    first = parser.feed('<tool_call>\n{"name": "f", "arguments": {"a": ')
    parser.set_tools(TOOLS)
    rest = parser.feed('"1"}}\n</tool_call>')
    assert _arguments(first) == [("begin", [0, "function", "arguments"], None)]
    assert _arguments(rest) == [
        ("set", [0, "function", "arguments", "a"], 1),
        ("end", [0, "function", "arguments"], None),
    ]
    assert parser.finalize()[0]["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]


def test_deepseek_v3_takes_the_tools_after_its_call_block_opened_in_the_first_token() -> None:
    parser = ResponseParser(DEEPSEEK_V3, prefix=DEEPSEEK_V3_PROMPT, value_deltas=True)
    assert parser.feed("<｜tool▁calls▁begin｜>") == [
        {"type": "region_open", "field": "tool_calls"},
        {"type": "region_value", "field": "tool_calls", "op": "begin", "path": [], "kind": "array"},
    ]
    parser.set_tools(TOOLS)
    events = parser.feed(f"{DS_CALL}<｜tool▁calls▁end｜>")
    assert ("set", [0, "function", "arguments", "a"], 2) in _arguments(events)
    assert parser.finalize()[0]["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 2}}}]


def test_tools_given_late_record_calls_to_other_functions() -> None:
    parser = _qwen3()
    parser.feed("<tool_call>\n")
    parser.set_tools(OTHER_TOOLS)
    parser.feed('{"name": "f", "arguments": {"a": "1"}}\n</tool_call>')
    parser.finalize()
    assert parser.parse_warnings == [{
        "field": "tool_calls", "kind": "unknown_tool", "name": "f", "offset": 11,
        "message": "field 'tool_calls': a call to 'f', which is not one of the tools given (g); the call is "
                   "kept as written"}]


def test_tools_are_refused_once_an_argument_streamed_and_the_parser_goes_on_unchanged() -> None:
    parser = _qwen3()
    parser.feed('<tool_call>\n{"name": "f", "arguments": {"a": "1')
    with pytest.raises(ParserStateError) as caught:
        parser.set_tools(TOOLS)
    assert str(caught.value) == LATE_ERROR
    parser.feed('"}}\n</tool_call>')
    assert parser.finalize()[0]["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {"a": "1"}}}]  # not typed


def test_tools_are_refused_once_a_call_region_closed() -> None:
    parser = _qwen3()
    parser.feed(CALL + "Then ")
    with pytest.raises(ParserStateError) as caught:
        parser.set_tools(TOOLS)
    assert str(caught.value) == CLOSED_ERROR


def test_removing_the_tools_is_refused_while_a_delta_waits_for_its_call_name() -> None:
    parser = _qwen3(TOOLS)
    parser.feed('<tool_call>\n{"arguments": {"a": "1"}, "na')  # arguments before the name: held
    with pytest.raises(ParserStateError) as caught:
        parser.set_tools(None)
    assert str(caught.value) == LATE_ERROR
    parser.feed('me": "f"}\n</tool_call>')
    assert parser.finalize()[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": {"a": 1}}


def test_the_same_tools_are_always_taken_and_a_finished_parser_refuses() -> None:
    parser = _qwen3(TOOLS)
    parser.feed(CALL)
    parser.set_tools(TOOLS)  # nothing changes: allowed however late
    parser.finalize()
    with pytest.raises(ParserStateError) as caught:
        parser.set_tools(TOOLS)
    assert str(caught.value).startswith("set_tools: ResponseParser already finalized")


def test_a_bad_schema_is_a_value_error_and_changes_nothing() -> None:
    parser = _qwen3()
    with pytest.raises(ValueError) as caught:
        parser.set_tools([{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"a": {"type": 5}}}}}])
    assert str(caught.value) == ("tools[0] (f): parameter 'a': type must be a type name or a list of them, "
                                 "got int")
    parser.feed(CALL)
    assert parser.finalize()[0]["tool_calls"][0]["function"]["arguments"] == {"a": "1"}


#: (template, prompt, output): Qwen3 with a call whose arguments come before its name too, and DeepSeek V3
CASES = [
    (QWEN3, QWEN3_PROMPT, OUTPUT + '<tool_call>\n{"arguments": {"a": "3"}, "name": "f"}\n</tool_call>'),
    (DEEPSEEK_V3, DEEPSEEK_V3_PROMPT, f"<｜tool▁calls▁begin｜>{DS_CALL}{DS_CALL}<｜tool▁calls▁end｜>"),
]


def _run(case: tuple[Any, str, str], tools: Any, pieces: list[str],
         parser: ResponseParser | None = None) -> list[Any]:
    template, prompt, _ = case
    if parser is None:
        parser = ResponseParser(template, prefix=prompt, tools=tools, value_deltas=True, errors="keep")
    events = [event for piece in pieces for event in parser.feed(piece)]
    message, end = parser.finalize()
    return [events + end, message, parser.parse_warnings]


@given(st.sampled_from(CASES), st.lists(st.integers(0, 1000), max_size=6), st.integers(0, 6),
       st.sampled_from([(None, TOOLS), (TOOLS, None), (OTHER_TOOLS, TOOLS)]))
def test_tools_taken_late_give_exactly_what_tools_at_the_start_give(
        case: tuple[Any, str, str], cuts: list[int], at: int, change: tuple[Any, Any]) -> None:
    """For every split of the output and every point of the change: either the parser refuses the
    new tools, or everything it returns, before and after, is what a parser made with them returns."""
    template, prompt, output = case
    before, after = change
    bounds = [0, *sorted(cut % (len(output) + 1) for cut in cuts), len(output)]
    pieces = [output[a:b] for a, b in itertools.pairwise(bounds)]
    at = min(at, len(pieces))
    late = ResponseParser(template, prefix=prompt, tools=before, value_deltas=True, errors="keep")
    events = [event for piece in pieces[:at] for event in late.feed(piece)]
    try:
        late.set_tools(after)
    except ParserStateError:
        reference = _run(case, before, pieces)
    else:
        reference = _run(case, after, pieces)
    got = _run(case, None, pieces[at:], late)
    got[0] = events + got[0]
    assert got == reference
