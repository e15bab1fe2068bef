"""Issue 13: every regex a template runs on model output is bounded in time.

``open_pattern: "(a|aa)+b"`` took 48 s on a 34-character output and loaded without a word. Now a
pattern proved catastrophic is refused at load, naming the field and the key; any other pattern
that is not proved linear runs with ``REGEX_TIMEOUT``, and running out of it is a
``ResponseParseError`` (strict) or a ``parse_errors`` record (keep) naming the field, with stream
and one-shot parsing agreeing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, load_response_template, parse_response, profiles
from chatcodec.errors import ResponseParseError, ResponseTemplateError
from chatcodec.response_templates import backtracking
from chatcodec.response_templates.backtracking import judge
from tests.response_templates.helpers import stream

CATASTROPHIC = "(a|aa)+b"

BASE: dict[str, Any] = {
    "start_anchor": "S",
    "fields": {
        "x": {"open": "<x>", "close": "</x>"},
        "calls": {"open": "<c>", "close": "</c>", "content": "xml-inline",
                  "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>[^<]*)</(?P=key)>"}},
        "found": {"open": "<f>", "close": "</f>", "content": "x-findall",
                  "content_args": {"pattern": "(?P<v>\\d+)", "between": ",?\\s*"}},
        "content": {},
    },
}


def with_key(path: list[str], value: str) -> dict[str, Any]:
    template = copy.deepcopy(BASE)
    node = template
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    if path[-1] in ("open_pattern", "close_pattern"):
        node.pop(path[-1].removesuffix("_pattern"))
    if path == ["start_anchor_pattern"]:
        template.pop("start_anchor")
    return template


@pytest.mark.parametrize(("path", "json_path"), [
    (["fields", "x", "open_pattern"], "fields.x.open_pattern"),
    (["fields", "x", "close_pattern"], "fields.x.close_pattern"),
    (["start_anchor_pattern"], "start_anchor_pattern"),
    (["fields", "calls", "content_args", "tag_pattern"], "fields.calls.content_args.tag_pattern"),
    (["fields", "found", "content_args", "pattern"], "fields.found.content_args.pattern"),
    (["fields", "found", "content_args", "between"], "fields.found.content_args.between"),
])
def test_a_catastrophic_pattern_is_refused_at_load_naming_its_key(path: list[str], json_path: str) -> None:
    pattern = CATASTROPHIC if path[-1] != "tag_pattern" else "(?P<key>(a|aa)+)b(?P<value>)"
    if path[-1] == "pattern":
        pattern = "(?P<v>(a|aa)+b)"
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template(with_key(path, pattern))
    assert raised.value.path == json_path
    assert str(raised.value).startswith(f"{json_path}: this pattern backtracks catastrophically: ")
    assert "took longer than 0.1 s" in str(raised.value)


@pytest.mark.parametrize("pattern", [
    "(a+)+b",  # nested, but the regex module does not backtrack through it
    r"(\w+\s?)+$",
    r"(?:<\|start\|>|<\|channel\|>)+x",
    r"\s*\s*x",  # ambiguous, polynomial: bounded at run time, not refused
])
def test_a_pattern_without_a_proof_loads(pattern: str) -> None:
    load_response_template(with_key(["fields", "x", "open_pattern"], pattern))


@pytest.mark.parametrize(("pattern", "linear"), [
    (r"\s*</think>", True),
    (r"<function=(?P<name>[^>]+)>", True),
    (r"(?:<\|channel>)+thought\n?", True),
    (r"<tool_call>\s*(?P<name>[^\s<]+)", True),
    (r"</think>|(?=<tool_call>)", True),
    (r"\[TOOL_CALLS\](?=[^\[]*\[)", True),
    (r"\s*\s*x", False),  # two repetitions can share the same spaces
    (r"a*a", False),
    (r"<x>.*?</x>", False),
    (r"(a|b)+c", True),  # exclusive alternatives: one way to read each character
    (r"(a|ab)+c", False),
    (r"(\w)\1", False),  # back-references are not proved
    (r"(?i)abc*d", False),  # nor case-insensitive patterns
])
def test_judge_proves_linear_patterns_only(pattern: str, linear: bool) -> None:
    assert judge(pattern).linear is linear


def test_every_bundled_delimiter_is_proved_linear() -> None:
    """So the per-chunk path of every bundled profile never reads the clock (it costs more than a
    short search)."""
    unproved = []
    for name in profiles.names():
        template = load_response_template(profiles.load(name).response_template)
        for field in template.fields.values():
            for delimiter in (field.open, field.close):
                if delimiter is not None and not delimiter.linear:
                    unproved.append((name, field.name, delimiter.pattern.pattern))
    assert unproved == []


# -- run time ---------------------------------------------------------------------------------------

#: Exponential on ``a`` runs followed by ``Z``, but a pumped input without ``Z`` fails at once, so
#: nothing proves it at load: only the clock bounds it.
UNPROVED = {"start_anchor": "S", "fields": {
    "x": {"open_pattern": "(?=[^!]*Z)(a|aa)+b", "close": "</x>"}, "content": {}}}
SLOW_OUTPUT = "hello " + "a" * 40 + "Z and more"


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backtracking, "REGEX_TIMEOUT", 0.05)


@pytest.mark.usefixtures("short_timeout")
class TestRunTime:
    def test_strict_raises_naming_the_field_and_key(self) -> None:
        with pytest.raises(ResponseParseError) as raised:
            parse_response(SLOW_OUTPUT, UNPROVED, prefix="")
        assert raised.value.field == "x"
        assert "searching fields.x.open_pattern took longer than REGEX_TIMEOUT (0.05 s" in str(raised.value)
        assert "delimiters (the search began at offset 0 of the output)" in str(raised.value)

    def test_keep_records_it_and_loses_nothing(self) -> None:
        message = parse_response(SLOW_OUTPUT, UNPROVED, prefix="", errors="keep")
        assert message == {"content": SLOW_OUTPUT, "parse_errors": [{
            "field": "x", "parser": None, "offset": None, "text": "", "raw": "", "span": None,
            "error": "searching fields.x.open_pattern took longer than REGEX_TIMEOUT (0.05 s of CPU time in "
                     "chatcodec.response_templates.backtracking); the pattern backtracks too much on this "
                     "text. Nothing after this point was matched against the template's delimiters"}]}

    @pytest.mark.parametrize("size", [1, 7])
    def test_stream_equals_one_shot(self, size: int) -> None:
        one_shot = parse_response(SLOW_OUTPUT, UNPROVED, prefix="", errors="keep")
        chunks = [SLOW_OUTPUT[i : i + size] for i in range(0, len(SLOW_OUTPUT), size)]
        message, _ = stream(UNPROVED, chunks, "", None, errors="keep")
        assert message == one_shot

    def test_a_content_pattern_that_runs_out_of_time_is_that_regions_problem(self) -> None:
        template = {"start_anchor": "S", "fields": {
            "calls": {"open": "<c>", "close": "</c>", "content": "xml-inline",
                      "content_args": {"tag_pattern": "(?=[^!]*Z)(?P<key>(a|aa)+)b(?P<value>)"}},
            "content": {}}}
        output = "<c>" + "a" * 40 + "Z</c>"
        with pytest.raises(ResponseParseError, match=r"content_args\.tag_pattern: searching this region took "
                                                     "longer than REGEX_TIMEOUT"):
            parse_response(output, template, prefix="")
        message = parse_response(output, template, prefix="", errors="keep")
        assert message["content"] == output
        assert message["parse_errors"][0]["field"] == "calls"

    def test_a_start_anchor_pattern_that_runs_out_of_time(self) -> None:
        template = {"start_anchor_pattern": "(?=[^!]*Z)(a|aa)+b", "fields": {"content": {}}}
        prompt = "a" * 40 + "Z"
        with pytest.raises(ResponseParseError, match="start_anchor_pattern in the prefix took longer"):
            ResponseParser(template, prefix=prompt)
        parser = ResponseParser(template, prefix=prompt, errors="keep")
        parser.feed("Hi")
        message, _ = parser.finalize()
        assert message["content"] == "Hi"
        assert message["parse_errors"][0]["error"].endswith("; the prefix was left out")


def test_the_overlap_check_searches_every_code_point_once_in_order() -> None:
    everything = backtracking._every_character()
    assert everything == "".join(map(chr, range(0x110000)))
    assert everything[0xD800] == "\ud800" and everything[-1] == "\U0010ffff"


@pytest.mark.parametrize(("first", "second", "overlap"), [
    ("[^\\s<=]", "\\s", False), ("[\\w.]", "\\s", False), ("\\w", "[\\U00010000-\\U0010FFFF]", True),
    ("[\\ud800-\\udfff]", "[^a]", True), ("[\\U0010FFFF]", "[\\U0010FFFE-\\U0010FFFF]", True),
    ("[\\U0010FFFE]", "[\\U0010FFFF]", False),
])
def test_class_overlap_reaches_the_last_plane(first: str, second: str, overlap: bool) -> None:
    assert backtracking._overlap(first, second) is overlap


def test_past_latin1_the_short_universe_holds_every_kind_of_character_the_escapes_tell_apart() -> None:
    """Past U+00FF an atom of ``_LATIN1_ATOM``'s form tells characters apart only by ``\\s``, ``\\w``
    and ``\\d``: the kinds that occur there (searched over every code point) are the kinds of the
    characters the short universe stands them for."""
    everything = backtracking._every_character()
    found = set()
    for space in (True, False):
        for word in (True, False):
            for digit in (True, False):
                kind = "".join(f"(?{'=' if yes else '!'}\\{name})"
                               for yes, name in ((space, "s"), (word, "w"), (digit, "d")))
                if regex.compile(kind + ".", regex.DOTALL).search(everything, 0x100) is not None:
                    found.add((space, word, digit))
    assert found == {(False, True, False), (False, False, False), (False, True, True), (True, False, False)}
    kinds = {(bool(regex.match(r"\s", c)), bool(regex.match(r"\w", c)), bool(regex.match(r"\d", c)))
             for c in backtracking._BEYOND_LATIN1}
    assert kinds == found


_CLASS_PARTS = ["\\s", "\\S", "\\w", "\\W", "\\d", "\\D", "a-z", "A-Z_", "0-9", "<", "=", ">", "\\-", ".",
                '"', "'", "\\[", "\\]", "\\\\", "{", "\\n", "\\t", "\\x85", "\\xa0", "\\xff", "\\xe9", " ",
                "!-/", "\\x00-\\x7f", "\\x80-\\xff", "\\x00-\\xff"]
_LATIN1_ATOMS = st.one_of(
    st.sampled_from([".", "\\s", "\\S", "\\w", "\\W", "\\d", "\\D"]),
    st.builds(lambda negated, parts: "[" + "^" * negated + "".join(parts) + "]",
              st.booleans(), st.lists(st.sampled_from(_CLASS_PARTS), min_size=1, max_size=4)),
)


def _overlap_over_every_code_point(first: str, second: str) -> bool:
    """Whether some code point matches both atoms, searched over all 1.1 M of them (rarer atom as
    the look-ahead, so that a search without a match stays short)."""
    everything = backtracking._every_character()
    a, b = (regex.compile(t, regex.DOTALL) for t in (first, second))
    if len(a.findall(everything, 0, 0x100)) > len(b.findall(everything, 0, 0x100)):
        first, second = second, first
    return regex.compile(f"(?={first}){second}", regex.DOTALL).search(everything) is not None


@given(first=_LATIN1_ATOMS, second=_LATIN1_ATOMS)
def test_the_short_universe_gives_every_code_points_answer(first: str, second: str) -> None:
    """Two atoms of Latin-1 characters and the escapes are compared on Latin-1 and one character
    of each kind past it, with the same answer as a search over every code point."""
    assert backtracking._LATIN1_ATOM.fullmatch(first) and backtracking._LATIN1_ATOM.fullmatch(second)
    assert backtracking._overlap(first, second) is _overlap_over_every_code_point(first, second)


@pytest.mark.parametrize(("first", "second"), [
    ("\\s", "[^\\x00-\\xff]"), ("\\d", "[^\\x00-\\xff]"), ("[^\\d\\x00-\\xff]", "\\w"),
    ("[^\\w\\s\\x00-\\xff]", "."),
])
def test_each_kind_past_latin1_is_found_when_only_it_is_shared(first: str, second: str) -> None:
    assert backtracking._overlap(first, second) is True
    assert _overlap_over_every_code_point(first, second) is True


@pytest.mark.parametrize("atom", ["\\p{L}", "[\\u0100-\\u0200]", "[\\x{100}]", "[[:alpha:]]", "[\\p{Zs}a]",
                                  "[\\101]", "[\\b]", "\\h", "[]a]", "[\\N{BULLET}]"])
def test_an_atom_naming_more_than_latin1_and_the_escapes_is_searched_over_every_code_point(atom: str) -> None:
    assert backtracking._LATIN1_ATOM.fullmatch(atom) is None


class _RestByRest(backtracking._Judge):
    """The walk as first written: each rest of a sequence is rebuilt and read again for each item."""

    def walk(self, node: Any, follow: list[str], lead: str, trail: str) -> None:
        if node.kind != "seq":
            super().walk(node, follow, lead, trail)
            return
        for index, item in enumerate(node.items):
            rest = backtracking._Node("seq", node.items[index + 1 :])
            after = self.first(rest)
            self.walk(item, after.atoms + (follow if after.nullable else []), lead,
                      backtracking._sample(rest) + trail)
            lead += backtracking._sample(item)


_PIECES = ["a", "<", "\\s*", "\\s+", "[^>]+", "[^\\s<=]+", "\\w+", "\\d?", "(?:ab|c)", "(x+)+", "(?=y)",
           ".*?", "(?:\\s*z)*", "(?:a|aa)+", "\\n?", "(?P<n>[^<]*)", "(?:b\\s*)?", "\\b", "(?>\\s*)",
           "e{2,3}"]


@given(pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12), alternate=st.booleans())
def test_the_judge_reads_each_rest_of_a_sequence_once_with_the_same_verdict(pieces: list[str],
                                                                           alternate: bool) -> None:
    half = len(pieces) // 2
    source = "".join(pieces[:half]) + ("|" if alternate else "") + "".join(pieces[half:])
    tree = backtracking._Reader(source).read()
    once, rest_by_rest = backtracking._Judge(), _RestByRest()
    once.walk(tree, [], "", "")
    rest_by_rest.walk(backtracking._Reader(source).read(), [], "", "")
    assert (once.linear, once.nested) == (rest_by_rest.linear, rest_by_rest.nested)


@given(literals=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4))
def test_a_literal_start_anchor_is_always_judged_linear(literals: list[str]) -> None:
    """So the prefix search of a ``start_anchor`` (literal) template skips the judge: its answer
    would always be linear."""
    template = load_response_template({"start_anchor": literals, "fields": {"content": {}}})
    assert judge(template.start_anchor.pattern).linear is True
