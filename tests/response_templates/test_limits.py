"""Documented limits of decoding: values nested deeper than MAX_NESTING_DEPTH are parse errors.

Deeply nested model output (``[[[[...]]]]`` a hundred thousand levels deep) must never escape as a
``RecursionError``: it is a ``ResponseParseError`` in strict mode and a ``parse_errors`` record in
keep mode, whatever content parser, transform or argument typing meets it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParseError, ResponseTemplateError, load_response_template, parse_response
from chatcodec.response_templates.limits import MAX_NESTING_DEPTH, NESTING_ERROR, bracket_bound, exceeds_depth
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN

DEEP = "[" * 100_000 + "]" * 100_000
#: Deeper than the limit but shallow enough for Python's own parsers.
OVER = "[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1)


def _template(content: str, args: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    field: dict[str, Any] = {"open": "<x>", "close": "</x>", "content": content, **extra}
    if args is not None:
        field["content_args"] = args
    return {"start_anchor": "A", "fields": {"x": field, "content": {}}}


_TAG = r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"
_JSON = {"name": "json"}
CASES = {
    "json-deep": (_template("json"), DEEP),
    "json-over-the-limit": (_template("json"), OVER),
    "json-transformed": (_template("json", transform={"v": "{content}"}), OVER),
    "xml-inline-json-values": (_template("xml-inline", {"tag_pattern": _TAG, "value_parser": _JSON}),
                               f"<a>{DEEP}</a>"),
    "kv-lines-json-values": (_template("kv-lines", {"value_parser": _JSON}), f"a: {DEEP}"),
    "x-xml-tree": (_template("x-xml-tree"), "<a>" * 5_000 + "</a>" * 5_000),
}


def test_the_brief_case_is_a_parse_error_in_strict_mode() -> None:
    output = '<tool_call>\n{"name":"f","arguments":' + DEEP + "}\n</tool_call>"
    with pytest.raises(ResponseParseError) as raised:
        parse_response(output, QWEN, prefix="")
    assert str(raised.value).splitlines()[0] == (
        f"field 'tool_calls' (content parser 'json') at offset 11 of the output: {NESTING_ERROR}")
    assert (raised.value.field, raised.value.parser, raised.value.offset) == ("tool_calls", "json", 11)
    assert raised.value.partial_message == {"role": "assistant"}


def test_the_brief_case_is_recorded_in_keep_mode() -> None:
    output = '<tool_call>\n{"name":"f","arguments":' + DEEP + "}\n</tool_call>Done."
    message = parse_response(output, QWEN, prefix="", errors="keep")
    [record] = message.pop("parse_errors")
    assert message == {"role": "assistant", "content": output}  # the region went back, verbatim
    assert record["error"] == f"field 'tool_calls' (content parser 'json'): {NESTING_ERROR}"
    assert record["text"] == output[len("<tool_call>") : -len("</tool_call>Done.")]
    assert record["raw"] == output[: -len("Done.")]
    json.dumps(record)  # the record is writable as JSON


@pytest.mark.parametrize("case", sorted(CASES))
def test_deep_values_are_parse_errors_for_every_parser(case: str) -> None:
    template, body = CASES[case]
    with pytest.raises(ResponseParseError, match="nested more than 200 levels"):
        parse_response(f"<x>{body}</x>", template, prefix="")
    message = parse_response(f"<x>{body}</x>after", template, prefix="", errors="keep")
    assert message["content"] == f"<x>{body}</x>after"
    assert [record["field"] for record in message["parse_errors"]] == ["x"]


def test_a_value_exactly_at_the_limit_is_accepted() -> None:
    body = "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH
    value = parse_response(f"<x>{body}</x>", _template("json"), prefix="")["x"]
    depth = 0
    while isinstance(value, list):
        value = value[0] if value else None
        depth += 1
    assert depth == MAX_NESTING_DEPTH


def test_argument_typing_keeps_the_text_of_a_deep_json_argument() -> None:
    template = {
        "start_anchor": "A",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<call=(?P<name>\w+)>", "close": "</call>", "repeats": True,
                "content": "xml-inline", "content_args": {"tag_pattern": _TAG},
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
        },
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "array"}}}}}]
    message = parse_response(f"<call=f><a>{DEEP}</a><b>{OVER}</b><c>[1]</c></call>", template,
                             prefix="", tools=tools)
    assert message["tool_calls"][0]["function"]["arguments"] == {"a": DEEP, "b": OVER, "c": "[1]"}


def test_a_template_nested_deeper_than_the_limit_is_a_load_error_naming_the_field_and_key() -> None:
    """Issue 13: the error named neither (every other load error names both)."""
    transform: Any = "{content}"
    for _ in range(MAX_NESTING_DEPTH):
        transform = {"v": transform}
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template(_template("json", transform=transform))
    field = next(iter(_template("json")["fields"]))
    assert (raised.value.path, raised.value.field, raised.value.key) == (
        f"fields.{field}.transform", field, "transform")
    assert str(raised.value) == (
        f"fields.{field}.transform: nested more than 200 levels deep (MAX_NESTING_DEPTH, counting from the "
        "top of the response template) is refused; real templates are a few levels deep")
    defaults: Any = {}
    for _ in range(MAX_NESTING_DEPTH):
        defaults = {"v": defaults}
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template({**_template("json"), "defaults": defaults})
    assert (raised.value.path, raised.value.field, raised.value.key) == ("defaults", None, "defaults")


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [(1, 0, False), ([], 0, True), ([], 1, False), ({"a": [1, {"b": []}]}, 4, False),
     ({"a": [1, {"b": []}]}, 3, True), ([[], [[[]]]], 3, True), ([[], [[[]]]], 4, False)],
)
def test_exceeds_depth_counts_containers(value: Any, limit: int, expected: bool) -> None:
    assert exceeds_depth(value, limit) is expected


@pytest.mark.parametrize(
    ("text", "bound"),
    [("", 0), ('{"a": [1]}', 5), ("[" * 200 + "]" * 200, 200),  # short: half its length, uncounted
     ("[" * 201 + "]" * 201, 201), ('{"s": "' + "{" * 500 + '"}', 501),  # long: its { and [ count
     ("[" + " " * 1000 + "]", 1)],
)
def test_bracket_bound_is_half_a_short_text_and_the_open_brackets_of_a_long_one(text: str,
                                                                               bound: int) -> None:
    assert bracket_bound(text) == bound


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet="{[]}a\\\"", max_size=4),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=2), children, max_size=3),
    max_leaves=40,
)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@given(_JSON_VALUES, st.sampled_from([(",", ":"), (", ", ": ")]), st.sampled_from([None, 2]))
def test_bracket_bound_never_falls_below_the_depth_of_the_value_written(
        value: Any, separators: tuple[str, str], indent: int | None) -> None:
    text = json.dumps(value, separators=separators, indent=indent)
    assert bracket_bound(text) >= _depth(value)
    assert not exceeds_depth(value, bracket_bound(text))


# -- round 2: every failure inside a region close is a parse problem, and leaves a sane parser ---

D500 = "[" * 500 + "]" * 500


def test_allow_non_json_returns_the_text_of_json_nested_too_deeply() -> None:
    template = _template("json", {"allow_non_json": True})
    for body in (D500, DEEP):
        assert parse_response(f"<x>{body}</x>", template, prefix="") == {"x": body}


@pytest.mark.parametrize(
    "template",
    [
        _template("xml-inline", {"tag_pattern": _TAG, "value_parser": _JSON}),
        _template("x-findall", {"pattern": r"(?P<v>\[.*\])", "value_parsers": {"v": _JSON}}),
        _template("x-first", {"parsers": [_JSON]}),
    ],
    ids=["xml-inline", "x-findall", "x-first"],
)
def test_json_value_parsers_refuse_deep_values(template: dict[str, Any]) -> None:
    body = f"<a>{D500}</a>" if template["fields"]["x"]["content"] == "xml-inline" else D500
    with pytest.raises(ResponseParseError, match="nested more than 200 levels"):
        parse_response(f"<x>{body}</x>", template, prefix="")


def test_x_first_falls_back_when_json_is_nested_too_deeply() -> None:
    template = _template("x-first", {"parsers": [_JSON, {"name": "text"}]})
    assert parse_response(f"<x>{D500}</x>", template, prefix="") == {"x": D500}


def test_a_deep_value_fails_the_strict_parser_and_a_keep_parser_goes_on() -> None:
    from chatcodec import ResponseParser
    from chatcodec.errors import ParserStateError
    from chatcodec.response_templates.engine import Lifecycle

    template = _template("x-xml-tree")
    strict = ResponseParser(template, prefix="")
    with pytest.raises(ResponseParseError):
        strict.feed("<x>" + "<a>" * 500 + "</a>" * 500 + "</x>")
    assert strict.lifecycle is Lifecycle.FAILED
    with pytest.raises(ParserStateError):
        strict.feed("more")
    keep = ResponseParser(template, prefix="", errors="keep")
    keep.feed("<x>" + "<a>" * 500 + "</a>" * 500 + "</x>")
    assert keep.feed("<x><a>1</a></x>tail")[2] == {"type": "region_close", "field": "x", "value": {"a": "1"}}
    message, _ = keep.finalize()
    assert message["x"] == {"a": "1"}
    assert message["content"] == "<x>" + "<a>" * 500 + "</a>" * 500 + "</x>tail"


def test_a_deep_call_stack_never_lets_a_recursion_error_out() -> None:
    """The caller may already be deep in the stack: parsing still fails cleanly, or succeeds."""
    import sys

    body = "[" * 150 + "]" * 150
    outcomes: list[object] = []

    def deep(level: int) -> None:
        if level:
            deep(level - 1)
            return
        for errors in ("strict", "keep"):
            try:
                outcomes.append(parse_response(f"<x>{body}</x>", _template("json"), prefix="", errors=errors))
            except ResponseParseError as error:
                outcomes.append(type(error).__name__)

    deep(sys.getrecursionlimit() - 120)
    assert outcomes[0] in ("ResponseParseError", {"x": json.loads(body)})
    assert isinstance(outcomes[1], dict)


def _boom(text: str, args: Any) -> Any:
    raise TypeError("boom")


def test_any_failure_inside_a_region_close_is_a_parse_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    from chatcodec import ResponseParser
    from chatcodec.response_templates import extensions
    from chatcodec.response_templates.engine import Lifecycle

    monkeypatch.setitem(extensions.EXTENSIONS, "x-boom", (_boom, lambda args, where: None))
    template = _template("x-boom")
    parser = ResponseParser(template, prefix="")
    with pytest.raises(ResponseParseError) as raised:
        parser.feed("<x>a</x>")
    assert str(raised.value).splitlines()[0] == (
        "field 'x' (content parser 'x-boom') at offset 3 of the output: TypeError: boom")
    assert parser.lifecycle is Lifecycle.FAILED
    message = parse_response("<x>a</x>b", template, prefix="", errors="keep")
    assert (message["content"], message["parse_errors"][0]["error"]) == (
        "<x>a</x>b", "field 'x' (content parser 'x-boom'): TypeError: boom")


def test_an_open_list_longer_than_the_limit_is_a_load_error_naming_the_field_and_key() -> None:
    fields = {"content": {}, "x": {"open": [f"<t{i}>" for i in range(4000)], "close": "b"}}
    with pytest.raises(ResponseTemplateError) as caught:
        load_response_template({"start_anchor": "A", "fields": fields})
    assert (caught.value.field, caught.value.key) == ("x", "open")
    assert "'open' lists 4000 literals, more than 256 (MAX_DELIMITER_LITERALS" in str(caught.value)
    fields["x"]["open"] = [f"<t{i}>" for i in range(256)]
    assert load_response_template({"start_anchor": "A", "fields": fields}).fields["x"].name == "x"


@pytest.mark.parametrize(("transform", "each"), [({"a": {"b": "{content}"}}, False),
                                                 ({"a": ["{x}"]}, True)])
def test_a_transform_that_pushes_a_value_past_the_limit_is_a_parse_error(transform: Any, each: bool) -> None:
    """The value alone is within the limit (its brackets say so), the transform adds the levels
    that take it over: still refused, as the walk of the whole value would."""
    inner = "[" * (MAX_NESTING_DEPTH - 2) + "]" * (MAX_NESTING_DEPTH - 2)
    body = f'[{{"x": {inner}}}]' if each else "[" + inner + "]"
    template = _template("json", transform=transform, transform_each=each) if each \
        else _template("json", transform=transform)
    with pytest.raises(ResponseParseError) as raised:
        parse_response(f"<x>{body}</x>", template, prefix="")
    assert str(raised.value).splitlines()[0] == (
        f"field 'x' (content parser 'json') at offset 3 of the output: {NESTING_ERROR}")


def test_a_transform_that_keeps_a_value_at_the_limit_is_accepted() -> None:
    inner = "[" * (MAX_NESTING_DEPTH - 2) + "]" * (MAX_NESTING_DEPTH - 2)
    message = parse_response(f"<x>{inner}</x>", _template("json", transform={"a": {"b": "{content}"}}),
                             prefix="")
    value = message["x"]["a"]["b"]
    depth = 0
    while isinstance(value, list):
        value, depth = (value[0] if value else None), depth + 1
    assert depth == MAX_NESTING_DEPTH - 2
