"""``x-named-call``: one call written as its name, then its JSON arguments (Mistral v11+).

The parse (markers, id, errors), the value scanner (the head held until ``{``, then the arguments
as written, ``complete`` at their end) and a ``close_at_value_end`` field streamed three ways.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import ResponseTemplateError, load_response_template
from chatcodec.response_templates.ext_named_call import parse_named_call
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.named_call_scan import NamedCallScanner
from chatcodec.response_templates.scanners.protocol import Delta
from tests.response_templates.helpers import check_stream
from tests.response_templates.value_helpers import check_values

MARKERS = {"id_marker": "[CALL_ID]", "arguments_marker": "[ARGS]"}


@pytest.mark.parametrize(("text", "value"), [
    ('get_weather{"city": "Oslo"}', [{"name": "get_weather", "arguments": {"city": "Oslo"}}]),
    (' get_weather[ARGS] {"city": "Oslo"}\n', [{"name": "get_weather", "arguments": {"city": "Oslo"}}]),
    ('f[CALL_ID]a1B2c3D4e[ARGS]{}', [{"id": "a1B2c3D4e", "name": "f", "arguments": {}}]),
    ('f[CALL_ID][ARGS]{"n": 1}', [{"name": "f", "arguments": {"n": 1}}]),  # the marker without an id
])
def test_calls_it_reads(text: str, value: Any) -> None:
    assert parse_named_call(text, MARKERS) == value


@pytest.mark.parametrize(("text", "problem"), [
    ('{"a": 1}', r"expected the function's name at offset 0: '\{\"a\": 1\}'"),
    ("get_time", "expected the JSON arguments at offset 8: ''"),
    ('f[OTHER]{"a": 1}', r"expected the JSON arguments at offset 1: '\[OTHER\]"),
    ('f{"a": 1} tail', "invalid JSON arguments at offset 10: Extra data"),
    ('f{"a": 1, "a": 2}', "invalid JSON arguments at offset 1: key 'a' is given twice"),
    ("f[1, 2]", r"expected the JSON arguments at offset 1: '\[1, 2\]'"),
    ('f "x"', "expected the JSON arguments at offset 2: '\"x\"'"),
])
def test_what_is_not_a_named_call_is_an_error(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match="x-named-call: " + problem):
        parse_named_call(text, MARKERS)


def _feed(chunks: list[str]) -> tuple[NamedCallScanner, list[Delta]]:
    scanner = scanner_for("x-named-call", MARKERS)
    assert isinstance(scanner, NamedCallScanner)
    out: list[Delta] = []
    for chunk in chunks:
        out += scanner.feed(chunk)
    return scanner, out


def test_the_scanner_holds_the_head_then_streams_the_arguments() -> None:
    for chunks in (['get[CALL_ID]x9[ARGS]{"a": 1} tail'], list('get[CALL_ID]x9[ARGS]{"a": 1} tail')):
        scanner, out = _feed(chunks)
        assert out == [("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "id"), "x9"),
                       ("set", (0, "name"), "get"), ("begin", (0, "arguments"), "object"),
                       ("set", (0, "arguments", "a"), 1), ("end", (0, "arguments"), None),
                       ("end", (0,), None), ("end", (), None)]
        assert scanner.complete == 29  # the "t" of "tail"


@pytest.mark.parametrize("text", ["[{", "f[OTHER]", "f x", " {"])
def test_the_scanner_refutes_what_the_parser_refuses_in_the_head(text: str) -> None:
    scanner, out = _feed([text])
    assert (out, scanner.refuted, scanner.complete) == ([], True, None)


def test_a_field_that_closes_at_the_calls_end() -> None:
    template = {"start_anchor": "A:", "fields": {
        "calls": {"open": "[TOOL_CALLS]", "close_at_value_end": True, "repeats": True, "flatten": True,
                  "content": "x-named-call", "content_args": MARKERS},
        "content": {}}}
    output = 'Hi[TOOL_CALLS]f[ARGS]{"s": "}[TOOL_CALLS]"}[TOOL_CALLS]g{} bye'
    joined = check_stream(template, output, {
        "calls": [{"name": "f", "arguments": {"s": "}[TOOL_CALLS]"}}, {"name": "g", "arguments": {}}],
        "content": "Hibye"})
    assert joined == {"calls": 'f[ARGS]{"s": "}[TOOL_CALLS]"}g{} ', "content": "Hibye"}
    check_values(template, output)


@pytest.mark.parametrize(("args", "problem"), [
    ({"x": 1}, r"unknown key\(s\) \['x'\] for x-named-call"),
    ({"id_marker": "CALL"}, "id_marker: must be a non-empty string starting with '\\['"),
    ({"arguments_marker": ""}, "arguments_marker: must be a non-empty string starting with '\\['"),
])
def test_bad_content_args_are_refused_at_load(args: dict[str, Any], problem: str) -> None:
    with pytest.raises(ResponseTemplateError, match=problem):
        load_response_template({"start_anchor": "A", "fields": {
            "c": {"open": "<c>", "content": "x-named-call", "content_args": args}}})
