"""The standard content parsers and the JSON dialect, called as the engine calls them."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.content import STANDARD_PARSERS, get_parser, known_parser_names
from chatcodec.response_templates.lax_json import (
    StringTracker,
    loads_json,
    parse_json_dialect,
    quote_bare_keys,
    reject_constant,
    unique_keys,
)
from tests.response_templates.helpers import assert_same


def parse(name: str, text: str, **args: Any) -> Any:
    return get_parser(name).parse(text, args)


def test_the_registry_has_the_eight_standard_parsers_in_spec_order() -> None:
    assert list(STANDARD_PARSERS) == [
        "text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list",
    ]
    assert known_parser_names()[:8] == list(STANDARD_PARSERS)
    assert [p.streams_verbatim for p in STANDARD_PARSERS.values()] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert not any(p.extension for p in STANDARD_PARSERS.values())


@pytest.mark.parametrize(
    ("name", "text", "args", "expected"),
    [
        ("text", "  hi \n", {}, "hi"),
        ("text", "  hi \n", {"strip": False}, "  hi \n"),
        ("text", "  hi \n", {"strip": "blank"}, "  hi \n"),
        ("text", " \n\t ", {"strip": "blank"}, ""),
        ("text", "\u3000hi\u00a0", {}, "hi"),
        ("int", " 42\n", {}, 42),
        ("int", "-007", {}, -7),
        ("int", "+3", {}, 3),
        ("float", " 2.5 ", {}, 2.5),
        ("float", "1e3", {}, 1000.0),
        ("float", ".5", {}, 0.5),
        ("float", "3", {}, 3.0),
        ("bool", " TRUE ", {}, True),
        ("bool", "1", {}, True),
        ("bool", "yes", {}, False),
        ("bool", "0", {}, False),
    ],
)
def test_scalar_parsers(name: str, text: str, args: dict[str, Any], expected: Any) -> None:
    assert_same(parse(name, text, **args), expected)


def test_float_accepts_nan_and_infinity_words() -> None:
    assert math.isnan(parse("float", "nan"))
    assert parse("float", "-Infinity") == float("-inf")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("int", ""),
        ("int", "4_2"),
        ("int", "٤٢"),
        ("int", "1.0"),
        ("int", "0x10"),
        ("float", "1_000.5"),
        ("float", "７"),
        ("float", "1,5"),
        ("float", ""),
    ],
)
def test_numbers_are_ascii_only(name: str, text: str) -> None:
    with pytest.raises(ValueError, match=f"invalid literal for {name}"):
        parse(name, text)


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ('{"a": [1, 2.0, true, null]}', {}, {"a": [1, 2.0, True, None]}),
        ("{a:1, b: {c:2}}", {"unquoted_keys": True}, {"a": 1, "b": {"c": 2}}),
        ("{ a:1,\n  b:2 }", {"unquoted_keys": True}, {"a": 1, "b": 2}),
        ('{a:"x,y:z"}', {"unquoted_keys": True}, {"a": "x,y:z"}),
        (
            '{q:<|"|>say "hi"\nthere<|"|>}',
            {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            {"q": 'say "hi"\nthere'},
        ),
        (
            "{k:«a»,v:‹b›}",
            {"unquoted_keys": True, "string_delims": [["«", "»"], ["‹", "›"]]},
            {"k": "a", "v": "b"},
        ),
        ("not json", {"allow_non_json": True}, "not json"),
        ("  not json  ", {"allow_non_json": True, "strip": False}, "  not json  "),
        ("3.0", {}, 3.0),
    ],
)
def test_json_dialect(text: str, args: dict[str, Any], expected: Any) -> None:
    assert_same(parse_json_dialect(text, args), expected)


def test_json_rejects_nan_and_infinity() -> None:
    with pytest.raises(ValueError, match="NaN is not valid JSON"):
        parse_json_dialect("[NaN]", {})
    with pytest.raises(ValueError, match="Infinity is not valid JSON"):
        parse_json_dialect('{"a": -Infinity}', {})
    assert parse_json_dialect("[NaN]", {"allow_non_json": True}) == "[NaN]"


def test_json_errors_say_whether_the_dialect_rewrote_the_text() -> None:
    with pytest.raises(
        ValueError,
        match=r"could not parse region as JSON: Expecting ',' delimiter \(line 1, column 9, char 8\)",
    ) as raised:
        parse_json_dialect('{"a": 1 "b": 2}', {})
    assert getattr(raised.value, "position", None) == 8
    with pytest.raises(ValueError, match="could not parse after dialect transforms"):
        parse_json_dialect("{a: 1 b: 2}", {"unquoted_keys": True})


def test_json_sentinels_are_refused_with_string_delims() -> None:
    with pytest.raises(ValueError, match="sentinel"):
        parse_json_dialect('{"a": "\x01"}', {"string_delims": [["<", ">"]]})
    assert parse_json_dialect('{"a": "\\u0001"}', {}) == {"a": "\x01"}


def test_quote_bare_keys_leaves_strings_alone() -> None:
    assert quote_bare_keys('{a: "b: c", d :[{e:1}]}') == '{"a": "b: c", "d" :[{"e":1}]}'
    assert quote_bare_keys('{"x\\"y:": 1}') == '{"x\\"y:": 1}'


XML = {"tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"}


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("<parameter=a>\n1\n</parameter><parameter=b>x</parameter>", XML, {"a": "1", "b": "x"}),
        (
            "<parameter=a>1</parameter><parameter=a>2</parameter><parameter=a>3</parameter>",
            {**XML, "merge_duplicates": True},
            {"a": ["1", "2", "3"]},
        ),
        (
            "<parameter=a>[1,2]</parameter><parameter=a>3</parameter>",
            {**XML, "merge_duplicates": True, "value_parser": {"name": "json"}},
            {"a": [[1, 2], 3]},
        ),
        (
            "<parameter=a>7</parameter><parameter=b>word</parameter>",
            {**XML, "value_parser": {"name": "json", "args": {"allow_non_json": True}}},
            {"a": 7, "b": "word"},
        ),
        ("<k1/><k2/>", {"tag_pattern": r"<(?P<key>\w+)/>"}, {"k1": "", "k2": ""}),
        ("", XML, {}),
        (" \n\t", XML, {}),
        # whitespace and the format's own end tags (skip_tags) carry no data
        ("<parameter=a>1</parameter></function>\n", {**XML, "skip_tags": ["</function>"]}, {"a": "1"}),
        (
            "\n</function>\n</minimax:tool_call>",
            {**XML, "skip_tags": ["</function>", "</minimax:tool_call>"]},
            {},
        ),
    ],
)
def test_xml_inline(text: str, args: dict[str, Any], expected: Any) -> None:
    assert_same(parse("xml-inline", text, **args), expected)


@pytest.mark.parametrize(
    ("text", "offset", "excerpt"),
    [
        ("no tags", 0, "no tags"),
        ("<parameter=a>1</parameter><parameter=b>2", 26, "<parameter=b>2"),
        ("<parameter=a>1</parameter> oops <parameter=b>2</parameter>", 27, "oops"),
        ("<parameter=a>1</parameter>\n<function=g>\n", 27, "<function=g>"),
        # only the end tags listed in skip_tags may stand between the tags
        (
            "<parameter=a>\n1\n</parameter>\n</oops_not_a_tag>\n</function>",
            29,
            "</oops_not_a_tag>\n</function>",
        ),
        ("<parameter=a>1</parameter></function >", 26, "</function >"),
    ],
)
def test_xml_inline_refuses_text_outside_the_tags(text: str, offset: int, excerpt: str) -> None:
    """Nothing is lost: a malformed tag (or stray text) is an error, never silently skipped."""
    with pytest.raises(ValueError) as raised:
        parse("xml-inline", text, **XML, skip_tags=["</function>"])
    assert str(raised.value) == (
        f"xml-inline: text outside the tags at offset {offset}: {excerpt!r} (tag_pattern does not match "
        "it: a malformed tag?)"
    )
    assert getattr(raised.value, "position", None) == offset


def test_xml_inline_skips_any_bare_end_tag_only_without_skip_tags() -> None:
    """Without skip_tags, bare end tags are skipped as in the reference (corpus vectors pin it)."""
    assert parse("xml-inline", "<parameter=a>1</parameter></function>\n</oops >", **XML) == {"a": "1"}
    with pytest.raises(ValueError, match="text outside the tags at offset 26: '</function>'"):
        parse("xml-inline", "<parameter=a>1</parameter></function>", **XML, skip_tags=[])


def test_xml_inline_skip_tags_must_be_a_list_of_end_tags() -> None:
    for bad in ("</function>", [""], [5]):
        with pytest.raises(ValueError, match="skip_tags: must be a list of non-empty strings"):
            STANDARD_PARSERS["xml-inline"].validate({**XML, "skip_tags": bad}, "fields.f.content_args")


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("a: 1\nb: two: three\n\njunk\nc:", {}, {"a": "1", "b": "two: three", "c": ""}),
        ("a=1;b=2", {"line_sep": ";", "kv_sep": "="}, {"a": "1", "b": "2"}),
        ("a: 1\r\nb: 2\r\n", {}, {"a": "1", "b": "2"}),
        (" a : 1 ", {"strip": False}, {" a ": " 1 "}),
        (
            "n: 5\nu: http://x",
            {"value_parser": {"name": "json", "args": {"allow_non_json": True}}},
            {"n": 5, "u": "http://x"},
        ),
        ("n: 5", {"value_parser": {"name": "int"}}, {"n": 5}),
    ],
)
def test_kv_lines(text: str, args: dict[str, Any], expected: Any) -> None:
    assert_same(parse("kv-lines", text, **args), expected)


def test_value_parser_errors_propagate() -> None:
    with pytest.raises(ValueError, match="invalid literal for int: 'x'"):
        parse("kv-lines", "n: x", value_parser={"name": "int"})


def _inside(pieces: list[str], delims: Any = (), delimiter: str = "</x>") -> bool:
    tracker = StringTracker(delims)
    for piece in pieces:
        tracker.feed(piece)
    return tracker.inside(delimiter)


@pytest.mark.parametrize(
    ("text", "inside"),
    [
        ('{"s": "abc', True),
        ('{"s": "abc"', False),
        ('{"s": "a\\"', True),
        ('{"s": "a\\\\"', False),
        ('{"name": "a, "x": 1}', False),  # a stray quote does not open a string
        ('["a", "b', True),
        ('Use the tag with a quote"', False),
    ],
)
def test_string_tracker(text: str, inside: bool) -> None:
    assert _inside([text]) is inside
    assert _inside(list(text)) is inside


def _state(pieces: list[str]) -> tuple[Any, ...]:
    tracker = StringTracker()
    for piece in pieces:
        tracker.feed(piece)
    return tracker._closer, tracker._last, tracker._escape, tracker.inside("</x>")


JSONISH = st.lists(st.sampled_from(['"', "\\", "{", "}", "[", "]", ",", ":", " ", "\n", "\t", "\x1c", "a",
                                    "1", '"k"', '"v\\"x"', "\u00a0", "</x>", "\\u0022", "\\u12", "\\q", "\\/",
                                    "\u00e9"]), max_size=60).map("".join)


@given(text=JSONISH, data=st.data())
def test_string_tracker_any_split_same_state(text: str, data: st.DataObject) -> None:
    """Long pieces are scanned whole (``str.find`` and the ``json`` module's string scanner), short
    ones step by step: the state is the same, escapes JSON does not have included."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    prefix = data.draw(st.sampled_from(["", "{", "x", '"a"', '{"a": 1', '["s', "\n"]))
    expected = _state([prefix, *list(text)])
    assert _state([prefix, text]) == expected
    assert _state([prefix, *pieces]) == expected
    assert _state([prefix + text]) == expected


def test_string_tracker_with_custom_delimiters_split_anywhere() -> None:
    delims = [['<|"|>', '<|"|>']]
    text = '{a:<|"|>x</x><|"|>,b:<|"|>y'
    for cut in range(len(text) + 1):
        assert _inside([text[:cut], text[cut:]], delims) is True
    assert _inside(['{a:<|"|>x<|"|>'], delims) is False
    assert _inside(["{a:<|"], delims, '"|>') is True  # the delimiter text completes a string opener


_JSON_TEXT = st.text(alphabet='ab"\\{}[],: \n</x>\u00e9', max_size=8)
_JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _JSON_TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(alphabet='k"\\ ', max_size=3), inner, max_size=4)),
    max_leaves=12)


