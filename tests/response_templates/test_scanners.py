"""The value scanners and the engine half of the partial-value protocol, with exact expected deltas.

Each scanner is fed a short text whole and one character at a time; the merged deltas must be the
ones written here (what is certain when, in document order), and finishing them from the parser's
own value (``Shadow.complete``) must give that value. Then the engine half: path mapping through
transforms, argument typing (held strings, names that come late), completion at close, and a
Hypothesis property over chunkings of real profile outputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles
from chatcodec.events import build_value, merge_values
from chatcodec.response_templates.content import get_parser
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.shadow import Shadow, same_value
from tests.conftest import load_json
from tests.response_templates.helpers import IGNORE_NO_ANCHOR
from tests.response_templates.value_helpers import check_values, regions, run

pytestmark = IGNORE_NO_ANCHOR


def _merged(deltas: list[Delta]) -> list[Delta]:
    out: list[Delta] = []
    for delta in deltas:
        if out and delta[0] == "text" and out[-1][0] == "text" and out[-1][1] == delta[1]:
            out[-1] = ("text", delta[1], out[-1][2] + delta[2])
        else:
            out.append(delta)
    return out


def _scan(parser: str, args: dict[str, Any], chunks: list[str]) -> list[Delta]:
    scanner = scanner_for(parser, args)
    assert scanner is not None
    deltas: list[Delta] = []
    for chunk in chunks:
        deltas += scanner.feed(chunk)
    return _merged(deltas + scanner.end())


def _check(parser: str, args: dict[str, Any], text: str, expected: list[Delta]) -> None:
    for chunks in ([text], list(text)):
        deltas = _scan(parser, args, chunks)
        assert deltas == expected, f"chunks {chunks!r}"
    shadow = Shadow()
    assert all(shadow.apply(delta) for delta in expected)
    consistent, _ = shadow.complete(get_parser(parser).parse(text, args))
    assert consistent


def test_json_strings_stream_escapes_and_surrogates_whole() -> None:
    _check("json", {}, '{"s": "a\\n\\ud83d\\ude00b", "n": -1.5e2, "t": true}', [
        ("begin", (), "object"), ("begin", ("s",), "string"), ("text", ("s",), "a\n😀b"),
        ("end", ("s",), None),
        ("set", ("n",), -150.0), ("set", ("t",), True), ("end", (), None)])


def test_json_a_number_is_set_once_the_character_after_it_arrives() -> None:
    scanner = scanner_for("json", {})
    assert scanner is not None
    assert scanner.feed("[12") == [("begin", (), "array")]
    assert scanner.feed("3") == []
    assert scanner.feed("]") == [("set", (0,), 123), ("end", (), None)]


def test_json_dialect_keys_and_delimited_strings() -> None:
    _check("json", {"unquoted_keys": True, "string_delims": [["<|", "|>"]]}, '{city: <|"Oslo"|>}', [
        ("begin", (), "object"), ("begin", ("city",), "string"), ("text", ("city",), '"Oslo"'),
        ("end", ("city",), None), ("end", (), None)])


def test_json_calls_with_arguments_written_as_a_string() -> None:
    _check("x-json-calls", {}, '[{"name": "f", "arguments": "{\\"x\\": 1}"}, {"name": "g"}]', [
        ("begin", (), "array"), ("begin", (0,), "object"), ("begin", (0, "name"), "string"),
        ("text", (0, "name"), "f"), ("end", (0, "name"), None), ("set", (0, "arguments"), {"x": 1}),
        ("end", (0,), None), ("begin", (1,), "object"), ("begin", (1, "name"), "string"),
        ("text", (1, "name"), "g"), ("end", (1, "name"), None), ("set", (1, "arguments"), {}),
        ("end", (1,), None)])


def test_json_calls_name_as_key() -> None:
    _check("x-json-calls", {"name_as_key": True}, '[{"f": {"a": "b"}}]', [
        ("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "name"), "f"),
        ("begin", (0, "arguments"), "object"), ("begin", (0, "arguments", "a"), "string"),
        ("text", (0, "arguments", "a"), "b"), ("end", (0, "arguments", "a"), None),
        ("end", (0, "arguments"), None), ("end", (0,), None)])


def test_findall_sets_the_head_then_streams_the_group() -> None:
    args = {"pattern": r'<invoke name="(?P<name>[^"]+)">(?P<arguments>.*?)</invoke>',
            "value_parsers": {"arguments": {"name": "json"}}}
    _check("x-findall", args, '<invoke name="f">{"q": "hi"}</invoke>', [
        ("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "name"), "f"),
        ("begin", (0, "arguments"), "object"), ("begin", (0, "arguments", "q"), "string"),
        ("text", (0, "arguments", "q"), "hi"), ("end", (0, "arguments", "q"), None),
        ("end", (0, "arguments"), None), ("end", (0,), None)])


def test_findall_holds_what_may_start_the_terminator() -> None:
    args = {"pattern": r"<a>(?P<arguments>.*?)</a>"}
    scanner = scanner_for("x-findall", args)
    assert scanner is not None
    assert scanner.feed("<a>x</") == [("begin", (), "array"), ("begin", (0,), "object"),
                                     ("begin", (0, "arguments"), "string"), ("text", (0, "arguments"), "x")]
    assert scanner.feed("b></a>") == [("text", (0, "arguments"), "</b>"), ("end", (0, "arguments"), None),
                                      ("end", (0,), None)]


def test_xml_inline_values_stream_as_text() -> None:
    args = {"tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>",
            "value_parser": {"name": "text", "args": {"strip": False}}}
    _check("xml-inline", args, "<parameter=city>\nOslo\n</parameter>\n<parameter=n>\n3\n</parameter>", [
        ("begin", (), "object"), ("begin", ("city",), "string"), ("text", ("city",), "Oslo"),
        ("end", ("city",), None), ("begin", ("n",), "string"), ("text", ("n",), "3"), ("end", ("n",), None)])


def test_xml_inline_merge_duplicates_has_no_scanner() -> None:
    assert scanner_for("xml-inline", {"tag_pattern": "<(?P<key>a)>(?P<value>.*?)</a>",
                                      "merge_duplicates": True}) is None


def test_bare_object_keys_wait_for_their_value() -> None:
    args = {"string_delims": [['<|"|>', '<|"|>']]}
    _check("x-bare-object", args, '{a:b:1,c:<|"|>x,y<|"|>}', [
        ("begin", (), "object"), ("set", ("a:b",), 1), ("begin", ("c",), "string"), ("text", ("c",), "x,y"),
        ("end", ("c",), None), ("end", (), None)])


def test_pythonic_strings_concatenate() -> None:
    _check("x-pythonic", {}, '[f(a="x" \'y\', b=-2)]', [
        ("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "name"), "f"),
        ("begin", (0, "arguments"), "object"), ("begin", (0, "arguments", "a"), "string"),
        ("text", (0, "arguments", "a"), "xy"), ("end", (0, "arguments", "a"), None),
        ("set", (0, "arguments", "b"), -2), ("end", (0, "arguments"), None), ("end", (0,), None),
        ("end", (), None)])


def test_python_call_list_joins_a_surrogate_pair() -> None:
    _check("python-call-list", {}, '[f(a="\\ud83d\\ude00")]', [
        ("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "name"), "f"),
        ("begin", (0, "arguments"), "object"), ("begin", (0, "arguments", "a"), "string"),
        ("text", (0, "arguments", "a"), "😀"), ("end", (0, "arguments", "a"), None),
        ("end", (0, "arguments"), None), ("end", (0,), None), ("end", (), None)])


def test_xml_tree_removes_markers_before_tags_only() -> None:
    args = {"remove": ["]~["]}
    _check("x-xml-tree", args, "]~[<p><q>a]~[b]~[</q></p>", [
        ("begin", (), "object"), ("begin", ("p",), "object"), ("begin", ("p", "q"), "string"),
        ("text", ("p", "q"), "a]~[b"), ("end", ("p", "q"), None), ("end", ("p",), None)])


def test_first_streams_what_the_parsers_still_possible_agree_on() -> None:
    args = {"parsers": [{"name": "x-json-calls"}, {"name": "x-pythonic"}]}
    scanner = scanner_for("x-first", args)
    assert scanner is not None
    assert scanner.feed("[") == [("begin", (), "array")]  # both read a list
    assert scanner.feed("f(") == [("begin", (0,), "object"), ("set", (0, "name"), "f"),
                                  ("begin", (0, "arguments"), "object")]  # not JSON: x-pythonic alone


def test_first_streams_strings_both_parsers_read_alike() -> None:
    scanner = scanner_for("x-first", {"parsers": [{"name": "python-call-list"}, {"name": "x-pythonic"}]})
    assert scanner is not None
    assert _merged(scanner.feed('[f(a="hel') + scanner.feed('lo\\n", b=2)]')) == [
        ("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "name"), "f"),
        ("begin", (0, "arguments"), "object"), ("begin", (0, "arguments", "a"), "string"),
        ("text", (0, "arguments", "a"), "hello\n"), ("end", (0, "arguments", "a"), None),
        ("set", (0, "arguments", "b"), 2), ("end", (0, "arguments"), None), ("end", (0,), None),
        ("end", (), None)]


def test_json_with_allow_non_json_streams_once_it_cannot_be_json() -> None:
    scanner = scanner_for("json", {"allow_non_json": True, "strip": False})
    assert scanner is not None
    assert scanner.feed(' "a') == []
    assert scanner.feed('" b') == [("begin", (), "string"), ("text", (), ' "a" b')]


# -- the engine half ------------------------------------------------------------------------------

_PROPERTIES = {"city": {"type": "string"}, "days": {"type": "integer"}, "when": {"type": ["null", "string"]},
               "flags": {"type": "object"}}
WEATHER = [{"type": "function", "function": {"name": "get_weather",
                                             "parameters": {"type": "object", "properties": _PROPERTIES}}}]

JSON_CALL = {"start_anchor": "A", "fields": {
    "tool_calls": {"open_pattern": r"<call id=(?P<id>\d+)>", "close_pattern": r"</call(?P<end>!?)>",
                   "repeats": True, "content": "json",
                   "transform": {"id": "{id}", "type": "function", "kind": "{end?}",
                                 "function": "{content}"}},
    "content": {}}}


def _values(template: Any, text: str, tools: Any = None) -> list[dict[str, Any]]:
    _, events = run(template, list(text), tools=tools)
    return [{k: v for k, v in event.items() if k not in ("type", "field")} for event in merge_values(events)]


def test_the_transform_skeleton_and_captures_come_first_close_captures_last() -> None:
    events = _values(JSON_CALL, '<call id=7>{"name": "f", "arguments": {}}</call!>')
    assert events == [
        {"op": "begin", "path": [], "kind": "object"}, {"op": "set", "path": ["type"], "value": "function"},
        {"op": "set", "path": ["id"], "value": "7"}, {"op": "begin", "path": ["function"], "kind": "object"},
        {"op": "begin", "path": ["function", "name"], "kind": "string"},
        {"op": "text", "path": ["function", "name"], "text": "f"},
        {"op": "end", "path": ["function", "name"]},
        {"op": "begin", "path": ["function", "arguments"], "kind": "object"},
        {"op": "end", "path": ["function", "arguments"]}, {"op": "end", "path": ["function"]},
        {"op": "set", "path": ["kind"], "value": "!"}, {"op": "end", "path": []}]


def test_typed_arguments_are_held_until_their_type_is_decided() -> None:
    text = ('<call id=1>{"name": "get_weather", "arguments": {"city": "3", "days": "4", "when": "null", '
            '"flags": "{\\"a\\": 1}", "extra": "5"}}</call>')
    events = _values(JSON_CALL, text, tools=WEATHER)
    arguments = [e for e in events if e["path"][:2] == ["function", "arguments"]]
    assert arguments == [
        {"op": "begin", "path": ["function", "arguments"], "kind": "object"},
        {"op": "begin", "path": ["function", "arguments", "city"], "kind": "string"},
        {"op": "text", "path": ["function", "arguments", "city"], "text": "3"},
        {"op": "end", "path": ["function", "arguments", "city"]},
        {"op": "set", "path": ["function", "arguments", "days"], "value": 4},
        {"op": "set", "path": ["function", "arguments", "when"], "value": None},
        {"op": "set", "path": ["function", "arguments", "flags"], "value": {"a": 1}},
        {"op": "begin", "path": ["function", "arguments", "extra"], "kind": "string"},
        {"op": "text", "path": ["function", "arguments", "extra"], "text": "5"},
        {"op": "end", "path": ["function", "arguments", "extra"]},
        {"op": "end", "path": ["function", "arguments"]}]


def test_a_string_that_can_no_longer_be_cast_streams_from_its_first_letter() -> None:
    parser = ResponseParser(JSON_CALL, prefix="", tools=WEATHER, value_deltas=True)
    parser.feed('<call id=1>{"name": "get_weather", "arguments": {"when": "nu')
    events = parser.feed("x")
    assert [e for e in events if e["type"] == "region_value"] == [
        {"type": "region_value", "field": "tool_calls", "op": "begin",
         "path": ["function", "arguments", "when"], "kind": "string"},
        {"type": "region_value", "field": "tool_calls", "op": "text",
         "path": ["function", "arguments", "when"], "text": "nux"}]


def test_arguments_before_the_name_wait_for_it() -> None:
    text = '<call id=1>{"arguments": {"days": "2"}, "name": "get_weather"}</call>'
    events = _values(JSON_CALL, text, tools=WEATHER)
    paths = [(e["op"], e["path"]) for e in events if e["path"][:1] == ["function"]]
    assert paths == [
        ("begin", ["function"]),
        ("begin", ["function", "name"]), ("text", ["function", "name"]), ("end", ["function", "name"]),
        ("begin", ["function", "arguments"]), ("set", ["function", "arguments", "days"]),
        ("end", ["function", "arguments"]), ("end", ["function"])]
    assert [e["value"] for e in events if e["op"] == "set" and e["path"][-1] == "days"] == [2]


def test_a_region_that_fails_keeps_what_it_emitted() -> None:
    _, events = run(JSON_CALL, ['<call id=1>{"name": "f", "arguments": {"a": 1}', "x}</call>"], errors="keep")
    ((_, values, close),) = [r for r in regions(events) if r[0] == "tool_calls"]
    assert close is not None and close["value"] is None and "error" in close
    assert build_value(values) == {"type": "function", "id": "1",
                                   "function": {"name": "f", "arguments": {"a": 1}}}


def test_value_deltas_off_emits_no_value_events() -> None:
    _, events = run(JSON_CALL, ['<call id=1>{"name": "f"}</call>'], value_deltas=False)
    assert not [e for e in events if e["type"] == "region_value"]


def _profile_outputs() -> list[tuple[str, str, str, Any]]:
    vectors = load_json("peer_vectors.json")["vectors"]
    out = []
    for vector in vectors:
        if vector["family"] not in profiles.names() or "tool" not in vector["output"].lower():
            continue
        profile = profiles.load(vector["family"])
        prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
        out.append((vector["family"], vector["output"], prefix, vector["tools"]))
    return out


PROFILE_OUTPUTS = _profile_outputs()


@given(st.sampled_from(PROFILE_OUTPUTS), st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_any_chunking_gives_the_same_value_events(case: tuple[str, str, str, Any], sizes: list[int]) -> None:
    family, output, prefix, tools = case
    template = profiles.load(family).response_template
    chunks, at = [], 0
    for size in sizes:
        chunks.append(output[at : at + size])
        at += size
    chunks.append(output[at:])
    whole_message, whole = run(template, [output], prefix=prefix, tools=tools, errors="keep")
    message, events = run(template, chunks, prefix=prefix, tools=tools, errors="keep")
    assert same_value(message, whole_message)
    assert merge_values(events) == merge_values(whole)
    for _, values, close in regions(events):
        if close is not None and "error" not in close and values:
            assert same_value(build_value(values), close["value"])


VARIANTS = Path(__file__).resolve().parent.parent / "profiles" / "variants"


@pytest.mark.parametrize("family", sorted(path.stem for path in VARIANTS.glob("*.json")))
def test_profile_variant_vectors(family: str) -> None:
    path = VARIANTS / f"{family}.json"
    profile = profiles.load(family)
    for vector in json.loads(path.read_text(encoding="utf-8"))["variants"]:
        prefix = profile.generation_prompt_ending(vector.get("prompt_suffix"))
        for errors in ("strict", "keep"):
            check_values(profile.response_template, vector["output"], prefix=prefix,
                         tools=vector.get("tools"), errors=errors, splits=3)
