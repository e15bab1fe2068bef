"""Drive the engines' own serving classes with the chatcodec parsers, as a server would.

* vLLM: ``ParserManager.get_parser`` composes the registered ``chatcodec`` halves; each request gets
  its own ``Parser``; streaming goes through ``ChatStreamProcessor`` (what ``OpenAIServingChat``
  runs per choice: tool-choice and parallel-call filtering, finish reasons) and the Responses path
  through ``split_delta`` + ``SimpleStreamingEventProcessor`` (what the Responses server runs);
  non-streaming through ``Parser.parse``.
* SGLang: ``ReasoningParser`` then ``FunctionCallParser`` per choice, chained as ``serving_chat``
  chains them, with its end-of-stream flush and its "unstreamed arguments" check.

Each driver returns the reassembled message (``harness.normal`` form) and the raw deltas, so tests
can check both what the client ends up with and how it got there.
"""

from __future__ import annotations

import json
from typing import Any

from sglang.srt.entrypoints.openai.protocol import Tool as SglTool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
from vllm.entrypoints.openai.responses.streaming_events import (
    SimpleStreamingEventProcessor,
    _StateType,
    split_delta,
)
from vllm.parser.parser_manager import ParserManager

from chatcodec.integrations.discovery import serving_template
from chatcodec.integrations.session import Session
from chatcodec.integrations.sglang_detectors import inferred_prefix
from tests_engines.harness import deltas, normal, prefix, tokenizer, tools


def vllm_parser_cls(family: str, *, tool: bool = True, reasoning: bool = True) -> Any:
    return ParserManager.get_parser(
        tool_parser_name="chatcodec" if tool else None,
        reasoning_parser_name="chatcodec" if reasoning else None,
        enable_auto_tools=tool,
        model_name=family,
        tokenizer=tokenizer(family),
    )


def chat_request(vector: dict[str, Any], **options: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools(vector),
        **{"tool_choice": "auto", **options},
    )


def vllm_stream(
    vector: dict[str, Any],
    size: int,
    *,
    parser_cls: Any = None,
    request: Any = None,
    output: str | None = None,
) -> tuple[dict[str, Any], list[Any], str]:
    """Stream through ``ChatStreamProcessor``; returns (message, deltas sent, finish_reason)."""
    family = vector["family"]
    tok = tokenizer(family)
    parser_cls = parser_cls or vllm_parser_cls(family)
    request = request or chat_request(vector)
    parser = parser_cls(tok, request.tools, chat_template_kwargs={}, model_config=None)
    processor = ChatStreamProcessor(
        request, parser, enable_auto_tools=parser_cls.tool_parser_cls is not None, parser_cls=parser_cls
    )
    prompt_ids = tok.encode(prefix(vector), add_special_tokens=False)
    pieces = deltas(tok, vector["output"] if output is None else output, size)
    sent, finish = [], ""
    for number, (text, ids) in enumerate(pieces):
        last = number == len(pieces) - 1
        step = processor.step(text, ids, "stop" if last else None, prompt_ids if number == 0 else None)
        if step.delta is not None:
            sent.append(step.delta)
        finish = step.finish_reason or finish
    return assemble_vllm(sent), sent, finish


def assemble_vllm(sent: list[Any]) -> dict[str, Any]:
    reasoning = "".join(delta.reasoning or "" for delta in sent)
    content = "".join(delta.content or "" for delta in sent)
    calls: dict[int, list[str]] = {}
    for delta in sent:
        for call in delta.tool_calls:
            entry = calls.setdefault(call.index, ["", ""])
            if call.function is not None:
                entry[0] = call.function.name or entry[0]
                entry[1] += call.function.arguments or ""
    return normal(reasoning, content, [(name, args) for name, args in (calls[i] for i in sorted(calls))])


def vllm_parse(
    vector: dict[str, Any], *, parser_cls: Any = None, request: Any = None, output: str | None = None
) -> dict[str, Any]:
    """The non-streaming path: ``Parser.parse`` after the prompt ids, as the chat server calls it."""
    family = vector["family"]
    tok = tokenizer(family)
    parser_cls = parser_cls or vllm_parser_cls(family)
    request = request or chat_request(vector)
    parser = parser_cls(tok, request.tools, chat_template_kwargs={}, model_config=None)
    parser.set_prompt_token_ids(tok.encode(prefix(vector), add_special_tokens=False))
    reasoning, content, calls = parser.parse(
        vector["output"] if output is None else output,
        request,
        enable_auto_tools=parser_cls.tool_parser_cls is not None,
    )
    return normal(reasoning, content, [(call.name, call.arguments) for call in calls or []])


def responses_request(vector: dict[str, Any]) -> ResponsesRequest:
    flat = [
        {
            "type": "function",
            "name": tool["function"]["name"],
            "parameters": tool["function"].get("parameters", {"type": "object"}),
        }
        for tool in tools(vector)
    ]
    return ResponsesRequest(model="m", input="hi", tools=flat)


