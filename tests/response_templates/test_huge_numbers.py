"""A JSON number too large for a float (``1e999``) is kept as its text, never turned into ``inf``.

``inf`` has lost the number and ``json.dumps`` writes it as ``Infinity``, which is not JSON; vLLM
(#43984) and SGLang (``test/registered/function_call/test_nonfinite_coercion.py``) keep the raw
text of such an argument. The whole-text parser and the streamed values (``value_deltas``) agree.
"""

from __future__ import annotations

import json

from chatcodec import parse_response
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
