"""The chatcodec parsers inside vLLM 0.33: registration, startup, request options, the stream's rules.

The peer outputs are in ``test_peer_outputs.py``; here each rule vLLM applies to a parser gets an
exact case: ``tool_choice`` (``"none"`` keeps the text, ``"required"`` / a named function take vLLM's
JSON path, as for its own parsers), ``parallel_tool_calls=false``, ``include_reasoning=false``, a
parser configured alone, the end-of-stream "remaining arguments" flush, the reasoning end vLLM's
structured output asks about, and constructors called the ways vLLM releases call them.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager

from chatcodec.integrations import vllm as plugin
from chatcodec.integrations.discovery import ENV_VAR
from chatcodec.integrations.vllm_parsers import ChatcodecReasoningParser, ChatcodecToolParser
from tests_engines import drivers
from tests_engines.harness import VECTORS, normal, tokenizer

CALL = next(v for v in VECTORS if v["id"] == "hermes-vllm-content-then-call")  # text, then one call
TWO_CALLS = next(v for v in VECTORS if v["id"] == "reka-lcpp-parallel-no-separator")
#: a qwen3 output with reasoning and a call, the prompt having opened <think> and written its layout
#: newline (which is the prompt's, so not reasoning: docs/openai.md)
THINKING = {
    "id": "qwen3-thinking-call",
    "family": "qwen3",
    "prompt_suffix": "<think>\n",
    "tools": None,
    "output": 'The user wants Paris.\n</think>\n\nChecking.<tool_call>\n{"name": "get_weather", '
    '"arguments": {"city": "Paris"}}\n</tool_call>',
    "expected": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
}


def test_the_entry_point_registered_both_parsers_lazily() -> None:
    assert "chatcodec" in ToolParserManager.list_registered()
    assert "chatcodec" in ReasoningParserManager.list_registered()
    assert ToolParserManager.lazy_parsers["chatcodec"] == (
        "chatcodec.integrations.vllm_parsers",
        "ChatcodecToolParser",
    )
    assert ToolParserManager.get_tool_parser("chatcodec") is ChatcodecToolParser
    assert ReasoningParserManager.get_reasoning_parser("chatcodec") is ChatcodecReasoningParser


def test_registering_again_changes_nothing() -> None:
    before = (dict(ToolParserManager.lazy_parsers), dict(ReasoningParserManager.lazy_parsers))
    assert plugin.register() == ["tool", "reasoning"]
    assert (dict(ToolParserManager.lazy_parsers), dict(ReasoningParserManager.lazy_parsers)) == before


def test_a_name_taken_by_another_package_is_left_alone(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(ToolParserManager.lazy_parsers, "chatcodec", ("someone.else", "Parser"))
    with caplog.at_level(logging.WARNING, logger="chatcodec"):
        assert plugin.register() == ["reasoning"]
    assert ToolParserManager.lazy_parsers["chatcodec"] == ("someone.else", "Parser")
    assert "a tool parser named 'chatcodec' is already registered (someone.else)" in caplog.text


def test_an_unsupported_vllm_registers_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0.32.1")
    monkeypatch.delitem(ToolParserManager.lazy_parsers, "chatcodec")
    with caplog.at_level(logging.ERROR, logger="chatcodec"):
        assert plugin.register() == []
    assert "chatcodec" not in ToolParserManager.lazy_parsers
    assert "vllm 0.32.1 is not supported (the plugin needs vllm>=0.33.0,<0.34.0)" in caplog.text


def test_a_model_without_a_response_template_stops_the_server_at_startup() -> None:
    tok = tokenizer("hermes")
    original = tok.chat_template
    tok.chat_template = "{{ messages[0]['content'] }}"  # matches no bundled profile
    try:
        from chatcodec.integrations import discovery

        discovery._cache.clear()
        with pytest.raises(TypeError) as raised:
            drivers.vllm_parser_cls("hermes")
    finally:
        tok.chat_template = original
        discovery._cache.clear()
    message = str(raised.value)
    assert message.startswith(
        "--tool-call-parser chatcodec and --reasoning-parser chatcodec cannot be used "
        "with the tokenizer of 'hermes'"
    )
    assert "no response template for 'Qwen/Qwen2.5-7B-Instruct'" in message
    assert f"environment variable {ENV_VAR}" in message


def test_the_environment_variable_names_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = tokenizer("hermes")
    original = tok.chat_template
    tok.chat_template = "{{ messages[0]['content'] }}"
    monkeypatch.setenv(ENV_VAR, "hermes")
    try:
        got, _, _ = drivers.vllm_stream(CALL, 3)
    finally:
        tok.chat_template = original
    assert got["tool_calls"] == [("get_weather", {"city": "NYC"})]


def _request(vector: dict[str, Any], **options: Any) -> ChatCompletionRequest:
    return drivers.chat_request(vector, **options)


def test_tool_choice_none_keeps_the_text_as_written() -> None:
    for size in (1, 3, 0):
        got, _sent, finish = drivers.vllm_stream(CALL, size, request=_request(CALL, tool_choice="none"))
        assert got == normal(None, CALL["output"], [])
        assert finish == "stop"


def test_tool_choice_required_takes_vllms_json_path() -> None:
    """vLLM constrains the output to a JSON array of calls and parses it itself (as for hermes)."""
    request = _request(CALL, tool_choice="required")
    parser = drivers.vllm_parser_cls("hermes")(tokenizer("hermes"), request.tools)
    adjusted = parser.adjust_request(request)
    assert adjusted.skip_special_tokens is False
    assert adjusted.structured_outputs is not None and adjusted.structured_outputs.json is not None
    output = '[{"name": "get_weather", "parameters": {"city": "NYC"}}]'
    expected = normal(None, None, [("get_weather", {"city": "NYC"})])
    for size in (1, 3, 0):
        got, _sent, finish = drivers.vllm_stream(CALL, size, request=request, output=output)
        assert (got, finish) == (expected, "tool_calls")
    thinking = "<think>\nNYC it is.\n</think>\n\n" + output
    got, _, _ = drivers.vllm_stream(
        {**THINKING, "prompt_suffix": None},
        1,
        request=_request(THINKING, tool_choice="required"),
        output=thinking,
    )
    assert got == normal("\nNYC it is.\n", None, [("get_weather", {"city": "NYC"})])
    assert (
        drivers.vllm_parse(
            {**THINKING, "prompt_suffix": None},
            request=_request(THINKING, tool_choice="required"),
            output=thinking,
        )
        == got
    )


def test_a_named_tool_choice_takes_vllms_json_path() -> None:
    request = _request(CALL, tool_choice={"type": "function", "function": {"name": "get_weather"}})
    for size in (1, 0):
        got, _, finish = drivers.vllm_stream(CALL, size, request=request, output='{"city": "NYC"}')
        assert (got, finish) == (normal(None, None, [("get_weather", {"city": "NYC"})]), "stop")


def test_parallel_tool_calls_false_keeps_the_first_call() -> None:
    request = _request(TWO_CALLS, parallel_tool_calls=False)
    full, _, _ = drivers.vllm_stream(TWO_CALLS, 1)
    got, _, _ = drivers.vllm_stream(TWO_CALLS, 1, request=request)
    assert len(full["tool_calls"]) == 2
    assert got == {**full, "tool_calls": full["tool_calls"][:1]}


def test_include_reasoning_false_leaves_reasoning_out() -> None:
    got, _, _ = drivers.vllm_stream(THINKING, 1, request=_request(THINKING, include_reasoning=False))
    assert got == normal(None, "\n\nChecking.", [("get_weather", {"city": "Paris"})])


def test_reasoning_and_tools_across_the_handoff_at_every_delta_size() -> None:
    expected = normal("The user wants Paris.\n", "\n\nChecking.", [("get_weather", {"city": "Paris"})])
    for size in (1, 2, 3, 5, 8, 0):
        assert drivers.vllm_stream(THINKING, size)[0] == expected, size
    assert drivers.vllm_parse(THINKING) == expected
    assert drivers.vllm_responses(THINKING, 1)[0] == expected


def test_the_reasoning_parser_alone_passes_the_rest_on_as_written() -> None:
    parser_cls = drivers.vllm_parser_cls("qwen3", tool=False)
    rest = THINKING["output"].split("</think>")[1]
    for size in (1, 3, 0):
        got, _, _ = drivers.vllm_stream(THINKING, size, parser_cls=parser_cls)
        assert got == normal("The user wants Paris.\n", rest, [])
    whole = drivers.vllm_parse(THINKING, parser_cls=parser_cls)
    assert whole == normal("The user wants Paris.\n", rest, [])


def test_the_tool_parser_alone_still_reports_reasoning() -> None:
    """Without the reasoning half vLLM never shows the prompt: a <think> the model writes is parsed."""
    vector = {**THINKING, "prompt_suffix": None, "output": "<think>\n" + THINKING["output"]}
    parser_cls = drivers.vllm_parser_cls("qwen3", reasoning=False)
    expected = normal("\nThe user wants Paris.\n", "\n\nChecking.", [("get_weather", {"city": "Paris"})])
    for size in (1, 3, 0):
        assert drivers.vllm_stream(vector, size, parser_cls=parser_cls)[0] == expected
    whole = drivers.vllm_parse(vector, parser_cls=parser_cls)  # no place for reasoning: its raw text leads
    assert whole == normal(
        None, "<think>\nThe user wants Paris.\n</think>\n\nChecking.", [("get_weather", {"city": "Paris"})]
    )


def test_nothing_is_sent_twice_at_the_end_of_the_stream() -> None:
    """vLLM appends get_remaining_unstreamed_args() to the last delta: it must be empty, always."""
    request = _request(TWO_CALLS)
    tok = tokenizer("hermes")
    parser = drivers.vllm_parser_cls("hermes")(tok, request.tools)
    pieces = drivers.deltas(tok, TWO_CALLS["output"], 1)
    prompt = tok.encode(drivers.prefix(TWO_CALLS), add_special_tokens=False)
    sent = []
    for number, (text, ids) in enumerate(pieces):
        delta = parser.parse_delta(
            text,
            ids,
            request,
            prompt_token_ids=prompt if number == 0 else None,
            finished=number == len(pieces) - 1,
        )
        sent += delta.tool_calls if delta else []
        assert parser.tool_parser.get_remaining_unstreamed_args() == ""
    arguments = ["".join(c.function.arguments or "" for c in sent if c.index == i) for i in (0, 1)]
    records = parser.tool_parser.prev_tool_call_arr
    assert (
        [record["arguments"] for record in records] == arguments == parser.tool_parser.streamed_args_for_tool
    )
    assert [json.loads(text) for text in arguments] == [
        call["arguments"] for call in TWO_CALLS["expected"]["tool_calls"]
    ]


def test_reasoning_end_from_token_ids_as_structured_output_asks() -> None:
    tok = tokenizer("qwen3")
    reasoner = ChatcodecReasoningParser(tokenizer=tok)  # vLLM's engine core builds it this way

    def ids(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False))

    prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert reasoner.is_reasoning_end(ids(prompt + "<think>\n")) is False
    assert reasoner.is_reasoning_end(ids(prompt + "<think>\nhmm\n</think>\n\n")) is True
    assert reasoner.is_reasoning_end(ids(prompt + "<think>\n\n</think>\n\n")) is True  # thinking off
    assert reasoner.is_reasoning_end(ids(prompt + "Hello")) is True  # an answer without reasoning
    assert reasoner.is_reasoning_end(ids(prompt)) is False  # reasoning may still come
    generated = ids(prompt + "<think>\nhmm")
    end = ids("</think>")
    assert reasoner.is_reasoning_end_streaming(generated, generated[-2:]) is False
    assert reasoner.is_reasoning_end_streaming(generated + end, end) is True
    assert reasoner.extract_content_ids(generated + end + ids("Hi")) == ids("Hi")
    assert (reasoner.reasoning_start_str, reasoner.reasoning_end_str) == (None, "</think>")


def test_the_reasoning_end_of_a_prompt_depends_on_its_text_after_the_last_anchor_only() -> None:
    """The answer is kept per text after the last start anchor: other histories in front give
    the same answer, another generation prompt its own, and the request's prompt is read as set."""
    tok = tokenizer("qwen3")
    reasoner = ChatcodecReasoningParser(tokenizer=tok)

    def ids(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False))

    histories = ["<|im_start|>user\nhi<|im_end|>\n", "<|im_start|>user\n<think>x<|im_end|>\n", ""]
    for history in histories:
        for tail, ended in (("<think>\n", False), ("<think>\nhm</think>", True), ("", False)):
            prompt = ids(history + "<|im_start|>assistant\n" + tail)
            assert reasoner.is_reasoning_end(prompt) is ended, (history, tail)
            reasoner.set_prompt_token_ids(prompt)
            assert reasoner.is_reasoning_end(prompt) is ended, (history, tail)
    assert reasoner.is_reasoning_end(ids("no anchor at all</think>")) is True
    assert reasoner.is_reasoning_end(ids("<think>no anchor")) is False


