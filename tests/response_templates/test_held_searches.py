"""Feeds that leave a cut-off head or terminator where it was are settled without a search.

Once the next call's start arrives (DeepSeek's ``<｜tool▁call▁begin｜>``, GLM-4.5's ``<arg_key>``),
the ``x-findall`` / ``xml-inline`` scanner holds the text back until the head is complete; each
later delta used to search all of the held text again. :meth:`Matcher.holds` tells the same answer
from two matches anchored where the text is held (``held_feeds`` counts those feeds), and a
whitespace-led terminator (DeepSeek V3's ``\\s*```\\s*<｜tool▁call▁end｜>``) is held the same way
while its run and backticks arrive. Non-ASCII argument text is told plain by one set test.

These tests pin the exact deltas of the feeds those paths take, and that at every chunking the
deltas emitted up to a point are exactly those of the text read so far (so no fast path can
emit a delta earlier or later than the search would).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import profiles
from chatcodec.response_templates.scanners.pattern_split import literal_tail, required_literal
from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.regex_items_scan import (
    RegexItemsScanner,
    findall_scanner,
    xml_inline_scanner,
)


def scanner(family: str) -> RegexItemsScanner:
    args: dict[str, Any] = profiles.load(family).response_template["fields"]["tool_calls"]["content_args"]
    if "tag_pattern" in args:
        made = xml_inline_scanner(args)
        assert made is not None
        return made
    return findall_scanner(args)


def feeds(made: RegexItemsScanner, pieces: list[str]) -> list[tuple[str, list[Delta]]]:
    return [(piece, made.feed(piece)) for piece in pieces]


def test_a_cut_off_next_call_start_is_held_without_a_search() -> None:
    """The deepseek_v31 profile now also ends a call at the next call or the end of the region (a
    missing ``<｜tool▁call▁end｜>``), so its item end comes one feed later, as kimi_k2's does; the hold
    is pinned with the pattern whose only terminator is the end marker, as V3.1's had before."""
    made = findall_scanner({
        "pattern": "<｜tool▁call▁begin｜>(?P<name>[^<]+?)<｜tool▁sep｜>(?P<arguments>.*?)<｜tool▁call▁end｜>",
        "value_parsers": {"arguments": {"name": "json"}}})
    got = feeds(made, ["<｜tool▁call▁begin｜>", "get", "_time", "<｜tool▁sep｜>", '{"', "tz", '":', ' "',
                       "UTC", '"}', "<｜tool▁call▁end｜>", "<｜tool▁call▁begin｜>", "f"])
    assert got == [
        ("<｜tool▁call▁begin｜>", [("begin", (), "array")]),
        ("get", []),
        ("_time", []),
        ("<｜tool▁sep｜>", []),
        ('{"', [("begin", (0,), "object"), ("set", (0, "name"), "get_time"),
                ("begin", (0, "arguments"), "object")]),
        ("tz", []),
        ('":', []),
        (' "', [("begin", (0, "arguments", "tz"), "string")]),
        ("UTC", [("text", (0, "arguments", "tz"), "UTC")]),
        ('"}', [("end", (0, "arguments", "tz"), None), ("end", (0, "arguments"), None)]),
        ("<｜tool▁call▁end｜>", [("end", (0,), None)]),
        ("<｜tool▁call▁begin｜>", []),
        ("f", []),
    ]
    # the first call's start (and the feeds before its separator), then the second call's
    assert made.held_feeds == 5
    assert made.end() == []  # a start without its separator is not a match


def test_a_glm_key_that_never_completes_is_held_at_every_feed() -> None:
    """GLM-4.6 writing ``\\n`` as two characters: ``<arg_key>todos</arg_key>\\n<arg_value>`` is no
    head, but a later ``</arg_key>`` could still complete one, so the text stays held (the content
    parser reports it); only the feed that brings ``<arg_value>`` (which ends a head) searches.

    The glm45 profile's key now stops at argument tags (a key cannot complete later there), so the
    hold is pinned with the key pattern that lets it stretch, as GLM's template before that had."""
    made = xml_inline_scanner({
        "tag_pattern": "<arg_key>\\s*(?P<key>.*?)\\s*</arg_key>\\s*<arg_value>(?P<value>(?:(?!<arg_key>|"
                       "</arg_value>).)*?)(?:</arg_value>|(?=<arg_key>)|$)",
        "skip_tags": []})
    assert made is not None
    pieces = ["\n", "<arg_key>", "todos", "</arg_key>", "\\n", "<arg_value>", "[{", '\\"', "id", '\\"', "}]",
              "</arg_value>"]
    got = feeds(made, pieces)
    assert got == [("\n", [("begin", (), "object")])] + [(piece, []) for piece in pieces[1:]]
    assert (made.quiet_searches, made.held_feeds) == (1, 10)
    assert made.end() == []
    assert not made.refuted


