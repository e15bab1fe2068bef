"""The engine's fast path: ``quiet`` says whether a delimiter could start anywhere in a chunk.

``RegexMatcher.quiet`` (standard ``re``, whether only) must find something exactly where the
matcher's prefilter (``regex``, where) does, and a ``\\b`` right after a literal word does not make
the first characters of a delimiter depend on the text before it (the gpt-oss profile's
``analysis\\b``), so that state gets the fast path too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, load_response_template
from chatcodec.response_templates.delimiters import (
    after_whitespace,
    after_whitespace_then,
    first_chars,
    literal_delimiter,
    regex_delimiter,
)
from chatcodec.response_templates.matcher import (
    LiteralMatcher,
    RegexMatcher,
    _candidates,
    _or_non_ascii,
    _quiet,
)

PROFILES = Path(__file__).resolve().parents[2] / "src" / "chatcodec" / "profiles"

_PATTERNS = [
    r"<\|channel\|>\s*(?:analysis\b|final\b)\s*<\|message\|>",
    r"\s*to=functions\.(?P<name>[^\s<=]+)",
    r"\n\s*</think>",
    r"\s*</tool>",
    r"[ \t]+\[TOOL\]",
    r"<\|(?:end|call)\|>",
    r"\n\n\n",
    r"END\b",
    r"\n\s*t=x",
    r"\s{2}tx",
    r"[ \t]+t(?:o|x)=",
]
_TEXT = st.text(alphabet=[" ", "\n", "\t", "\r", "\x0b", "<", "t", "o", "=", "x", "h", "\u00e9", "\u00a0",
                          "E", "/"], max_size=12)


@given(indexes=st.sets(st.integers(0, len(_PATTERNS) - 1), min_size=1), text=_TEXT)
def test_quiet_finds_nothing_only_where_no_delimiter_can_start(indexes: set[int], text: str) -> None:
    """Quiet text holds no match and no partial match of any delimiter at any position, and quiet
    never finds something where the matcher's prefilter finds nothing (it only refines it)."""
    delimiters = tuple(regex_delimiter("f", True, _PATTERNS[i]) for i in sorted(indexes))
    where = _candidates(delimiters)
    whether = _quiet(delimiters)
    assert where is not None and whether is not None
    if whether.search(text) is None:
        assert all(d.pattern.match(text, p, partial=True) is None
                   for d in delimiters for p in range(len(text)))
    else:
        assert where.search(text) is not None


@pytest.mark.parametrize(("source", "expected"), [
    (r"(?:analysis\b|final\b)x", "af"),
    (r"to=assistant\b", "t"),
    (r"\banalysis", None),
    (r"a?\bz", None),
    (r"(?<=x)y", None),
])
def test_a_word_boundary_after_a_literal_word_keeps_the_first_characters(source: str,
                                                                         expected: str | None) -> None:
    assert first_chars(regex_delimiter("f", True, source)) == expected


@pytest.mark.parametrize(("source", "expected"), [
    (r"<think>|^(?=</think>)", "<"),
    (r"^\s*x", "\t\n\x0b\x0c\r x"),
    (r"[\^a]b|^c", "^ac"),
    (r"\^x", "^"),
    (r"^(?<=a)b", None),
])
def test_a_caret_only_limits_where_a_match_starts_not_what_it_starts_with(source: str,
                                                                           expected: str | None) -> None:
    """``^`` matches only at the start of the text after the start anchor: the characters a match
    starts with are those of the pattern without it (DeepSeek V3.1's thinking-off open keeps the
    fast path). A look-behind still leaves them unknown."""
    assert first_chars(regex_delimiter("f", True, source)) == expected


@pytest.mark.parametrize(("source", "expected"), [
    (r"<a>(?<=<a>)b", "<"),
    (r"<a>(?<=a[^>]{0,1})b", "<"),
    (r"<a>?(?<=a>)x", "<"),
    (r"\<\>(?<!\s)x", "<"),
    (r"^<a>(?<=a)x", "<"),
    (r"\n\n(?=(?<=\n\n))x", "\n"),
    (r"(?<=x)y", None),
    (r"(?<=x)<a>(?<=a)y", None),
    (r"<a>(?<=x<a>)b", None),
    (r"<a>(?<=a[^>]{0,3})b", None),
    (r"<a>(?<=<[^>]*)b", None),
    (r"<a|b(?<=b)", None),
    (r"<a>(?<=^a)x", None),
    (r"(?V1i)ss(?<=ss)x", None),
])
def test_a_look_behind_that_reads_only_the_literal_prefix_keeps_the_first_characters(
        source: str, expected: str | None) -> None:
    """A look-behind after a literal prefix at least as long as it reaches back reads only what the
    match has read; a leading one, a longer or unbounded one, one under a top-level alternative,
    or one after a prefix that full case folding may shorten leaves the first characters unknown."""
    assert first_chars(regex_delimiter("f", True, source)) == expected


