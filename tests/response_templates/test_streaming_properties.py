"""Stream equals one-shot, for every vector and for generated outputs (SPEC §1.7, issue req. 3).

Every parse and stream vector goes through the three-way check (whole / one character at a time /
20 seeded random splits); Hypothesis then tries arbitrary splits of the vectors and arbitrary
outputs built from delimiter fragments, with literal, overlapping and regex templates. The
"agrees with what was streamed" rule is checked too: a plain-text field's value is its streamed
chunks joined and stripped.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import parse_response
from chatcodec.events import join_chunks
from tests.conftest import load_json
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN
from tests.response_templates.helpers import IGNORE_NO_ANCHOR, assert_same, check_stream, loadable, stream

pytestmark = IGNORE_NO_ANCHOR

VECTORS = [v for v in load_json("response_vectors.json")["vectors"] if v["kind"] in ("parse", "stream")]
#: Vectors whose one-shot parse raises (strict): checked with errors="keep" instead.
_RAISING = {"x-typing-nan-json-value-untouched", "x-json-nan-token", "x-int-content-python-quirks",
            "x-json-duplicate-keys", "x-merge-duplicates-off-last-wins"}


@pytest.mark.parametrize("case", [pytest.param(v, id=v["id"]) for v in VECTORS if loadable(v)])
def test_every_vector_three_ways(case: dict[str, Any]) -> None:
    errors = "keep" if case["id"] in _RAISING else "strict"
    check_stream(case["template"], case["output"], prefix=case["prefix"], tools=case["tools"], errors=errors)


def _split(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


_SAMPLED = [v for v in VECTORS if loadable(v) and v["id"] not in _RAISING]


@given(case=st.sampled_from(_SAMPLED), cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_any_split_of_a_vector(case: dict[str, Any], cuts: list[int]) -> None:
    text = case["output"]
    one_shot = parse_response(text, case["template"], prefix=case["prefix"], tools=case["tools"])
    _, whole_events = stream(case["template"], [text], case["prefix"], case["tools"])
    message, events = stream(case["template"], _split(text, cuts), case["prefix"], case["tools"])
    assert_same(message, one_shot)
    assert join_chunks(events) == join_chunks(whole_events)


# -- generated outputs ---------------------------------------------------------------------------

OVERLAPPING = {
    "start_anchor": "S",
    "fields": {
        "a": {"open": ["<t", "<tool>"], "close": ["END", "ENDXY"]},
        "b": {"open": "<to", "close": "/>"},
        "c": {"close": ["<|e", "<|end|>"]},
    },
}
REGEX = {
    "start_anchor": "S",
    "fields": {
        "r": {"open_pattern": r"<think>\s*", "close_pattern": r"\s*</think>"},
        "call": {
            "open_pattern": r"<call (?P<fn>\w+)>",
            "close": "</call>",
            "transform": {"fn": "{fn}", "body": "{content}"},
        },
        "c": {"close_pattern": r"(?=<stop>)|<eos>\Z?"},
    },
}
MISTRAL = {
    "start_anchor": "[/INST]",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\[TOOL_CALLS\](?P<name>\w+)(?:\[ARGS\])?",
            "close": "</s>",
            "repeats": True,
            "content": "json",
            "content_args": {"allow_non_json": True},
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {},
    },
}

ZERO_WIDTH = {
    "start_anchor": "S",
    "fields": {
        "x": {"open_pattern": "(?=<x>)", "close": "</x>"},
        "t": {"open": "<t>", "close_pattern": "(?=<)"},
        "c": {"close_pattern": "(?=<t>)", "repeats": True},
    },
}
END_OF_INPUT = {
    "start_anchor": "S",
    "fields": {"x": {"open": "<x>", "close_pattern": "\n$"}, "c": {"content_args": {"strip": False}}},
}
WHITESPACE_RUNS = {
    "start_anchor": "S",
    "fields": {"r": {"open": "<r>", "close_pattern": r"\s*</r>\s*"}, "c": {"close_pattern": r"\n?</c>"}},
}
CONTEXT = {
    "start_anchor": "S",
    "fields": {
        "x": {"open_pattern": "(?<=\n)#", "close_pattern": "(?=\n)"},
        "w": {"open_pattern": "\\bgo\\b", "close_pattern": "\\bstop\\b"},
        "c": {},
    },
}

#: Delimiters that start with whitespace, which a chunk can end inside (the run may mix
#: whitespace characters, and the delimiter may need a fixed number of them). One per template,
#: so that no other delimiter of the same state makes the run look like a delimiter start anyway.
WS_CLOSE = {"start_anchor": "S", "fields": {"r": {"open": "<think>", "close_pattern": r"\n\s*</think>"},
                                             "c": {}}}
WS_COUNT = {"start_anchor": "S", "fields": {"x": {"open_pattern": "\n\n\n<x>", "close": "</x>"}, "c": {}}}
WS_LITERAL = {"start_anchor": "S", "fields": {"t": {"open": " \n<x>", "close": "</x>"},
                                               "y": {"open_pattern": "#", "close": "#"}, "c": {}}}
LEADING_WHITESPACE_REGEX = {
    "start_anchor": "S",
    "fields": {
        "z": {"open_pattern": r"[ \t]*<z>", "close_pattern": r"\n+</z>"},
        "h": {"open_pattern": "#", "close": "#"},
        "w": {"open_pattern": r"\s+<w>", "close_pattern": r"\s*\t</w>"},
        "c": {"close_pattern": r"\s+\Z"},
    },
}

_PIECES = {
    "qwen": [
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<|im_end|>",
        "<|im_",
        "<th",
        "</",
        '{"name": "f", "arguments": {"x": 1}}',
        '{"s": "',
        '"</tool_call>"',
        '"',
        "\\",
        ":",
        " ",
        "\n",
        "hi",
        "<",
        ">",
        "é",
        "😀",
    ],
    "overlapping": [
        "<t",
        "<to",
        "<tool>",
        "END",
        "ENDX",
        "ENDXY",
        "/>",
        "<|e",
        "<|end|>",
        "<|",
        "x",
        " ",
        "\n",
    ],
    "regex": [
        "<think>",
        "</think>",
        "  ",
        "\n",
        "<call f>",
        "<call ",
        "</call>",
        "<stop>",
        "<eos>",
        "a",
        "b",
    ],
    "mistral": ["[TOOL_CALLS]", "read", "[ARGS]", "[ARGS", '{"p": 1}', "</s>", "text ", "[TOOL", "\n"],
    "zero_width": ["<x>", "</x>", "<t>", "<", "a", "b", " ", "</"],
    "end_of_input": ["<x>", "\n", "a", "<"],
    "whitespace_runs": [" ", "\n", "<r>", "</r>", "</c>", "a", "\t"],
    "context": ["\n", "#", "a", " ", "go", "stop", "g", "o"],
    "ws_close": [" ", "\n", "\t", "  ", "\n\n", " " * 40, "<think>", "</think>", "</th", "<", "a", "plan"],
    "ws_count": ["\n", " ", "\n\n", "\n" * 7, "<", "x>", "<x>", "</x>", "a"],
    "ws_literal": [" ", "\n", " \n", "\t", "<", "x>", "<x>", "</x>", "#", "a"],
    "leading_whitespace_regex": [" ", "\n", "\t", " \t", "\n" * 5, " " * 33, "<z>", "<", "z>", "</z>", "</",
                                 "#", "<w>", "w>", "</w>", "a", "b"],
}
_TEMPLATES = {
    "qwen": QWEN,
    "overlapping": OVERLAPPING,
    "regex": REGEX,
    "mistral": MISTRAL,
    "zero_width": ZERO_WIDTH,
    "end_of_input": END_OF_INPUT,
    "whitespace_runs": WHITESPACE_RUNS,
    "context": CONTEXT,
    "ws_close": WS_CLOSE,
    "ws_count": WS_COUNT,
    "ws_literal": WS_LITERAL,
    "leading_whitespace_regex": LEADING_WHITESPACE_REGEX,
}


@st.composite
def generated(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    name = draw(st.sampled_from(sorted(_TEMPLATES)))
    text = "".join(draw(st.lists(st.sampled_from(_PIECES[name]), max_size=25)))
    cuts = draw(st.lists(st.integers(min_value=0, max_value=500), max_size=25))
    return name, text, _split(text, cuts)


def _plain_text_fields(template: dict[str, Any]) -> list[str]:
    return [
        name
        for name, spec in template["fields"].items()
        if spec.get("content", "text") == "text" and "transform" not in spec and not spec.get("repeats")
    ]


@given(generated())
def test_generated_outputs_stream_equals_one_shot(case: tuple[str, str, list[str]]) -> None:
    name, text, chunks = case
    template = _TEMPLATES[name]
    one_shot = parse_response(text, template, prefix="", errors="keep")
    message, events = stream(template, chunks, errors="keep")
    assert_same(message, one_shot)
    _, whole_events = stream(template, [text], errors="keep")
    joined = join_chunks(events)
    assert joined == join_chunks(whole_events)
    for field in _plain_text_fields(template):
        streamed = joined.get(field, "")
        if template["fields"][field].get("content_args", {}).get("strip", True):
            streamed = streamed.strip()
        assert message.get(field, "") == streamed


@given(generated())
def test_generated_outputs_one_char_at_a_time(case: tuple[str, str, list[str]]) -> None:
    name, text, _ = case
    one_shot = parse_response(text, _TEMPLATES[name], prefix="", errors="keep")
    message, _ = stream(_TEMPLATES[name], list(text), errors="keep")
    assert_same(message, one_shot)


@pytest.mark.parametrize(
    ("template", "chunks"),
    [
        (WS_CLOSE, ["<think>plan\n ", " </think>answer"]),
        ({"start_anchor": "S", "fields": {"x": {"open_pattern": "\n\n\n<x>", "close": "</x>"}, "c": {}}},
         ["a\n\n\n<", "x>b</x>"]),
        ({"start_anchor": "S", "fields": {"t": {"open": " \n<x>", "close": "</x>"},
                                          "y": {"open_pattern": "#", "close": "#"}, "c": {}}},
         ["a \n<", "x>b</x>"]),
    ],
    ids=["mixed-run-before-close", "fixed-newline-count", "literal-with-mixed-whitespace"],
)
def test_a_chunk_ending_inside_a_whitespace_led_delimiter(template: dict[str, Any],
                                                          chunks: list[str]) -> None:
    """QA round 2: the chunk boundary falls inside the delimiter's leading whitespace."""
    expected = parse_response("".join(chunks), template, prefix="")
    assert stream(template, chunks)[0] == expected
    check_stream(template, "".join(chunks), expected)