def test_constructors_take_what_any_release_passes() -> None:
    tok = tokenizer("hermes")
    ChatcodecReasoningParser(tok, model_config=None, chat_template_kwargs={"enable_thinking": True}, extra=1)
    tool_parser = ChatcodecToolParser(tok)  # no tools, no request: older releases
    ChatcodecToolParser(tok, None, "positional", future_option=True)
    result = tool_parser.extract_tool_calls(CALL["output"])  # request left out
    assert [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls] == [
        ("get_weather", {"city": "NYC"})
    ]
    assert (result.tools_called, result.content) == (True, "Sure, let me check the weather.")


def test_a_malformed_call_is_kept_as_content_and_the_stream_goes_on() -> None:
    """A cut-off call: its text is the content, whole. Streamed, the call had started (its name and
    arguments went out as the model wrote them) before the end showed it cannot be parsed; a stream
    cannot take it back (docs/openai.md), and vLLM's finish reason counts it."""
    vector = next(v for v in VECTORS if v["id"] == "hermes-vllm-invalid-json")
    text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'
    assert vector["output"] == text
    assert drivers.vllm_parse(vector) == normal(None, text, [])
    for size in (1, 3):
        got, _sent, finish = drivers.vllm_stream(vector, size)
        assert (got, finish) == (normal(None, text, [("final_answer", '{"trigger": true}')]), "tool_calls")
    # all of it in the last delta: vLLM sends that delta after the end, so the call is taken back
    got, _sent, finish = drivers.vllm_stream(vector, 0)
    assert (got, finish) == (normal(None, text, []), "stop")
    # vLLM's Responses events cannot put a call's arguments after text in one delta: the fragments
    # the last delta brings for the failed call are left out (its text has them)
    for size, arguments in ((1, '{"trigger": true'), (3, "{"), (0, '{"trigger": true}')):
        got, events = drivers.vllm_responses(vector, size)
        assert got == normal(None, text, [("final_answer", arguments)]), size
        items = [event.item.type for event in events if event.type == "response.output_item.done"]
        assert items == (["function_call", "message"] if size else ["message", "function_call"])