@pytest.mark.parametrize(("family", "head"), [
    ("glm45", "<arg_key>"), ("glm47", "<arg_key>"), ("ling3", "<arg_key>"), ("longcat", "<longcat_arg_key>"),
])
def test_the_glm_style_key_value_heads_start_with_a_less_than_sign(family: str, head: str) -> None:
    """GLM's linear key/value head reads tags after their ``<`` by look-behinds (test_glm_tag_pattern)."""
    text = (PROFILES / family / "response_template.json").read_text(encoding="utf-8")
    sources = [m.group(1) for m in re.finditer(r'"tag_pattern": ("(?:[^"\\]|\\.)*")', text)]
    assert sources
    for source in map(json.loads, sources):
        assert source.startswith(head) and "(?<" in source
        delimiter = regex_delimiter("f", True, source)
        assert (first_chars(delimiter), after_whitespace(delimiter)) == ("<", "")


def _glm_heads() -> list[str]:
    text = (PROFILES / "glm45" / "response_template.json").read_text(encoding="utf-8")
    return [json.loads(m.group(1)) for m in re.finditer(r'"tag_pattern": ("(?:[^"\\]|\\.)*")', text)]


@given(st.sampled_from([*_glm_heads(), r"<a>(?<=<a>)b", r"<a>?(?<=a>)x", r"\<\>(?<!\s)x"]),
       st.lists(st.sampled_from(["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<a>", "<a",
                                 "x", "b", " ", "\n", "\\n", "<", ">", "/"]), max_size=12))
def test_no_match_of_a_look_behind_head_starts_outside_its_first_characters(source: str,
                                                                          pieces: list[str]) -> None:
    """The pre-filter is right only if no match, whole or cut by the buffer's end, starts on
    another character, whatever text comes before it."""
    delimiter = regex_delimiter("f", True, source)
    starts = first_chars(delimiter)
    assert starts is not None
    text = "".join(pieces)
    assert all(text[p] in starts for p in range(len(text))
               if delimiter.pattern.match(text, p, partial=True) is not None)


@pytest.mark.parametrize("family", ["deepseek_v31", "deepseek_v32", "glm47"])
def test_a_caret_alternative_in_the_reasoning_open_keeps_the_fast_path(family: str) -> None:
    spec = json.loads((PROFILES / family / "response_template.json").read_text(encoding="utf-8"))
    assert spec["fields"]["reasoning_content"]["open_pattern"] == "<think>|^(?=</think>)"
    quiet = load_response_template(spec).outside_matcher.quiet
    assert quiet is not None
    texts = ["Sure, the answer", "a < b", "x<think>", "</think>"]
    assert [quiet.search(text) is not None for text in texts] == [False, False, True, True]


def test_the_gpt_oss_final_answer_state_has_a_fast_path() -> None:
    template = load_response_template(json.loads((PROFILES / "gpt_oss" / "response_template.json")
                                                 .read_text(encoding="utf-8")))
    matcher = template.outside_matcher
    assert isinstance(matcher, RegexMatcher) and matcher.quiet is not None
    found = {token: matcher.quiet.search(token) is not None
             for token in [" answer", "abcd", " the", "tion", "light", "<|", "a<b", "\n\n", "caf\u00e9",
                           " to", " t", "\tthen", " tö"]}
    # a run before ``t`` counts only when ``o`` (of ``to=``) or the end of the text comes next
    assert found == {" answer": False, "abcd": False, " the": False, "tion": False, "light": True, "<|": True,
                     "a<b": False, "\n\n": True, "caf\u00e9": True, " to": True, " t": True, "\tthen": False,
                     " tö": True}


@pytest.mark.parametrize(("source", "first", "expected"), [
    (r"\s*to=functions\.(?P<name>[^\s<=]+)", "t", "o"),
    (r"[ \t]+t(?:o|x)=", "t", "ox"),
    (r"\n\s*</think>", "<", "/"),
    (r"\s*x", "x", None),  # the match may end there: whatever follows
    (r"\s*t.", "t", None),  # nearly any character
    (r"\s{2}tx", "t", None),  # a counted run: not sampled
    (r"(?<=a)\s*tx", "t", None),  # depends on the text before it
])
def test_what_follows_the_first_character_after_a_run(source: str, first: str, expected: str | None) -> None:
    assert after_whitespace_then(regex_delimiter("f", True, source), first) == expected


