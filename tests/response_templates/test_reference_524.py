"""What transformers 5.24 changed in response parsing, and chatcodec gives the same.

5.24 (the reference; 5.23 before it) decides four things differently: named groups of a
``close_pattern`` reach the transform, ``unquoted_keys`` allows whitespace around a key and never
rewrites strings, ``merge_duplicates`` keeps a list value whole, and a regex delimiter whose match
leans on the end of the buffer (``(?=\\n?\\Z)`` on ``ab\\n``) waits for more input. Every value
and event below was produced by running transformers 5.24.0 on the same input
(``../shared/research/reference_524.md`` lists the measured changes); each case also goes through
the three-way streaming check. The corpus vectors named here were recorded with 5.23 and are
``quirk: true``: 5.24 now gives the result their notes call right.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcodec import ResponseParseError, ResponseParser, parse_response
from tests.conftest import load_json
from tests.response_templates.helpers import check_stream, stream

VECTORS = {v["id"]: v for v in load_json("response_vectors.json")["vectors"]}


def chunk(field: str, text: str) -> dict[str, Any]:
    return {"type": "region_chunk", "field": field, "text": text, "dirty": False}


def feeds(template: dict[str, Any], chunks: list[str]) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The message and the events of every feed, then of ``finalize`` (the last list)."""
    parser = ResponseParser(template, prefix="")
    per_feed = [parser.feed(text) for text in chunks]
    message, final = parser.finalize()
    return message, [*per_feed, final]


# -- a delimiter that leans on the end of the input ------------------------------------------------

LOOKAHEAD_END = {"start_anchor": "S",
                 "fields": {"x": {"open": "<x>", "close_pattern": r"(?=\n?\Z)"}, "c": {}}}


def test_a_regex_match_that_leans_on_the_end_of_the_buffer_waits() -> None:
    """5.23 closed ``x`` at ``ab|\\n`` in the first feed and lost ``cd`` to ``c``; 5.24 (and chatcodec)
    hold the newline until more input shows the match was not at the end."""
    message, events = feeds(LOOKAHEAD_END, ["<x>ab\n", "cd"])
    assert message == {"x": "ab\ncd"}
    assert events == [
        [{"type": "region_open", "field": "x"}, chunk("x", "ab")],
        [chunk("x", "\ncd")],
        [{"type": "region_close", "field": "x", "value": "ab\ncd"}],
    ]
    message, events = feeds(LOOKAHEAD_END, ["<x>ab", "\n", "cd\n"])
    assert message == {"x": "ab\ncd"}
    assert events == [
        [{"type": "region_open", "field": "x"}, chunk("x", "ab")],
        [],
        [chunk("x", "\ncd")],
        [{"type": "region_close", "field": "x", "value": "ab\ncd"},
         {"type": "region_open", "field": "c"}, chunk("c", "\n"),
         {"type": "region_close", "field": "c", "value": ""}],
    ]
    check_stream(LOOKAHEAD_END, "<x>ab\ncd", {"x": "ab\ncd"})
    check_stream(LOOKAHEAD_END, "<x>ab\n\ncd", {"x": "ab\n\ncd"})


@pytest.mark.parametrize(("close", "output", "expected"), [
    (r"(?=\s*\Z)", "<x>ab \ncd \n", {"x": "ab \ncd", "c": " \n"}),
    (r"\n*\Z", "<x>ab\n\ncd\n", {"x": "ab\n\ncd"}),
    (r"(?=\n(?!.))", "<x>ab\ncd\n", {"x": "ab\ncd", "c": "\n"}),
    (r"(?=\n|\Z)", "<x>ab\ncd", {"x": "ab", "c": "\ncd"}),
])
def test_other_closes_that_read_the_end_agree_with_the_one_shot_parse(
    close: str, output: str, expected: dict[str, Any]
) -> None:
    """5.24's values (``strip: false`` keeps the newlines where each region got them)."""
    kept = {"content_args": {"strip": False}}
    field = {"open": "<x>", "close_pattern": close, **kept}
    template = {"start_anchor": "S", "fields": {"x": field, "c": kept}}
    check_stream(template, output, expected)


#: Delimiters that read the end of the input, each through another assertion.
_END_READING_CLOSES = [r"(?=\n?\Z)", r"\n*\Z", r"(?=\s*\Z)", r"(?=\n|\Z)", r"(?m)$", r"(?=</s>|\Z)",
                       r"\n\n|\Z", r"\n(?!\s*<)", r"(?=\n(?!.))", r"(?m)\n$", r"b\b", r"(?=x*\Z)"]
_END_READING_OPENS = [r"<x>", r"<x>(?=\s*\Z)", r"<x>(?!\n)", r"(?m)^<x>"]


@settings(max_examples=300)
@given(close=st.sampled_from(_END_READING_CLOSES), open_=st.sampled_from(_END_READING_OPENS),
       pieces=st.lists(st.sampled_from(["a", "b", "x", "\n", " ", "<", "</s>", "<x>", "\n\n"]), min_size=1,
                       max_size=12),
       cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=8))