def test_streamed_arguments_arrive_in_pieces_where_the_parser_streams_them() -> None:
    vector = next(v for v in VECTORS if v["id"] == "gptoss-lcpp-edit-code-args")
    _, sent, _ = drivers.vllm_stream(vector, 1)
    fragments = [
        c.function.arguments for d in sent for c in d.tool_calls if c.function and c.function.arguments
    ]
    assert len(fragments) > 10
    assert json.loads("".join(fragments)) == vector["expected"]["tool_calls"][0]["arguments"]


def _final_deltas(vector: dict[str, Any], cut: int) -> tuple[list[Any], str, Any]:
    """The chat deltas vLLM's stream processor sends when the output comes in two deltas, the
    second (the last) from character ``cut`` on; its finish reason, and the tool half's records."""
    tok = tokenizer(vector["family"])
    parser_cls = drivers.vllm_parser_cls(vector["family"])
    request = drivers.chat_request(vector)
    parser = parser_cls(tok, request.tools, chat_template_kwargs={}, model_config=None)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=parser_cls)
    prompt_ids = tok.encode(drivers.prefix(vector), add_special_tokens=False)
    output = vector["output"]
    sent, finish = [], ""
    for number, text in enumerate((output[:cut], output[cut:])):
        ids = tok.encode(text, add_special_tokens=False)
        step = processor.step(text, ids, "stop" if number else None, prompt_ids if number == 0 else None)
        if step.delta is not None:
            sent.append(step.delta)
        finish = step.finish_reason or finish
    return sent, finish, parser.tool_parser


