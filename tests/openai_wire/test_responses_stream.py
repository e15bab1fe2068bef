"""``ResponsesStream``: the exact events, validated with a ``TypeAdapter`` of the SDK's event union."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from chatcodec import ResponseParser, profiles
from chatcodec.openai import ResponsesStream, to_chat_message
from tests.openai_wire.helpers import EVENT_TYPES, check_events, run_responses
from tests.openai_wire.test_chat_stream import chatml

EVENTS = TypeAdapter(ResponseStreamEvent)


def qwen3(errors: str = "strict", thinking: bool = True) -> ResponseParser:
    """A Qwen3 parser (text as written) after a generation prompt that pre-opens ``<think>\n``
    (or does not)."""
    prompt = "<|im_start|>assistant\n" + ("<think>\n" if thinking else "")
    return ResponseParser(chatml(False), prefix=prompt, errors=errors)


def index_ids(name: str, index: int) -> str:
    return f"call_{index}"


def response(status: str, output: list[dict[str, Any]], incomplete: Any = None) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": status,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "error": None, "incomplete_details": incomplete}


REASONING = {"id": "rs_1_0", "type": "reasoning", "summary": [],
             "content": [{"type": "reasoning_text", "text": "\nHm."}], "status": "completed"}
MESSAGE = {"id": "msg_1_1", "type": "message", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "Hi", "annotations": [], "logprobs": []}]}
CALL = {"id": "fc_1_2", "type": "function_call", "call_id": "call_0", "name": "f",
        "arguments": '{"a": 1}', "status": "completed"}


def test_the_exact_events() -> None:
    output = 'Hm.</think>Hi<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    events, stream = run_responses(qwen3, [output], ids=index_ids)
    reasoning_part = {"type": "reasoning_text", "text": "\nHm."}
    text_part = {"type": "output_text", "text": "Hi", "annotations": [], "logprobs": []}
    expected = [
        {"type": "response.created", "response": response("in_progress", [])},
        {"type": "response.in_progress", "response": response("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "rs_1_0", "type": "reasoning", "summary": [], "content": [],
                  "status": "in_progress"}},
        {"type": "response.content_part.added", "item_id": "rs_1_0", "output_index": 0, "content_index": 0,
         "part": {"type": "reasoning_text", "text": ""}},
        {"type": "response.reasoning_text.delta", "item_id": "rs_1_0", "output_index": 0, "content_index": 0,
         "delta": "\nHm."},
        {"type": "response.reasoning_text.done", "item_id": "rs_1_0", "output_index": 0, "content_index": 0,
         "text": "\nHm."},
        {"type": "response.content_part.done", "item_id": "rs_1_0", "output_index": 0, "content_index": 0,
         "part": reasoning_part},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {"id": "msg_1_1", "type": "message", "role": "assistant", "status": "in_progress",
                  "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_1_1", "output_index": 1, "content_index": 0,
         "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1_1", "output_index": 1, "content_index": 0,
         "delta": "Hi", "logprobs": []},
        {"type": "response.output_text.done", "item_id": "msg_1_1", "output_index": 1, "content_index": 0,
         "text": "Hi", "logprobs": []},
        {"type": "response.content_part.done", "item_id": "msg_1_1", "output_index": 1, "content_index": 0,
         "part": text_part},
        {"type": "response.output_item.done", "output_index": 1, "item": MESSAGE},
        {"type": "response.output_item.added", "output_index": 2,
         "item": {**CALL, "arguments": "", "status": "in_progress"}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1_2", "output_index": 2,
         "delta": '{"a": 1}'},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1_2", "output_index": 2,
         "arguments": '{"a": 1}'},
        {"type": "response.output_item.done", "output_index": 2, "item": CALL},
        {"type": "response.completed", "response": response("completed", [REASONING, MESSAGE, CALL])},
    ]
    assert events == [{**event, "sequence_number": number} for number, event in enumerate(expected)]
    for event in events:
        model = EVENTS.validate_python(event)
        assert type(model) is EVENT_TYPES[event["type"]]
    assert check_events(events) == to_chat_message(stream.message, ids=index_ids)


def test_the_first_feed_starts_the_response() -> None:
    stream = ResponsesStream(qwen3(thinking=False), id="resp_1")
    assert [event["type"] for event in stream.feed("")] == ["response.created", "response.in_progress"]
    assert stream.feed("") == []


def test_a_cut_generation_is_incomplete() -> None:
    events, _ = run_responses(qwen3, ["Hm.</think>It is sun"], "length")
    final = events[-1]
    assert final["type"] == "response.incomplete"
    assert final["response"]["status"] == "incomplete"
    assert final["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert [item["status"] for item in final["response"]["output"]] == ["completed", "incomplete"]
    check_events(events, finish_reason="length")


def test_a_call_cut_by_the_token_limit_is_incomplete() -> None:
    kimi = profiles.load("kimi_k2")
    output = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>'
              '{"a": 1}')  # cut before <|tool_call_end|>; the section parses to the end of the output

    def parser() -> ResponseParser:
        return ResponseParser(kimi.response_template, prefix="")

    events, _ = run_responses(parser, [output], "length")
    assert [(item["type"], item["status"]) for item in events[-1]["response"]["output"]] == [
        ("function_call", "incomplete")]
    check_events(events, finish_reason="length")


def test_a_malformed_call_is_a_message_with_its_text() -> None:
    broken = '<tool_call>{"name": "f", "arguments": {"a": }</tool_call>'
    events, stream = run_responses(lambda: qwen3("keep", thinking=False), [broken])
    assert [item["type"] for item in events[-1]["response"]["output"]] == ["message"]
    assert check_events(events) == to_chat_message(stream.message) == {"role": "assistant", "content": broken}


def test_reasoning_after_content_opens_a_new_item() -> None:
    gpt_oss = profiles.load("gpt_oss")
    output = ("<|channel|>analysis<|message|>A.<|end|><|start|>assistant<|channel|>final<|message|>B<|end|>"
              "<|start|>assistant<|channel|>analysis<|message|>C.<|end|>")
    events, stream = run_responses(lambda: ResponseParser(gpt_oss.response_template, prefix=""), list(output))
    output_items = events[-1]["response"]["output"]
    assert [(item["type"], item["content"][0]["text"]) for item in output_items] == [
        ("reasoning", "A."), ("message", "B"), ("reasoning", "\nC.")]
    assert check_events(events) == to_chat_message(stream.message)


@pytest.mark.parametrize("reason", ["stop", None])
def test_stop_completes(reason: str | None) -> None:
    events, _ = run_responses(qwen3, ["</think>Hi"], reason)
    assert events[-1]["type"] == "response.completed"