def test_any_chunking_gives_the_one_shot_message(
    close: str, open_: str, pieces: list[str], cuts: list[int]
) -> None:
    """The property the finality rule keeps: however the output is cut, the stream ends with the
    message the one-shot parse gives (one character at a time and at arbitrary cuts). 5.23 failed it
    with ``(?=\\n?\\Z)`` on ``<x>ab\\ncd`` fed one character at a time."""
    kept = {"content_args": {"strip": False}}
    template = {"start_anchor": "S", "fields": {"x": {"open_pattern": open_, "close_pattern": close, **kept},
                                                "c": kept}}
    output = "<x>" + "".join(pieces)
    one_shot = parse_response(output, template, prefix="")
    bounds = [0, *sorted({cut % len(output) for cut in cuts} - {0}), len(output)]
    for chunks in (list(output), [output[a:b] for a, b in itertools.pairwise(bounds)]):
        assert stream(template, chunks)[0] == one_shot, chunks


# -- named groups of a close pattern ----------------------------------------------------------------


def _captures(open_pattern: str, close_pattern: str) -> dict[str, Any]:
    field = {"open_pattern": open_pattern, "close_pattern": close_pattern,
             "transform": {"v": "{content}", "t": "{tag}"}}
    return {"start_anchor": "S", "fields": {"x": field, "c": {}}}


def test_named_groups_of_a_close_pattern_reach_the_transform() -> None:
    """``x-close-pattern-capture-unavailable`` (held-back corpus): 5.23 raised ``KeyError`` "'{tag}'
    is not defined"; 5.24 passes the close's groups beside the open's."""
    template = {"start_anchor": "S", "fields": {"x": {
        "open_pattern": r"<(?P<open>\w+)>", "close_pattern": r"</(?P<tag>\w+)>",
        "transform": {"open": "{open}", "tag": "{tag}", "body": "{content}"}}}}
    check_stream(template, "<a>hi</b>", {"x": {"open": "a", "tag": "b", "body": "hi"}})
    events = stream(template, ["<a>hi</b>"])[1]
    value = {"open": "a", "tag": "b", "body": "hi"}
    assert events[-1] == {"type": "region_close", "field": "x", "value": value}


def test_a_name_in_both_patterns_takes_the_close_value_unless_the_close_group_did_not_match() -> None:
    check_stream(_captures(r"<x (?P<tag>\w+)>", r"</x (?P<tag>\w+)>"), "<x open>hi</x close>",
                 {"x": {"v": "hi", "t": "close"}})
    check_stream(_captures(r"<x (?P<tag>\w+)>", r"</x(?: (?P<tag>\w+))?>"), "<x open>hi</x>",
                 {"x": {"v": "hi", "t": "open"}})


def test_the_implicit_field_gets_the_groups_of_its_close() -> None:
    template = {"start_anchor": "S", "fields": {"c": {
        "close_pattern": r"<end (?P<why>\w+)>", "transform": {"v": "{content}", "w": "{why}"}}}}
    check_stream(template, "hello<end stop>", {"c": {"v": "hello", "w": "stop"}})


@pytest.mark.parametrize("output", ["<x>hi", "<x>hi</>"], ids=["cut-off", "group-not-in-the-match"])
def test_a_close_group_that_never_matched_is_not_defined(output: str) -> None:
    """As 5.24: ``KeyError`` "'{tag}' is not defined" (chatcodec's is also a ``ResponseParseError``)."""
    template = {"start_anchor": "S", "fields": {"x": {
        "open": "<x>", "close_pattern": r"</(?P<tag>\w+)?>", "transform": {"v": "{content}", "t": "{tag}"}}}}
    with pytest.raises(ResponseParseError) as raised:
        parse_response(output, template, prefix="")
    assert isinstance(raised.value, KeyError)
    assert "transform placeholder '{tag}' is not defined. Available: ['content']" in str(raised.value)


# -- unquoted_keys -----------------------------------------------------------------------------------


def _json(**content_args: Any) -> dict[str, Any]:
    field = {"open": "<a>", "close": "</a>", "content": "json", "content_args": content_args}
    return {"start_anchor": "S", "fields": {"a": field, "c": {}}}


@pytest.mark.parametrize(("case_id", "expected"), [
    ("x-lax-json-space-after-comma", {"a": {"a": 1, "b": 2}}),
    ("x-lax-json-space-after-brace", {"a": {"a": 1}}),
    ("x-lax-json-undelimited-string-corrupted", {"a": {"a": "x,y:z"}}),
])
def test_unquoted_keys_corpus_vectors_give_524s_value(case_id: str, expected: dict[str, Any]) -> None:
    """5.23 raised ``ValueError`` on each (a key after a space was not quoted; ``"x,y:z"`` was
    rewritten into ``"x,"y":z"``)."""
    case = VECTORS[case_id]
    assert case["quirk"] and case["kind"] == "parse_error"
    check_stream(case["template"], case["output"], expected)


