"""``to_chat_message``: a parsed message as a Chat Completions assistant message, exactly."""

from __future__ import annotations

import pytest

import chatcodec
from chatcodec import profiles
from chatcodec.openai import ToolCallIds, arguments_text, to_chat_message
from tests.openai_wire.helpers import check_message


def index_ids(name: str, index: int) -> str:
    return f"call_{index}"


def test_content_reasoning_and_calls() -> None:
    message = {
        "role": "assistant",
        "reasoning_content": "Paris, then Tokyo.",
        "content": "Let me check.",
        "tool_calls": [
            {"type": "function",
             "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
            {"id": "abc123XYZ", "type": "function", "function": {"name": "get_time", "arguments": {}}},
        ],
    }
    chat = to_chat_message(message, ids=index_ids)
    assert chat == {
        "role": "assistant",
        "content": "Let me check.",
        "reasoning_content": "Paris, then Tokyo.",
        "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": 3}'}},
            {"id": "abc123XYZ", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
        ],
    }
    check_message(chat, ["reasoning_content"])


def test_no_content_is_null_and_the_reasoning_key_is_the_callers() -> None:
    message = {"role": "assistant", "reasoning_content": "Hm.", "content": ""}
    assert to_chat_message(message, reasoning_key="reasoning") == {
        "role": "assistant", "content": None, "reasoning": "Hm."}
    assert to_chat_message(message, reasoning_key=None) == {"role": "assistant", "content": None}
    assert to_chat_message({"role": "assistant"}) == {"role": "assistant", "content": None}


@pytest.mark.parametrize("key", ["thinking", "reasoning"])
def test_reasoning_under_another_name_is_read(key: str) -> None:
    assert to_chat_message({key: "Hm.", "content": "Hi"}) == {
        "role": "assistant", "content": "Hi", "reasoning_content": "Hm."}


def test_arguments_are_one_canonical_json_text() -> None:
    arguments = {"city": "東京", "note": 'say "hi"\n', "n": 1.0, "ok": True, "none": None,
                 "list": [1, {"a": []}], "empty": {}}
    assert arguments_text(arguments) == (
        '{"city": "東京", "note": "say \\"hi\\"\\n", "n": 1.0, "ok": true, "none": null, '
        '"list": [1, {"a": []}], "empty": {}}'
    )
    assert arguments_text("not json {") == "not json {"
    assert arguments_text(None) == "{}"


def test_a_float_past_the_range_is_a_json_number() -> None:
    # the JSON content parser reads 1e999 as inf; json.dumps writes Infinity, which JSON.parse and
    # every strict client refuse, losing the whole call; 1e999 reads back as the same float
    arguments = {"big": float("inf"), "list": [-float("inf"), "Infinity \"x\" -Infinity"], "n": 2.5}
    assert arguments_text(arguments) == (
        '{"big": 1e999, "list": [-1e999, "Infinity \\"x\\" -Infinity"], "n": 2.5}'
    )
    assert arguments_text({"Infinity": "NaN"}) == '{"Infinity": "NaN"}'
    with pytest.raises(TypeError) as caught:
        to_chat_message({"tool_calls": [{"name": "f", "arguments": {"a": [float("nan")]}}]})
    assert str(caught.value) == "tool_calls[0].function.arguments: NaN is no JSON number"


def test_flat_calls_and_other_keys_pass_through() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
        "builtin_tool_calls": [{"recipient": "browser.search", "content": '{"q": "x"}'}],
        "parse_errors": [{"field": "tool_calls"}],
    }
    assert to_chat_message(message, ids=index_ids) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_0", "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1}'}}],
        "builtin_tool_calls": [{"recipient": "browser.search", "content": '{"q": "x"}'}],
    }


def test_an_empty_model_id_is_replaced() -> None:
    call = {"id": "", "type": "function", "function": {"name": "f", "arguments": {}}}
    assert to_chat_message({"tool_calls": [call]}, ids=index_ids)["tool_calls"][0]["id"] == "call_0"


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"content": ["a"]}, "content: expected text, got list"),
        ({"reasoning_content": 3}, "reasoning_content: expected text, got int"),
        ({"tool_calls": {"a": 1}}, "tool_calls: must be a list, got dict"),
        ({"tool_calls": ["f()"]}, "tool_calls[0]: a tool call must be a dict, got str"),
        ({"tool_calls": [{"function": {"arguments": {}}}]}, "tool_calls[0].function.name: must be a string"),
    ],
)
def test_a_message_of_another_shape_is_a_clear_error(message: dict[str, object], error: str) -> None:
    with pytest.raises(TypeError, match=error.replace("[", r"\[").replace("]", r"\]")):
        to_chat_message(message)


def test_default_ids_look_like_openais() -> None:
    chat = to_chat_message({"tool_calls": [{"function": {"name": "f", "arguments": {}}}] * 2})
    first, second = (call["id"] for call in chat["tool_calls"])
    assert first.startswith("call_") and len(first) == 29 and first[5:].isalnum()
    assert first != second


def test_the_profiles_id_form() -> None:
    """A Kimi output carries the model's own id; a Mistral call without one gets 9 alphanumerics."""
    kimi = profiles.load("kimi_k2")
    output = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
              '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>')
    parsed = chatcodec.parse_response(output, kimi.response_template, prefix="")
    assert to_chat_message(parsed)["tool_calls"] == [
        {"id": "functions.get_weather:0", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]
    mistral = profiles.load("mistral_v11")
    parsed = chatcodec.parse_response('[TOOL_CALLS]get_time[ARGS]{"zone": "UTC"}', mistral.response_template,
                                      prefix="")
    call_id = to_chat_message(parsed, ids=ToolCallIds.for_profile("mistral_v11"))["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum()
