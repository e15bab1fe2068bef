"""SPEC 1.8b: formats that continue an assistant turn after a tool result without a new header.

DeepSeek V3.x, Mistral (``[/TOOL_RESULTS]``) and Gemma 4 (``<tool_response|>``) write the model's
next output right after the tool result: the prompt then ends with the tool-result end marker, and
the last assistant header in it is the header of the turn that made the tool call. A start anchor
that only matched the header would feed that earlier tool call (and the tool result) through the
parser as if it were new output; these profiles list the tool-result end markers as further start
anchors, so parsing starts after the result.

Every corpus chat template of a profiled family renders a conversation that ends after a tool
result, and the output the template writes for a new turn (plain content; one tool call) must parse
to that turn alone. Mistral v11 has no corpus template and is checked on a prompt written by hand.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from chatcodec import profiles
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import corpus_path
from tests.profiles import test_round_trip as round_trip
from tests.profiles.helpers import parse_three_ways, peer_view

CALL = {
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": json.dumps({"city": "Lisbon"})},
}
CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather in Lisbon?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call00001", "content": '{"temperature": 18}'},
]
OUTPUT = "It is 18 °C in Lisbon.<｜end▁of▁sentence｜>"

#: corpus template -> (profile, the tool-result end marker the prompt ends with). The R1-Distill
#: and V2.5 templates render tool calls only when ``content`` is None, a key apply_chat_template
#: drops (reference behaviour), so they cannot render a tool-call turn and are not listed.
CASES = {
    "deepseek-ai--DeepSeek-V3.1.jinja": ("deepseek_v31", "<｜tool▁output▁end｜>"),
    "deepseek-ai--DeepSeek-R1.jinja": ("deepseek_r1", "<｜tool▁outputs▁end｜>"),
}


def _prompt(file: str, name: str) -> str:
    chat_template = corpus_path("chat_templates", file).read_text(encoding="utf-8")
    return render_chat_template(
        chat_template, CONVERSATION, add_generation_prompt=True, **profiles.load(name).special_tokens
    )


@pytest.mark.parametrize("file", sorted(CASES))
def test_prompt_ending_after_a_tool_result_parses_only_the_new_output(file: str) -> None:
    name, marker = CASES[file]
    prompt = _prompt(file, name)
    assert prompt.endswith(marker)
    assert "<｜tool▁call▁begin｜>" in prompt.rsplit("<｜Assistant｜>", 1)[1]
    message = parse_three_ways(profiles.load(name).response_template, OUTPUT, prefix=prompt)
    assert message == {"role": "assistant", "content": "It is 18 °C in Lisbon."}


@pytest.mark.parametrize("file", sorted(CASES))
def test_a_header_only_anchor_would_replay_the_earlier_tool_call(file: str) -> None:
    name, _ = CASES[file]
    template = profiles.load(name).response_template
    template.pop("start_anchor_pattern", None)
    template["start_anchor"] = "<｜Assistant｜>"
    message = parse_three_ways(template, OUTPUT, prefix=_prompt(file, name))
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["get_weather"]


# ------------------------------------------------------------------ every corpus template (SPEC 1.8b)

#: The turn that made a tool call, and its result: the history every template renders before the
#: generation prompt. The arguments are text where the template expects text (``arguments_as_text``).
TOOL_RESULT = {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "sunny"}
#: Templates that cannot render the tool-result history, and why (the family is a new-header format
#: anyway: its tool results are their own turn, followed by the assistant header).
NO_TOOL_HISTORY = {
    "CohereLabs--c4ai-command-a-03-2025.jinja": "without documents the template rejects a tool turn "
    "('Conversation roles must alternate')",
}
#: Templates that index ``content[0]`` of a tool-call turn: its content is given as a text block.
CONTENT_AS_BLOCKS = {"CohereLabs--command-a-reasoning-08-2025.jinja"}
#: What each kind of new output parses to, whatever came before it.
AFTER_RESULT = {
    "content": {"content": "It is sunny in Tokyo.", "reasoning_content": None, "tool_calls": []},
    "one_call": {
        "content": None,
        "reasoning_content": None,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    },
}
MULTITURN_CASES = [
    (file, kind)
    for file, spec in sorted(round_trip.SPECS.items())
    if file not in NO_TOOL_HISTORY
    for kind in AFTER_RESULT
    if kind not in spec.unrenderable and kind not in spec.drops
]


def _history(file: str, spec: round_trip.Spec) -> list[dict[str, Any]]:
    call_turn = copy.deepcopy(round_trip.MESSAGES["one_call"])
    if spec.arguments_as_text:
        call_turn = round_trip._as_text(call_turn)
    if file in CONTENT_AS_BLOCKS:
        call_turn["content"] = [{"type": "text", "text": ""}]
    return [*round_trip.USER, call_turn, TOOL_RESULT]


@pytest.mark.parametrize(
    ("file", "kind"), MULTITURN_CASES, ids=[f"{file[:-6]}:{kind}" for file, kind in MULTITURN_CASES]
)
def test_output_after_a_tool_result_is_parsed_alone(file: str, kind: str) -> None:
    """The prompt ends after a tool result; the new output must not replay the earlier call."""
    spec = round_trip.SPECS[file]
    _, output, preopened = round_trip.split_output(spec, file, round_trip.MESSAGES[kind])
    tools = [tool["function"] for tool in round_trip.TOOLS] if spec.tools_as_functions else round_trip.TOOLS
    variables = {**profiles.load(spec.profile).special_tokens, **spec.variables}
    prompt = render_chat_template(
        corpus_path("chat_templates", file).read_text(encoding="utf-8"),
        _history(file, spec),
        tools=tools,
        add_generation_prompt=True,
        **variables,
    )
    # a block the generation prompt pre-opens is written differently by the history (see round trip)
    prefix = prompt[: len(prompt) - len(preopened)] if prompt.endswith(preopened) else prompt
    parsed = peer_view(
        parse_three_ways(
            profiles.load(spec.profile).response_template, output, prefix=prefix, tools=round_trip.TOOLS
        )
    )
    expected = AFTER_RESULT[kind]
    assert (parsed["content"] or "").strip() == (expected["content"] or "")
    assert not (parsed["reasoning_content"] or "").strip()
    assert parsed["tool_calls"] == expected["tool_calls"]


def test_every_profile_with_a_corpus_template_is_checked_after_a_tool_result() -> None:
    checked = {round_trip.SPECS[file].profile for file, _ in MULTITURN_CASES}
    assert checked == {spec.profile for spec in round_trip.SPECS.values()} - {"command_r7b"}


def test_mistral_v11_output_after_a_tool_result_is_parsed_alone() -> None:
    # Mistral-Small-3.1 (tokenizer v11) renders a tool result as [TOOL_RESULTS]...[/TOOL_RESULTS]
    # and the model answers right after it, without a new [INST]...[/INST]
    prompt = (
        "<s>[SYSTEM_PROMPT]You are helpful.[/SYSTEM_PROMPT][INST]Weather in Paris?[/INST]"
        '[TOOL_CALLS]get_weather{"city": "Paris"}</s>[TOOL_RESULTS]sunny[/TOOL_RESULTS]'
    )
    template = profiles.load("mistral_v11").response_template
    assert parse_three_ways(template, "It is sunny.</s>", prefix=prompt) == {
        "role": "assistant",
        "content": "It is sunny.",
    }
    again = parse_three_ways(template, '[TOOL_CALLS]get_time{"city": "Paris"}</s>', prefix=prompt)
    assert [call["function"] for call in again["tool_calls"]] == [
        {"name": "get_time", "arguments": {"city": "Paris"}}
    ]