@given(value=_JSON_VALUES, indent=st.sampled_from([None, 1]), before=st.sampled_from(["", " ", "\n "]),
       after=st.sampled_from(["", "\n", " \t"]))
def test_string_tracker_reads_one_whole_json_value_as_the_step_by_step_scan_does(
        value: Any, indent: int | None, before: str, after: str) -> None:
    """A whole value fed at once (a region read at its close) takes one C scan: the same state as
    feeding it a character at a time."""
    text = before + json.dumps(value, indent=indent) + after
    assert _state([text]) == _state(list(text))


@given(text=st.one_of(_JSON_VALUES.map(json.dumps), st.text(alphabet=' \n{}[]",:1aetrunlNI\\', max_size=20)))
def test_loads_json_gives_what_json_loads_gives(text: str) -> None:
    """loads_json inlines JSONDecoder.decode: the same value, or the same error and message."""
    def outcome(load: Any) -> tuple[str, Any]:
        try:
            return "value", load(text)
        except ValueError as error:
            return type(error).__name__, str(error)

    def reference(source: str) -> Any:
        return json.loads(source, parse_constant=reject_constant, object_pairs_hook=unique_keys)

    assert outcome(loads_json) == outcome(reference)


def test_a_value_the_tracker_decoded_is_handed_to_loads_json_once() -> None:
    text = '\n{"name": "f", "arguments": {"s": "a \\"quoted\\" </x>", "n": [1, 2]}}\n'
    tracker = StringTracker()
    tracker.feed(text)
    first = loads_json(text)
    second = loads_json(text)
    assert first == second == {"name": "f", "arguments": {"s": 'a "quoted" </x>', "n": [1, 2]}}
    assert first is not second  # handed out once: no two callers share one value
    tracker = StringTracker()
    tracker.feed(text)
    assert loads_json('{"other": 1}') == {"other": 1}  # another text never gets it
    assert loads_json(text) is not first


