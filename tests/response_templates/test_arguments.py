"""Tool-argument typing from JSON schemas (SPEC §1.6) and the tools= conversion."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, parse_response
from chatcodec.response_templates.arguments import (
    cast_tool_calls,
    coerce_argument,
    schema_types,
    tool_parameters,
    type_argument,
)
from chatcodec.response_templates.limits import MAX_NESTING_DEPTH
from tests.response_templates.helpers import assert_same


@pytest.mark.parametrize(
    ("schema", "types"),
    [
        ({"type": "integer"}, ("integer",)),
        ({"type": ["integer", "null"]}, ("integer", "null")),
        ({"anyOf": [{"type": "string"}, {"type": "object"}]}, ("string", "object")),
        ({"oneOf": [{"type": "boolean"}, {"anyOf": [{"type": "number"}]}]}, ("boolean", "number")),
        ({"type": "string", "nullable": True}, ("string", "null")),
        ({"type": "null", "nullable": True}, ("null",)),
        ({"description": "untyped"}, ()),
        ("not a schema", ()),
    ],
)
def test_schema_types(schema: Any, types: tuple[str, ...]) -> None:
    assert schema_types(schema) == types


@pytest.mark.parametrize(
    ("raw", "types", "expected"),
    [
        ("7", ("integer",), 7),
        (" 7 ", ("integer",), 7),
        ("3.0", ("integer",), 3),
        ("1e3", ("integer",), 1000),
        ("1.5", ("integer",), "1.5"),
        ("007", ("integer",), 7),
        ("1_000", ("integer",), "1_000"),
        ("٣", ("integer",), "٣"),
        ("2", ("number",), 2),
        ("2.0", ("number",), 2.0),
        ("1.5", ("number",), 1.5),
        ("nan", ("number",), "nan"),
        ("inf", ("number",), "inf"),
        ("True", ("boolean",), True),
        ("0", ("boolean",), False),
        ("yes", ("boolean",), "yes"),
        ("None", ("null",), None),
        ("NULL", ("null",), "NULL"),
        ('{"a": 1}', ("object",), {"a": 1}),
        ("[1]", ("object",), "[1]"),
        ("[1]", ("array",), [1]),
        ("[NaN]", ("array",), "[NaN]"),
        ("1", ("integer", "boolean"), 1),
        ("1", ("boolean", "integer"), True),
        ("5", ("integer", "string"), 5),
        ("5", ("string", "integer"), "5"),
        ("true", ("string", "boolean"), "true"),
        ("null", ("string", "null"), None),
        ('{"a": 1}', ("string", "object"), {"a": 1}),
        ("1.50", ("string", "object"), "1.50"),
        ("x", ("mystery",), "x"),
    ],
)
def test_coerce_argument(raw: str, types: tuple[str, ...], expected: Any) -> None:
    assert_same(coerce_argument(raw, types), expected)


PARAMS = {
    "f": {
        "n": {"type": "integer"},
        "tags": {"type": "array"},
        "flag": {"type": "boolean"},
        "s": {"type": "string"},
    }
}


def test_cast_tool_calls_types_top_level_strings_and_never_mutates() -> None:
    call = {
        "type": "function",
        "function": {
            "name": "f",
            "arguments": {
                "n": "3",
                "tags": ["1", "2"],
                "flag": ["true", "0", 5],
                "s": "4",
                "other": "9",
                "nested": {"n": "3"},
            },
        },
    }
    original = copy.deepcopy(call)
    typed = cast_tool_calls([call, "not a call", {"function": {"name": 3, "arguments": {}}}], PARAMS)
    assert call == original
    assert typed[0]["function"]["arguments"] == {
        "n": 3,
        "tags": ["1", "2"],
        "flag": [True, False, 5],
        "s": "4",
        "other": "9",
        "nested": {"n": "3"},
    }
    assert typed[1:] == ["not a call", {"function": {"name": 3, "arguments": {}}}]


def test_cast_tool_calls_without_a_matching_tool_returns_the_value_itself() -> None:
    call = {"function": {"name": "g", "arguments": {"n": "3"}}}
    assert cast_tool_calls(call, PARAMS) is call
    assert cast_tool_calls(call, {}) is call


def test_tool_parameters_accepts_wrapped_and_bare_function_schemas() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "a", "parameters": {"type": "object", "properties": {"x": {}}}},
        },
        {"name": "b", "parameters": {"properties": {"y": {"type": "integer"}}}},
        {"type": "function", "function": {"name": "c"}},
        {"type": "custom", "custom": {"name": "d"}},  # not a function tool: no schema to type with
    ]
    assert tool_parameters(tools) == {"a": {"x": {}}, "b": {"y": {"type": "integer"}}, "c": {}}
    assert tool_parameters(None) == {}


#: One tool-call field: ``<c>{"name": ..., "arguments": {...}}</c>``, OpenAI-shaped.
_CALLS: dict[str, Any] = {"start_anchor": "A", "fields": {"c": {
    "open": "<c>", "close": "</c>", "repeats": True, "content": "json",
    "transform": {"type": "function",
                  "function": {"name": "{content.name}", "arguments": "{content.arguments}"}},
}}}
_HOUR_TOOL = {"type": "function", "function": {"name": "set_alarm", "parameters": {
    "type": "object", "properties": {"hour": {"type": "integer"}}}}}
_SHAPES = ('; expected {"type": "function", "function": {"name": ..., "parameters": {...}}} or the function '
           'object itself ({"name": ..., "parameters": {...}})')


@pytest.mark.parametrize(("tools", "message"), [
    ([{"x": 1}], "tools[0]: the tool has no 'name' (its keys: 'x')"),
    ([{"name": "a"}, {"type": "function"}], "tools[1]: a tool of type 'function' has no 'function' object"),
    ([{"type": "function", "function": {"description": "no name"}}],
     "tools[0]: 'function' has no 'name' (its keys: 'description')"),
    ([{"type": "function", "function": "get_time"}],
     "tools[0]: 'function' must be an object with a 'name', got str"),
    ([{"name": ""}], "tools[0]: the tool's 'name' must be a non-empty string, got ''"),
    ([{"function": {"name": 7}}], "tools[0]: 'function''s 'name' must be a non-empty string, got 7"),
])
def test_a_function_tool_without_a_name_is_refused_naming_the_entry(tools: list[Any], message: str) -> None:
    """QA: ``set_tools([{'x': 1}])`` and ``tools=[{'x': 1}]`` were accepted and every call stayed untyped
    (a typo silently turned typing off); now the entry and what it lacks are named, whichever way the
    tools arrive, and the parser keeps the tools it had."""
    with pytest.raises(ValueError) as caught:
        tool_parameters(tools)
    assert str(caught.value) == message + _SHAPES
    with pytest.raises(ValueError) as caught:
        ResponseParser(_CALLS, prefix="", tools=tools)
    assert str(caught.value) == message + _SHAPES
    parser = ResponseParser(_CALLS, prefix="", tools=[_HOUR_TOOL])
    with pytest.raises(ValueError) as caught:
        parser.set_tools(tools)
    assert str(caught.value) == message + _SHAPES
    parser.feed('<c>{"name": "set_alarm", "arguments": {"hour": "7"}}</c>')
    assert parser.finalize()[0] == {
        "c": [{"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": 7}}}]}


def test_tools_must_be_schemas_or_functions() -> None:
    with pytest.raises(TypeError, match="expected a JSON schema dict or a Python function, got int"):
        tool_parameters([3])


def set_alarm(hour: int, label: str | None = None) -> None:
    """Set an alarm.

    Args:
        hour: The hour.
        label: A label.
    """


def test_function_tools_go_through_tool_to_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def fake_schema(func: Any) -> dict[str, Any]:
        seen.append(func)
        return {
            "type": "function",
            "function": {
                "name": "set_alarm",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "hour": {"type": "integer"},
                        "label": {"type": "string", "nullable": True},
                    },
                },
            },
        }

    monkeypatch.setattr("chatcodec.tool_schemas.get_json_schema", fake_schema)
    template = {
        "start_anchor": "x",
        "fields": {"tool_calls": {"open": "<t>", "close": "</t>", "repeats": True, "content": "json"}},
    }
    output = '<t>{"function": {"name": "set_alarm", "arguments": {"hour": "7", "label": "null"}}}</t>'
    message = parse_response(output, template, prefix="", tools=[set_alarm])
    assert seen == [set_alarm]
    assert_same(message["tool_calls"][0]["function"]["arguments"], {"hour": 7, "label": None})


def _tool(**properties: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
                                                                         "properties": properties}}}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"anyOf": 5}, "tools[0] (f): parameter 'x': anyOf must be a list of schemas, got int"),
        ({"oneOf": [{"type": "string"}, 3]}, "tools[0] (f): parameter 'x': oneOf[1] must be a schema (an "
         "object), got int"),
        ({"type": 5}, "tools[0] (f): parameter 'x': type must be a type name or a list of them, got int"),
        ({"type": ["string", 1]}, "tools[0] (f): parameter 'x': type must be a type name or a list of "
         "them, got list"),
        ({"anyOf": [{"type": {"a": 1}}]}, "tools[0] (f): parameter 'x': anyOf[0]: type must be a type "
         "name or a list of them, got dict"),
        ({"nullable": "yes"}, "tools[0] (f): parameter 'x': nullable must be true or false, got str"),
    ],
)
def test_a_bad_parameter_schema_is_refused_when_the_parser_is_built(schema: Any, message: str) -> None:
    """Round-2 QA: {"anyOf": 5} raised a bare TypeError from feed() at region close."""
    from chatcodec import ResponseParser

    with pytest.raises(ValueError) as raised:
        ResponseParser({"start_anchor": "S", "fields": {"c": {}}}, prefix="", tools=[_tool(x=schema)])
    assert str(raised.value) == message


@pytest.mark.parametrize("schema", [{"anyOf": 5}, {"type": 5}, {"oneOf": [3]}, {"anyOf": "string"}, 7, None])
def test_schema_types_never_raises(schema: Any) -> None:
    assert schema_types(schema) == ()


_HERMES = {
    "start_anchor": "A",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {},
    },
}
_WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"days": {"type": "integer"}}}}}]


@pytest.mark.parametrize("errors", ["strict", "keep"])
def test_a_call_to_a_function_not_in_tools_is_kept_and_flagged(errors: str) -> None:
    from chatcodec import ResponseParser

    output = ('<tool_call>{"name": "get_time", "arguments": {"days": "2"}}</tool_call>'
              '<tool_call>{"name": "get_weather", "arguments": {"days": "2"}}</tool_call>')
    parser = ResponseParser(_HERMES, prefix="", tools=_WEATHER, errors=errors)
    parser.feed(output)
    message, _ = parser.finalize()
    assert_same(message["tool_calls"], [
        {"type": "function", "function": {"name": "get_time", "arguments": {"days": "2"}}},
        {"type": "function", "function": {"name": "get_weather", "arguments": {"days": 2}}},
    ])
    record = {"field": "tool_calls", "kind": "unknown_tool", "name": "get_time", "offset": 11,
              "message": "field 'tool_calls': a call to 'get_time', which is not one of the tools given "
                         "(get_weather); the call is kept as written"}
    assert message["parse_warnings"] == [record]
    assert parser.parse_warnings == [record]
    assert "parse_errors" not in message


def _tools_named(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
            for name in names]


def test_the_unknown_tool_warning_lists_twenty_tools_alphabetically_then_counts_the_rest() -> None:
    names = [f"t{i:02d}" for i in range(23)]
    output = ('<tool_call>{"name": "x", "arguments": {}}</tool_call>'
              '<tool_call>{"name": "y", "arguments": {}}</tool_call>')
    message = parse_response(output, _HERMES, prefix="", tools=_tools_named(names[::-1]))
    listed = ", ".join(names[:20])
    assert message["parse_warnings"] == [
        {"field": "tool_calls", "kind": "unknown_tool", "name": "x", "offset": 11,
         "message": f"field 'tool_calls': a call to 'x', which is not one of the tools given "
                    f"({listed}, ... and 3 more); the call is kept as written"},
        {"field": "tool_calls", "kind": "unknown_tool", "name": "y", "offset": 64,
         "message": f"field 'tool_calls': a call to 'y', which is not one of the tools given "
                    f"({listed}, ... and 3 more); the call is kept as written"},
    ]


def test_the_unknown_tool_warning_lists_all_of_twenty_tools() -> None:
    names = [f"t{i:02d}" for i in range(20)]
    output = '<tool_call>{"name": "x", "arguments": {}}</tool_call>'
    message = parse_response(output, _HERMES, prefix="", tools=_tools_named(names[::-1]))
    assert message["parse_warnings"][0]["message"] == (
        f"field 'tool_calls': a call to 'x', which is not one of the tools given ({', '.join(names)}); "
        "the call is kept as written")


def test_without_tools_no_call_is_flagged() -> None:
    output = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    assert "parse_warnings" not in parse_response(output, _HERMES, prefix="")
    assert "parse_warnings" not in parse_response(output, _HERMES, prefix="", tools=[])


#: A todo list written with backslash-escaped quotes, as GLM-4.6 writes one at times (SGLang's
#: test_array_argument_with_escaped_json).
_ESCAPED_TODOS = (r'[{\"id\": \"1\", \"task\": \"Check the backend\\nthen the frontend\", '
                  r'\"status\": \"pending\"}]')


@pytest.mark.parametrize(("raw", "types", "expected"), [
    (_ESCAPED_TODOS, ("array",),
     [{"id": "1", "task": "Check the backend\nthen the frontend", "status": "pending"}]),
    (r'{\"unit\": \"celsius\", \"days\": 3}', ("object",), {"unit": "celsius", "days": 3}),
    (r'{\"unit\": \"celsius\"}', ("null", "object"), {"unit": "celsius"}),
    # JSON as written is never unescaped: the string keeps its backslash-n
    ('[{"task": "Print \\\\n to see newline"}]', ("array",), [{"task": "Print \\n to see newline"}]),
    # a string parameter, an untyped one, the wrong container and broken escapes keep the text
    (_ESCAPED_TODOS, ("string",), _ESCAPED_TODOS),
    (_ESCAPED_TODOS, (), _ESCAPED_TODOS),
    (_ESCAPED_TODOS, ("object",), _ESCAPED_TODOS),
    (r'[{\"id\": \"1\"', ("array",), r'[{\"id\": \"1\"'),
    (r'[{\"id\": \"1\", "bare": 2}]', ("array",), r'[{\"id\": \"1\", "bare": 2}]'),
    (r'[\"a\", \"b\"] trailing', ("array",), r'[\"a\", \"b\"] trailing'),
])
def test_escaped_json_is_typed_by_an_object_or_array_schema(raw: str, types: tuple[str, ...],
                                                            expected: Any) -> None:
    """GLM-4.6 writes an object or array argument backslash-escaped at times; SGLang's GLM-4 parser
    unescapes it and reads the JSON (``parse_arguments``, strategy 2). Typing does the same for an
    object/array schema once JSON and the Python literal fail; the reference keeps the text."""
    assert_same(type_argument(raw, types, MAX_NESTING_DEPTH), expected)


_ESCAPE_TEXT = st.text(alphabet='ab"\\\n/{}[]: \u00e9', max_size=8)
_CONTAINERS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), _ESCAPE_TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_ESCAPE_TEXT, inner, max_size=4)),
    max_leaves=10).filter(lambda value: isinstance(value, (list, dict)))


@given(value=_CONTAINERS, ensure_ascii=st.booleans())
def test_any_container_written_escaped_is_typed_back_and_json_as_written_is_unchanged(
        value: Any, ensure_ascii: bool) -> None:
    """For every JSON object or array: its text written escaped (the body of a JSON string holding
    it, as GLM-4.6 writes one) is typed back to the value by its schema type, and its plain JSON
    text gives the value as before; a string parameter keeps either text."""
    kind = "array" if isinstance(value, list) else "object"
    plain = json.dumps(value, ensure_ascii=ensure_ascii)
    escaped = json.dumps(plain, ensure_ascii=ensure_ascii)[1:-1]
    assert_same(type_argument(plain, (kind,), MAX_NESTING_DEPTH), value)
    assert_same(type_argument(escaped, (kind,), MAX_NESTING_DEPTH), value)
    assert type_argument(escaped, ("string",), MAX_NESTING_DEPTH) == escaped
