"""Issue 13: every bundled profile on cut-off, garbled and adversarial outputs, with ``errors="keep"``.

For each input: parsing never raises, nothing is lost (``adversarial.lost_letters``: every letter of
the output outside the profile's framing is in the message or in a recorded problem's raw text),
and streaming gives what the one-shot parse gives (whole, one character at a time, at seeded
random splits; the same final message and the same joined chunk text per region).

* **Cut off**: every prefix of the profile's real outputs (its demo and its peer vectors, the
  first ``CUT_BUDGET`` characters of them), cut after each character. A token boundary is a
  character boundary, or falls inside a character, which the token decoder holds until the
  character is whole (``tests/model/test_stream_decoding.py``), so the characters are every place
  the text a parser sees can end.
* **Adversarial**: ``adversarial.adversarial`` at a small size: runs of one character (layout, text,
  tag and value starts, escapes, a huge number, NUL, a lone surrogate), every delimiter of the
  profile repeated whole or cut (unterminated opens), deep nesting and huge values inside a call,
  real outputs repeated. ``bench/bench_bounds.py`` times the same inputs at two large sizes.
* **Garbled**: Hypothesis splices pieces of real outputs, delimiters and single characters.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, parse_response, profiles
from chatcodec.events import join_chunks
from tests.profiles.adversarial import (
    adversarial,
    literal_delimiters,
    lost_letters,
    pattern_prefixes,
    real_outputs,
)

NAMES = profiles.names()
#: Characters of real output cut at every position, per profile (the first outputs, in corpus order;
#: the whole output is parsed too, by the peer-vector tests).
CUT_BUDGET = 300
#: The size of each adversarial input here (the bench uses large ones).
SMALL = 160


def _stream(template: Any, prompt: str, chunks: list[str],
            tools: Any) -> tuple[dict[str, Any], dict[str, str]]:
    parser = ResponseParser(template, prefix=prompt, tools=tools, errors="keep")
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return message, join_chunks([*events, *final])


def _random_chunks(text: str, rng: random.Random) -> list[str]:
    if len(text) < 2:
        return [text]
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 8))))
    return [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)])]


def check(name: str, prompt: str, output: str, tools: Any = None, *, ways: int = 3) -> dict[str, Any]:
    """Parse ``output`` one-shot and streamed; assert nothing raised, nothing is lost, all agree.

    ``ways``: 1 streams the whole output only; 2 adds one character at a time; 3 a random split too.
    """
    template = profiles.load(name).response_template
    message = parse_response(output, template, prefix=prompt, tools=tools, errors="keep")
    assert lost_letters(name, output, message) == {}, (name, output, message)
    whole, joined = _stream(template, prompt, [output], tools)
    assert whole == message, (name, output)
    splits = [list(output), _random_chunks(output, random.Random(repr(output)))][: ways - 1]
    for chunks in splits:
        assert _stream(template, prompt, chunks, tools) == (message, joined), (name, output, chunks)
    return message


@pytest.mark.parametrize("name", NAMES)
def test_every_prefix_of_real_outputs(name: str) -> None:
    """Every prefix of the real outputs, in corpus order, until CUT_BUDGET characters are cut."""
    budget = CUT_BUDGET
    for prompt, output, tools in real_outputs(name):
        if budget <= 0:
            break
        for cut in range(min(len(output), budget) + 1):
            check(name, prompt, output[:cut], tools, ways=1 if cut % 11 else 3)
        budget -= len(output)


@pytest.mark.parametrize("name", NAMES)
def test_adversarial_outputs(name: str) -> None:
    prompts = profiles.load(name).generation_prompts
    for index, (description, output) in enumerate(adversarial(name, SMALL).items()):
        check(name, prompts[index % len(prompts)], output, ways=3)
        assert description


def test_the_adversarial_inputs_reach_every_kind() -> None:
    """The inputs the bench times: a delimiter cut off, deep nesting, the regex opens' starts."""
    assert {"'<function' repeated", "'<function=' repeated", "deep lists in a call",
            "a huge number in a call",
            "run of '\\ud800'", "run of '\\x00'"} <= set(adversarial("functionary_v3_1", 10))
    assert pattern_prefixes("functionary_v3_1") == ("</function>", "<function=")


def test_lost_letters_finds_text_that_vanishes() -> None:
    """The check itself: Step3's header prose, dropped, would be found (the issue's case)."""
    output = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>xyzzy quux\n"
    assert lost_letters("step3", output, {"role": "assistant", "content": ""}) == {
        "x": 2, "y": 2, "z": 2, "q": 1, "u": 2}
    assert lost_letters("step3", output, {"role": "assistant", "content": "xyzzy quux"}) == {}
    escaped = {"tool_calls": [{"function": {"arguments": {"a": "é"}}}]}
    assert lost_letters("qwen3", '{"a": "\\u00e9"}', escaped) == {}


@st.composite
def garbled(draw: st.DrawFn) -> tuple[str, str, str]:
    name = draw(st.sampled_from(NAMES))
    outputs = [output for _, output, _ in real_outputs(name)] or [""]
    pieces = st.one_of(
        st.sampled_from(literal_delimiters(name) + pattern_prefixes(name)),
        st.sampled_from(["\x00", "\ud800", "{", "[", '"', "\\", "9" * 30, " " * 20, "\n", "x", "é", "}",
                         "]"]),
        st.builds(lambda output, a, b: output[min(a, b) : max(a, b)], st.sampled_from(outputs),
                  st.integers(0, 400), st.integers(0, 400)),
    )
    text = "".join(draw(st.lists(pieces, max_size=8)))
    prompt = draw(st.sampled_from(profiles.load(name).generation_prompts))
    return name, prompt, text


@given(garbled())
def test_garbled_outputs(case: tuple[str, str, str]) -> None:
    name, prompt, output = case
    check(name, prompt, output, ways=3)
