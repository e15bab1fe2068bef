"""The chatcodec detectors inside SGLang 0.5.23: registration, the command line, request options.

The peer outputs are in ``test_peer_outputs.py``; here: the plugin loader and the CLI choices, the
name never taken from another package, ``tool_choice="required"`` / named on SGLang's generic
JSON-schema path, ``stream_reasoning=False``, a prompt that opened reasoning, and constructors
called with what SGLang passes (and without the tokenizer it may leave out).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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


def test_parallel_tool_calls_false_as_sglang_does_for_its_own_detectors() -> None:
    """SGLang enforces one call through the constraint of required / named tool choice (its JSON
    schema then takes one item); with "auto" it constrains nothing for a detector without a
    model-native structural tag, its own hermes and qwen25 included, so every call is returned."""
    tools = drivers.sglang_tools(CALL)
    for name in ("chatcodec", "hermes"):
        parser = FunctionCallParser(tools, name, tokenizer=tokenizer("hermes"))
        assert parser.get_structure_constraint("auto", parallel_tool_calls=False) is None
    parser = FunctionCallParser(tools, "chatcodec", tokenizer=tokenizer("hermes"))
    kind, schema = parser.get_structure_constraint("required", parallel_tool_calls=False)
    assert (kind, schema["minItems"], schema["maxItems"]) == ("json_schema", 1, 1)
    kind, schema = parser.get_structure_constraint("required", parallel_tool_calls=True)
    assert (kind, schema["minItems"], "maxItems" in schema) == ("json_schema", 1, False)


def test_a_model_without_a_response_template_stops_the_server_at_startup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SGLang's chat server and scheduler build the reasoning parser when they start (and catch
    only ValueError around it): the error stops the server, naming the model and the variable."""
    from chatcodec.integrations import discovery

    monkeypatch.delenv(ENV_VAR, raising=False)
    tok = tokenizer("hermes")
    original = tok.chat_template
    tok.chat_template = "{{ messages[0]['content'] }}"  # matches no bundled profile
    discovery._cache.clear()
    try:
        with pytest.raises(ResponseTemplateNotFoundError) as raised:
            ReasoningParser(model_type="chatcodec", stream_reasoning=True, tokenizer=tok)
        with pytest.raises(ResponseTemplateNotFoundError):  # per request, with the tool parser alone
            FunctionCallParser(drivers.sglang_tools(CALL), "chatcodec", tokenizer=tok)
    finally:
        tok.chat_template = original
        discovery._cache.clear()
    assert not isinstance(raised.value, ValueError)
    message = str(raised.value)
    assert message.startswith("chatcodec: no response template for 'Qwen/Qwen2.5-7B-Instruct'")
    assert f"environment variable {ENV_VAR}" in message


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


def _chain(
    pieces: list[str],
    *,
    tool_parser_first: bool = False,
    change: dict[int, Callable[[str], str]] | None = None,
) -> tuple[str, str, list[Any], Any]:
    """SGLang's two stages per delta, as ``serving_chat`` chains them (both built with the first
    delta); ``change`` changes the text the tool stage is given at some deltas."""
    tok = tokenizer("qwen3")
    tools = drivers.sglang_tools(CALL)
    tool_parser = FunctionCallParser(tools, "chatcodec", tokenizer=tok) if tool_parser_first else None
    reasoning_parser = ReasoningParser(
        "chatcodec", stream_reasoning=True, force_reasoning=True, tokenizer=tok
    )
    tool_parser = tool_parser or FunctionCallParser(tools, "chatcodec", tokenizer=tok)
    reasoning, content, items = "", "", []
    for number, piece in enumerate(pieces):
        found, normal = reasoning_parser.parse_stream_chunk(piece)
        if number == len(pieces) - 1:
            end_found, end_normal = reasoning_parser.parse_stream_end()
            found, normal = (found or "") + (end_found or ""), (normal or "") + (end_normal or "")
        reasoning += found or ""
        normal_text, calls = tool_parser.parse_stream_chunk((change or {}).get(number, str)(normal or ""))
        content, items = content + normal_text, items + calls
    normal_text, calls = tool_parser.parse_stream_end()
    return reasoning, content + normal_text, items + calls, tool_parser.detector


def _calls(items: list[Any]) -> list[tuple[int, str | None, str]]:
    merged: dict[int, list[Any]] = {}
    for item in items:
        entry = merged.setdefault(item.tool_index, [None, ""])
        entry[0] = item.name or entry[0]
        entry[1] += item.parameters
    return [(index, name, arguments) for index, (name, arguments) in sorted(merged.items())]


THINKING_CALL = [(0, "get_weather", '{"city": "Paris"}')]
THINKING_SPLIT = ("The user wants Paris.\n", "\n\nChecking.", THINKING_CALL)


def test_the_tool_stage_reads_the_reasoning_stages_parse() -> None:
    """One parse per request: the tool detector never builds a parser of its own."""
    for size in (1, 4, len(THINKING)):
        pieces = [THINKING[i : i + size] for i in range(0, len(THINKING), size)]
        reasoning, content, items, detector = _chain(pieces)
        assert (reasoning, content, _calls(items)) == THINKING_SPLIT
        assert detector._session is None
        assert detector.prev_tool_call_arr == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
        assert detector.streamed_args_for_tool == ['{"city": "Paris"}']


def test_stages_built_in_the_other_order_parse_separately() -> None:
    pieces = [THINKING[i : i + 4] for i in range(0, len(THINKING), 4)]
    reasoning, content, items, detector = _chain(pieces, tool_parser_first=True)
    assert (reasoning, content, _calls(items)) == THINKING_SPLIT
    assert detector._session is not None


def test_a_tool_stage_given_other_text_parses_that_text_itself(caplog: pytest.LogCaptureFixture) -> None:
    """SGLang changing the text between the stages: the tool stage sends what the text it was given
    says, from the delta it changed on (what it sent before stands)."""
    pieces = [THINKING[i : i + 4] for i in range(0, len(THINKING), 4)]
    at = next(n for n, piece in enumerate(pieces) if "Che" in piece)  # "\nChe", inside the content
    with caplog.at_level(logging.WARNING, logger="chatcodec"):
        reasoning, content, items, detector = _chain(pieces, change={at: str.upper})
    assert (reasoning, content, _calls(items)) == ("The user wants Paris.\n", "\n\nCHECking.", THINKING_CALL)
    assert detector._session is not None
    assert "given other text than its reasoning stage handed on" in caplog.text
