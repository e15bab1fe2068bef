"""``close_at_value_end``: a region that closes where its content parser's value ends (issue 10 §2).

Every output is parsed one-shot and streamed three ways (``check_stream``: whole, one character
at a time, random splits), with and without ``value_deltas`` (``check_values``): the message, the
chunk text of every region and the value events must not depend on the chunking.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, ResponseTemplateError, load_response_template, parse_response
from chatcodec.events import join_chunks
from chatcodec.response_templates.chatcodec_only import chatcodec_only_features
from chatcodec.response_templates.matcher import Commit
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.value_end import ValueEndMatcher
from tests.response_templates.helpers import check_stream
from tests.response_templates.value_helpers import check_values, run

#: Llama 3.x JSON calls: bare, ``;`` or ``<|python_tag|>`` between them, prose may follow.
LLAMA = {
    "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<\|python_tag\|>|(?=\{\s*\"name\")",
            "close": ["<|eot_id|>", "<|eom_id|>"],
            "close_at_value_end": True,
            "repeats": True,
            "content": "x-json-calls",
            "content_args": {"separators": [";", "<|python_tag|>"]},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
            "transform_each": True,
        },
        "content": {"close": ["<|eot_id|>", "<|eom_id|>"]},
    },
}

#: One JSON object per region, no close marker at all.
BARE_JSON = {
    "start_anchor": "A:",
    "fields": {
        "call": {"open_pattern": r"(?=\{)", "close_at_value_end": True, "repeats": True, "content": "json"},
        "content": {},
    },
}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_call_followed_by_prose_gives_the_prose_back_to_content() -> None:
    output = '{"name": "get_weather", "parameters": {"city": "Paris"}}\n\nIt is sunny in Paris.<|eot_id|>'
    joined = check_stream(LLAMA, output, {
        "tool_calls": [[_call("get_weather", city="Paris")]], "content": "It is sunny in Paris."})
    assert joined == {"tool_calls": '{"name": "get_weather", "parameters": {"city": "Paris"}}\n\n',
                      "content": "It is sunny in Paris."}
    check_values(LLAMA, output)


def test_separated_calls_stay_in_one_region_until_the_prose() -> None:
    output = ('{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {}}'
              '<|python_tag|>{"name": "c", "parameters": {"y": "z"}} Done.<|eot_id|>')
    joined = check_stream(LLAMA, output, {
        "tool_calls": [[_call("a", x=1), _call("b"), _call("c", y="z")]], "content": "Done."})
    assert joined["content"] == "Done."
    events = check_values(LLAMA, output)
    names = [(e["path"][0], e["text"]) for e in events if e["op"] == "text" and e["path"][-1] == "name"]
    assert names == [(0, "a"), (1, "b"), (2, "c")]


def test_what_only_starts_like_a_separator_is_content() -> None:
    output = '{"name": "a", "parameters": {}}<|python is fun<|eot_id|>'
    joined = check_stream(LLAMA, output, {"tool_calls": [[_call("a")]], "content": "<|python is fun"})
    assert joined == {"tool_calls": '{"name": "a", "parameters": {}}', "content": "<|python is fun"}


def test_prose_then_another_call_reopens_the_field() -> None:
    output = 'Let me check. {"name": "a", "parameters": {}} and then {"name": "b", "parameters": {}}'
    check_stream(LLAMA, output, {"tool_calls": [[_call("a")], [_call("b")]],
                                 "content": "Let me check. and then"})


def test_the_close_still_closes_first() -> None:
    joined = check_stream(LLAMA, '{"name": "a", "parameters": {"s": "<|eot_id|> in a string"}}<|eot_id|>tail',
                          {"tool_calls": [[_call("a", s="<|eot_id|> in a string")]], "content": "tail"})
    assert joined["tool_calls"] == '{"name": "a", "parameters": {"s": "<|eot_id|> in a string"}}'



def test_the_end_of_generation_closes_a_value_cut_off() -> None:
    message = parse_response('{"name": "a", "parameters": {"s": "x', LLAMA, prefix="", errors="keep")
    assert message["parse_errors"][0]["field"] == "tool_calls"
    assert message["content"] == '{"name": "a", "parameters": {"s": "x'


def test_a_bare_json_value_without_any_close() -> None:
    output = 'Before {"a": [1, {"b": "}"}]}   after {"c": 2}'
    joined = check_stream(BARE_JSON, output, {"call": [{"a": [1, {"b": "}"}]}, {"c": 2}],
                          "content": "Before after"})
    assert joined["call"] == '{"a": [1, {"b": "}"}]}   {"c": 2}'
    check_values(BARE_JSON, output)


def test_a_number_at_the_end_of_the_output_is_complete() -> None:
    template = {"start_anchor": "A:", "fields": {
        "n": {"open": "=", "close_at_value_end": True, "content": "json"}, "content": {}}}
    check_stream(template, "x =12 y", {"n": 12, "content": "x y"})
    check_stream(template, "x =12", {"n": 12, "content": "x"})


@pytest.mark.parametrize(("content", "args", "output", "value"), [
    ("x-bare-object", {"string_delims": [['<|"|>', '<|"|>']]}, 'call{a:<|"|>}<|"|>,b:2} ok',
     {"a": "}", "b": 2}),
    ("x-pythonic", {}, '[f(a="])")] ok', [{"name": "f", "arguments": {"a": "])"}}]),
    ("x-pythonic", {}, 'f(a=1) ok', [{"name": "f", "arguments": {"a": 1}}]),
    # x-first: the first parser still possible says where the value ends
    ("x-first", {"parsers": [{"name": "python-call-list"}, {"name": "x-pythonic"}]}, '[f(a="])")] ok',
     [{"name": "f", "arguments": {"a": "])"}}]),
    ("x-first", {"parsers": [{"name": "python-call-list"}, {"name": "x-pythonic"}]}, "[f(a=0x1F)] ok",
     [{"name": "f", "arguments": {"a": 31}}]),
    ("x-first", {"parsers": [{"name": "python-call-list"}, {"name": "x-json-calls"}]},
     'call{"name": "g", "arguments": {"s": "]"}} ok', [{"name": "g", "arguments": {"s": "]"}}]),
])
def test_other_parsers_that_know_their_value_end(content: str, args: dict[str, Any], output: str,
                                                 value: Any) -> None:
    template = {"start_anchor": "A:", "fields": {
        "v": {"open_pattern": r"call|(?=\[|f\()", "close_at_value_end": True, "content": content,
              "content_args": args},
        "content": {}}}
    check_stream(template, output, {"v": value, "content": "ok"})
    check_values(template, output)


@given(st.lists(st.integers(min_value=1, max_value=9), max_size=12))
def test_any_chunking_gives_the_same_regions(cuts: list[int]) -> None:
    output = ('{"name": "a", "parameters": {"q": "x;y"}};\n{"name": "b", "parameters": {"n": [1, 2]}}'
              '<|python_tag|>text after')
    chunks, at = [], 0
    for size in cuts:
        chunks.append(output[at : at + size])
        at += size
    chunks.append(output[at:])
    message, events = run(LLAMA, chunks)
    assert message == {"tool_calls": [[_call("a", q="x;y"), _call("b", n=[1, 2])]], "content": "text after"}
    assert join_chunks(events) == {  # a separator after the last call is the calls' layout
        "tool_calls": '{"name": "a", "parameters": {"q": "x;y"}};\n{"name": "b", "parameters": {"n": [1, 2]}}'
                      "<|python_tag|>",
        "content": "text after"}


@pytest.mark.parametrize(("field", "problem"), [
    ({"close_at_value_end": True}, "needs an open"),
    ({"open": "<", "close_at_value_end": True}, "cannot say where its value ends"),
    ({"open": "<", "close_at_value_end": True, "content": "json", "content_args": {"allow_non_json": True}},
     "allow_non_json"),
    ({"open": "<", "close_at_value_end": True, "content": "x-findall", "content_args": {"pattern": "a"}},
     "cannot say where its value ends"),
    ({"open": "<", "close_at_value_end": "yes", "content": "json"}, "must be true or false"),
    ({"open": "<", "close_at_value_end": True, "content": "x-first",
      "content_args": {"parsers": [{"name": "json"}, {"name": "text"}]}},
     "x-first parser 'text': the content parser 'text' cannot say where its value ends"),
])
def test_refused_at_load_with_the_field_and_key(field: dict[str, Any], problem: str) -> None:
    with pytest.raises(ResponseTemplateError, match=problem) as raised:
        load_response_template({"start_anchor": "A", "fields": {"calls": field}})
    assert raised.value.path == "fields.calls.close_at_value_end"
    assert str(raised.value).startswith("fields.calls.close_at_value_end: ")


def test_lint_and_save_say_it_needs_chatcodec() -> None:
    features = [str(f) for f in chatcodec_only_features(LLAMA)]
    assert "fields.tool_calls.close_at_value_end: 'close_at_value_end' (transformers refuses to load the " \
        "template)" in features


def test_events_of_a_split_separator() -> None:
    parser = ResponseParser(LLAMA, prefix="")
    events = parser.feed('{"name": "a", "parameters": {}}<|pyt')
    assert join_chunks(events) == {"tool_calls": '{"name": "a", "parameters": {}}'}  # "<|pyt" is held
    events = parser.feed('hon_tag|>{"name": "b", "parameters": {}}<|eot_id|>')
    assert join_chunks(events) == {"tool_calls": '<|python_tag|>{"name": "b", "parameters": {}}'}
    message, _ = parser.finalize()
    assert message == {"tool_calls": [[_call("a"), _call("b")]]}


# -- the engine's fast path inside a value (ValueEndMatcher.search) ------------------------------


def _matcher(content: str, args: dict[str, Any], close: Any = None) -> ValueEndMatcher:
    scanner = scanner_for(content, args)
    assert scanner is not None
    inner = None if close is None else load_response_template(close).fields["tool_calls"].close_matcher
    return ValueEndMatcher("tool_calls", inner, scanner, None)


def test_a_chunk_inside_the_value_is_read_once_and_passes_whole() -> None:
    matcher = _matcher("json", {})
    assert matcher.search('{"city": "Os') is None  # plain: the engine routes it with no scan
    assert matcher.search('lo", "n": [1, 2') is None
    assert matcher.scanner.complete is None
    found = matcher.search("]} and then")  # the value ends in this chunk: the engine scans it
    assert found is not None and (found.start(), found.end()) == (0, 0)
    buf = '{"city": "Oslo", "n": [1, 2]} and then'
    commit = matcher.scan(buf, 27, False, {})  # the scan does not feed the chunk again
    assert isinstance(commit, Commit) and (commit.start, commit.end) == (30, 30) and buf[30:] == "and then"


def test_a_chunk_where_the_close_may_start_is_left_to_the_scan() -> None:
    matcher = _matcher("x-json-calls", {"separators": [";", "<|python_tag|>"]}, LLAMA)
    found = matcher.search('{"name": "a", "parameters": {"t": "<b>"')
    assert found is not None and (found.start(), found.end()) == (0, 0)
    assert matcher.scanner.complete is None
    assert matcher.scan('{"name": "a", "parameters": {"t": "<b>"', 0, False, {}) == 39  # read by the scan
    assert matcher.search("}}") is None


def test_a_held_separator_start_is_left_to_the_scan() -> None:
    matcher = _matcher("x-json-calls", {"separators": ["||"]})
    assert matcher.search('{"name": "a", "parameters": {}}') is None
    found = matcher.search("|")  # the start of a separator, or of content: undecided
    assert found is not None and (found.start(), found.end()) == (0, 0)
    assert matcher.scan('{"name": "a", "parameters": {}}|', 31, False, {}) == 31  # held back
    found = matcher.search("|x")  # held text is never searched past: the scan decides
    assert found is not None and (found.start(), found.end()) == (0, 0)
    commit = matcher.scan('{"name": "a", "parameters": {}}||x', 31, False, {})
    assert isinstance(commit, Commit) and (commit.start, commit.end) == (33, 33)  # the layout "||" ends at x


def _value(op: str, path: list[Any], **payload: Any) -> dict[str, Any]:
    return {"type": "region_value", "field": "tool_calls", "op": op, "path": path, **payload}


def test_token_sized_chunks_give_exact_events() -> None:
    parser = ResponseParser(LLAMA, prefix="", value_deltas=True)
    chunks = ['{"name": "get_weather", ', '"parameters": {"city": ', '"Oslo"}}', " I", " checked", ".",
              "<|eot_id|>"]
    events = [parser.feed(chunk) for chunk in chunks]
    call = _call("get_weather", city="Oslo")
    assert events == [
        [{"type": "region_open", "field": "tool_calls"}, _value("begin", [], kind="array"),
         {"type": "region_chunk", "field": "tool_calls", "text": '{"name": "get_weather", ', "dirty": True},
         _value("begin", [0], kind="object"), _value("set", [0, "type"], value="function"),
         _value("begin", [0, "function"], kind="object"),
         _value("begin", [0, "function", "name"], kind="string"),
         _value("text", [0, "function", "name"], text="get_weather"), _value("end", [0, "function", "name"])],
        [{"type": "region_chunk", "field": "tool_calls", "text": '"parameters": {"city": ', "dirty": True},
         _value("begin", [0, "function", "arguments"], kind="object")],
        [{"type": "region_chunk", "field": "tool_calls", "text": '"Oslo"}}', "dirty": True},
         _value("begin", [0, "function", "arguments", "city"], kind="string"),
         _value("text", [0, "function", "arguments", "city"], text="Oslo"),
         _value("end", [0, "function", "arguments", "city"]), _value("end", [0, "function", "arguments"]),
         _value("end", [0, "function"]), _value("end", [0])],
        [{"type": "region_chunk", "field": "tool_calls", "text": " ", "dirty": True}, _value("end", []),
         {"type": "region_close", "field": "tool_calls", "value": [call]},
         {"type": "region_open", "field": "content"},
         {"type": "region_chunk", "field": "content", "text": "I", "dirty": False}],
        [{"type": "region_chunk", "field": "content", "text": " checked", "dirty": False}],
        [{"type": "region_chunk", "field": "content", "text": ".", "dirty": False}],
        [{"type": "region_close", "field": "content", "value": "I checked."}],
    ]
    assert parser.finalize() == ({"tool_calls": [[call]], "content": "I checked."}, [])


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)


@given(st.dictionaries(st.text(max_size=5), _JSON, max_size=3), st.booleans(),
       st.lists(st.integers(min_value=1, max_value=7), max_size=30))
def test_any_value_at_any_chunking_ends_where_it_ends(value: dict[str, Any], ascii_only: bool,
                                                      cuts: list[int]) -> None:
    # each chunk inside the value goes by the engine's fast path (ValueEndMatcher.search) or a scan,
    # depending on the cuts; the value must end at the same place either way
    output = "Before " + json.dumps(value, ensure_ascii=ascii_only) + " after"
    chunks, at = [], 0
    for size in cuts:
        chunks.append(output[at : at + size])
        at += size
    chunks.append(output[at:])
    message, _ = run(BARE_JSON, chunks)
    assert message == {"call": [value], "content": "Before after"}
