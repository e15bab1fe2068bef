"""Gemma 4 tool calls as the real chat template writes them: bare keys of any text, ``None`` values.

The template writes each argument key exactly as given (``Content-Type``, ``user.name``, ``$ref``,
``my key``, ``-70``, emoji) and Python's ``None`` as ``None``; nested objects keep bare keys. The
profile reads them with ``x-bare-object``; the calls below are rendered with the corpus template and
parsed back (three ways).
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import profiles
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import corpus_path
from tests.profiles.helpers import parse_three_ways, same_json

TEMPLATE = "google--gemma-4-31B-it.jinja"
Q = '<|"|>'
ARGUMENTS: dict[str, dict[str, Any]] = {
    "punctuated keys": {"Content-Type": "text/html", "user.name": "ann", "$ref": "#/a", "@type": "X"},
    "space, emoji and numeric keys": {"my key": "v w", "🙂": "smile", "-70": 1, "70": -2.5},
    "None and booleans": {"none": None, "yes": True, "no": False},
    "nested bare keys": {"nested": {"a-b": {"c.d": [1, None, "x"]}, "sp ace": True}, "empty": {}},
    "strings with syntax": {"quote": 'say "hi", {ok}: [x]', "colon:key": "v", "path": "C:\\dir"},
    "small and large numbers": {"f": 1.5e-07, "big": 12345678901234567890, "neg": -0.5},
}


def _profile() -> profiles.Profile:
    return profiles.load("gemma4")


def test_the_finding_example() -> None:
    profile = _profile()
    output = f"<|tool_call>call:f{{Content-Type:{Q}text/html{Q}}}<tool_call|>"
    message = parse_three_ways(profile.response_template, output, prefix=profile.generation_prompt)
    assert message == {
        "role": "assistant",
        "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"Content-Type": "text/html"}}}
        ],
    }


@pytest.mark.parametrize("kind", sorted(ARGUMENTS))
def test_round_trip_through_the_real_template(kind: str) -> None:
    arguments = ARGUMENTS[kind]
    call = {"id": "c1", "type": "function", "function": {"name": "http.get", "arguments": arguments}}
    conversation = [
        {"role": "user", "content": "Fetch it."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    chat_template = corpus_path("chat_templates", TEMPLATE).read_text(encoding="utf-8")
    rendered = render_chat_template(chat_template, conversation, **_profile().special_tokens)
    header = "<|turn>model\n"
    start = rendered.rindex(header) + len(header)
    prefix, output = rendered[:start], rendered[start:]
    assert output.startswith("<|tool_call>call:http.get{")
    message = parse_three_ways(_profile().response_template, output, prefix=prefix)
    [parsed] = message["tool_calls"]
    assert parsed["function"]["name"] == "http.get"
    assert same_json(parsed["function"]["arguments"], arguments), parsed["function"]["arguments"]


def test_a_close_marker_inside_a_delimited_string_is_text() -> None:
    """x-bare-object is string-aware: <tool_call|> inside a <|"|> string does not end the call."""
    output = f"<|tool_call>call:f{{text:{Q}write <tool_call|> here{Q}}}<tool_call|>"
    message = parse_three_ways(_profile().response_template, output, prefix=_profile().generation_prompt)
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "f", "arguments": {"text": "write <tool_call|> here"}}
    ]
