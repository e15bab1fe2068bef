"""``x-bare-object``'s ``bare_strings``: a bare word is a string, as vLLM reads Gemma 4's arguments.

vLLM's Gemma 4 parsers read ``{unit:celsius}`` as ``{"unit": "celsius"}`` (the value runs to the next
``,``, ``}`` or ``]``, stripped; ``vllm/tool_parsers/gemma4_tool_parser.py::_parse_gemma4_value``,
``vllm/parser/gemma4.py::_parse_gemma4_args``). With the option the parser reads the same, the value
scanner streams the same values at every chunking, and every text the parser reads without the
option is read alike with it (the option only turns errors into strings).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import profiles
from chatcodec.response_templates.content import get_parser
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.shadow import Shadow
from tests.profiles.helpers import parse_three_ways
from tests.response_templates.value_helpers import check_values

Q = '<|"|>'
STRICT: dict[str, Any] = {"string_delims": [[Q, Q]]}
BARE: dict[str, Any] = {**STRICT, "bare_strings": True}


def parse(text: str, args: dict[str, Any]) -> Any:
    return get_parser("x-bare-object").parse(text, args)


def scan(text: str, chunks: list[str], args: dict[str, Any] = BARE) -> list[Delta]:
    """The scanner's deltas for ``text`` fed as ``chunks``, adjacent text deltas merged."""
    assert "".join(chunks) == text
    scanner = scanner_for("x-bare-object", args)
    assert scanner is not None
    deltas: list[Delta] = []
    for chunk in chunks:
        deltas += scanner.feed(chunk)
    merged: list[Delta] = []
    for delta in deltas + scanner.end():
        if merged and delta[0] == "text" and merged[-1][0] == "text" and merged[-1][1] == delta[1]:
            merged[-1] = ("text", delta[1], merged[-1][2] + delta[2])
        else:
            merged.append(delta)
    return merged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{unit:celsius}", {"unit": "celsius"}),
        ("{city:Oslo,unit:celsius,days:3}", {"city": "Oslo", "unit": "celsius", "days": 3}),
        ("{ unit : deg celsius , on : true }", {"unit": "deg celsius", "on": True}),
        ("{url:https://x.org/a?b=c#d}", {"url": "https://x.org/a?b=c#d"}),
        ("{tags:[red, dark blue ,3,None]}", {"tags": ["red", "dark blue", 3, None]}),
        ("{o:{mode:fast},n:inf,m:NaN}", {"o": {"mode": "fast"}, "n": "inf", "m": "NaN"}),
        ("{ns:tag:1,ns:key:v}", {"ns:tag": 1, "ns": "key:v"}),
        ("{a:b:[1]}", {"a:b": [1]}),
        ("{my key:it's <b>bold</b>}", {"my key": "it's <b>bold</b>"}),
        (f"{{q:{Q}a, b{Q},w:x y}}", {"q": "a, b", "w": "x y"}),
        ("{v:True,w:False,x:null,y:-2.5e3,z:1e999}",
         {"v": True, "w": False, "x": None, "y": -2500.0, "z": "1e999"}),
    ],
)
def test_a_bare_word_is_a_string(text: str, expected: dict[str, Any]) -> None:
    assert parse(text, BARE) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a:}", "x-bare-object: a value expected at offset 3"),
        ("{a:,b:1}", "x-bare-object: a value expected at offset 3"),
        ("{a,b:1}", "x-bare-object: ':' expected after the key at offset 1"),
        ("{a}", "x-bare-object: ':' expected after the key at offset 1"),
        ("{a:celsius", "x-bare-object: '}' expected at offset 10"),
        ("{a:[x,]}", "x-bare-object: a value expected at offset 6"),
        (f"{{a:{Q}open}}", "x-bare-object: a string opened at offset 3 is never closed"),
        ("{a:x} tail", "x-bare-object: unexpected text after the object at offset 6: 'tail'"),
        ("{a:x,a:y}", "x-bare-object: key 'a' is given twice (the second at offset 5)"),
    ],
)
def test_what_is_no_word_stays_an_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse(text, BARE)


def test_without_the_option_a_bare_word_is_an_error() -> None:
    with pytest.raises(ValueError, match=re.escape("got 'celsius' at offset 6")):
        parse("{unit:celsius}", STRICT)


def test_the_option_is_checked_at_load() -> None:
    validate = get_parser("x-bare-object").validate
    validate({"bare_strings": False}, "fields.tool_calls.content_args")
    with pytest.raises(ValueError, match=r"content_args\.bare_strings: must be true or false"):
        validate({"bare_strings": "yes"}, "fields.tool_calls.content_args")
    known = "Known: ['bare_strings', 'equals_keys', 'inner_close_as', 'single_quotes', 'string_delims']"
    with pytest.raises(ValueError, match=re.escape(known)):
        validate({"bare_string": True}, "fields.tool_calls.content_args")
    with pytest.raises(ValueError, match=r"content_args\.inner_close_as: must be a string"):
        validate({"inner_close_as": True}, "fields.tool_calls.content_args")
    with pytest.raises(ValueError, match=r"content_args\.single_quotes: must be true or false"):
        validate({"single_quotes": 1}, "fields.tool_calls.content_args")
    with pytest.raises(ValueError, match=r"content_args\.equals_keys: must be true or false"):
        validate({"equals_keys": "yes"}, "fields.tool_calls.content_args")


