"""The chatcodec detectors inside SGLang 0.5.23: registration, the command line, request options.

The peer outputs are in ``test_peer_outputs.py``; here: the plugin loader and the CLI choices, the
name never taken from another package, ``tool_choice="required"`` / named on SGLang's generic
JSON-schema path, ``stream_reasoning=False``, a prompt that opened reasoning, and constructors
called with what SGLang passes (and without the tokenizer it may leave out).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from sglang.srt.entrypoints.openai.protocol import ToolChoice
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.server_args import _reasoning_parser_choices, _tool_call_parser_choices

from chatcodec.errors import ResponseTemplateNotFoundError
from chatcodec.integrations import sglang as plugin
from chatcodec.integrations.discovery import ENV_VAR
from chatcodec.integrations.sglang_detectors import ChatcodecReasoningDetector, ChatcodecToolDetector
from tests_engines import drivers
from tests_engines.harness import VECTORS, tokenizer

CALL = next(v for v in VECTORS if v["id"] == "hermes-vllm-content-then-call")
THINKING = (
    "The user wants Paris.\n</think>\n\nChecking.<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def test_the_entry_point_registered_both_detectors() -> None:
    assert FunctionCallParser.ToolCallParserEnum["chatcodec"] is ChatcodecToolDetector
    assert ReasoningParser.DetectorMap["chatcodec"] is ChatcodecReasoningDetector
    assert "chatcodec" in _tool_call_parser_choices()
    assert "chatcodec" in _reasoning_parser_choices()


def test_registering_again_changes_nothing() -> None:
    assert plugin.register() == ["tool", "reasoning"]
    assert FunctionCallParser.ToolCallParserEnum["chatcodec"] is ChatcodecToolDetector


def test_a_name_taken_by_another_package_is_left_alone(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    other = FunctionCallParser.ToolCallParserEnum["hermes"]
    monkeypatch.setitem(ReasoningParser.DetectorMap, "chatcodec", other)
    with caplog.at_level(logging.WARNING, logger="chatcodec"):
        assert plugin.register() == ["tool"]
    assert ReasoningParser.DetectorMap["chatcodec"] is other
    assert f"a reasoning parser named 'chatcodec' is already registered ({other.__module__}." in caplog.text


def test_an_unsupported_sglang_registers_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0.5.9")
    with caplog.at_level(logging.ERROR, logger="chatcodec"):
        assert plugin.register() == []
    assert "sglang 0.5.9 is not supported (the plugin needs sglang>=0.5.23,<0.6.0)" in caplog.text


def test_required_and_named_tool_choice_take_sglangs_json_schema_path() -> None:
    tools = drivers.sglang_tools(CALL)
    parser = FunctionCallParser(tools, "chatcodec", tokenizer=tokenizer("hermes"))
    assert parser.owns_tool_format() is False  # serving then parses with its JSON-array parser
    kind, schema = parser.get_structure_constraint("required")
    assert kind == "json_schema" and schema["type"] == "array"
    named = ToolChoice(function={"name": "get_weather"})
    assert parser.get_structure_constraint(named)[0] == "json_schema"


def _reasoning(force: bool, stream: bool, pieces: list[str]) -> tuple[str, str]:
    detector = ReasoningParser(
        "chatcodec", stream_reasoning=stream, force_reasoning=force, tokenizer=tokenizer("qwen3")
    )
    reasoning, normal, seen = "", "", []
    for piece in pieces:
        r, n = detector.parse_stream_chunk(piece)
        seen.append(r or "")
        reasoning, normal = reasoning + (r or ""), normal + (n or "")
    r, n = detector.parse_stream_end()
    return reasoning + (r or ""), normal + (n or "")


def test_a_prompt_that_opened_reasoning() -> None:
    pieces = [THINKING[i : i + 4] for i in range(0, len(THINKING), 4)]
    reasoning, normal = _reasoning(True, True, pieces)
    assert reasoning == "The user wants Paris.\n"  # the qwen3 profile keeps reasoning whitespace
    assert normal == THINKING.split("</think>")[1]  # the raw rest, for the tool-call stage


def test_reasoning_held_until_it_ends_when_not_streamed() -> None:
    detector = ReasoningParser(
        "chatcodec", stream_reasoning=False, force_reasoning=True, tokenizer=tokenizer("qwen3")
    )
    assert detector.parse_stream_chunk("The user ") == ("", "")
    assert detector.parse_stream_chunk("wants Paris.\n") == ("", "")
    reasoning, normal = detector.parse_stream_chunk("</think>\n\nHi")
    assert (reasoning, normal) == ("The user wants Paris.\n", "\n\nHi")


def test_constructors_take_what_sglang_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = tokenizer("hermes")
    ChatcodecReasoningDetector(
        stream_reasoning=True,
        force_reasoning=None,
        tokenizer=tok,
        continue_final_message=False,
        previous_content="",
        tool_call_parser_active=True,
    )
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(
        ResponseTemplateNotFoundError,
        match=f"gave the parser no tokenizer; name the response template with {ENV_VAR}",
    ):
        ChatcodecToolDetector()
    monkeypatch.setenv(ENV_VAR, "hermes")
    detector = ChatcodecToolDetector()
    result = detector.detect_and_parse(CALL["output"], drivers.sglang_tools(CALL))
    assert [(call.tool_index, call.name, call.parameters) for call in result.calls] == [
        (0, "get_weather", '{"city": "NYC"}')
    ]
    assert result.normal_text == "Sure, let me check the weather."


def _stream_tools(pieces: list[str]) -> tuple[str, list[Any]]:
    parser = FunctionCallParser(drivers.sglang_tools(CALL), "chatcodec", tokenizer=tokenizer("hermes"))
    normal, calls = "", []
    for piece in pieces:
        n, c = parser.parse_stream_chunk(piece)
        normal, calls = normal + n, calls + c
    n, c = parser.parse_stream_end()
    return normal + n, calls + c


def test_a_malformed_call_is_kept_as_content() -> None:
    """A cut-off call: its text is the content, whole; streamed, the call that had started stays
    (docs/openai.md)."""
    vector = next(v for v in VECTORS if v["id"] == "hermes-vllm-invalid-json")
    text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'
    assert drivers.sglang_parse(vector) == {"reasoning": "", "content": text, "tool_calls": []}
    for size in (1, 3, 0):
        got, items = drivers.sglang_stream(vector, size)
        assert got == {"reasoning": "", "content": text, "tool_calls": [("final_answer", {"trigger": True})]}
        assert (items[0].tool_index, items[0].name) == (0, "final_answer")


def test_first_item_names_the_call_later_items_carry_arguments() -> None:
    output = CALL["output"]
    normal, calls = _stream_tools([output[i : i + 3] for i in range(0, len(output), 3)])
    assert normal == "Sure, let me check the weather."
    assert next((c.tool_index, c.name) for c in calls) == (0, "get_weather")
    assert all(c.name is None for c in calls[1:])
    assert "".join(c.parameters for c in calls) == '{"city": "NYC"}'
