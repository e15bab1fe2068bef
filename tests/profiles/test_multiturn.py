"""SPEC 1.8b: DeepSeek V3.x continue an assistant turn after a tool result without a new header.

The prompt then ends with the tool-result end marker, and the last ``<｜Assistant｜>`` in it is the
header of the turn that made the tool call. A start anchor that only matched the header would
feed that earlier tool call through the parser as if it were new output; the DeepSeek profiles
list the tool-result end markers as further start anchors, so parsing starts after the result.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatcodec import profiles
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import corpus_path
from tests.profiles.helpers import parse_three_ways

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
    template["start_anchor"] = "<｜Assistant｜>"
    message = parse_three_ways(template, OUTPUT, prefix=_prompt(file, name))
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["get_weather"]
