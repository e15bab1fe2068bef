"""``x-xml-tree`` with ``marked_open``: only marked opening tags are structure (MiniMax-M3).

MiniMax-M3 writes ``]<]minimax[>[`` before every tag of its call; code and markup inside a value
(``List<String>``, ``<div>...</div>``) carry no marker, so they are the value's text. Closing tags
come with and without the marker in real outputs (``<query>...</query>`` after a marked open),
so an unmarked closing tag still closes the element it names. The scanner must read the text as
the parser does, fed whole or one character at a time.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.content import get_parser
from chatcodec.response_templates.ext_xml_tree import parse_xml_tree, validate_xml_tree
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.protocol import Delta

NS = "]<]minimax[>["
ARGS: dict[str, Any] = {"remove": [NS], "marked_open": True}


def _scan(text: str, chunks: list[str]) -> list[Delta]:
    scanner = scanner_for("x-xml-tree", ARGS)
    assert scanner is not None
    deltas: list[Delta] = []
    for chunk in chunks:
        deltas += scanner.feed(chunk)
    deltas += scanner.end()
    merged: list[Delta] = []
    for delta in deltas:
        if merged and delta[0] == "text" and merged[-1][0] == "text" and merged[-1][1] == delta[1]:
            merged[-1] = ("text", delta[1], merged[-1][2] + delta[2])
        else:
            merged.append(delta)
    return merged


def test_unmarked_tags_in_a_value_are_its_text_whole_and_streamed() -> None:
    text = f"{NS}<path>A.java{NS}</path>\n{NS}<code>List<String> xs; <b>x</b></code>\n{NS}"
    assert parse_xml_tree(text, ARGS) == {"path": "A.java", "code": "List<String> xs; <b>x</b>"}
    expected: list[Delta] = [
        ("begin", (), "object"),
        ("begin", ("path",), "string"), ("text", ("path",), "A.java"), ("end", ("path",), None),
        ("begin", ("code",), "string"), ("text", ("code",), "List<String> xs; <b>x</b>"),
        ("end", ("code",), None),
    ]
    assert _scan(text, [text]) == expected
    assert _scan(text, list(text)) == expected


def test_marked_children_and_items_still_nest() -> None:
    text = f"{NS}<o>{NS}<a>1{NS}</a>{NS}<tags>{NS}<item><i>x</i>{NS}</item>{NS}<item>y</item>{NS}</tags></o>"
    assert parse_xml_tree(text, ARGS) == {"o": {"a": "1", "tags": ["<i>x</i>", "y"]}}
    assert _scan(text, list(text)) == _scan(text, [text]) == [
        ("begin", (), "object"), ("begin", ("o",), "object"),
        ("begin", ("o", "a"), "string"), ("text", ("o", "a"), "1"), ("end", ("o", "a"), None),
        ("set", ("o", "tags"), ["<i>x</i>", "y"]), ("end", ("o",), None),
    ]


def test_an_unmarked_opening_tag_opens_nothing() -> None:
    with pytest.raises(ValueError, match=r"</a> at offset 4 does not close an open element"):
        parse_xml_tree(f"<a>1{NS}</a>", ARGS)


@pytest.mark.parametrize(("args", "message"), [
    ({"remove": [NS], "marked_open": "yes"}, r"marked_open: must be true or false"),
    ({"marked_open": True}, r"marked_open: needs the markers of 'remove'"),
])
def test_bad_marked_open_arguments_are_refused_by_name(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_xml_tree(args, "fields.tool_calls.content_args")


@given(st.text(alphabet="ab</>$ \n{}\"'", max_size=30))
def test_any_value_without_the_marker_or_its_own_close_is_read_back_as_written(value: str) -> None:
    """For every value text that holds neither the marker nor ``</k>``, the parser gives it back
    as written, and the scanner agrees fed whole or one character at a time."""
    if "</k>" in value:
        return
    text = f"{NS}<k>{value}{NS}</k>"
    assert get_parser("x-xml-tree").parse(text, ARGS) == {"k": value}
    expected: list[Delta] = [("begin", (), "object")]
    if value.strip():
        expected += [("begin", ("k",), "string"), ("text", ("k",), value), ("end", ("k",), None)]
    else:
        expected.append(("set", ("k",), value))
    assert _scan(text, [text]) == expected
    assert _scan(text, list(text)) == expected