def test_the_scanner_sets_each_word_once_its_end_arrives() -> None:
    text = "{unit:deg C,ns:k:1,tags:[a b,2]}"
    expected = [
        ("begin", (), "object"), ("set", ("unit",), "deg C"), ("set", ("ns:k",), 1),
        ("begin", ("tags",), "array"), ("set", ("tags", 0), "a b"), ("set", ("tags", 1), 2),
        ("end", ("tags",), None), ("end", (), None),
    ]
    assert scan(text, [text]) == expected
    assert scan(text, list(text)) == expected
    scanner = scanner_for("x-bare-object", BARE)
    assert scanner is not None
    assert scanner.feed("{unit:cel") == [("begin", (), "object")]
    assert scanner.feed("sius") == []
    assert scanner.feed("}") == [("set", ("unit",), "celsius"), ("end", (), None)]


def test_a_key_waits_for_the_end_of_its_span() -> None:
    scanner = scanner_for("x-bare-object", BARE)
    assert scanner is not None
    assert scanner.feed("{ns:tag") == [("begin", (), "object")]
    assert scanner.feed(":") == []  # ns:tag:... may still be a key with a value after it
    assert scanner.feed("v}") == [("set", ("ns",), "tag:v"), ("end", (), None)]


_PIECES = ["{", "}", "[", "]", ",", ":", " ", "a", "b c", "1", "-2.5", "true", "None", "inf", Q, '"x"']
_WORDS = st.sampled_from(["a", " b c ", "x:y", "1", "-2.5", "true", "None", "inf", "1e999", "it's"])
_STRINGS = st.sampled_from([f"{Q}s, t{Q}", f"{Q}{Q}", '"j,]"', f"{Q}a:b}}{Q}"])
_KEYS = st.sampled_from(["k", "my key", "ns:k", "-1", "k2", "ü", " p "])


def _object(items: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{key}:{value}" for key, value in items) + "}"


_VALUES = st.recursive(
    _WORDS | _STRINGS,
    lambda inner: st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
    | st.lists(st.tuples(_KEYS, inner), max_size=3).map(_object),
    max_leaves=8,
)
#: Objects as Gemma 4 writes them (mostly readable), and random pieces (mostly not).
TEXTS = st.lists(st.tuples(_KEYS, _VALUES), max_size=4).map(_object) | st.lists(
    st.sampled_from(_PIECES), max_size=14).map(lambda pieces: "{" + "".join(pieces))


@given(TEXTS, st.data())
def test_the_scanner_agrees_with_the_parser_at_every_chunking(text: str, data: st.DataObject) -> None:
    try:
        value = parse(text, BARE)
    except ValueError:
        return
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=6)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if a < b]
    whole = scan(text, [text])
    assert scan(text, chunks) == whole
    assert scan(text, list(text)) == whole
    shadow = Shadow()
    assert all(shadow.apply(delta) for delta in whole)
    consistent, _ = shadow.complete(value)
    assert consistent


@given(TEXTS)
def test_the_option_reads_every_strict_text_alike(text: str) -> None:
    try:
        strict = parse(text, STRICT)
    except ValueError:
        return
    assert parse(text, BARE) == strict


def _gemma4() -> profiles.Profile:
    return profiles.load("gemma4")


def test_gemma4_reads_unquoted_values_and_streams_them() -> None:
    profile = _gemma4()
    output = "<|tool_call>call:get_weather{city:Oslo,unit:celsius,days:2}<tool_call|>"
    message = parse_three_ways(profile.response_template, output, prefix=profile.generation_prompt)
    assert message["tool_calls"] == [{"type": "function", "function": {
        "name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius", "days": 2}}}]
    events = check_values(profile.response_template, output, prefix=profile.generation_prompt)
    arguments = [{key: event[key] for key in ("op", "path", "value") if key in event}
                 for event in events if event["path"][:2] == ["function", "arguments"]]
    assert arguments == [
        {"op": "begin", "path": ["function", "arguments"]},
        {"op": "set", "path": ["function", "arguments", "city"], "value": "Oslo"},
        {"op": "set", "path": ["function", "arguments", "unit"], "value": "celsius"},
        {"op": "set", "path": ["function", "arguments", "days"], "value": 2},
        {"op": "end", "path": ["function", "arguments"]},
    ]
