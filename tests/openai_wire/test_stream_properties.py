"""Any chunking of a real output streams to the same message: ``to_chat_message`` of the whole parse.

Every bundled profile with tool calls, on every real output of its family in the peer corpus
(``peer_vectors.json``, which the profiles' demo outputs are taken from) and on outputs generated
by rendering assistant messages with the family's chat templates (the round-trip specs of
``tests/profiles/test_round_trip.py``). Each output goes through ``ChatCompletionStream`` and
``ResponsesStream`` whole, one character at a time, at seeded random splits, and at chunkings
Hypothesis draws; every chunk and event must validate as the ``openai`` SDK's types
(``tests/openai_wire/helpers.py``) and fold back into exactly ``to_chat_message`` of
``parse_response`` of the same output, with the same ids (seeded ``ToolCallIds``).

Parsing uses ``errors="keep"``: malformed calls in the corpus become content, in the stream as in
the message. Parsers stream arguments as they are written (``value_deltas=True``, the serving
mode); one split per output also runs without value events (arguments whole at close).

The one place the stream may differ (``docs/openai.md``): a tool-call region that fails after its
calls started streaming. There the folded stream must still have the message's content, reasoning
and every call of the message, in order; its other calls must come from the regions that failed,
and only those may end ``incomplete``.
"""

from __future__ import annotations

import itertools
import random
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chatcodec
from chatcodec import profiles
from chatcodec.openai import ToolCallIds, to_chat_message
from tests.conftest import load_json
from tests.openai_wire.helpers import (
    check_chunks,
    check_events,
    random_chunks,
    run_chat,
    run_responses,
)

WITH_CALLS = sorted(
    name for name in profiles.names() if "tool_calls" in profiles.load(name).response_template["fields"]
)
VECTORS = [vector for vector in load_json("peer_vectors.json")["vectors"] if vector["family"] in WITH_CALLS]


def test_every_profile_with_tool_calls_has_real_outputs() -> None:
    assert {vector["family"] for vector in VECTORS} == set(WITH_CALLS)
    assert len(WITH_CALLS) == 51


@cache
def _case(vector_id: str) -> tuple[dict[str, Any], str, str, Any]:
    vector = next(vector for vector in VECTORS if vector["id"] == vector_id)
    profile = profiles.load(vector["family"])
    prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
    return profile.response_template, vector["output"], prefix, vector["tools"]


def check_output(template: dict[str, Any], output: str, prefix: str, tools: Any, splits: list[list[str]],
                 finish_reason: str | None = None, value_deltas: bool = True) -> None:
    """Stream ``output`` at every split in ``splits`` through both streams; each must give
    ``to_chat_message`` of the whole parse, apart from the documented exception (``exceptions``)."""
    parsed = chatcodec.parse_response(output, template, prefix=prefix, tools=tools, errors="keep")
    expected = to_chat_message(parsed, ids=ToolCallIds(seed=7))
    failed = [record["raw"] for record in parsed.get("parse_errors", []) if record["field"] == "tool_calls"]

    def make() -> chatcodec.ResponseParser:
        return chatcodec.ResponseParser(template, prefix=prefix, tools=tools, errors="keep",
                                        value_deltas=value_deltas)

    extra = [key for key in expected if key not in ("role", "content", "reasoning_content", "tool_calls")]
    for pieces in splits:
        where = f"split {[len(piece) for piece in pieces]}"
        chunks, stream = run_chat(make, pieces, finish_reason, ids=ToolCallIds(seed=7))
        assert stream.message == parsed
        folded = check_chunks(chunks, extra=extra)
        events, _ = run_responses(make, pieces, finish_reason, ids=ToolCallIds(seed=7))
        responded = check_events(events, finish_reason=finish_reason)
        assert responded == {key: value for key, value in folded.items() if key not in extra}, where
        output = events[-1]["response"]["output"]
        statuses = [item["status"] for item in output if item["type"] == "function_call"]
        completed = "completed" in statuses and finish_reason is None
        reason = "tool_calls" if completed else finish_reason or "stop"
        assert chunks[-1]["choices"][0]["finish_reason"] == reason, where
        if failed:
            exceptions(folded, expected, failed, statuses, where)
        else:
            assert folded == expected, where
            if finish_reason is None:
                assert set(statuses) <= {"completed"}, where


def exceptions(folded: dict[str, Any], expected: dict[str, Any], failed: list[str], statuses: list[str],
               where: str) -> None:
    """docs/openai.md's exception: calls of a tool-call region that failed after they started stay in
    the stream (``incomplete`` if they had not ended); everything else is the message's."""
    assert {key: value for key, value in folded.items() if key != "tool_calls"} == \
        {key: value for key, value in expected.items() if key != "tool_calls"}, where

    def named(calls: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return [(call["function"]["name"], call["function"]["arguments"]) for call in calls]

    wanted = named(expected.get("tool_calls", []))
    got = named(folded.get("tool_calls", []))
    position = 0
    for call in got:
        if position < len(wanted) and call == wanted[position]:
            position += 1
            continue
        assert any(call[0] in raw for raw in failed), f"{where}: call {call} is in no region that failed"
    assert position == len(wanted), f"{where}: calls of the message missing from the stream"
    assert statuses.count("incomplete") <= len(got) - len(wanted), where


def three_ways(output: str) -> list[list[str]]:
    rng = random.Random(len(output))
    return [[output], list(output), *(random_chunks(output, rng) for _ in range(2))]


@pytest.mark.parametrize("vector_id", [vector["id"] for vector in VECTORS])
def test_corpus_output_streams_to_the_whole_message(vector_id: str) -> None:
    template, output, prefix, tools = _case(vector_id)
    check_output(template, output, prefix, tools, three_ways(output))
    check_output(template, output, prefix, tools, [list(output)], value_deltas=False)


CUT_VECTORS = [vector["id"] for vector in VECTORS if vector["expected"]["tool_calls"]][::4]


@pytest.mark.parametrize("vector_id", CUT_VECTORS)
def test_a_cut_generation_reports_length(vector_id: str) -> None:
    template, output, prefix, tools = _case(vector_id)
    cut = output[: len(output) * 2 // 3]
    check_output(template, cut, prefix, tools, [[cut], list(cut)], finish_reason="length")


@given(data=st.data())
def test_any_chunking_of_any_corpus_output(data: st.DataObject) -> None:
    vector = data.draw(st.sampled_from(VECTORS), label="vector")
    template, output, prefix, tools = _case(vector["id"])
    cuts = data.draw(st.lists(st.integers(0, len(output)), max_size=40), label="cuts")
    bounds = [0, *sorted(cuts), len(output)]
    pieces = [output[start:end] for start, end in itertools.pairwise(bounds)]
    check_output(template, output, prefix, tools, [pieces])
