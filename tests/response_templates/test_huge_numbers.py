"""A JSON number too large for a float (``1e999``) is kept as its text, never turned into ``inf``.

``inf`` has lost the number and ``json.dumps`` writes it as ``Infinity``, which is not JSON; vLLM
(#43984) and SGLang (``test/registered/function_call/test_nonfinite_coercion.py``) keep the raw
text of such an argument. The whole-text parser and the streamed values (``value_deltas``) agree.
"""

from __future__ import annotations

import json

from chatcodec import parse_response, profiles
from tests.response_templates.value_helpers import check_values

#: Qwen 2.5 / Hermes JSON calls, one per <tool_call> region.
JSON_CALLS = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {},
    },
}

OUTPUT = ('<tool_call>{"name": "scale", "arguments": {"big": 1e999, "small": -2.5E+400, "fine": 1.5e3, '
          '"tiny": 1e-999, "list": [1e999, 2]}}</tool_call>')


def test_whole_text_keeps_the_number_text() -> None:
    message = parse_response(OUTPUT, JSON_CALLS, prefix="")
    arguments = message["tool_calls"][0]["function"]["arguments"]
    assert arguments == {"big": "1e999", "small": "-2.5E+400", "fine": 1500.0, "tiny": 0.0,
                         "list": ["1e999", 2]}
    assert json.dumps(arguments, allow_nan=False) == (
        '{"big": "1e999", "small": "-2.5E+400", "fine": 1500.0, "tiny": 0.0, "list": ["1e999", 2]}')


def test_streamed_values_set_the_number_text() -> None:
    merged = check_values(JSON_CALLS, OUTPUT)
    sets = {tuple(event["path"]): event["value"] for event in merged if event["op"] == "set"}
    assert sets[("function", "arguments", "big")] == "1e999"
    assert sets[("function", "arguments", "small")] == "-2.5E+400"
    assert sets[("function", "arguments", "fine")] == 1500.0
    assert sets[("function", "arguments", "list", 0)] == "1e999"
    assert sets[("function", "arguments", "list", 1)] == 2


def test_a_string_that_looks_like_the_number_stays_a_string() -> None:
    output = '<tool_call>{"name": "f", "arguments": {"s": "1e999"}}</tool_call>'
    message = parse_response(output, JSON_CALLS, prefix="")
    assert message["tool_calls"][0]["function"]["arguments"] == {"s": "1e999"}


def test_gemma4_bare_values_keep_the_number_text_whole_and_streamed() -> None:
    profile = profiles.load("gemma4")
    output = "<|tool_call>call:scale{factor:1e999,steps:[2.5,-1E+400],ok:inf}<tool_call|>"
    prefix = profile.generation_prompt_ending(None)
    message = parse_response(output.replace(",ok:inf", ""), profile.response_template, prefix=prefix)
    assert message["tool_calls"][0]["function"]["arguments"] == {"factor": "1e999", "steps": [2.5, "-1E+400"]}
    merged = check_values(profile.response_template, output.replace(",ok:inf", ""), prefix=prefix, splits=4)
    sets = {tuple(event["path"][2:]): event["value"] for event in merged if event["op"] == "set"}
    assert sets[("factor",)] == "1e999"
    assert sets[("steps", 1)] == "-1E+400"
    message = parse_response(output, profile.response_template, prefix=prefix)
    arguments = message["tool_calls"][0]["function"]["arguments"]
    assert arguments["ok"] == "inf"  # inf is no number: gemma4 reads it as the bare word it is (bare_strings)
