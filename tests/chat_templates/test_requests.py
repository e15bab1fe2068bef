"""A whole Chat Completions request turned into the prompt (``render_chat_request``, ``read_chat_request``).

Expected prompts are the corpus goldens (rendered by the reference) wherever a request says what a
golden render's variables say (``reasoning_effort: "none"`` is Qwen3's ``enable_thinking=False``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from chatcodec import render_chat_request
from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.chat_templates.requests import ChatRequestInputs, read_chat_request, request_tools
from tests.chat_templates.goldens import golden_line
from tests.conftest import corpus_template, load_json

CLOCK = datetime(2026, 1, 15, 12, 0, 0)
ECHO = (
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def request_for(conversation: str, **fields: Any) -> dict[str, Any]:
    given = load_json("conversations.json")[conversation]
    request: dict[str, Any] = {"model": "any", "messages": given["messages"], "temperature": 0.2, **fields}
    if given["tools"] is not None:
        request.setdefault("tools", given["tools"])
    return request


def render(template: str, request: dict[str, Any], line: dict[str, Any]) -> str:
    return render_chat_request(corpus_template(template), request, now=CLOCK, **line["kwargs"])


def base_kwargs(template: str, conversation: str = "multi_turn") -> dict[str, Any]:
    return dict(golden_line(template, conversation)["kwargs"])


@pytest.mark.parametrize(
    ("template", "effort", "variant"),
    [
        ("Qwen--Qwen3-0.6B.jinja", "none", {"enable_thinking": False}),
        ("Qwen--Qwen3-0.6B.jinja", "high", {}),
        ("zai-org--GLM-4.6.jinja", "none", {"enable_thinking": False}),
        ("HuggingFaceTB--SmolLM3-3B.jinja", "none", {"enable_thinking": False}),
        ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "none", {"enable_thinking": False}),
        ("deepseek-ai--DeepSeek-V3.1.jinja", "medium", {"thinking": True}),
        ("deepseek-ai--DeepSeek-V3.1.jinja", "none", {}),
        ("ibm-granite--granite-3.3-2b-instruct.jinja", "low", {"thinking": True}),
        ("CohereLabs--command-a-reasoning-08-2025.jinja", "none", {"reasoning": False}),
        ("CohereLabs--command-a-reasoning-08-2025.jinja", "high", {}),
        ("openai--gpt-oss-120b.jinja", "high", {"reasoning_effort": "high"}),
        ("tencent--Hy3.jinja", "high", {"reasoning_effort": "high"}),
    ],
)
def test_reasoning_effort_reaches_the_template_as_it_reads_it(
    template: str, effort: str, variant: dict[str, Any]
) -> None:
    expected = golden_line(template, "multi_turn", **variant)
    request = request_for("multi_turn", reasoning_effort=effort)
    assert (
        render_chat_request(corpus_template(template), request, now=CLOCK, **base_kwargs(template))
        == expected["rendered"]
    )


def test_the_switch_set_from_the_effort() -> None:
    qwen3 = corpus_template("Qwen--Qwen3-0.6B.jinja")
    assert read_chat_request(request_for("multi_turn", reasoning_effort="minimal"), qwen3).variables == {
        "reasoning_effort": "minimal",
        "enable_thinking": True,
    }
    gpt_oss = corpus_template("openai--gpt-oss-120b.jinja")
    assert read_chat_request(request_for("multi_turn", reasoning_effort="none"), gpt_oss).variables == {
        "reasoning_effort": "none"
    }  # a template that reads the effort gets only the effort
    assert read_chat_request(request_for("multi_turn", reasoning_effort="high"), ECHO).variables == {
        "reasoning_effort": "high"
    }


def test_chat_template_kwargs_win() -> None:
    template = "Qwen--Qwen3-0.6B.jinja"
    request = request_for(
        "multi_turn", reasoning_effort="none", chat_template_kwargs={"enable_thinking": True}
    )
    assert (
        render_chat_request(corpus_template(template), request, now=CLOCK, **base_kwargs(template))
        == (golden_line(template, "multi_turn")["rendered"])
    )
    request = request_for("multi_turn", chat_template_kwargs={"enable_thinking": False})
    assert (
        render_chat_request(
            corpus_template(template),
            request,
            now=CLOCK,
            **{**base_kwargs(template), "enable_thinking": True},
        )
        == (golden_line(template, "multi_turn", enable_thinking=False)["rendered"])
    )  # over the caller's too


def test_a_whole_request_in_the_wire_form() -> None:
    template = "Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja"
    request = {
        "model": "qwen3-coder",
        "stream": True,
        "max_tokens": 512,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "What's the weather in Lisbon in celsius?"}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "Ab3dE6gH9",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"city":"Lisbon","unit":"celsius"}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "Ab3dE6gH9",
                "content": '{"temperature": 18, "condition": "sunny"}',
            },
            {"role": "assistant", "content": "It is 18 °C and sunny in Lisbon."},
        ],
        "tools": load_json("conversations.json")["tool_call_roundtrip"]["tools"],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
        "add_generation_prompt": False,
    }
    line = golden_line(template, "tool_call_roundtrip", add_generation_prompt=False)
    assert (
        render_chat_request(corpus_template(template), request, now=CLOCK, **line["kwargs"])
        == line["rendered"]
    )


def test_the_generation_prompt_is_added_unless_the_final_message_is_continued() -> None:
    template = "Qwen--Qwen3-0.6B.jinja"
    line = golden_line(template, "system_user")
    assert render(template, request_for("system_user"), line) == line["rendered"]
    continued = render_chat_request(
        ECHO,
        {
            "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hel"}],
            "continue_final_message": True,
        },
    )
    assert continued == "<user>Hi<assistant>Hel"


def test_a_developer_message_is_the_system_message_of_a_template_without_that_role() -> None:
    template = "Qwen--Qwen3-0.6B.jinja"
    line = golden_line(template, "system_user")
    system, user = load_json("conversations.json")["system_user"]["messages"]
    request = {"messages": [{"role": "developer", "content": system["content"]}, user]}
    assert render(template, request, line) == line["rendered"]


def test_request_variables_reach_the_template() -> None:
    template = (
        "{{ tool_choice }}|{{ parallel_tool_calls }}|{{ response_format.type }}|{{ documents|length }}"
        "|{{ add_generation_prompt }}"
    )
    request = {
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "tool_choice": "required",
        "parallel_tool_calls": True,
        "response_format": {"type": "json_object"},
        "documents": [{"title": "t", "text": "x"}],
    }
    assert render_chat_request(template, request) == "required|True|json_object|1|True"


def test_read_chat_request() -> None:
    request = {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "tools": [],
        "user": "someone",
        "seed": 3,
    }
    assert read_chat_request(request, ECHO) == ChatRequestInputs(
        messages=[{"role": "user", "content": "Hi"}],
        tools=None,
        documents=None,
        add_generation_prompt=True,
        continue_final_message=False,
        variables={},
    )
    assert request_tools(request) is None
    assert request_tools({"messages": [], "tools": [{"type": "function", "function": {"name": "f"}}]}) == [
        {"type": "function", "function": {"name": "f"}}
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"messages": None}, "messages: a Chat Completions request needs 'messages' (a list of messages)"),
        ({"messages": "Hi"}, "messages: expected a list of messages, got str"),
        (
            {"messages": [["user", "Hi"]]},
            "messages[0]: expected a message object (role, content, ...), got list",
        ),
        (
            {"functions": [{"name": "f"}]},
            "functions: the legacy 'functions' field is not supported; send the functions as 'tools'",
        ),
        (
            {"function_call": "auto"},
            "function_call: the legacy 'function_call' field is not supported; use 'tool_choice'",
        ),
        (
            {"chat_template": "{{ 1 }}"},
            "chat_template: a request cannot bring its own chat template; chatcodec renders the model's",
        ),
        ({"tool_choice": "required"}, "tool_choice: 'required' needs tools, and the request has none"),
        (
            {"tool_choice": "any"},
            "tool_choice: expected 'none', 'auto', 'required' or {\"type\": \"function\", "
            '"function": {"name": ...}}, got any',
        ),
        (
            {
                "tool_choice": {"type": "function", "function": {"name": "g"}},
                "tools": [{"type": "function", "function": {"name": "f"}}],
            },
            "tool_choice: the function 'g' is not among the request's tools ('f')",
        ),
        ({"parallel_tool_calls": "yes"}, "parallel_tool_calls: expected true or false, got str"),
        (
            {"reasoning_effort": 2},
            "reasoning_effort: expected a string such as 'low', 'medium', 'high' or 'none', got int",
        ),
        (
            {"chat_template_kwargs": {"tools": []}},
            "chat_template_kwargs: 'tools' is set by the request itself (use the request's 'tools' field)",
        ),
        ({"chat_template_kwargs": ["x"]}, "chat_template_kwargs: expected an object of template variables"),
    ],
)
def test_unusable_requests_say_which_field(fields: dict[str, Any], message: str) -> None:
    request = {"messages": [{"role": "user", "content": "Hi"}], **fields}
    with pytest.raises(ConversationError) as caught:
        render_chat_request(ECHO, request)
    assert str(caught.value) == message


def test_a_request_that_is_not_a_dict() -> None:
    with pytest.raises(
        ConversationError,
        match=r"^request: expected a Chat Completions request \(a dict with "
        r"'messages'\), got str$",
    ):
        render_chat_request(ECHO, "Hi")
