"""A regex match set whole (``granularity`` "each match whole") is searched a bounded number of times.

Every search of a match under way reads all of its text again, so searching on every feed cost
time quadratic in the match (an 8,000-character MiniCPM5 parameter fed 4 characters at a time
took 18 s). MiniCPM5's plain parameters stream as written; a CDATA one is still set whole (until
its ``]]>`` the same text may be a plain value that starts with ``<![CDATA[``), so it is the case
here. The scanner searches when a feed brings a character the pattern writes as punctuation
(and for 16 characters after it), when the undecided text has doubled, and at the end. These
tests pin the behaviour, not the speed (``bench/bench_openai.py`` measures that): the match is
still set in the feed that makes it certain, and the searches stay few.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import ResponseParser, profiles
from chatcodec.response_templates.scanners import regex_items_scan

TEMPLATE = profiles.load("minicpm5").response_template
VALUE = "word " * 4000  # 20,000 characters, no punctuation
OUTPUT = (f'<function name="write"><param name="text"><![CDATA[{VALUE}]]></param>'
          '<param name="b">x</param></function>')


def values(events: list[dict[str, Any]]) -> list[tuple[str, list[Any], Any]]:
    return [(event["op"], event["path"], event.get("value")) for event in events
            if event["type"] == "region_value" and event["op"] == "set"]


def test_the_match_is_set_in_the_feed_that_makes_it_certain() -> None:
    """The CDATA parameter is set once ``<p`` follows its ``]]></param>``: a match that reaches the
    end of the text read so far is held, and ``<`` may begin the next match's pattern."""
    certain = OUTPUT.index("]]></param><param") + len("]]></param><p") - 1
    parser = ResponseParser(TEMPLATE, prefix="", value_deltas=True)
    for position, char in enumerate(OUTPUT):
        text = [value for value in values(parser.feed(char)) if value[1][-1:] == ["text"]]
        assert bool(text) == (position == certain), position
        if text:
            assert text == [("set", ["function", "arguments", "text"], VALUE)]


def test_a_long_match_is_searched_a_few_times(monkeypatch: pytest.MonkeyPatch) -> None:
    searches = 0
    advance = regex_items_scan.RegexItemsScanner._advance

    def counted(self: regex_items_scan.RegexItemsScanner, out: list[Any], eos: bool) -> None:
        nonlocal searches
        searches += 1
        advance(self, out, eos)

    monkeypatch.setattr(regex_items_scan.RegexItemsScanner, "_advance", counted)
    parser = ResponseParser(TEMPLATE, prefix="", value_deltas=True)
    for char in OUTPUT:
        parser.feed(char)
    message, _ = parser.finalize()
    assert message["tool_calls"][0]["function"]["arguments"] == {"text": VALUE, "b": "x"}
    assert searches < 100, f"{searches} searches for {len(OUTPUT):,} one-character feeds"
