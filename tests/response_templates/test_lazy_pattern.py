"""The load-time checks' own patterns that compile with the standard ``re`` (``standard=True``) give
``regex``'s answers: the same match, span and groups for every search, match and full match, on
pattern text built from the characters those patterns read (lazy_pattern.py)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.lazy_pattern import LazyPattern

MODULES = ("backtracking", "delimiters", "matcher", "pattern_size", "pattern_tokens", "whitespace")


def _lazy_patterns() -> dict[str, LazyPattern]:
    found = {}
    for module_name in MODULES:
        module = importlib.import_module(f"chatcodec.response_templates.{module_name}")
        found.update({f"{module_name}.{name}": value for name, value in vars(module).items()
                      if isinstance(value, LazyPattern)})
    return found


PATTERNS = _lazy_patterns()
STANDARD = {name: pattern for name, pattern in PATTERNS.items() if pattern.standard}
#: The characters the checks' patterns look for, and a few they never name.
PATTERN_TEXT = st.text(alphabet="()?:<>=!P&R|[]^$\\{},.*+-0129amisxVBAGZbKgpwdSWDN_ \nμ\x1c", max_size=16)


def test_the_checks_patterns_that_compile_with_re() -> None:
    assert sorted(STANDARD) == [
        "backtracking._COUNT", "backtracking._HARMLESS_FLAGS", "backtracking._LATIN1_ATOM",
        "delimiters._ANY_CHAR", "delimiters._CONTEXT_DEPENDENT",
        "delimiters._CONTEXT_DEPENDENT_BUT_LOOKBEHIND", "delimiters._LARGE_COUNT",
        "delimiters._LITERAL_TOKEN",
        "delimiters._MULTILINE_FLAG", "delimiters._READS_END", "matcher._NOT_COMBINABLE",
        "pattern_size._COUNT", "pattern_size._FLAGS", "whitespace._UNGUARDABLE",
    ]
    assert sorted(set(PATTERNS) - set(STANDARD)) == ["backtracking._PLAIN_GROUP", "pattern_tokens.TOKEN"]


def _answer(match: Any) -> object:
    """What a match says: its span and groups (``re`` and ``regex`` make different match types)."""
    return None if match is None else (match.span(), match.groups())


@pytest.mark.parametrize("name", sorted(STANDARD))
@given(text=PATTERN_TEXT)
def test_re_answers_as_regex_does(name: str, text: str) -> None:
    pattern = STANDARD[name]
    reference = regex.compile(pattern.source)
    for method in ("search", "match", "fullmatch"):
        assert _answer(getattr(pattern, method)(text)) == _answer(getattr(reference, method)(text)), method


@pytest.mark.parametrize("source", [r"\w+", r"a\s", r"\d", r"x\b", r"(?i)a", r"(?>a)", r"a*+", r"\p{L}",
                                    "[[:alpha:]]"])
def test_a_standard_pattern_with_syntax_re_reads_otherwise_is_refused(source: str) -> None:
    with pytest.raises(ValueError, match=r"standard=True needs the syntax re and regex read alike"):
        LazyPattern(source, standard=True).search("a")


def test_standard_patterns_take_no_flags() -> None:
    with pytest.raises(ValueError, match=r"not flags"):
        LazyPattern("a", regex.DOTALL, standard=True).search("a")
    assert LazyPattern(r"\w+").search("ab μ") is not None  # regex itself takes every construct