def _call_deltas(sent: list[Any]) -> list[tuple[int, str | None, str | None]]:
    return [(c.index, c.function.name, c.function.arguments) for d in sent for c in d.tool_calls]


def test_a_call_the_last_delta_starts_and_the_end_shows_broken_is_taken_back() -> None:
    """vLLM completes the last delta with what the end decides before sending it, so a call that
    delta started and the end of generation shows broken (cut off) never goes out: its text is the
    content, once, as in the non-streamed message; vLLM's records forget it (nothing appended)."""
    cut_off = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'
    vector = {**CALL, "output": "Checking.\n" + cut_off}
    sent, finish, tool_parser = _final_deltas(vector, len("Checking.\n"))
    assert [(d.content, _call_deltas([d])) for d in sent] == [("Checking.\n", []), (cut_off, [])]
    assert finish == "stop"
    assert (tool_parser.prev_tool_call_arr, tool_parser.streamed_args_for_tool) == ([], [])
    assert drivers.vllm_parse(vector) == normal(None, "Checking.\n" + cut_off, [])


def test_a_call_that_ended_in_the_last_delta_stays_when_the_next_is_taken_back() -> None:
    good = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    cut_off = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ro'
    vector = {**CALL, "output": "Checking." + good + cut_off}
    sent, finish, tool_parser = _final_deltas(vector, len("Checking."))
    assert [d.content for d in sent] == ["Checking.", cut_off]
    assert _call_deltas(sent) == [(0, "get_weather", '{"city": "Paris"}')]
    assert sent[1].tool_calls[0].id
    assert finish == "tool_calls"
    assert [r["arguments"] for r in tool_parser.prev_tool_call_arr] == tool_parser.streamed_args_for_tool == [
        '{"city": "Paris"}'
    ]