def test_what_follows_the_first_character_after_a_run_of_literals() -> None:
    assert after_whitespace_then(literal_delimiter("f", True, [" to=", "\ntx", "t="]), "t") == "ox"
    assert after_whitespace_then(literal_delimiter("f", True, [" to=", " t"]), "t") is None


def test_a_literal_state_is_quiet_without_the_literals_first_characters() -> None:
    matcher = LiteralMatcher([literal_delimiter("f", False, ["</think>", "[END]"])])
    assert matcher.quiet is not None
    quiet = [matcher.quiet.search(t) is None for t in ["plain", "a<b", "x[", "]"]]
    assert quiet == [True, False, False, True]


_PAST_ASCII = "\x80\xa0\xff\u0100\u2000\ud800\uffff\U00010000\U0010ffff"


@given(chars=st.sets(st.characters(max_codepoint=0x7F)) | st.sets(st.characters(max_codepoint=0x200)))
def test_a_class_with_every_non_ascii_character_is_written_as_a_negated_ascii_class(chars: set[str]) -> None:
    """``[chars\\x80-\\U0010FFFF]`` written as ``[^...]`` of the ASCII characters left out (cheap for
    ``re`` to compile) matches the same characters: all ASCII ones, and non-ASCII ones of each plane."""
    written = "".join(sorted(chars))
    cheap = re.compile(_or_non_ascii(written))
    spelled_out = regex.compile("[" + regex.escape(written) + "\\x80-\\U0010FFFF]")
    for char in [*map(chr, range(128)), *_PAST_ASCII]:
        assert (cheap.fullmatch(char) is None) is (spelled_out.fullmatch(char) is None), repr(char)


def test_the_negated_ascii_class_names_its_ranges() -> None:
    assert _or_non_ascii("<t ") == "[^\\x00-\\x1f\\x21-\\x3b\\x3d-\\x73\\x75-\\x7f]"
    assert _or_non_ascii("") == "[^\\x00-\\x7f]"
    assert _or_non_ascii("".join(map(chr, range(128)))) == "(?s:.)"


def _gpt_oss_parser() -> ResponseParser:
    template = load_response_template(json.loads((PROFILES / "gpt_oss" / "response_template.json")
                                                 .read_text(encoding="utf-8")))
    return ResponseParser(template, prefix="<|start|>assistant<|channel|>final<|message|>")


def _chunks(events: list[dict[str, object]]) -> list[object]:
    return [event.get("text", event["type"]) for event in events]


def test_the_fast_path_keeps_back_only_an_end_that_may_start_a_delimiter() -> None:
    parser = _gpt_oss_parser()
    fed = [_chunks(parser.feed(token)) for token in ["Rain", " light", " rain", " ", "12", "\n\n", "好", " t",
                                                     "o=functions.f<|channel|>commentary<|message|>", "{}",
                                                     "<|call|>"]]
    assert fed == [["region_open", "Rain"], [" ligh"], ["t rain"], [], [" 12"], [], ["\n\n好"], [], [],
                   ["region_close", "region_open", "{}"], ["region_close"]]
    assert parser.resolved == 78
    assert parser.finalize() == ({"role": "assistant", "content": "Rain light rain 12\n\n好", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {}}}]}, [])


@given(st.lists(st.sampled_from([" ", "t", "to", "o=functions.f", "\n", "x", "好", "<|", "end|>", " the"]),
                max_size=12))
def test_the_fast_path_splits_nothing_a_whole_feed_would_not(tokens: list[str]) -> None:
    """Token by token, the message and each region's concatenated text are those of one feed."""
    whole, streamed = _gpt_oss_parser(), _gpt_oss_parser()
    events = whole.feed("".join(tokens))
    expected, tail = whole.finalize()
    got: list[dict[str, object]] = []
    for token in tokens:
        got += streamed.feed(token)
    message, end = streamed.finalize()
    assert message == expected
    assert _texts(got + end) == _texts(events + tail)


def _texts(events: list[dict[str, object]]) -> list[tuple[object, str]]:
    """Each region's text, in order (consecutive chunks of one region joined)."""
    out: list[tuple[object, str]] = []
    for event in events:
        if event["type"] == "region_open":
            out.append((event["field"], ""))
        elif event["type"] == "region_chunk":
            out[-1] = (out[-1][0], out[-1][1] + str(event["text"]))
    return out
