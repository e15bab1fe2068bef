"""A JSON tool call whose string argument contains the call's own close marker.

``<tool_call>{"name": "write_file", "arguments": {"text": "use </tool_call> to end"}}</tool_call>``:
the first ``</tool_call>`` is text of the argument. The engine does not close a region inside a
JSON string when its content parser is string-aware: ``json`` (qwen3) and ``x-json-calls`` (the
others), also when the marker follows a ``}`` inside the string. ``longcat`` is not here: its calls
are JSON or tagged text (``x-first``), and a quote in tagged text must not hide the close.
"""

from __future__ import annotations

import json

import pytest

from chatcodec import profiles
from tests.profiles.helpers import parse_three_ways

#: profile -> (what opens the call section, what closes it, how the call is written)
MARKERS = {
    "qwen3": ("<tool_call>\n", "</tool_call>", "object"),
    "hermes": ("<tool_call>\n", "</tool_call>", "object"),
    "granite4": ("<tool_call>\n", "</tool_call>", "object"),
    "qwq": ("<tool_call>\n", "</tool_call>", "object"),
    "internlm2": ("<|action_start|><|plugin|>\n", "<|action_end|>", "object"),
    "minimax_m1": ("<tool_calls>\n", "</tool_calls>", "object"),
    "jamba": ("<tool_calls>", "</tool_calls>", "array"),
    "apriel": ("<tool_calls>", "</tool_calls>", "array"),
    "nemotron_v2": ("<TOOLCALL>", "</TOOLCALL>", "array"),
    "xlam": ("<tool_call>", "</tool_call>", "array"),
    "apertus": ("<|tools_prefix|>", "<|tools_suffix|>", "name_as_key"),
    "cohere2": ("<|START_ACTION|>", "<|END_ACTION|>", "cohere"),
    "command_r7b": ("<|START_ACTION|>", "<|END_ACTION|>", "cohere"),
}


def _written(arguments: dict[str, str], shape: str) -> str:
    call: object = {"name": "write_file", "arguments": arguments}
    if shape == "array":
        call = [call]
    elif shape == "name_as_key":
        call = [{"write_file": arguments}]
    elif shape == "cohere":
        call = [{"tool_call_id": "0", "tool_name": "write_file", "parameters": arguments}]
    return json.dumps(call)


@pytest.mark.parametrize("text", ["use {close} to end", "}}] {close}"])
@pytest.mark.parametrize("name", sorted(MARKERS))
def test_a_close_marker_inside_a_json_string_is_text(name: str, text: str) -> None:
    profile = profiles.load(name)
    opening, close, shape = MARKERS[name]
    argument = text.format(close=close)
    output = f"{opening}{_written({'text': argument}, shape)}\n{close} Done."
    message = parse_three_ways(profile.response_template, output, prefix=profile.generation_prompts[0])
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "write_file", "arguments": {"text": argument}}
    ]
    assert message["content"].strip() == "Done."
