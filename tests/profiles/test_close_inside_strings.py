"""A JSON tool call whose string argument contains the call's own close marker.

``<tool_call>{"name": "write_file", "arguments": {"text": "use </tool_call> to end"}}</tool_call>``:
the first ``</tool_call>`` is text of the argument. ``json`` regions know it (the engine does not
close them inside a JSON string: qwen3); ``x-json-calls`` regions are not string-aware, so the
profiles that use it close only on a marker that follows the end of a JSON value (``}`` and
optional whitespace), which a marker inside a string normally does not.
"""

from __future__ import annotations

import json

import pytest

from chatcodec import profiles
from tests.profiles.helpers import parse_three_ways

#: profile -> (what opens a call, what closes it)
MARKERS = {
    "qwen3": ("<tool_call>\n", "</tool_call>"),
    "hermes": ("<tool_call>\n", "</tool_call>"),
    "granite4": ("<tool_call>\n", "</tool_call>"),
    "qwq": ("<tool_call>\n", "</tool_call>"),
    "longcat": ("<longcat_tool_call>", "</longcat_tool_call>"),
    "internlm2": ("<|action_start|><|plugin|>\n", "<|action_end|>"),
}


@pytest.mark.parametrize("name", sorted(MARKERS))
def test_a_close_marker_inside_a_json_string_is_text(name: str) -> None:
    profile = profiles.load(name)
    opening, close = MARKERS[name]
    call = {"name": "write_file", "arguments": {"text": f"use {close} to end"}}
    output = f"{opening}{json.dumps(call)}\n{close} Done."
    message = parse_three_ways(profile.response_template, output, prefix=profile.generation_prompts[0])
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "write_file", "arguments": {"text": f"use {close} to end"}}
    ]
    assert message["content"].strip() == "Done."
