"""Real outputs from the corpus through the engines' serving classes: the client gets chatcodec's parse.

For every family with a bundled profile, a corpus chat template and peer vectors (17 families, ~140
outputs), each output is streamed at 1, 3 and all tokens per delta through vLLM's chat stream
processor, vLLM's Responses event processor and SGLang's parser chain, and parsed whole through both
engines' non-streaming paths. Every way must reassemble to chatcodec's own parse of the output
(``harness.reference``: ``to_chat_message`` of ``parse_response``, text compared exactly; streams
against chatcodec's own Chat Completions stream, which differs from it only where docs/openai.md
says a stream must (a call that started and then failed stays sent); for
SGLang, which shows a reasoning parser nothing of the prompt but whether it opened reasoning, the
parse of the output after the prompt the plugin infers). The tool deltas must have the shape
clients rely on: id, type and name in each call's first delta only, indexes counting calls from 0 in
output order, and nothing sent twice by the engines' end-of-stream flushes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests_engines import drivers
from tests_engines.harness import VECTORS, families, reference, streamed_reference

FAMILIES = families()
CASES = [vector for vector in VECTORS if vector["family"] in FAMILIES]
SIZES = (1, 3, 0)


def test_at_least_ten_families_are_covered() -> None:
    assert len(FAMILIES) >= 10
    assert {"hermes", "qwen3", "qwen3_coder", "gpt_oss", "kimi_k2", "mistral", "deepseek_r1"} <= set(FAMILIES)


def check_tool_deltas(sent: list[Any]) -> None:
    """id/type/name once, in each call's first delta; indexes 0, 1, ... in the order calls start."""
    started: list[int] = []
    for delta in sent:
        for call in delta.tool_calls:
            name = call.function.name if call.function is not None else None
            if call.index not in started:
                assert (call.id, call.type, bool(name)) == (call.id or "x", "function", True), call
                assert call.id, call
                assert call.index == len(started), (call.index, started)
                started.append(call.index)
            else:
                assert (call.id, name) == (None, None), call


@pytest.mark.parametrize("vector", CASES, ids=lambda vector: vector["id"])
def test_vllm_chat_stream(vector: dict[str, Any]) -> None:
    for size in SIZES:
        expected = streamed_reference(vector, size, last_at_end=True)
        got, sent, finish = drivers.vllm_stream(vector, size)
        assert got == expected, f"{size} tokens per delta"
        check_tool_deltas(sent)
        assert finish == ("tool_calls" if expected["tool_calls"] else "stop")


@pytest.mark.parametrize("vector", CASES, ids=lambda vector: vector["id"])
def test_vllm_non_streaming(vector: dict[str, Any]) -> None:
    assert drivers.vllm_parse(vector) == reference(vector)


def check_responses(vector: dict[str, Any], size: Any) -> list[Any]:
    """vLLM's Responses stream folds to chatcodec's stream, except that a call that failed at the
    end of generation may lack the argument fragments of the last delta (vLLM's Responses events
    cannot put them after the call's text, docs/serving.md): its name and every text are exact."""
    expected = streamed_reference(vector, size)
    got, events = drivers.vllm_responses(vector, size)
    if expected != reference(vector):  # a call failed after it started
        got = {**got, "tool_calls": [name for name, _ in got["tool_calls"]]}
        expected = {**expected, "tool_calls": [name for name, _ in expected["tool_calls"]]}
    assert got == expected, f"{size} tokens per delta"
    return events


@pytest.mark.parametrize("vector", CASES, ids=lambda vector: vector["id"])
def test_vllm_responses_stream(vector: dict[str, Any]) -> None:
    for size in SIZES:
        events = check_responses(vector, size)
        added = [event.item for event in events if event.type == "response.output_item.added"]
        assert all(item.name for item in added if item.type == "function_call")


@pytest.mark.parametrize("vector", CASES, ids=lambda vector: vector["id"])
def test_sglang_stream(vector: dict[str, Any]) -> None:
    for size in SIZES:
        expected = streamed_reference(vector, size, drivers.sglang_prompt(vector))
        got, items = drivers.sglang_stream(vector, size)
        assert got == expected, f"{size} tokens per delta"
        named = [item.tool_index for item in items if item.name]
        assert named == list(range(len(expected["tool_calls"]))), "one named item per call, in order"


@pytest.mark.parametrize("vector", CASES, ids=lambda vector: vector["id"])
def test_sglang_non_streaming(vector: dict[str, Any]) -> None:
    assert drivers.sglang_parse(vector) == reference(vector, drivers.sglang_prompt(vector))


_WITH_CALLS = [vector for vector in CASES if vector["expected"]["tool_calls"]]


@given(st.sampled_from(_WITH_CALLS), st.lists(st.integers(1, 6), min_size=1, max_size=8))
def test_any_grouping_of_tokens_gives_the_same_message(vector: dict[str, Any], sizes: list[int]) -> None:
    """Multi-token deltas of any sizes (speculative decoding, stream intervals) change nothing."""
    got, sent, _ = drivers.vllm_stream(vector, sizes)  # type: ignore[arg-type]
    assert got == streamed_reference(vector, sizes, last_at_end=True)
    check_tool_deltas(sent)
    sglang_expected = streamed_reference(vector, sizes, drivers.sglang_prompt(vector))
    assert drivers.sglang_stream(vector, sizes)[0] == sglang_expected  # type: ignore[arg-type]
    check_responses(vector, sizes)
