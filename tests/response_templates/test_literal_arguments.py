"""An object- or array-typed argument written as a Python literal is decoded; bad text stays text.

Chat templates write a dict or list argument with ``str()`` (``{'key': 'value'}``) and models copy
that form; vLLM (``vllm/tool_parsers/utils.py``, ``coerce_to_schema_type``) and SGLang (the
``_convert_param_value`` of its XML-ish detectors; ``test_nonfinite_coercion.py`` exercises the
``ast`` fallback) read it with ``ast.literal_eval`` after ``json.loads`` fails. Non-finite numbers
keep the raw text, as in SGLang's ``test_non_finite_degrades_to_string``.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import parse_response, profiles
from chatcodec.response_templates.arguments import MAX_LITERAL_CHARS, coerce_argument
from tests.response_templates.value_helpers import check_values


@pytest.mark.parametrize(("raw", "types", "expected"), [
    ("{'key': 'value'}", ("object",), {"key": "value"}),
    ("['a', 'b']", ("array",), ["a", "b"]),
    ("{'on': True, 'off': False, 'none': None, 'n': -2, 'x': 1.5}", ("object",),
     {"on": True, "off": False, "none": None, "n": -2, "x": 1.5}),
    ("  [('a', 1), {'b': [2]}]\n", ("array",), [["a", 1], {"b": [2]}]),
    ("['a', 'b']", ("object",), "['a', 'b']"),  # a list is no object
    ("{'a': x}", ("object",), "{'a': x}"),  # a name is no literal
    ("{'a': __import__('os')}", ("object",), "{'a': __import__('os')}"),
    ("{1: 'a'}", ("object",), "{1: 'a'}"),  # JSON keys are strings
    ("{'a': 1, 'a': 2}", ("object",), "{'a': 1, 'a': 2}"),  # nothing may be lost
    ("['a', 'b']", ("string", "array"), ["a", "b"]),  # containers are tried after string too
    ("['a', 'b']", ("string",), "['a', 'b']"),
    ("{'a': 1}", (), "{'a': 1}"),
    # non-finite numbers: the raw text, as SGLang's test_non_finite_degrades_to_string
    ("1e999", ("number",), "1e999"),
    ("-1e999", ("number",), "-1e999"),
    ("[1e999]", ("array",), "[1e999]"),
    ("[1, 2, 1e999]", ("array",), "[1, 2, 1e999]"),
    ('{"x": 1e999}', ("object",), '{"x": 1e999}'),
    ("{'x': 1e999}", ("object",), "{'x': 1e999}"),
    ("[Infinity]", ("array",), "[Infinity]"),
    ("[NaN]", ("array",), "[NaN]"),
    # finite values still cast (test_finite_values_still_coerced)
    ("[1, 2, 3]", ("array",), [1, 2, 3]),
    ('{"a": 1}', ("object",), {"a": 1}),
])
def test_casts(raw: str, types: tuple[str, ...], expected: Any) -> None:
    assert coerce_argument(raw, types) == expected


def test_a_literal_longer_than_the_limit_stays_text() -> None:
    items = ", ".join("'x'" for _ in range(MAX_LITERAL_CHARS // 5 + 1))
    raw = f"[{items}]"
    assert len(raw) > MAX_LITERAL_CHARS
    assert coerce_argument(raw, ("array",)) == raw
    short = "[" + ", ".join("'x'" for _ in range(10)) + "]"
    assert coerce_argument(short, ("array",)) == ["x"] * 10


PROPERTIES = {"options": {"type": "object"}, "tags": {"type": "array"}, "note": {"type": "string"},
              "limit": {"type": "number"}}
TOOLS = [{"type": "function", "function": {"name": "configure",
                                           "parameters": {"type": "object", "properties": PROPERTIES}}}]

QWEN3_CODER_OUTPUT = (
    "<tool_call>\n<function=configure>\n"
    "<parameter=options>\n{'units': 'metric', 'verbose': True}\n</parameter>\n"
    "<parameter=tags>\n['a', 'b']\n</parameter>\n<parameter=note>\n['kept', 'as text']\n</parameter>\n"
    "<parameter=limit>\n1e999\n</parameter>\n</function>\n</tool_call>")
EXPECTED_ARGUMENTS = {"options": {"units": "metric", "verbose": True}, "tags": ["a", "b"],
                      "note": "['kept', 'as text']", "limit": "1e999"}


def test_qwen3_coder_whole_and_streamed() -> None:
    profile = profiles.load("qwen3_coder")
    prefix = profile.generation_prompt_ending(None)
    message = parse_response(QWEN3_CODER_OUTPUT, profile.response_template, prefix=prefix, tools=TOOLS)
    assert message["tool_calls"][0]["function"]["arguments"] == EXPECTED_ARGUMENTS
    merged = check_values(profile.response_template, QWEN3_CODER_OUTPUT, prefix=prefix, tools=TOOLS, splits=4)
    sets = {tuple(event["path"][-1:]): event["value"] for event in merged
            if event["op"] == "set" and event["path"][-2:-1] == ["arguments"]}
    assert sets == {("options",): {"units": "metric", "verbose": True}, ("tags",): ["a", "b"],
                    ("limit",): "1e999"}
