"""The value stream's short path gives exactly the events of the full path (``scanners.text_run``).

A chunk that only adds text where the scanner's state watches nothing (more of a JSON string, an
XML parameter's value) skips the scanner chain: its text delta is emitted at once and the scanner
reads the skipped chunks later, joined. These tests run every corpus output (``peer_vectors.json``)
of every bundled profile with the short path on and off, at token-like pieces, one character at a
time and any chunking Hypothesis draws, and require the same events and message; and they pin the
exact events and the chunks taken for a DeepSeek V3 call, a Qwen3-Coder parameter and a MiniMax M2
parameter (a scanner nested in another).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles
from chatcodec.response_templates.arguments import tool_parameters
from chatcodec.response_templates.template import load_response_template
from chatcodec.response_templates.value_stream import RegionValues, region_values
from tests.conftest import load_json

#: The families of the outputs read (every corpus family that is a bundled profile).
FAMILIES: set[str] = set()


def _cases() -> list[tuple[str, dict[str, Any], str, str, Any]]:
    """``(id, template, prefix, output, tools)`` of every corpus output whose family is a profile."""
    cases = []
    for vector in load_json("peer_vectors.json")["vectors"]:
        try:
            profile = profiles.load(vector["family"])
        except (KeyError, ValueError, LookupError):
            continue
        prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
        FAMILIES.add(vector["family"])
        cases.append((vector["id"], profile.response_template, prefix, vector["output"], vector["tools"]))
    return cases


CASES = _cases()
#: A marker, a word with the space before it, a whitespace run, one other character (as the bench).
_PIECE = re.compile(r"<｜[^｜<>]*｜>|<\|[^|<>]*\|>|</?[A-Za-z_]+>| ?\w+|\s+|.", re.DOTALL)


@contextmanager
def _short_path(on: bool) -> Iterator[None]:
    saved = RegionValues.short_path
    RegionValues.short_path = on
    try:
        yield
    finally:
        RegionValues.short_path = saved


def _run(case: tuple[str, dict[str, Any], str, str, Any], chunks: list[str],
         short: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    _, template, prefix, _, tools = case
    with _short_path(short):
        parser = ResponseParser(template, prefix=prefix, tools=tools, errors="keep", value_deltas=True,
                                offsets=True)
        events = list(parser.initial_events)
        for chunk in chunks:
            events += parser.feed(chunk)
        message, final = parser.finalize()
    return message, events + final


def test_the_corpus_covers_the_families_with_a_short_path() -> None:
    assert len(CASES) >= 250
    assert {"deepseek_r1", "deepseek_v3", "deepseek_v31", "glm45", "gpt_oss", "kimi_k2", "minimax_m2",
            "qwen3_coder"} <= FAMILIES


@pytest.mark.parametrize("case", [pytest.param(case, id=case[0]) for case in CASES])
def test_short_and_full_paths_agree_on_token_pieces_and_characters(
        case: tuple[str, dict[str, Any], str, str, Any]) -> None:
    output = case[3]
    for chunks in (_PIECE.findall(output), list(output)):
        assert "".join(chunks) == output
        assert _run(case, chunks, True) == _run(case, chunks, False)


def _split(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({cut % (len(text) + 1) for cut in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(case=st.sampled_from(CASES), cuts=st.lists(st.integers(min_value=0, max_value=5_000), max_size=60))
def test_short_and_full_paths_agree_on_any_chunking(case: tuple[str, dict[str, Any], str, str, Any],
                                                    cuts: list[int]) -> None:
    chunks = _split(case[3], cuts)
    assert _run(case, chunks, True) == _run(case, chunks, False)


# -- the chunks taken, and their events, on three formats ------------------------------------------

def _values(family: str) -> RegionValues:
    template = load_response_template(profiles.load(family).response_template)
    values = region_values(template.fields["tool_calls"], {}, {}, True)
    assert values is not None
    return values


def _text(field: str, path: list[Any], text: str) -> dict[str, Any]:
    return {"type": "region_value", "field": field, "op": "text", "path": path, "text": text}


def test_deepseek_v3_string_argument_text_takes_the_short_path() -> None:
    values = _values("deepseek_v3")
    values.start()
    head = ["<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "write", "\n", "```json\n", "{", '"',
            "text", '"', ":", " "]
    assert [event for chunk in head for event in values.feed(chunk)][-1] == {
        "type": "region_value", "field": "tool_calls", "op": "begin", "path": [0, "function", "arguments"],
        "kind": "object"}
    path = [0, "function", "arguments", "text"]
    chunks = ['"', "def", " f", "():", " return", " 1", "\\n", "x", '"']
    got = [(chunk, values.feed(chunk)) for chunk in chunks]
    begin = {"type": "region_value", "field": "tool_calls", "op": "begin", "path": path, "kind": "string"}
    assert got == [
        ('"', [begin]),
        ("def", [_text("tool_calls", path, "def")]),
        (" f", [_text("tool_calls", path, " f")]),
        ("():", [_text("tool_calls", path, "():")]),
        (" return", [_text("tool_calls", path, " return")]),
        (" 1", [_text("tool_calls", path, " 1")]),
        ("\\n", [_text("tool_calls", path, "\n")]),  # a backslash: the JSON reader decodes the escape
        ("x", [_text("tool_calls", path, "x")]),
        ('"', [{"type": "region_value", "field": "tool_calls", "op": "end", "path": path}]),
    ]
    # every text chunk but the escape, which the full path read (the one after it was asked again)
    assert values.short_feeds == 6
    assert values.feed("}") == [
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": [0, "function", "arguments"]},
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": [0, "function"]},
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": [0]},
    ]
    assert values.feed("\n```<｜tool▁call▁end｜>") == []


def test_a_space_that_may_start_deepseeks_terminator_is_read_by_the_full_path() -> None:
    """``\\s*```` ends the arguments: a chunk ending in a space may start it, so it is scanned."""
    values = _values("deepseek_v3")
    values.start()
    for chunk in ["<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n", '{"a": "', "b"]:
        values.feed(chunk)
    path = [0, "function", "arguments", "a"]
    assert values.feed("c ") == [_text("tool_calls", path, "c")]  # the space waits for what follows
    assert values.feed("d") == [_text("tool_calls", path, " d")]
    assert values.feed("e") == [_text("tool_calls", path, "e")]
    assert values.short_feeds == 2  # "b" after the begin, "e" after the text of "d"


def test_qwen3_coder_parameter_text_takes_the_short_path() -> None:
    values = _values("qwen3_coder")
    values.start()
    path = ["function", "arguments", "code"]
    assert [values.feed(chunk) for chunk in ["<parameter=", "code", ">\n"]] == [
        [{"type": "region_value", "field": "tool_calls", "op": "begin", "path": ["function", "arguments"],
          "kind": "object"}], [], []]
    chunks = ["print", "(", "'hi'", ")", "\n", "</parameter>", "\n", "<"]
    got = [(chunk, values.feed(chunk)) for chunk in chunks]
    begin = {"type": "region_value", "field": "tool_calls", "op": "begin", "path": path, "kind": "string"}
    assert got == [
        ("print", [begin, _text("tool_calls", path, "print")]),
        ("(", [_text("tool_calls", path, "(")]),
        ("'hi'", [_text("tool_calls", path, "'hi'")]),
        (")", [_text("tool_calls", path, ")")]),
        ("\n", []),  # a newline right before </parameter> is not the value's
        ("</parameter>", []),
        ("\n", []),  # </parameter> counts when "<" or the end follows
        ("<", [{"type": "region_value", "field": "tool_calls", "op": "end", "path": path}]),
    ]
    assert values.short_feeds == 3


def test_minimax_m2_parameter_text_takes_the_short_path_through_two_scanners() -> None:
    values = _values("minimax_m2")
    values.start()
    path = [0, "function", "arguments", "path"]
    head = ['<invoke name="read">', '<parameter name="path">', "src"]
    events = [event for chunk in head for event in values.feed(chunk)]
    assert events[-2:] == [
        {"type": "region_value", "field": "tool_calls", "op": "begin", "path": path, "kind": "string"},
        _text("tool_calls", path, "src"),
    ]
    assert [values.feed(chunk) for chunk in ["/", "main", ".py"]] == [
        [_text("tool_calls", path, "/")], [_text("tool_calls", path, "main")],
        [_text("tool_calls", path, ".py")]]
    assert values.short_feeds == 3
    assert values.feed("</parameter>") == []  # the close is a regex alternative: one more character,
    assert values.feed("<") == []  # which may start the call's own end (</invoke>) for the outer scanner
    assert values.feed("parameter") == [
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": path}]


def test_glm45_json_text_of_a_typed_argument_is_held_on_the_short_path() -> None:
    """An ``array`` parameter written as JSON text is held by typing to its end: the chunks after
    the first one only join what is held (no event), then the typed value is set."""
    tools = [{"type": "function", "function": {"name": "todo_write", "parameters": {
        "type": "object", "properties": {"todos": {"type": "array"}}}}}]
    template = load_response_template(profiles.load("glm45").response_template)
    params = tool_parameters(tools)
    values = region_values(template.fields["tool_calls"], {"name": "todo_write"}, params, True)
    assert values is not None
    values.start()
    assert values.feed("<arg_key>") == [{"type": "region_value", "field": "tool_calls", "op": "begin",
                                         "path": ["function", "arguments"], "kind": "object"}]
    chunks = ["todos", "</arg_key>", "<arg_value>", "[{", '"id', '": ', '"1', " 2", '"}]', "</arg_value>"]
    assert [values.feed(chunk) for chunk in chunks] == [[]] * len(chunks)
    assert values.short_feeds == 5  # every chunk after "[{" up to the value's close
    assert values.feed("\n") == [{"type": "region_value", "field": "tool_calls", "op": "set",
                                  "path": ["function", "arguments", "todos"], "value": [{"id": "1 2"}]}]


def test_hermes_json_call_argument_text_takes_the_short_path() -> None:
    """``x-switch`` over ``x-json-calls``: after the first text of a string the rest is plain."""
    values = _values("hermes")
    values.start()
    head = ['{"', "name", '": "', "write", '", "', "arguments", '": {"', "text", '": "', "def"]
    events = [event for chunk in head for event in values.feed(chunk)]
    path = [0, "function", "arguments", "text"]
    assert events[-2:] == [
        {"type": "region_value", "field": "tool_calls", "op": "begin", "path": path, "kind": "string"},
        _text("tool_calls", path, "def"),
    ]
    assert values.short_feeds == 0  # the name's text and "def" each came first in their string
    assert [values.feed(chunk) for chunk in [" f", "():", "\\n", "x"]] == [
        [_text("tool_calls", path, " f")], [_text("tool_calls", path, "():")],
        [_text("tool_calls", path, "\n")], [_text("tool_calls", path, "x")]]
    assert values.short_feeds == 3  # " f", "():" and, after the escape the full path read, "x"
    assert values.feed('"}}') == [
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": path},
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": [0, "function", "arguments"]},
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": [0, "function"]},
        {"type": "region_value", "field": "tool_calls", "op": "end", "path": [0]},
    ]
