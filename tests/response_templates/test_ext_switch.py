"""``x-switch``: a region's content parser chosen by how its text begins.

The parse (choice, value, errors, load checks), the value scanner (the chosen case's deltas once
the lead decides) and ``close_at_value_end`` through it; every template is also streamed three
ways (``check_stream``) with and without value deltas (``check_values``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParseError, ResponseTemplateError, load_response_template, parse_response
from chatcodec.response_templates.ext_switch import choose_case, parse_switch
from chatcodec.response_templates.scanners import granularity, scanner_for
from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.switch_scan import SwitchScanner
from tests.response_templates.helpers import check_stream
from tests.response_templates.value_helpers import check_values

#: ``<function=NAME>{arguments}</function>`` or JSON calls.
FUNCTION_TAG = {"name": "x-findall", "args": {
    "pattern": r"<function=(?P<name>\w+)>(?P<arguments>\{.*?\})</function>",
    "value_parsers": {"arguments": {"name": "json"}}}}
ARGS: dict[str, Any] = {"cases": [{"lead": "<function=", "parser": FUNCTION_TAG},
                                  {"lead": "", "parser": {"name": "x-json-calls"}}]}
TEMPLATE = {"start_anchor": "A:", "fields": {
    "calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "flatten": True,
              "content": "x-switch", "content_args": ARGS},
    "content": {}}}


def test_the_lead_chooses_the_parser() -> None:
    assert parse_switch(' <function=f>{"a": 1}</function>', ARGS) == [{"name": "f", "arguments": {"a": 1}}]
    assert parse_switch('\n{"name": "f", "arguments": {"a": 1}}', ARGS) == \
        [{"name": "f", "arguments": {"a": 1}}]
    assert parse_switch("  ", ARGS) == []  # only whitespace: the first case (no match: no calls)


def test_choose_case_waits_while_an_earlier_lead_is_still_possible() -> None:
    leads = ["<function=", "<"]
    assert choose_case(leads, " <fun", final=False) is None
    assert choose_case(leads, " <fun", final=True) == 1
    assert choose_case(leads, " <x", final=False) == 1
    assert choose_case(leads, "{", final=False) == -1
    assert choose_case(leads, "  ", final=False) is None
    assert choose_case(leads, "  ", final=True) == 0


def test_no_case_is_an_error_at_the_first_character() -> None:
    args = {"cases": [{"lead": "<function=", "parser": FUNCTION_TAG}]}
    with pytest.raises(ValueError, match=r"x-switch: the text at offset 2 \('oops'\) begins as none of the "
                                         r"cases: expected one of the leads \['<function='\]"):
        parse_switch("\n oops", args)


def test_a_region_streams_the_same_message_at_any_chunking() -> None:
    output = ('Hi <tool_call><function=get_weather>{"city": "a</tool_call>b"}</function></tool_call> and '
              '<tool_call>{"name": "g", "arguments": {}}</tool_call>')
    joined = check_stream(TEMPLATE, output, {
        "calls": [{"name": "get_weather", "arguments": {"city": "a</tool_call>b"}},
                  {"name": "g", "arguments": {}}],
        "content": "Hi  and"})
    assert joined["calls"] == '<function=get_weather>{"city": "a</tool_call>b"}</function>' \
        '{"name": "g", "arguments": {}}'
    check_values(TEMPLATE, output)


def test_the_chosen_parsers_error_names_x_switch() -> None:
    with pytest.raises(ResponseParseError, match=r"content parser 'x-switch'.*x-findall: text after the last "
                                                 r"match at offset 25: ' tail'"):
        parse_response("<tool_call><function=f>{}</function> tail</tool_call>", TEMPLATE, prefix="")
    kept = parse_response("<tool_call><function=f>{}</function> tail</tool_call>", TEMPLATE, prefix="",
                          errors="keep")
    assert kept["content"] == "<tool_call><function=f>{}</function> tail</tool_call>"


def _deltas(args: dict[str, Any], chunks: list[str]) -> list[Delta]:
    scanner = scanner_for("x-switch", args)
    assert scanner is not None
    out: list[Delta] = []
    for chunk in chunks:
        out += scanner.feed(chunk)
    return out + scanner.end()


def test_the_scanner_is_the_chosen_cases_once_decided() -> None:
    args = {"cases": [{"lead": "<function=", "parser": FUNCTION_TAG},
                      {"lead": "", "parser": {"name": "json"}}]}
    scanner = scanner_for("x-switch", args)
    assert scanner is not None
    assert scanner.feed(" ") == []  # no lead yet
    assert scanner.feed('{"a') == [("begin", (), "object")]  # the key is not closed yet: held
    assert scanner.feed('": 1}') == [("set", ("a",), 1), ("end", (), None)]
    assert scanner.complete is None
    assert scanner.feed(" x") == []
    assert scanner.complete == 10  # json: the value and the space after it end before "x"
    nothing = scanner_for("x-switch", {"cases": [{"lead": "<", "parser": {"name": "json"}}]})
    assert isinstance(nothing, SwitchScanner)
    assert nothing.feed(" {") == []
    assert nothing.refuted is True


def test_a_case_without_a_scanner_streams_nothing_but_is_not_refuted() -> None:
    args = {"cases": [{"lead": "<", "parser": {"name": "kv-lines"}},
                      {"lead": "", "parser": {"name": "json"}}]}
    scanner = scanner_for("x-switch", args)
    assert isinstance(scanner, SwitchScanner)
    assert scanner.feed("<a: 1") == []
    assert scanner.refuted is False
    assert scanner.end() == []
    assert _deltas(args, list(" [1]")) == [("begin", (), "array"), ("set", (0,), 1), ("end", (), None)]
    assert granularity("x-switch", args) == "whole at close"
    assert granularity("x-switch", ARGS) == "as written"


def test_close_at_value_end_follows_the_chosen_case() -> None:
    template = {"start_anchor": "A:", "fields": {
        "calls": {"open": "[CALLS]", "close_at_value_end": True, "repeats": True, "flatten": True,
                  "content": "x-switch", "content_args": {"cases": [
                      {"lead": "[{", "parser": {"name": "x-json-calls"}},
                      {"lead": "", "parser": {"name": "python-call-list"}}]}},
        "content": {}}}
    output = '[CALLS][{"name": "f", "arguments": {"a": "]"}}] then [CALLS][g(b=2)] done'
    joined = check_stream(template, output, {
        "calls": [{"name": "f", "arguments": {"a": "]"}}, {"name": "g", "arguments": {"b": 2}}],
        "content": "then done"})
    assert joined == {"calls": '[{"name": "f", "arguments": {"a": "]"}}] [g(b=2)] ', "content": "then done"}
    check_values(template, output)


@pytest.mark.parametrize(("args", "problem"), [
    ({}, r"fields.c.content_args.cases: must be a non-empty list of \{lead, parser\}"),
    ({"cases": [], "x": 1}, r"unknown key\(s\) \['x'\] for x-switch"),
    ({"cases": [{"lead": 1, "parser": {"name": "json"}}]}, r"cases\[0\].lead: must be a string"),
    ({"cases": [{"lead": "<"}]}, r"cases\[0\]: must be an object with exactly the keys 'lead' and 'parser'"),
    ({"cases": [{"lead": "", "parser": {"name": "json"}}, {"lead": "<", "parser": {"name": "json"}}]},
     r"cases\[1\]: follows a case whose lead is \"\" \(it matches any text\), so it is never chosen"),
    ({"cases": [{"lead": "<", "parser": {"name": "nope"}}]}, r"cases\[0\].parser"),
])
def test_bad_content_args_are_refused_at_load(args: dict[str, Any], problem: str) -> None:
    with pytest.raises(ResponseTemplateError, match=problem):
        load_response_template({"start_anchor": "A", "fields": {
            "c": {"open": "<c>", "content": "x-switch", "content_args": args}}})


def test_close_at_value_end_needs_every_case_to_know_its_end() -> None:
    problem = "x-switch parser 'kv-lines': the content parser 'kv-lines' cannot say where its value ends"
    with pytest.raises(ResponseTemplateError, match=problem):
        load_response_template({"start_anchor": "A", "fields": {"c": {
            "open": "<c>", "close_at_value_end": True, "content": "x-switch",
            "content_args": {"cases": [{"lead": "{", "parser": {"name": "json"}},
                                       {"lead": "", "parser": {"name": "kv-lines"}}]}}}})


@given(st.lists(st.integers(min_value=1, max_value=7), max_size=14))
def test_any_chunking_gives_the_same_message(cuts: list[int]) -> None:
    from tests.response_templates.value_helpers import run

    output = ' x <tool_call> <function=f>{"s": "<function="}</function></tool_call>' \
             '<tool_call>\n[{"name": "g", "arguments": {"n": [1]}}]</tool_call> y'
    chunks, at = [], 0
    for size in cuts:
        chunks.append(output[at : at + size])
        at += size
    chunks.append(output[at:])
    message, _ = run(TEMPLATE, chunks)
    assert message == {"calls": [{"name": "f", "arguments": {"s": "<function="}},
                                 {"name": "g", "arguments": {"n": [1]}}], "content": "x  y"}
