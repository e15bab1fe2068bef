"""Long held tails stay linear: the tail is searched again only when something new arrives.

QA round 3: while a regex delimiter was pending (``</tc>\\s*`` after a long run, a lookahead, a
tool name being written after ``<function=``), every feed searched the whole held tail again, so
streaming 40,000 newlines into internlm2's tool-call region took 40 s one character at a time
(``parse_response`` on the same text: 2 ms). The engine now searches a tail of
:data:`~chatcodec.response_templates.buffer.DEFER_AFTER` or more characters again only when a
character it does not hold arrives or when it has doubled. Timings are measured by
``bench/bench_parse.py``; these tests count searches and check that waiting changes no result.
"""

from __future__ import annotations

import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import given

import chatcodec
from chatcodec import ResponseParser, profiles
from chatcodec.response_templates import buffer
from tests.conftest import load_json
from tests.response_templates.helpers import IGNORE_NO_ANCHOR, assert_same, check_stream, loadable, stream
from tests.response_templates.test_streaming_properties import _TEMPLATES as GENERATED_TEMPLATES
from tests.response_templates.test_streaming_properties import generated

pytestmark = IGNORE_NO_ANCHOR

CLOSE_THEN_RUN = {"start_anchor": "A", "fields": {
    "calls": {"open": "<tc>", "close_pattern": r"</tc>\s*", "repeats": True}, "content": {}}}


def _count_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    advance = ResponseParser._advance

    def counting(self: ResponseParser, text: str, eos: bool) -> list[dict[str, Any]]:
        calls[0] += 1
        return advance(self, text, eos)

    monkeypatch.setattr(ResponseParser, "_advance", counting)
    return calls


#: A tool-call open that waits, behind a whitespace run, for the JSON it needs (``(?=\s*\{)``).
LOOKAHEAD_OPEN: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<\|action_start\|>\s*<\|plugin\|>(?=\s*\{)", "close": "<|action_end|>",
            "repeats": True, "content": "json",
            "transform": {"type": "function", "function": {"name": "{content.name}",
                                                           "arguments": "{content.parameters}"}},
        },
        "content": {"close": ["<|im_end|>"]},
    },
}


@pytest.mark.parametrize(
    ("profile", "head", "run", "tail", "expected"),
    [
        ("lookahead_open", "<|action_start|><|plugin|>", "\n",
         '{"name": "f", "parameters": {"a": 1}}<|action_end|>',
         {"role": "assistant",
          "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}),
        ("qwen3_coder", "<tool_call>\n<function=", "x", ">\n</function>\n</tool_call>",
         {"role": "assistant",
          "tool_calls": [{"type": "function", "function": {"name": "x" * 20_000, "arguments": {}}}]}),
    ],
)
def test_a_long_pending_delimiter_is_not_searched_on_every_feed(
    monkeypatch: pytest.MonkeyPatch, profile: str, head: str, run: str, tail: str, expected: dict[str, Any]
) -> None:
    if profile == "lookahead_open":  # internlm2's open once waited for the JSON behind a whitespace run
        template: dict[str, Any] = LOOKAHEAD_OPEN
        prefix = ""
    else:
        loaded = profiles.load(profile)
        template, prefix = loaded.response_template, loaded.generation_prompt_ending(None)
    parser = ResponseParser(template, prefix=prefix)
    searches = _count_searches(monkeypatch)
    for chunk in [head, *[run] * 20_000, tail]:
        parser.feed(chunk)
    message, _ = parser.finalize()
    assert message == expected
    assert message == chatcodec.parse_response(head + run * 20_000 + tail, template, prefix=prefix)
    # 20,002 feeds: one search each while the tail is short, then one per doubling (and per new
    # character); before the fix, one per feed
    assert searches[0] < buffer.DEFER_AFTER + 40


def test_a_long_pending_delimiter_over_non_ascii_text_is_not_searched_on_every_feed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """QA round 4: every CJK character was new to the held tail, so each one searched it again
    (llama3_json, 40,000 characters one at a time: 37 s; parse_response: 8 ms)."""
    loaded = profiles.load("llama3_json")
    prefix = loaded.generation_prompt_ending(None)
    rng = random.Random(4)
    body = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(6_000))
    parser = ResponseParser(loaded.response_template, prefix=prefix)
    searches = _count_searches(monkeypatch)
    for char in '{"name": "' + body:
        parser.feed(char)
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "content": '{"name": "' + body}
    # one search per feed while the tail is short, then one per doubling and per new ASCII character
    assert searches[0] < buffer.DEFER_AFTER + 40


def test_text_after_a_long_run_streams_as_soon_as_it_arrives() -> None:
    """Waiting is only for characters the tail already holds: new text is searched at once."""
    parser = ResponseParser(CLOSE_THEN_RUN, prefix="")
    parser.feed("<tc>x</tc>")
    for _ in range(10_000):
        assert parser.feed(" ") == []
    events = parser.feed("done")
    assert events[0]["type"] == "region_close" and events[0]["field"] == "calls"
    assert [(e["type"], e.get("text")) for e in events[1:]] == [
        ("region_open", None), ("region_chunk", "done")]
    message, _ = parser.finalize()
    assert message == {"calls": ["x"], "content": "done"}


_VECTORS = [v for v in load_json("response_vectors.json")["vectors"]
            if v["kind"] in ("parse", "stream") and loadable(v)]


@pytest.mark.parametrize("case", [pytest.param(v, id=v["id"]) for v in _VECTORS])
def test_waiting_from_the_first_held_character_changes_no_vector(
    monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]
) -> None:
    """With the threshold at 1, every held tail waits: streams must still equal one-shot."""
    monkeypatch.setattr(buffer, "DEFER_AFTER", 1)
    check_stream(case["template"], case["output"], prefix=case["prefix"], tools=case["tools"], errors="keep")


@given(generated())
def test_waiting_from_the_first_held_character_changes_no_generated_output(
    case: tuple[str, str, list[str]],
) -> None:
    name, text, chunks = case
    template = GENERATED_TEMPLATES[name]
    one_shot = chatcodec.parse_response(text, template, prefix="", errors="keep")
    with mock.patch.object(buffer, "DEFER_AFTER", 1):
        for pieces in (chunks, list(text)):
            assert_same(stream(template, pieces, errors="keep")[0], one_shot)