_PADDING = "x" * 30


@pytest.mark.parametrize(("text", "message"), [
    ('\x0b{"a": 1, "b": "' + _PADDING + '"}', "Expecting value: line 1 column 1 (char 0)"),
    ('{"a": 1, "b": "' + _PADDING + '"}\x0b', "Extra data: line 1 column 48 (char 47)"),
    ('{"a": 1, "a": 2, "b": "' + _PADDING + '"}',
     "key 'a' is given twice in one object (a dict would keep only the last value)"),
])
def test_loads_json_still_refuses_what_the_tracker_read_as_one_value(text: str, message: str) -> None:
    """Python whitespace that JSON does not allow, or a repeated key: the tracker reads it, the
    parser still refuses it."""
    StringTracker().feed(text)
    with pytest.raises(ValueError) as raised:
        loads_json(text)
    assert str(raised.value) == message


_XML_TEMPLATE = {
    "start_anchor": "A",
    "fields": {
        "x": {"open": "<x>", "close": "</x>", "content": "xml-inline",
              "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
                               "value_parser": {"name": "json", "args": {"allow_non_json": True}}}},
        "kv": {"open": "<kv>", "close": "</kv>", "content": "kv-lines",
               "content_args": {"value_parser": {"name": "int"}}},
        "content": {},
    },
}


