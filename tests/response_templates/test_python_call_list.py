"""``python-call-list`` (transformers 5.24): 5.24's exact results and errors, alone and end to end.

``python_call_list_vectors.json`` holds 5.24's value or exact error message for 63 inputs; the
parser must give the same (types included: ``3`` is not ``3.0``), and the same through
``parse_response`` with the file's one-field template, whole or streamed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chatcodec
from chatcodec.response_templates.content import ContentError, get_parser
from tests.conftest import load_json
from tests.response_templates.helpers import assert_same, check_stream

DATA: dict[str, Any] = load_json("python_call_list_vectors.json")
VECTORS: list[dict[str, Any]] = DATA["vectors"]


def parse(text: str) -> Any:
    return get_parser("python-call-list").parse(text, {})


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["id"])
def test_same_value_or_error_as_524(vector: dict[str, Any]) -> None:
    if "error" in vector:
        with pytest.raises(ContentError) as caught:
            parse(vector["input"])
        assert str(caught.value) == vector["error_message"]
        assert caught.value.position == vector["error_position"]
    else:
        assert_same(parse(vector["input"]), vector["expected"])


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["id"])
def test_end_to_end_through_the_vector_template(vector: dict[str, Any]) -> None:
    output = f"<calls>{vector['input']}</calls>"
    if "error" in vector:
        with pytest.raises(chatcodec.ResponseParseError) as caught:
            chatcodec.parse_response(output, DATA["template"], prefix="")
        assert vector["error_message"] in str(caught.value)
        assert caught.value.offset == len("<calls>") + vector["error_position"]
        return
    expected = vector.get("end_to_end_message", {"role": "assistant", "tool_calls": vector["expected"]})
    check_stream(DATA["template"], output, expected, prefix="")


def test_streams_dirty_chunks_and_the_list_at_close() -> None:
    parser = chatcodec.ResponseParser(DATA["template"], prefix="")
    events = parser.feed("<calls>[f(a=1)")
    events += parser.feed("]</calls>")
    assert events == [
        {"type": "region_open", "field": "tool_calls"},
        {"type": "region_chunk", "field": "tool_calls", "text": "[f(a=1)", "dirty": True},
        {"type": "region_chunk", "field": "tool_calls", "text": "]", "dirty": True},
        {"type": "region_close", "field": "tool_calls", "value": [{"name": "f", "arguments": {"a": 1}}]},
    ]


def test_typed_with_the_tool_schema_through_transform_each() -> None:
    template = {
        "start_anchor": "A",
        "fields": {"tool_calls": {
            "open": "<calls>", "close": "</calls>", "content": "python-call-list",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
            "transform_each": True,
        }},
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}]
    message = chatcodec.parse_response('<calls>[f(n="7", s=3)]</calls>', template, prefix="", tools=tools)
    expected = [{"type": "function", "function": {"name": "f", "arguments": {"n": 7, "s": 3}}}]
    assert_same(message["tool_calls"], expected)


def test_content_args_are_refused_at_load() -> None:
    template = {"start_anchor": "A", "fields": {"calls": {
        "open": "<c>", "close": "</c>", "content": "python-call-list", "content_args": {"strip": True}}}}
    with pytest.raises(chatcodec.ResponseTemplateError, match=r"fields\.calls\.content_args: unknown key"):
        chatcodec.load_response_template(template)


def _literal() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**53 - 1), 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    )


def _write(value: Any) -> str:
    """Python-call-list source for a JSON value (JSON's own spelling is valid in the grammar)."""
    import json

    if value is True or value is False or value is None:
        return {True: "True", False: "False", None: "None"}[value]
    if isinstance(value, list):
        return "[" + ", ".join(_write(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {_write(item)}" for key, item in value.items()) + "}"
    return json.dumps(value)


@given(st.lists(st.tuples(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}(?:[.-][A-Za-z0-9_]{1,3}){0,2}", fullmatch=True),
    st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), _literal(), max_size=3),
), max_size=3))
def test_every_written_call_list_reads_back(calls: list[tuple[str, dict[str, Any]]]) -> None:
    text = "[" + ", ".join(
        f"{name}(" + ", ".join(f"{key}={_write(value)}" for key, value in arguments.items()) + ")"
        for name, arguments in calls
    ) + "]"
    assert_same(parse(text), [{"name": name, "arguments": arguments} for name, arguments in calls])
