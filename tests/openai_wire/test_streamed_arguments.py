"""Arguments reach the client as the model writes them, on the real engine (``value_deltas=True``).

* A 2,000-character string argument goes out piece by piece: after every feed, the arguments sent
  so far are exactly the arguments text the output has delivered (the model writes canonical JSON
  here, so the two are the same characters).
* Generated outputs: assistant messages with arguments Hypothesis draws, rendered by the corpus
  chat templates of the bundled profiles (``tests/profiles/test_round_trip.py``), streamed at
  random splits through both streams: each folds back to ``to_chat_message`` of the whole parse.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcodec import ResponseParser, load_response_template, profiles
from chatcodec.openai import ChatCompletionStream, to_chat_message
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.openai_wire.helpers import check_chunks, check_events, run_chat, run_responses
from tests.openai_wire.test_stream_properties import check_output
from tests.profiles.test_round_trip import MESSAGES, SPECS, TOOLS, split_output

#: ChatML with JSON tool calls (the ``json`` content parser streams its values).
QWEN3 = load_response_template(QWEN_RESPONSE_TEMPLATE)
def index_ids(name: str, index: int) -> str:
    return f"call_{index}"


WRITE_FILE = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.",
               "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                               "content": {"type": "string"}}}}}]


@pytest.mark.parametrize("tools", [None, WRITE_FILE], ids=["untyped", "typed"])
@pytest.mark.parametrize("size", [1, 4, 9])
def test_a_long_string_argument_goes_out_with_the_feed_that_brings_it(tools: Any, size: int) -> None:
    content = "".join(itertools.islice(itertools.cycle("Lorem ipsum, dolor sit amet. "), 2000))
    arguments = {"path": "notes.md", "content": content}
    output = f'<tool_call>\n{json.dumps({"name": "write_file", "arguments": arguments})}\n</tool_call>'
    start = output.index('{"path"')
    first, last = output.index(content), output.index(content) + len(content)
    stream = ChatCompletionStream(ResponseParser(QWEN3, prefix="", tools=tools,
                                                 value_deltas=True))
    sent, deltas = "", 0
    for end in range(size, len(output) + size, size):
        for chunk in stream.feed(output[end - size : end]):
            for call in chunk["choices"][0]["delta"].get("tool_calls", []):
                if call["function"]["arguments"]:
                    sent += call["function"]["arguments"]
                    deltas += 1
        if first < end <= last:
            assert sent == output[start:end], f"after feed ending at {end}"
    stream.finish()
    assert sent == json.dumps(arguments, ensure_ascii=False)
    assert deltas >= 2000 // size


#: Corpus chat templates that render tool calls, and the profile that parses them.
RENDERING = sorted(file for file, spec in SPECS.items()
                   if "calls" not in spec.unrenderable and "tool_calls" not in spec.drops.get("calls", ()))
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30)


@settings(max_examples=40)
@given(file=st.sampled_from(RENDERING), city=TEXT, days=st.integers(-(2**31), 2**31),
       note=TEXT, data=st.data())
def test_generated_outputs_stream_to_the_whole_message(file: str, city: str, days: int, note: str,
                                                       data: st.DataObject) -> None:
    spec = SPECS[file]
    message = copy.deepcopy(MESSAGES["calls"])
    message["tool_calls"][0]["function"]["arguments"] = {"city": city, "days": days}
    message["tool_calls"][1]["function"]["arguments"]["note"] = note
    prefix, output, _ = split_output(spec, file, message)
    cuts = data.draw(st.lists(st.integers(0, len(output)), max_size=30), label="cuts")
    bounds = [0, *sorted(cuts), len(output)]
    pieces = [output[begin:end] for begin, end in itertools.pairwise(bounds)]
    check_output(profiles.load(spec.profile).response_template, output, prefix, TOOLS, [pieces])


def test_a_call_that_fails_after_it_started_ends_as_it_is() -> None:
    """The documented exception (docs/openai.md): the call went out as it was written, its region
    then failed, so it ends incomplete and the region's text follows as content."""
    output = 'Hi<tool_call>\n{"name": "f", "arguments": {"a": "x", "b": 1, oops}}\n</tool_call>'

    def parser() -> ResponseParser:
        return ResponseParser(QWEN3, prefix="", value_deltas=True, errors="keep")

    chunks, stream = run_chat(parser, list(output), ids=index_ids)
    assert check_chunks(chunks) == {
        "role": "assistant",
        "content": output,
        "tool_calls": [{"id": "call_0", "type": "function",
                        "function": {"name": "f", "arguments": '{"a": "x", "b": 1'}}],
    }
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert to_chat_message(stream.message) == {"role": "assistant", "content": output}
    events, _ = run_responses(parser, list(output), ids=index_ids)
    assert [(item["type"], item["status"]) for item in events[-1]["response"]["output"]] == [
        ("message", "completed"), ("function_call", "incomplete"), ("message", "completed")]
    check_events(events)


def test_a_call_that_starts_and_fails_in_one_feed_is_never_sent() -> None:
    """A call whose start and failure the same feed decides was never sent: the stream takes it
    back and gives the region's text as content only, as the whole parse does (it sent a call with
    the arguments ``{"a": "x", "b": 1`` beside that same text, and an agent ran it)."""
    output = 'Hi<tool_call>\n{"name": "f", "arguments": {"a": "x", "b": 1, oops}}\n</tool_call>\nSorry.'

    def parser() -> ResponseParser:
        return ResponseParser(QWEN3, prefix="", value_deltas=True, errors="keep")

    chunks, stream = run_chat(parser, [output], ids=index_ids)
    assert [chunk["choices"][0]["delta"] for chunk in chunks] == [
        {"role": "assistant", "content": output}, {}]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert to_chat_message(stream.message) == {"role": "assistant", "content": output}
    events, _ = run_responses(parser, [output], ids=index_ids)
    assert [(item["type"], item["status"]) for item in events[-1]["response"]["output"]] == [
        ("message", "completed")]
    check_events(events)


def test_a_call_taken_back_leaves_the_calls_before_it_and_their_numbering() -> None:
    """Only the failed region's calls of this feed are taken back: a call of an earlier region
    keeps index 0, and the next good call after the failed one is numbered 1, not 2."""
    good = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    bad = '<tool_call>\n{"name": "g", "arguments": {"b": ]}\n</tool_call>'
    output = good + bad + good

    def parser() -> ResponseParser:
        return ResponseParser(QWEN3, prefix="", value_deltas=True, errors="keep")

    chunks, _ = run_chat(parser, [output], ids=index_ids)
    assert check_chunks(chunks) == {
        "role": "assistant",
        "content": bad,
        "tool_calls": [{"id": f"call_{index}", "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1}'}} for index in (0, 1)],
    }
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
