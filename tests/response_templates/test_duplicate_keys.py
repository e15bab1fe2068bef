"""Issue 13: a key given twice is an error in every parser that builds objects, never an overwrite.

``{"a": "KEEP", "a": "x"}`` gave ``{"a": "x"}`` with no record in ``json``, ``xml-inline``,
``x-json-calls`` and ``x-findall`` with a ``json`` value parser, in strict and keep mode. The table
below holds every registered content parser to the rule (a new parser must be added to it), and
Hypothesis tries keys repeated at any depth of any JSON object.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import parse_response
from chatcodec.errors import ResponseParseError
from chatcodec.response_templates.arguments import cast_tool_calls, tool_parameters
from chatcodec.response_templates.content import get_parser, known_parser_names

#: Parsers whose values hold no keys read from the text (``x-wrap``'s one key is named by its arguments).
WITHOUT_KEYS = {"text", "int", "float", "bool", "x-wrap"}

#: parser -> (content_args, text with a key given twice, a phrase of the error)
TWICE: dict[str, tuple[dict[str, Any], str, str]] = {
    "json": ({}, '{"a": "KEEP", "a": "x"}', "key 'a' is given twice"),
    "xml-inline": ({"tag_pattern": r"<(?P<key>\w+)>(?P<value>[^<]*)</(?P=key)>"}, "<a>KEEP</a><a>x</a>",
                   "key 'a' is given twice"),
    "kv-lines": ({}, "a: KEEP\na: x", "key 'a' is given twice"),
    "python-call-list": ({}, '[f(a="KEEP", a="x")]', "repeated name 'a'"),
    "x-bare-object": ({}, "{a:1,a:2}", "key 'a' is given twice"),
    "x-findall": ({"pattern": r"(?P<args>\{[^}]*\})", "value_parsers": {"args": {"name": "json"}}},
                  '{"a": "KEEP", "a": "x"}', "key 'a' is given twice"),
    "x-first": ({"parsers": [{"name": "json"}]}, '{"a": "KEEP", "a": "x"}', "key 'a' is given twice"),
    "x-json-calls": ({}, '{"name": "f", "arguments": {"a": "KEEP", "a": "x"}}', "key 'a' is given twice"),
    "x-named-call": ({}, 'f{"a": "KEEP", "a": "x"}', "key 'a' is given twice"),
    "x-pythonic": ({}, '[f(a="KEEP", a="x")]', "argument 'a' is given twice"),
    "x-switch": ({"cases": [{"lead": "", "parser": {"name": "json"}}]}, '{"a": "KEEP", "a": "x"}',
                 "key 'a' is given twice"),
    "x-xml-tree": ({}, "<a>KEEP</a><a>x</a>", "is given twice"),
}


#: Parsers that give the text as written when it is not a value they can read whole.
AS_WRITTEN = {"x-python-literal": "{'a': 'KEEP', 'a': 'x'}"}


def test_every_parser_is_in_the_table() -> None:
    assert set(known_parser_names()) == WITHOUT_KEYS | set(TWICE) | set(AS_WRITTEN)


@pytest.mark.parametrize("name", sorted(AS_WRITTEN))
def test_a_key_given_twice_keeps_the_text_as_written(name: str) -> None:
    text = AS_WRITTEN[name]
    assert get_parser(name).parse(text, {}) == text


@pytest.mark.parametrize("name", sorted(TWICE))
def test_a_key_given_twice_is_an_error(name: str) -> None:
    args, text, phrase = TWICE[name]
    with pytest.raises(ValueError, match=phrase.replace("(", r"\(")):
        get_parser(name).parse(text, args)


@pytest.mark.parametrize("name", sorted(TWICE))
@pytest.mark.parametrize("errors", ["strict", "keep"])
def test_in_a_template_strict_raises_and_keep_loses_nothing(name: str, errors: str) -> None:
    args, text, phrase = TWICE[name]
    calls = {"open": "<calls>", "close": "</calls>", "content": name, "content_args": args}
    template = {"start_anchor": "S", "fields": {"calls": calls, "content": {}}}
    output = f"Before <calls>{text}</calls> after"
    if errors == "strict":
        with pytest.raises(ResponseParseError) as raised:
            parse_response(output, template, prefix="")
        assert raised.value.field == "calls"
        assert phrase in str(raised.value)
        return
    message = parse_response(output, template, prefix="", errors="keep")
    assert message["content"] == output  # the failed region's raw text went back into content
    assert [(e["field"], e["raw"]) for e in message["parse_errors"]] == [("calls", f"<calls>{text}</calls>")]


# -- any object, any depth --------------------------------------------------------------------------

KEYS = st.text(alphabet="abcxyz_", min_size=1, max_size=4)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(alphabet="ab ", max_size=3))
VALUES = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8)


def _with_a_repeated_key(value: Any, path: list[int]) -> str:
    """``value`` as JSON, with one non-empty object (chosen by ``path``) writing its first key twice."""
    objects: list[dict[str, Any]] = []

    def collect(item: Any) -> None:
        if isinstance(item, dict) and item:
            objects.append(item)
        for child in item.values() if isinstance(item, dict) else item if isinstance(item, list) else []:
            collect(child)

    collect(value)
    target = objects[path[0] % len(objects)]

    def dump(item: Any) -> str:
        if isinstance(item, dict):
            pairs = [f"{json.dumps(k)}: {dump(v)}" for k, v in item.items()]
            if item is target:
                key = next(iter(item))
                pairs.append(f'{json.dumps(key)}: "SECOND"')
            return "{" + ", ".join(pairs) + "}"
        if isinstance(item, list):
            return "[" + ", ".join(dump(child) for child in item) + "]"
        return json.dumps(item)

    return dump(value)


NONEMPTY_OBJECTS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=3)


@given(value=NONEMPTY_OBJECTS, path=st.lists(st.integers(0, 50), min_size=1, max_size=1))
def test_json_readers_refuse_a_key_repeated_at_any_depth(value: dict[str, Any], path: list[int]) -> None:
    text = _with_a_repeated_key(value, path)
    for name in ("json", "x-json-calls"):
        args, source = ({}, text) if name == "json" else ({}, f'{{"name": "f", "arguments": {text}}}')
        with pytest.raises(ValueError, match="is given twice"):
            get_parser(name).parse(source, args)


@given(value=NONEMPTY_OBJECTS, path=st.lists(st.integers(0, 50), min_size=1, max_size=1))
def test_argument_typing_keeps_such_json_as_its_text(value: dict[str, Any], path: list[int]) -> None:
    text = _with_a_repeated_key(value, path)
    tools = tool_parameters([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"config": {"type": "object"}}}}}])
    calls = [{"type": "function", "function": {"name": "f", "arguments": {"config": text}}}]
    assert cast_tool_calls(calls, tools) == calls
