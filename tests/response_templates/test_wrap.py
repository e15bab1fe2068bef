"""``x-wrap``: a region's raw text as the one string of a one-key object (a code interpreter's call).

llama.cpp reads the code after Llama 3.1's / Functionary's ``<|python_tag|>`` as ``{"code": ...}``
(``common/chat.cpp``, ``wrap_code_as_arguments``); ``x-wrap`` gives that object, and its value
scanner streams the code as it comes, the same at every chunking.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import parse_response
from chatcodec.response_templates.content import get_parser
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.shadow import Shadow

TAG = "<|python_tag|>"
ARGS: dict[str, Any] = {"key": "code", "lead": TAG}


def parse(text: str, args: dict[str, Any] = ARGS) -> Any:
    return get_parser("x-wrap").parse(text, args)


def scan(chunks: list[str], args: dict[str, Any] = ARGS) -> list[Delta]:
    scanner = scanner_for("x-wrap", args)
    assert scanner is not None
    deltas: list[Delta] = []
    for chunk in chunks:
        deltas += scanner.feed(chunk)
        assert scanner.complete is None
    merged: list[Delta] = []
    for delta in deltas + scanner.end():
        if merged and delta[0] == "text" and merged[-1][0] == "text":
            merged[-1] = ("text", delta[1], merged[-1][2] + delta[2])
        else:
            merged.append(delta)
    return merged


def test_the_text_after_the_lead_is_the_value_as_written() -> None:
    assert parse(f"\n{TAG}x = 1\nprint(x)\n") == {"code": "x = 1\nprint(x)\n"}
    assert parse(f"{TAG}") == {"code": ""}
    assert parse("  print(1)", {"key": "code"}) == {"code": "print(1)"}


def test_a_text_without_the_lead_is_an_error_at_its_first_character() -> None:
    message = "x-wrap: '<|python_tag|>' expected at offset 2, got 'print(1)'"
    with pytest.raises(ValueError, match=re.escape(message)):
        parse("  print(1)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "content_args.key: must be a non-empty string"),
        ({"key": ""}, "content_args.key: must be a non-empty string"),
        ({"key": "code", "lead": 1}, "content_args.lead: must be a string"),
        ({"key": "code", "strip": True}, "unknown key(s) ['strip'] for x-wrap. Known: ['key', 'lead']"),
    ],
)
def test_the_arguments_are_checked_at_load(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        get_parser("x-wrap").validate(args, "fields.tool_calls.content_args")


def test_the_scanner_streams_the_code_once_the_lead_is_read() -> None:
    scanner = scanner_for("x-wrap", ARGS)
    assert scanner is not None
    assert scanner.feed(" <|python") == [("begin", (), "object")]
    assert scanner.feed("_tag|>pri") == [("begin", ("code",), "string"), ("text", ("code",), "pri")]
    assert scanner.feed("nt(1)") == [("text", ("code",), "nt(1)")]
    assert scanner.end() == [("end", ("code",), None), ("end", (), None)]


def test_the_scanner_stops_where_the_parser_refuses() -> None:
    scanner = scanner_for("x-wrap", ARGS)
    assert scanner is not None
    assert scanner.feed("<|pyt") == [("begin", (), "object")]
    assert scanner.feed("hon>x") == []
    assert scanner.feed(" more") == []
    assert scanner.end() == []


def test_a_region_opened_before_the_tag_reads_the_code() -> None:
    template = {"start_anchor": "A", "fields": {"tool_calls": {
        "open_pattern": r"(?=<\|python_tag\|>)", "close": "<|eom_id|>",
        "content": "x-wrap", "content_args": ARGS,
        "transform": {"name": "python", "arguments": "{content}"}}, "content": {}}}
    assert parse_response(f"Run it.{TAG}print(2)<|eom_id|>", template, prefix="") == {
        "content": "Run it.", "tool_calls": {"name": "python", "arguments": {"code": "print(2)"}}}


_PIECES = [" ", "\n", TAG, "<|py", "print(", '"x"', "1)", "<|eom_id|>"]
TEXTS = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)


@given(TEXTS, st.data())
def test_the_scanner_agrees_with_the_parser_at_every_chunking(text: str, data: st.DataObject) -> None:
    try:
        value = parse(text)
    except ValueError:
        return
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=6)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if a < b]
    whole = scan([text])
    assert scan(chunks) == whole
    assert scan(list(text)) == whole
    shadow = Shadow()
    assert all(shadow.apply(delta) for delta in whole)
    consistent, _ = shadow.complete(value)
    assert consistent
