"""The whitespace-run guard: which starts inside a run a search may skip, and that skipping them
never changes what a search finds (the linear-time rule of ``whitespace.py``).

Timings are never asserted; ``bench/bench_parse.py`` measures the runs (QA round 2: 80,000 spaces
before ``hello`` with ``\\s*<tool_call>`` watched took 18 s). QA round 4: bounded repeats
(``\\n{1,4}</think>``, ``\\n\\n?\\n\\n?</think>``) and look-behinds (``(?<! )\\s+</t>``) were guarded
although a match at ``p`` does not imply one at ``p - 1`` for them, so delimiters were missed.
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.delimiters import regex_delimiter
from chatcodec.response_templates.whitespace import prepend_closed, run_guard
from tests.response_templates.helpers import check_stream

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
        # QA round 4: counted repetitions are never guarded (a count beyond the tries breaks it)
        (r"\n{1,4}</think>", ""),
        (r"\n{1,10}</think>", ""),
        (r" {0,9}X", ""),
        (r"\s{1,}<x>", ""),
        (r"\n\n?\n\n?</think>", ""),  # found by trying every run length up to 12
        ("\n" * 13 + r"\n?</t>", ""),  # longer than 12: the tries grow with the pattern
        # what the text before the match decides is never guarded
        (r"(?<! )\s+</t>", ""),
        (r"\s*(?<=\n\n)</t>", ""),
        (r"^\s*<x>", ""),
        (r"\A\s*<x>", ""),
        (r"\G\s*<x>", ""),
        (r"\b\s*<x>", ""),
        (r"\B\s*<x>", ""),
        (r"(?m)\s*<x>$", ""),
        (r"(\s)\1*<x>", ""),
        (r"\s*<x>\b", ALL),  # a \b after a literal looks only at the match's own text
        (r"(?<=x)\s*<y>", ""),
        (r"<x>", ""),
        # almost anything may follow the whitespace: more than MAX_TAILS characters to probe, no
        # guard (probing them all took 1.3 s at load for the corpus's Inkling template)
        (r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>", ""),
        # the bundled profiles' guarded delimiters, with the answers they had before the tries were
        # shared across contexts and prepended characters (gpt_oss's recipient and tool call opens,
        # qwen3_coder's tool call close)
        (
            r"(?:<\|start\|>\s*assistant)?\s*to=(?P<recipient>(?!functions\.|assistant\b)[\w.]+)\s*<\|"
            r"channel\|>\s*(?:analysis\b|commentary\b|final\b)(?:\s*<\|constrain\|>\s*json|\s+(?:json"
            r"\b|code\b))?\s*<\|message\|>|<\|channel\|>\s*(?:analysis\b|commentary\b|final\b)\s+to=(?"
            r"P<recipient>(?!functions\.|assistant\b)[\w.]+)(?:\s*<\|constrain\|>\s*json|\s+(?:json\b|"
            r"code\b))?\s*<\|message\|>",
            ALL,
        ),
        (
            r"(?:<\|start\|>\s*assistant)?\s*to=functions\.(?P<name>[^\s<=]+)\s*<\|channel\|>\s*(?:ana"
            r"lysis\b|commentary\b|final\b)(?:\s*<\|constrain\|>\s*json|\s+(?:json\b|code\b))?\s*<\|me"
            r"ssage\|>|<\|channel\|>\s*(?:analysis\b|commentary\b|final\b)\s+to=functions\.(?P<name>[^"
            r"\s<=]+)(?:\s*<\|constrain\|>\s*json|\s+(?:json\b|code\b))?\s*<\|message\|>",
            ALL,
        ),
        (
            r"</function>(?=\s*(?:<|\Z))(?:\s*</tool_call>)?|</tool_call>|(?=\n\s*(?:<tool_call>|<func"
            r"tion=))",
            "\n",
        ),
    ],
)
def test_prepend_closed(source: str, closed: str) -> None:
    assert prepend_closed(regex_delimiter("f", True, source)) == closed


def _where(match: regex.Match[str] | None) -> tuple[int, bool] | None:
    return None if match is None else (match.start(), bool(match.partial))


SOURCES = [r"\s*<t>", r"\n\s*</t>", r"\n+<t>", r"[ \t]*<t>\s*", r"\s+\Z", r"\s*(?:<t>|#)", r" \n?<t>",
           # QA round 4: bounded repeats and look-behinds
           r"\n{1,4}</t>", r" {0,9}<t>", r"\n\n?\n\n?</t>", r"(?<! )\s+</t>", r"(?<=\n)\s*<t>",
           r"\b\s*<t>", r"(?:<a>\s*b)?\s*to=(?!x\b)\w+"]


@given(
    source=st.sampled_from(SOURCES),
    parts=st.lists(st.one_of(st.text(alphabet=" \t\n", max_size=12),
                             st.sampled_from(["<t>", "</t>", "<", "#", "a", " " * 11, "\n" * 12, "to=y"])),
                   max_size=10),
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


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (r"\n{1,4}</t>", "plan" + "\n" * 5 + "</t>"),
        (r"\n{1,10}</t>", "plan" + "\n" * 12 + "</t>"),
        (r" {0,9}X", "abc" + " " * 11 + "X"),
        (r"\n\n?\n\n?</t>", "plan" + "\n" * 5 + "</t>"),
        (r"(?<! )\s+</t>", "<t>  \t\t</t>rest"),
        ("\n" * 13 + r"\n?</t>", "x" + "\n" * 14 + "</t>"),
    ],
)
def test_the_guard_never_changes_what_a_search_finds_qa4(source: str, text: str) -> None:
    delimiter = regex_delimiter("f", False, source)
    plain = delimiter.pattern
    guarded = regex.compile(f"{run_guard(delimiter)}(?:{plain.pattern})", regex.DOTALL)
    for start in range(len(text) + 1):
        for partial in (False, True):
            assert _where(guarded.search(text, start, partial=partial)) == _where(
                plain.search(text, start, partial=partial))


def _closed_by(close: str, open_: str = "<think>", field: str = "reasoning_content") -> dict[str, object]:
    return {"start_anchor": "A", "fields": {field: {"open": open_, "close_pattern": close}, "content": {}}}


@pytest.mark.parametrize(
    ("template", "output", "expected"),
    [
        (_closed_by(r"\n{1,4}</think>"), "<think>plan" + "\n" * 5 + "</think>Answer",
         {"reasoning_content": "plan", "content": "Answer"}),
        (_closed_by(r"\n{1,10}</think>"), "<think>plan" + "\n" * 12 + "</think>Answer",
         {"reasoning_content": "plan", "content": "Answer"}),
        (_closed_by(r"\n\n?\n\n?</think>"), "<think>plan" + "\n" * 5 + "</think>Answer",
         {"reasoning_content": "plan", "content": "Answer"}),
        ({"start_anchor": "A", "fields": {"r": {
            "open": "<r>", "close_pattern": " {0,9}X", "content_args": {"strip": False}}, "content": {}}},
         "<r>abc" + " " * 11 + "X", {"r": "abc  "}),
        (_closed_by(r"(?<! )\s+</t>", "<t> ", "r"), "<t>  \t\t</t>rest", {"content": "rest"}),
    ],
)
def test_qa4_delimiters_are_found_whole_and_streamed(
    template: dict[str, object], output: str, expected: dict[str, object]
) -> None:
    check_stream(template, output, expected, prefix="A")