def test_a_whitespace_led_end_is_held_while_its_run_and_backticks_arrive() -> None:
    made = scanner("deepseek_v3")
    got = feeds(made, ['<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"k": 1}', "\n", "`", "`", "`",
                       "<｜tool▁call▁end｜>"])
    assert got == [
        ('<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"k": 1}',
         [("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "type"), "function"),
          ("set", (0, "name"), "f"), ("begin", (0, "arguments"), "object"), ("set", (0, "arguments", "k"), 1),
          ("end", (0, "arguments"), None)]),
        ("\n", []),
        ("`", []),
        ("`", []),
        ("`", []),
        ("<｜tool▁call▁end｜>", []),
    ]
    assert (made.quiet_feeds, made.held_feeds) == (1, 3)  # the newline is quiet, each backtick held
    assert made.end() == [("end", (0,), None)]


def test_non_ascii_argument_text_streams_as_it_comes() -> None:
    """``中文`` and ``é`` cannot start the terminator and stream at once; the ideographic space is
    whitespace (``\\s``) and may, so it is held until ``é`` shows it is not the terminator's run."""
    made = scanner("deepseek_v3")
    head = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"k": "'
    got = feeds(made, [head, "中文", "\u3000", "é", '"', "}", "\n```<｜tool▁call▁end｜>"])
    assert got[1:] == [
        ("中文", [("text", (0, "arguments", "k"), "中文")]),
        ("\u3000", []),
        ("é", [("text", (0, "arguments", "k"), "\u3000é")]),
        ('"', [("end", (0, "arguments", "k"), None)]),
        ("}", [("end", (0, "arguments"), None)]),
        ("\n```<｜tool▁call▁end｜>", []),
    ]
    assert made.held_feeds == 1
    assert made.end() == [("end", (0,), None)]


#: Region texts whose deltas must come at the same character whatever the chunking.
TEXTS: dict[str, str] = {
    "deepseek_v3": '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n'
                   '{"a": "b c", "n": [1, 2]}\n```<｜tool▁call▁end｜>\n'
                   '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"k": "é 中文\u3000x"}  \n ```'
                   "  <｜tool▁call▁end｜>",
    "deepseek_v31": '<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"tz": "UTC", "x": [1]}<｜tool▁call▁end｜>'
                    '<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"q": "中文 x"}<｜tool▁call▁end｜>',
    "kimi_k2": '<|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{"city": "Paris"}'
               '<|tool_call_end|><|tool_call_begin|>functions.f:1<|tool_call_argument_begin|>{"a": "é"}'
               "<|tool_call_begin|>functions.g:2<|tool_call_argument_begin|>{}",
    "glm45": "\n<arg_key>city</arg_key>\n<arg_value>Beijing 北京</arg_value>\n<arg_key>date</arg_key>"
             "<arg_value>2025-08-01</arg_value>\n<arg_key>x</arg_key>\\n<arg_value>1",
}


def merged(deltas: list[Delta]) -> list[Delta]:
    """``deltas`` with consecutive text deltas of one path joined (their cut is the chunking's)."""
    out: list[Delta] = []
    for delta in deltas:
        last = out[-1] if out else None
        if last is not None and delta[0] == "text" and last[0] == "text" and last[1] == delta[1]:
            out[-1] = ("text", delta[1], last[2] + delta[2])
        else:
            out.append(delta)
    return out


def check_prefixes(family: str, text: str, cuts: list[int], make: Callable[[str], RegexItemsScanner]) -> None:
    """Fed in pieces cut at ``cuts``, the deltas so far equal those of the text so far fed whole."""
    made, sent, start = make(family), [], 0
    for cut in [*sorted(set(cuts)), len(text)]:
        if cut <= start:
            continue
        sent += made.feed(text[start:cut])
        start = cut
        assert merged(sent) == merged(make(family).feed(text[:cut])), (family, text[:cut])


def test_every_prefix_fed_one_character_at_a_time() -> None:
    for family, text in TEXTS.items():
        check_prefixes(family, text, list(range(len(text))), scanner)


def test_every_cut_in_two() -> None:
    for family, text in TEXTS.items():
        once = scanner(family)
        whole = merged(once.feed(text) + once.end())
        for cut in range(1, len(text)):
            made = scanner(family)
            assert merged(made.feed(text[:cut]) + made.feed(text[cut:]) + made.end()) == whole, (family, cut)


@given(family=st.sampled_from(sorted(TEXTS)),
       cuts=st.lists(st.integers(min_value=1, max_value=300), max_size=40))
def test_any_chunking(family: str, cuts: list[int]) -> None:
    text = TEXTS[family]
    check_prefixes(family, text, [cut for cut in cuts if cut < len(text)], scanner)


@pytest.mark.parametrize(("source", "tail"), [
    (r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>", "<arg_value>"),
    (r"<\|tool_call_begin\|>\s*(?P<id>(?:functions\.)?(?P<name>[\w\-.]+?):\d+)\s*<\|tool_call_argument_begin\|>",
     "<|tool_call_argument_begin|>"),
    (r"\s*```\s*<｜tool▁call▁end｜>", "<｜tool▁call▁end｜>"),
    (r"(?<=a)bc", "bc"),  # a look-behind reads the text before the match
    (r"a\|b", "a|b"),
    (r"<｜tool▁sep｜>(?P<name>[^\n<]+)\n```(?:json)?\s*", ""),  # ends with a quantifier
    (r"(?:</arg_value>|(?=<arg_key>)|$)", ""),  # a look-ahead and $ read past the match
    (r"ab$", ""),
    (r"x(?=y)z", ""),
    (r"a|bc", ""),  # an alternation at the top
    (r"(?i)abc", ""),  # flags: the literal may match other text
    (r"(?P<n>a)(?P=n)", ""),
    (r"ab+", ""),
])
def test_literal_tail(source: str, tail: str) -> None:
    assert literal_tail(source) == tail


@pytest.mark.parametrize(("source", "required"), [
    (r"<｜tool▁call▁begin｜>(?P<type>[^<]*)<｜tool▁sep｜>(?P<name>[^\n<]+)\n```(?:json)?\s*", "\n```"),
    (r"<\|tool_call_begin\|>\s*(?P<id>(?:functions\.)?(?P<name>[\w\-.]+?):\d+)\s*<\|tool_call_argument_begin\|>",
     "<|tool_call_argument_begin|>"),
    (r"ab?c", "c"),  # b may be missing
    (r"ab*?c", "c"),
    (r"abc+", "ab"),  # the quantified c is not counted
    (r"(a)bc{2,3}d", "d"),
    (r"a[xy]b\p{L}", "b"),
    (r"a|b", ""),  # an alternation at the top
    (r"(?i)abc", ""),  # flags: the literal may match other text
    (r"x(?=y)z", ""),
    (r"\s*", ""),
])
def test_required_literal(source: str, required: str) -> None:
    assert required_literal(source) == required


#: DeepSeek V3's call pattern before the profile took the ```json fence as optional (bare JSON
#: arguments, google/adk-python #5654): its head needs a newline and three backticks.
V3_FENCED_CALL = {
    "pattern": "<｜tool▁call▁begin｜>(?P<type>[^<]*)<｜tool▁sep｜>(?P<name>[^\\n<]+)\\n```(?:json)?\\s*"
               "(?P<arguments>.*?)\\s*```\\s*(?:<｜tool▁call▁end｜>|(?=<｜tool▁call▁begin｜>)|$)",
    "value_parsers": {"arguments": {"name": "json"}},
}


def test_a_head_waiting_for_its_required_literal_is_held_then_taken() -> None:
    """A call head that needs a newline and three backticks (DeepSeek V3's fenced form, pinned as
    the profile had it): while they have not all come, the held head is settled without a search
    (no complete match can start there); the feed that completes them is searched, and the head is
    taken once the text after it decides it."""
    made = findall_scanner(V3_FENCED_CALL)
    assert made.feed("<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather") == [("begin", (), "array")]
    assert made.held_feeds == 1
    assert made.feed("\n``") == []
    assert made.held_feeds == 2
    assert made.feed("`json\n") == []
    assert made.held_feeds == 2
    assert made.feed('{"a"') == [("begin", (0,), "object"), ("set", (0, "type"), "function"),
                                  ("set", (0, "name"), "get_weather"), ("begin", (0, "arguments"), "object")]
