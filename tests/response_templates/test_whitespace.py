"""The whitespace-run guard: which starts inside a run a search may skip, and that skipping them
never changes what a search finds (the linear-time rule of ``whitespace.py``).

Timings are never asserted; ``bench/bench_parse.py`` measures the runs (QA round 2: 80,000 spaces
before ``hello`` with ``\\s*<tool_call>`` watched took 18 s).
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.delimiters import regex_delimiter
from chatcodec.response_templates.whitespace import prepend_closed, run_guard

ALL = " \t\n\r\x0c\x0b"


@pytest.mark.parametrize(
    ("source", "closed"),
    [
        (r"\s*<tool_call>", ALL),
        (r"\s*</think>\s*", ALL),
        (r"\s+\Z", ALL),
        (r"\n+</think>", "\n"),
        (r"\n\s*</think>", "\n"),
        (r"[ \t]*<z>", " \t"),
        (r"(?:<\|start\|>\s*assistant)?\s*to=(?P<r>(?!functions\.|assistant\b)[\w.]+)", ALL),
        (r"\n\n\n<x>", ""),  # a fixed count: one newline more is no match
        (r"( {3})*<x>", ""),
        (r"\n{20}<x>", ""),  # no try gets past the whitespace: nothing known, no guard
        (r"(?<=x)\s*<y>", ""),
        (r"<x>", ""),
    ],
)
def test_prepend_closed(source: str, closed: str) -> None:
    assert prepend_closed(regex_delimiter("f", True, source)) == closed


def _where(match: regex.Match[str] | None) -> tuple[int, bool] | None:
    return None if match is None else (match.start(), bool(match.partial))


SOURCES = [r"\s*<t>", r"\n\s*</t>", r"\n+<t>", r"[ \t]*<t>\s*", r"\s+\Z", r"\s*(?:<t>|#)", r" \n?<t>"]


@given(
    source=st.sampled_from(SOURCES),
    parts=st.lists(st.one_of(st.text(alphabet=" \t\n", max_size=12),
                             st.sampled_from(["<t>", "</t>", "<", "#", "a"])), max_size=10),
)
def test_the_guard_never_changes_what_a_search_finds(source: str, parts: list[str]) -> None:
    text = "".join(parts)
    delimiter = regex_delimiter("f", True, source)
    plain = delimiter.pattern
    guarded = regex.compile(f"{run_guard(delimiter)}(?:{plain.pattern})", regex.DOTALL)
    for start in range(len(text) + 1):
        for partial in (False, True):
            expected = plain.search(text, start, partial=partial)
            found = guarded.search(text, start, partial=partial)
            assert _where(found) == _where(expected)