def vllm_responses(vector: dict[str, Any], size: int) -> tuple[dict[str, Any], list[Any]]:
    """The Responses stream: deltas split and folded into output items by vLLM's own processor."""
    family = vector["family"]
    tok = tokenizer(family)
    parser_cls = vllm_parser_cls(family)
    request = responses_request(vector)
    parser = parser_cls(tok, request.tools, chat_template_kwargs={}, model_config=None)
    processor = SimpleStreamingEventProcessor(tools=request.tools)
    events: list[Any] = []
    prompt_ids = tok.encode(prefix(vector), add_special_tokens=False)
    pieces = deltas(tok, vector["output"], size)
    for number, (text, ids) in enumerate(pieces):
        message = parser.parse_delta(
            text,
            ids,
            request,
            prompt_token_ids=prompt_ids if number == 0 else None,
            finished=number == len(pieces) - 1,
        )
        for part in split_delta(message) if message else []:
            target, call = processor.resolve_target_state(part)
            if target == _StateType.NONE:
                continue
            if processor.needs_transition(target, call):
                events += processor.close_current()
                events += processor.open(target, call)
            events += processor.emit_delta(part, None, None)
    events += processor.close_current()
    reasoning = content = ""
    calls = []
    for item in processor.output_items:
        if item.type == "reasoning":
            reasoning += "".join(part.text for part in item.content or [])
        elif item.type == "message":
            content += "".join(part.text for part in item.content)
        elif item.type == "function_call":
            calls.append((item.name, item.arguments))
    return normal(reasoning, content, calls), events


def sglang_tools(vector: dict[str, Any]) -> list[Any]:
    return [SglTool(**tool) for tool in tools(vector)]


def prompt_opens_reasoning(vector: dict[str, Any]) -> bool:
    """What SGLang's ``force_reasoning`` says for this prompt (its template manager decides it)."""
    return Session(serving_template(tokenizer(vector["family"])), prefix(vector), None).in_reasoning


def sglang_prompt(vector: dict[str, Any]) -> str:
    """The prompt the SGLang plugin parses with: SGLang shows a reasoning parser only whether the
    prompt opened reasoning, so text the prompt wrote inside it (the newline after Qwen's
    ``<think>``) is not part of what the plugin sees."""
    serving = serving_template(tokenizer(vector["family"]))
    return inferred_prefix(serving, prompt_opens_reasoning(vector))


def sglang_stream(vector: dict[str, Any], size: int) -> tuple[dict[str, Any], list[Any]]:
    """Reasoning parser, then tool-call parser, per delta; the end flush; the unstreamed-args check."""
    tok = tokenizer(vector["family"])
    reasoning_parser = ReasoningParser(
        "chatcodec", stream_reasoning=True, force_reasoning=prompt_opens_reasoning(vector), tokenizer=tok
    )
    tool_parser = FunctionCallParser(sglang_tools(vector), "chatcodec", tokenizer=tok)
    reasoning, content, items = "", "", []

    def tools_stage(text: str, end: bool = False) -> None:
        nonlocal content
        normal_text, calls = tool_parser.parse_stream_chunk(text)
        content += normal_text
        items.extend(calls)
        if end:
            normal_text, calls = tool_parser.parse_stream_end()
            content += normal_text
            items.extend(calls)

    pieces = deltas(tok, vector["output"], size)
    for number, (text, _) in enumerate(pieces):
        reasoning_text, normal_text = reasoning_parser.parse_stream_chunk(text)
        last = number == len(pieces) - 1
        if last:  # serving_chat flushes the reasoning parser with the last delta
            end_reasoning, end_normal = reasoning_parser.parse_stream_end()
            reasoning_text = (reasoning_text or "") + (end_reasoning or "")
            normal_text = (normal_text or "") + (end_normal or "")
        reasoning += reasoning_text or ""
        tools_stage(normal_text or "", end=last)
    detector = tool_parser.detector
    if detector.prev_tool_call_arr:  # serving_chat._check_for_unstreamed_tool_args
        index = len(detector.prev_tool_call_arr) - 1
        expected = detector.prev_tool_call_arr[index].get("arguments", {})
        expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
        assert expected == detector.streamed_args_for_tool[index], "SGLang would send arguments again"
    calls: dict[int, list[str]] = {}
    for item in items:
        entry = calls.setdefault(item.tool_index, ["", ""])
        entry[0] = item.name or entry[0]
        entry[1] += item.parameters
    return normal(reasoning, content, [tuple(calls[i]) for i in sorted(calls)]), items  # type: ignore[misc]


def sglang_parse(vector: dict[str, Any]) -> dict[str, Any]:
    """The non-streaming path: ``parse_non_stream`` of both parsers, as ``serving_chat`` chains them."""
    tok = tokenizer(vector["family"])
    reasoning_parser = ReasoningParser(
        "chatcodec", force_reasoning=prompt_opens_reasoning(vector), tokenizer=tok
    )
    reasoning, text = reasoning_parser.parse_non_stream(vector["output"])
    tool_parser = FunctionCallParser(sglang_tools(vector), "chatcodec", tokenizer=tok)
    content, calls = tool_parser.parse_non_stream(text or "")
    return normal(reasoning, content, [(call.name, call.parameters) for call in calls])