@pytest.mark.parametrize(("output", "expected"), [
    ("{ a : 1 ,\n b:2}", {"a": 1, "b": 2}),
    ('{a:"{b:1}", c:"x,d:y"}', {"a": "{b:1}", "c": "x,d:y"}),
    ('{a:"x\\",b:1"}', {"a": 'x",b:1'}),
    ('{"k":"v\\\\", b:1}', {"k": "v\\", "b": 1}),
    ('{ "a" :1, b :2}', {"a": 1, "b": 2}),
    ("{\ta\t:1}", {"a": 1}),
    ("{a1:1, _b:2, Ä:3, ٣:4, 1a:5}", {"a1": 1, "_b": 2, "Ä": 3, "٣": 4, "1a": 5}),
    ("{true:1, null:2}", {"true": 1, "null": 2}),
    ("[{a:1},{b:[{c:2}]}]", [{"a": 1}, {"b": [{"c": 2}]}]),
])
def test_unquoted_keys(output: str, expected: Any) -> None:
    check_stream(_json(unquoted_keys=True), f"<a>{output}</a>", {"a": expected})


def test_unquoted_keys_leave_string_delims_strings_alone() -> None:
    template = _json(unquoted_keys=True, string_delims=[['<|"|>', '<|"|>']])
    output = '<a>{a:<|"|>x,b:y<|"|>, c:<|"|>{d:1}<|"|>}</a>'
    check_stream(template, output, {"a": {"a": "x,b:y", "c": "{d:1}"}})


@pytest.mark.parametrize("output", ["{a-b:1}", "{a.b:1}", "{a:1,}", "{a:b:1}", "{a\u00a0:1}", "[1, a: 2]"])
def test_what_unquoted_keys_cannot_read_stays_an_error(output: str) -> None:
    """Only ``\\w+`` keys after ``{`` or ``,`` are quoted; JSON whitespace alone may surround them."""
    with pytest.raises(ResponseParseError, match="could not parse"):
        parse_response(f"<a>{output}</a>", _json(unquoted_keys=True), prefix="")


# -- merge_duplicates ---------------------------------------------------------------------------------


def _xml(**content_args: Any) -> dict[str, Any]:
    args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True,
            **content_args}
    field = {"open": "<a>", "close": "</a>", "content": "xml-inline", "content_args": args}
    return {"start_anchor": "S", "fields": {"a": field, "c": {}}}


def test_merge_duplicates_corpus_vector_gives_524s_value() -> None:
    """``x-merge-duplicates-flattens-list-value``: 5.23 appended 3 into the first value ``[1, 2]``."""
    case = VECTORS["x-merge-duplicates-flattens-list-value"]
    assert case["quirk"] and case["expected"] == {"a": {"x": [1, 2, 3], "y": "z"}}
    check_stream(case["template"], case["output"], {"a": {"x": [[1, 2], 3], "y": "z"}})


@pytest.mark.parametrize(("output", "expected"), [
    ("<x>[1,2]</x><x>3</x><x>[4]</x>", {"x": [[1, 2], 3, [4]]}),
    ("<x>1</x><x>2</x><x>3</x>", {"x": [1, 2, 3]}),
    ("<x>[1]</x><x>[2]</x>", {"x": [[1], [2]]}),
    ("<x>[]</x>", {"x": []}),
    ("<x>1</x><y>2</y><x>[3]</x>", {"x": [1, [3]], "y": 2}),
])
def test_merge_duplicates_collects_values_whole(output: str, expected: dict[str, Any]) -> None:
    check_stream(_xml(value_parser={"name": "json"}), f"<a>{output}</a>", {"a": expected})


def test_merged_arguments_are_typed_one_by_one() -> None:
    """5.24 types each collected value with the parameter's schema (an ``array`` keeps them as text)."""
    template = {"start_anchor": "S", "fields": {
        "tool_calls": {
            "open_pattern": r"<function=(?P<name>\w+)>", "close": "</function>", "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>\w+)>(?P<value>.*?)</parameter>",
                             "merge_duplicates": True},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
        "content": {}}}
    properties = {"n": {"type": "integer"}, "a": {"type": "array"}, "b": {"type": "boolean"},
                  "o": {"type": ["integer", "null"]}}
    parameters_schema = {"type": "object", "properties": properties}
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters_schema}}]
    parameters = "".join(f"<parameter={key}>{value}</parameter>" for key, value in [
        ("n", "x"), ("n", "2"), ("a", "1"), ("a", "2"), ("b", "true"), ("b", "0"), ("o", "None"), ("o", "3")])
    arguments = {"n": ["x", 2], "a": ["1", "2"], "b": [True, False], "o": [None, 3]}
    check_stream(template, f"<function=f>{parameters}</function>",
                 {"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": arguments}}]},
                 tools=tools)