def test_nested_parsers_and_tag_patterns_are_resolved_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """A region close looks nothing up by name and compiles nothing: after the template is loaded,
    parsing works with the lookups and the pattern compiler gone."""
    from chatcodec import load_response_template, parse_response
    from chatcodec.response_templates import content

    template = load_response_template(_XML_TEMPLATE)

    def gone(*args: Any) -> Any:
        raise AssertionError("looked up at a region close")

    monkeypatch.setattr(content, "get_parser", gone)
    monkeypatch.setattr(content, "lookup_parser", gone)
    monkeypatch.setattr(content, "compile_user_pattern", gone)
    message = parse_response("<x><a>[1, 2]</a><b>hi</b></x><kv>n: 5\nm: 7</kv>", template, prefix="")
    assert message == {"x": {"a": [1, 2], "b": "hi"}, "kv": {"n": 5, "m": 7}}


@pytest.mark.parametrize(("name", "text", "args", "expected"), [
    ("xml-inline", "<a>1</a> <b>22</b>", {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
                                         "value_parser": {"name": "int"}}, {"a": 1, "b": 22}),
    ("kv-lines", "a: [1]\nb: 2", {"value_parser": {"name": "json"}}, {"a": [1], "b": 2}),
    ("json", ' {"a": 1} ', {}, {"a": 1}),
    ("text", "  x  ", {"strip": False}, "  x  "),
])
def test_a_prepared_parser_gives_the_parsers_value(name: str, text: str, args: dict[str, Any],
                                                   expected: Any) -> None:
    from chatcodec.response_templates.content import prepare_parser

    assert_same(prepare_parser(get_parser(name), args)(text), expected)


def test_a_prepared_parser_raises_what_parse_raises() -> None:
    from chatcodec.response_templates.content import prepare_parser

    parser = get_parser("xml-inline")
    args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "int"}}
    with pytest.raises(ValueError, match=r"^invalid literal for int: 'x' \(expected ASCII digits\)$"):
        prepare_parser(parser, args)("<a>x</a>")
    with pytest.raises(ValueError, match=r"^invalid literal for int: 'x' \(expected ASCII digits\)$"):
        parser.parse("<a>x</a>", args)
