"""Round trip: render an assistant message with a real chat template, parse it back with the profile.

For every corpus chat template of a profiled family, four assistant messages (plain content,
reasoning, one tool call, several tool calls with string / number / nested / unicode arguments)
are rendered after one user turn. The output is the rendered conversation after the prompt that
``add_generation_prompt`` gives, and parsing it (three ways) must give the message back; content
and reasoning are compared after stripping the whitespace templates put around them.

Templates do not render every field. ``SPECS`` records, per template, each field it drops (the
test checks that the field's text is absent from the rendering, so a drop is the template's doing,
not the parser's), each value it changes, and each message it cannot render at all. When the
generation prompt pre-opens a block that the rendered history writes differently (``<think>\\n``
of R1-Distill, Gemma 4's empty thought), the prefix is the part the two renderings share.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from chatcodec import profiles
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import corpus_path
from tests.profiles.helpers import parse_three_ways, peer_view, same_json

USER = [{"role": "user", "content": "What is the weather in Tokyo?"}]
REASONING = "The user asks about the weather in Tokyo."
NESTED = {"units": "metric", "alerts": [1, 2.5], "deep": {"on": True}}
NOTE = 'naïve "quoted" ✓'
MESSAGES: dict[str, dict[str, Any]] = {
    "content": {"role": "assistant", "content": "It is sunny in Tokyo."},
    "reasoning": {"role": "assistant", "reasoning_content": REASONING, "content": "It is sunny in Tokyo."},
    "one_call": {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call00001",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            },
        ],
    },
    "calls": {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {
                "id": "call00002",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "東京", "days": 3}},
            },
            {
                "id": "call00003",
                "type": "function",
                "function": {"name": "set_config", "arguments": {"config": NESTED, "note": NOTE}},
            },
        ],
    },
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather.",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {
                    "city": {"type": "string", "description": "City name."},
                    "days": {"type": "integer", "description": "Number of days."},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_config",
            "description": "Set the configuration.",
            "parameters": {
                "type": "object",
                "required": ["config"],
                "properties": {
                    "config": {
                        "type": "object",
                        "description": "Settings.",
                        "additionalProperties": {"type": "string"},
                    },
                    "note": {"type": "string", "description": "A note."},
                },
            },
        },
    },
]


@dataclass(frozen=True)
class Spec:
    """How one corpus chat template renders the four messages."""

    profile: str
    drops: dict[str, tuple[str, ...]] = field(default_factory=dict)
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    unrenderable: dict[str, str] = field(default_factory=dict)
    arguments_as_text: bool = False
    tools_as_functions: bool = False
    variables: dict[str, Any] = field(default_factory=dict)
    preopened: str = ""
    next_turn: str = ""
    header: str = ""


R = ("reasoning_content",)
NO_REASONING = {"reasoning": R}
NO_CALLS = {"one_call": ("tool_calls",), "calls": ("tool_calls",)}

SPECS: dict[str, Spec] = {
    # the template writes object arguments with Python's str(), which is not JSON: the object-typed
    # parameter reads it back as the peers do (a Python literal)
    "ByteDance-Seed--Seed-OSS-36B-Instruct.jinja": Spec("seed_oss"),
    "CohereForAI--c4ai-command-r-plus-tool_use.jinja": Spec(
        "command_r_plus",
        drops=NO_REASONING,
        # the template writes its tool instructions after the last turn, so the prompt and the
        # history differ there: the output is the assistant turn between its header and turn end
        header="<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        next_turn="<|START_OF_TURN_TOKEN|>",
    ),
    "CohereLabs--c4ai-command-a-03-2025.jinja": Spec("command_r7b", drops={**NO_REASONING, **NO_CALLS}),
    "CohereLabs--command-a-reasoning-08-2025.jinja": Spec(
        "cohere2",
        drops={"calls": ("content",)},
        unrenderable={"one_call": "the template indexes content[0] of a tool-call turn with empty content"},
    ),
    "HuggingFaceTB--SmolLM3-3B.jinja": Spec("qwen3", drops={**NO_REASONING, **NO_CALLS}),
    "MiniMaxAI--MiniMax-M2.jinja": Spec("minimax_m2", preopened="<think>\n"),
    "NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja": Spec(
        "hermes", drops={**NO_REASONING, "calls": ("content",)}
    ),
    "Qwen--Qwen2.5-7B-Instruct.jinja": Spec("hermes", drops=NO_REASONING),
    "Qwen--Qwen3-0.6B.jinja": Spec("qwen3"),
    "Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja": Spec("qwen3_coder", drops=NO_REASONING),
    "Qwen--Qwen3-Next-80B-A3B.jinja": Spec("qwen3"),
    "Qwen--Qwen3.5-4B.jinja": Spec("qwen3_coder"),
    "XiaomiMiMo--MiMo-VL.jinja": Spec("hermes", drops=NO_REASONING),
    "ai21labs--AI21-Jamba-Large-1.6.jinja": Spec("jamba", drops=NO_REASONING),
    "deepseek-ai--DeepSeek-R1-Distill-Qwen-32B.jinja": Spec(
        "deepseek_r1", drops={**NO_REASONING, **NO_CALLS}, arguments_as_text=True, preopened="<think>\n"
    ),
    "deepseek-ai--DeepSeek-R1.jinja": Spec("deepseek_r1", drops=NO_REASONING, arguments_as_text=True),
    "deepseek-ai--DeepSeek-V2.5.jinja": Spec(
        "deepseek_v3", drops={**NO_REASONING, **NO_CALLS}, arguments_as_text=True
    ),
    "deepseek-ai--DeepSeek-V3.1.jinja": Spec("deepseek_v31", drops=NO_REASONING, arguments_as_text=True),
    "fireworks-ai--llama-3-firefunction-v2.jinja": Spec(
        "firefunction_v2",
        drops=NO_REASONING,
        arguments_as_text=True,
        next_turn="<|start_header_id|>",
        variables={"functions": json.dumps([tool["function"] for tool in TOOLS]), "datetime": "2026-01-15"},
    ),
    "google--gemma-4-31B-it.jinja": Spec(
        "gemma4", drops=NO_REASONING, preopened="<|channel>thought\n<channel|>"
    ),
    "ibm-granite--granite-3.1-1b-a400m-instruct.jinja": Spec("granite", drops={**NO_REASONING, **NO_CALLS}),
    "ibm-granite--granite-3.3-2b-instruct.jinja": Spec("granite33_think", drops={**NO_REASONING, **NO_CALLS}),
    "ibm-granite--granite-4.0.jinja": Spec("granite4", drops=NO_REASONING),
    "meetkai--functionary-medium-v3.1.jinja": Spec(
        "functionary_v3_1", drops=NO_REASONING, arguments_as_text=True
    ),
    "meta-llama--Llama-3.1-8B-Instruct.jinja": Spec(
        "llama3_json", drops=NO_REASONING, unrenderable={"calls": "one tool call per message only"}
    ),
    "meta-llama--Llama-3.2-11B-Vision-Instruct.jinja": Spec(
        "llama3_json", drops=NO_REASONING, unrenderable={"calls": "one tool call per message only"}
    ),
    "meta-llama--Llama-4-Scout-17B-16E-Instruct.jinja": Spec("llama4_pythonic", drops=NO_REASONING),
    "mistralai--Ministral-3-14B-Reasoning-2512.jinja": Spec("mistral_reasoning", drops=NO_REASONING),
    "mistralai--Mistral-Nemo-Instruct-2407.jinja": Spec(
        "mistral", drops={**NO_REASONING, "calls": ("content",)}
    ),
    "moonshotai--Kimi-K2-Instruct.jinja": Spec("kimi_k2", drops=NO_REASONING),
    "nvidia--Llama-3.1-Nemotron-70B-Instruct.jinja": Spec(
        "llama3_json", drops=NO_REASONING, unrenderable={"calls": "one tool call per message only"}
    ),
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": Spec("nemotron3", preopened="\n"),
    "nvidia--NVIDIA-Nemotron-Nano-9B-v2.jinja": Spec(
        "nemotron_v2",
        preopened="<think>\n",
        unrenderable={
            kind: "the last assistant turn is rendered as '<think>\\n' + content: the template expects the "
            "reasoning and '</think>' inside content"
            for kind in ("content", "reasoning", "calls")
        },
    ),
    "openai--gpt-oss-120b.jinja": Spec(
        "gpt_oss",
        changes={
            "calls": {
                # content beside tool calls goes to the analysis channel; only the first call is rendered
                "content": None,
                "reasoning_content": "Let me check.",
                "tool_calls": [{"name": "get_weather", "arguments": {"city": "東京", "days": 3}}],
            }
        },
    ),
    "swiss-ai--Apertus-8B-Instruct.jinja": Spec(
        "apertus", drops=NO_REASONING, tools_as_functions=True, arguments_as_text=True
    ),
    "unsloth--Devstral-Small-2507.jinja": Spec("mistral_args", drops=NO_REASONING),
    "zai-org--GLM-4.6.jinja": Spec("glm45"),
}

CASES = [(file, kind) for file in sorted(SPECS) for kind in MESSAGES]


def test_specs_cover_every_corpus_template_of_a_profile() -> None:
    from tests.profiles.test_detect import EXPECTED

    assert {file: spec.profile for file, spec in SPECS.items()} == {
        file: name for file, name in EXPECTED.items() if name is not None
    }


def _render(spec: Spec, file: str, message: dict[str, Any] | None) -> tuple[str, str]:
    """The generation prompt after the user turn, and the conversation rendered with ``message``."""
    chat_template = corpus_path("chat_templates", file).read_text(encoding="utf-8")
    tools = [tool["function"] for tool in TOOLS] if spec.tools_as_functions else TOOLS
    variables = {**profiles.load(spec.profile).special_tokens, **spec.variables}
    prompt = render_chat_template(chat_template, USER, tools=tools, add_generation_prompt=True, **variables)
    messages = [*USER, message] if message is not None else USER
    return prompt, render_chat_template(chat_template, messages, tools=tools, **variables)


def split_output(spec: Spec, file: str, message: dict[str, Any]) -> tuple[str, str, str]:
    """Render ``message`` after the user turn and split it into (prefix, output, pre-opened).

    ``output`` is what the model generates (the rendering after the prompt, cut before the next
    turn); ``prefix`` is the part of the prompt the rendering shares; ``pre-opened`` is the rest of
    the prompt, a block the generation prompt pre-opens and the history writes differently.
    """
    prompt, full = _render(spec, file, _as_text(message) if spec.arguments_as_text else message)
    if spec.header:
        start = full.index(spec.header, full.index(USER[0]["content"])) + len(spec.header)
        prefix = full[:start]
    else:
        prefix = _shared_prefix(prompt, full)
        assert spec.preopened.endswith(prompt[len(prefix) :]), "the rendered history must continue the prompt"
        if prefix != prompt and prompt.endswith(spec.preopened):
            prefix = prompt[: len(prompt) - len(spec.preopened)]  # never split a marker such as "<|"
    output = full[len(prefix) :]
    if spec.next_turn:  # the template renders more after the assistant turn; the model stops before it
        output = output[: output.index(spec.next_turn)]
    return prefix, output, prompt[len(prefix) :] if prompt.startswith(prefix) else ""


def _shared_prefix(prompt: str, full: str) -> str:
    length = 0
    while length < min(len(prompt), len(full)) and prompt[length] == full[length]:
        length += 1
    return prompt[:length]


def _as_text(message: dict[str, Any]) -> dict[str, Any]:
    message = copy.deepcopy(message)
    for call in message.get("tool_calls", []):
        call["function"]["arguments"] = json.dumps(call["function"]["arguments"], ensure_ascii=False)
    return message


@pytest.mark.parametrize(("file", "kind"), CASES, ids=[f"{file[:-6]}:{kind}" for file, kind in CASES])
def test_round_trip(file: str, kind: str) -> None:
    spec = SPECS[file]
    message = MESSAGES[kind]
    if kind in spec.unrenderable:
        _assert_unrenderable(spec, file, message)
        return
    prefix, output, _ = split_output(spec, file, message)
    parsed = peer_view(
        parse_three_ways(profiles.load(spec.profile).response_template, output, prefix=prefix, tools=TOOLS)
    )
    expected = peer_view(message)
    for name in spec.drops.get(kind, ()):
        _assert_dropped(name, expected, output)
        expected[name] = [] if name == "tool_calls" else None
    expected.update(spec.changes.get(kind, {}))
    for name in ("content", "reasoning_content"):
        assert (parsed[name] or "").strip() == (expected[name] or "").strip(), name
    assert len(parsed["tool_calls"]) == len(expected["tool_calls"])
    for got, want in zip(parsed["tool_calls"], expected["tool_calls"], strict=True):
        assert got["name"] == want["name"] and same_json(got["arguments"], want["arguments"]), got


def _assert_dropped(name: str, expected: dict[str, Any], output: str) -> None:
    """A dropped field's text is absent from the rendering: the template dropped it, not the parser."""
    if name == "tool_calls":
        assert all(call["name"] not in output for call in expected["tool_calls"])
    else:
        assert expected[name] and expected[name] not in output


def _assert_unrenderable(spec: Spec, file: str, message: dict[str, Any]) -> None:
    """The template raises, or renders something the message cannot come back from."""
    try:
        prompt, full = _render(spec, file, message)
    except Exception as error:  # the template's own error (UndefinedError, raise_exception)
        assert type(error).__name__.startswith("ChatTemplate")
        return
    prefix = _shared_prefix(prompt, full)
    parsed = peer_view(
        parse_three_ways(
            profiles.load(spec.profile).response_template, full[len(prefix) :], prefix=prefix, tools=TOOLS
        )
    )
    assert parsed != peer_view(message)