#: The non-whitespace part of each delimiter of the whitespace-led templates.
_DELIMITER_TAILS = {
    "ws_close": ["<think>", "</think>"],
    "ws_count": ["<x>", "</x>"],
    "ws_literal": ["<x>", "</x>", "#"],
    "leading_whitespace_regex": ["<z>", "</z>", "#", "<w>", "</w>"],
}


@st.composite
def whitespace_led(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """Words, mixed whitespace runs (short, or long) and delimiters, cut anywhere."""
    name = draw(st.sampled_from(sorted(_DELIMITER_TAILS)))
    runs = st.one_of(st.text(alphabet=" \t\n", max_size=6),
                     st.text(alphabet=" \t\n", min_size=30, max_size=80))
    segment = st.tuples(st.sampled_from(["", "a", "plan"]), runs, st.sampled_from(_DELIMITER_TAILS[name]))
    text = "".join("".join(parts) for parts in draw(st.lists(segment, min_size=1, max_size=6)))
    text += draw(runs)
    cuts = draw(st.lists(st.integers(min_value=0, max_value=len(text)), min_size=1, max_size=3))
    return name, text, _split(text, cuts)


@given(whitespace_led())
def test_whitespace_led_delimiters_stream_equals_one_shot(case: tuple[str, str, list[str]]) -> None:
    name, text, chunks = case
    template = _TEMPLATES[name]
    one_shot = parse_response(text, template, prefix="", errors="keep")
    for pieces in (chunks, list(text)):
        message, events = stream(template, pieces, errors="keep")
        assert_same(message, one_shot)
        assert join_chunks(events) == join_chunks(stream(template, [text], errors="keep")[1])