def test_a_call_sent_in_an_earlier_delta_stays_when_the_end_shows_it_broken() -> None:
    """The documented difference of streams (docs/openai.md): what went out cannot come back."""
    cut_off = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'
    vector = {**CALL, "output": cut_off}
    sent, finish, _ = _final_deltas(vector, len(cut_off) - 2)
    assert _call_deltas(sent) == [(0, "final_answer", "{"), (0, None, '"trigger": true}')]
    assert [d.content for d in sent] == [None, cut_off]
    assert finish == "tool_calls"


def test_reasoning_then_a_cut_off_call_all_in_the_last_delta() -> None:
    """Across the hand-off (the reasoning half fed the delta that left reasoning): the same."""
    cut_off = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
    vector = {**THINKING, "output": "Paris.\n</think>\n\nChecking." + cut_off}
    sent, finish, tool_parser = _final_deltas(vector, len("Paris.\n</think>"))
    assert [(d.reasoning, d.content, _call_deltas([d])) for d in sent] == [
        ("Paris.\n", None, []), (None, "\n\nChecking." + cut_off, [])
    ]
    assert finish == "stop"
    assert tool_parser.prev_tool_call_arr == []
    assert drivers.vllm_parse(vector) == normal("Paris.\n", "\n\nChecking." + cut_off, [])
