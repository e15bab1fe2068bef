"""``ChatCodec.apply_chat_request``: a Chat Completions request to a model's prompt, text or ids."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from chatcodec import ChatCodec
from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.model.tokenizer import Tokenizer
from tests.chat_templates.goldens import golden_line
from tests.conftest import corpus_template, load_json
from tests.model.helpers import QWEN3_TEMPLATE, chatml_tokenizer

CLOCK = datetime(2026, 1, 15, 12, 0, 0)
QWEN3_TOKENS = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}


@pytest.fixture(scope="module")
def qwen3() -> ChatCodec:
    return ChatCodec(
        corpus_template(QWEN3_TEMPLATE), special_tokens=QWEN3_TOKENS, tokenizer=Tokenizer(chatml_tokenizer())
    )


def test_text_and_ids(qwen3: ChatCodec) -> None:
    messages = load_json("conversations.json")["multi_turn"]["messages"]
    request = {"model": "qwen3", "messages": messages, "reasoning_effort": "none", "stream": True}
    expected = golden_line(QWEN3_TEMPLATE, "multi_turn", enable_thinking=False)["rendered"]
    assert qwen3.apply_chat_request(request, tokenize=False) == expected
    ids = qwen3.apply_chat_request(request)
    assert ids == qwen3.apply_chat_template(messages, add_generation_prompt=True, enable_thinking=False)
    assert qwen3.decode(ids["input_ids"]) == expected
    assert qwen3.apply_chat_request(request, return_dict=False) == ids["input_ids"]


def test_server_variables_lose_to_the_request(qwen3: ChatCodec) -> None:
    messages = load_json("conversations.json")["multi_turn"]["messages"]
    thinking = golden_line(QWEN3_TEMPLATE, "multi_turn")["rendered"]
    not_thinking = golden_line(QWEN3_TEMPLATE, "multi_turn", enable_thinking=False)["rendered"]
    assert (
        qwen3.apply_chat_request({"messages": messages}, tokenize=False, enable_thinking=False)
        == not_thinking
    )
    assert (
        qwen3.apply_chat_request(
            {"messages": messages, "chat_template_kwargs": {"enable_thinking": True}},
            tokenize=False,
            enable_thinking=False,
        )
        == thinking
    )


@pytest.mark.parametrize(
    ("tools", "template"),
    [
        ([], "Qwen--Qwen2.5-7B-Instruct.jinja"),
        (None, "Qwen--Qwen2.5-7B-Instruct.jinja"),
        ("conversation", "NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja"),
    ],
)
def test_named_templates_are_chosen_by_the_request_tools(tools: Any, template: str) -> None:
    codec = ChatCodec(
        {
            "default": corpus_template("Qwen--Qwen2.5-7B-Instruct.jinja"),
            "tool_use": corpus_template("NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja"),
        }
    )
    conversation = load_json("conversations.json")["tools_offered"]
    request = {
        "messages": conversation["messages"],
        "tools": conversation["tools"] if tools == "conversation" else tools,
    }
    line = golden_line(template, "tools_offered" if tools == "conversation" else "system_user")
    if tools != "conversation":
        request["messages"] = load_json("conversations.json")["system_user"]["messages"]
    assert codec.apply_chat_request(request, tokenize=False, now=CLOCK, **line["kwargs"]) == line["rendered"]


def test_sanitising_marks_the_request_inputs(qwen3: ChatCodec) -> None:
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi <|im_end|>"}]}]}
    plain = qwen3.apply_chat_request(request, return_dict=False)
    sanitised = qwen3.apply_chat_request(request, return_dict=False, sanitize_control_tokens=True)
    end = qwen3.tokenizer.token_to_id("<|im_end|>") if qwen3.tokenizer else None
    assert plain.count(end) == 2 and sanitised.count(end) == 1


def test_an_unusable_request(qwen3: ChatCodec) -> None:
    with pytest.raises(ConversationError, match=r"^tool_choice: 'required' needs tools"):
        qwen3.apply_chat_request(
            {"messages": [{"role": "user", "content": "Hi"}], "tool_choice": "required", "tools": []}
        )
