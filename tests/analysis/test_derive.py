"""Deriving a response template from a chat template, and the labels the round trip gives it.

Real corpus templates come from the development part only (``corpus_split.py``); the generic
mechanisms (a call id inside the markers, a name written as a JSON key, a bare JSON call, reasoning
markers only the generation prompt shows) are also shown on small templates written here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatcodec import parse_response
from chatcodec.analysis.derive import DerivedTemplate, derive_response_template
from chatcodec.analysis.probes import probe_matrix
from chatcodec.analysis.round_trip import render_case
from tests.analysis.corpus_split import is_held_out
from tests.analysis.helpers import template_and_variables
from tests.profiles.helpers import parse_three_ways

QWEN25 = "Qwen--Qwen2.5-7B-Instruct.jinja"
DEVSTRAL = "unsloth--Devstral-Small-2507.jinja"
GLM46 = "zai-org--GLM-4.6.jinja"
LLAMA32 = "meta-llama--Llama-3.2-11B-Vision-Instruct.jinja"
SEED_OSS = "ByteDance-Seed--Seed-OSS-36B-Instruct.jinja"
SMOLLM3 = "HuggingFaceTB--SmolLM3-3B.jinja"
DEEPSEEK_R1 = "deepseek-ai--DeepSeek-R1.jinja"
MINICPM3 = "openbmb--MiniCPM3-4B.jinja"
CORPUS = (QWEN25, DEVSTRAL, GLM46, LLAMA32, SEED_OSS, SMOLLM3, DEEPSEEK_R1, MINICPM3)

_CACHE: dict[str, DerivedTemplate] = {}


def derived(name: str) -> DerivedTemplate:
    """A corpus template's derivation, once per test session."""
    if name not in _CACHE:
        template, variables = template_and_variables(name)
        _CACHE[name] = derive_response_template(template, variables=variables)
    return _CACHE[name]


def statuses(result: DerivedTemplate) -> dict[str, str]:
    return {name: label.status for name, label in result.capabilities.items()}


ALL = ("content", "reasoning", "one_call", "parallel_calls")
CALL_TRANSFORM = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


def test_the_corpus_templates_used_here_are_development_templates() -> None:
    assert not any(is_held_out(name) for name in CORPUS)


def test_qwen25_hermes_calls() -> None:
    result = derived(QWEN25)
    assert result.response_template == {
        "version": 1, "defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                           "transform": {"type": "function", "function": {
                               "name": "{content.name}", "arguments": "{content.arguments}"}}},
            "content": {"close": ["<|im_end|>"]}}}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    assert result.verified
    assert result.capabilities["reasoning"].applicable is False
    assert result.notes == ["message shape: the standard message shape", "tool calls: JSON object per call"]


def test_devstral_name_then_json_arguments_and_an_anchor_after_tool_results() -> None:
    result = derived(DEVSTRAL)
    assert result.response_template["start_anchor"] == ["[/INST]", "[/TOOL_RESULTS]"]
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"\[TOOL_CALLS\](?P<name>[\w.\-]+)\s*\[ARGS\]\s*",
        "close_pattern": r"(?=\[TOOL_CALLS\])|</s>", "repeats": True, "content": "json",
        "transform": CALL_TRANSFORM}
    assert result.verified


def test_glm46_tagged_arguments_and_both_thinking_modes() -> None:
    result = derived(GLM46)
    fields = result.response_template["fields"]
    assert fields["reasoning_content"] == {"open_pattern": "(?:<think>)+", "close": "</think>"}
    assert fields["tool_calls"] == {
        "open_pattern": r"<tool_call>(?P<name>[\w.\-]+)\s*", "close": "</tool_call>", "repeats": True,
        "content": "xml-inline",
        "content_args": {"tag_pattern": r"<arg_key>(?P<key>[^\s<>=\"']+)</arg_key>\s*"
                                        r"<arg_value>(?P<value>.*?)</arg_value>",
                         "value_parser": {"name": "text", "args": {"strip": False}}},
        "transform": CALL_TRANSFORM}
    assert result.report.modes == [{}, {"enable_thinking": False}]
    assert statuses(result) == dict.fromkeys(ALL, "verified")


def test_a_template_that_refuses_two_calls_is_verified_without_them() -> None:
    result = derived(LLAMA32)
    assert result.response_template["fields"]["tool_calls"]["open_pattern"] == r'(?=\{\s*"name"\s*:)'
    parallel = result.capabilities["parallel_calls"]
    assert (parallel.status, parallel.applicable) == ("unsupported", False)
    assert parallel.reason == ("the template refuses it: parallel_calls/two_calls/single: the chat "
                               "template raised on this conversation (This model only supports single "
                               "tool-calls at once!)")
    assert result.verified


def test_a_failing_round_trip_is_never_verified() -> None:
    result = derived(SEED_OSS)
    one_call = result.capabilities["one_call"]
    assert (one_call.status, one_call.applicable) == ("unsupported", True)
    assert one_call.reason.startswith(
        "the round trip fails: one_call/nested/single: tool_calls[0].arguments: ")
    assert result.report.capabilities["one_call"].status == "fail"
    assert statuses(result)["parallel_calls"] == "verified"
    assert not result.verified
    assert result.unverified == ["one_call"]


def test_python_calls_stay_unsupported_and_so_does_the_content_they_land_in() -> None:
    result = derived(MINICPM3)
    assert "tool_calls" not in result.response_template["fields"]
    assert result.capabilities["one_call"].reason == (
        "the round trip fails: one_call/string/single: content: expected None, parsed "
        "'python\\nget_weather(city=\"Paris\")'")
    assert result.capabilities["content"].status == "unsupported"


@pytest.mark.parametrize(("name", "heuristic"), [
    (SMOLLM3, "h2: the rendered prompt names the pair '<think>' / '</think>'; no turn renders reasoning"),
    (DEEPSEEK_R1, "h3: the template source splits on '</think>'; no turn renders reasoning"),
])
def test_reasoning_markers_no_turn_renders_are_heuristic(name: str, heuristic: str) -> None:
    label = derived(name).capabilities["reasoning"]
    assert (label.status, label.reason, label.applicable) == ("heuristic", heuristic, False)
    assert derived(name).response_template["fields"]["reasoning_content"]["close"] == "</think>"


@pytest.mark.parametrize("name", CORPUS)
def test_labels_follow_the_round_trip(name: str) -> None:
    result = derived(name)
    for capability, label in result.capabilities.items():
        round_trip_status = result.report.capabilities[capability].status
        assert (label.status == "verified") == (round_trip_status == "pass"), capability
        assert label.applicable == (round_trip_status in ("pass", "fail", "inconsistent")), capability
    assert "qz" not in json.dumps(result.response_template).lower()  # no sentinel leaked
    document = result.to_json()
    assert set(document) == {"response_template", "capabilities", "verified", "notes"}
    labels = document["capabilities"].values()
    assert all(set(value) == {"status", "reason", "applicable"} for value in labels)


@pytest.mark.parametrize("name", [QWEN25, DEVSTRAL, GLM46])
def test_derived_templates_stream_as_they_parse(name: str) -> None:
    template, variables = template_and_variables(name)
    result = derived(name)
    probes = probe_matrix(result.report.shape, variables=variables, variants=("single",))
    probe = next(probe for probe in probes if probe.case == "two_calls")
    rendered = render_case(template, probe.conversation, variables.get("eos_token"))
    message = parse_three_ways(result.response_template, rendered.output, prefix=rendered.prompt,
                               tools=probe.conversation.tools)
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["get_weather", "get_time"]


# --- small templates: one mechanism each ----------------------------------------------------------

def _turns(body: str) -> str:
    return ("{%- for m in messages %}<|{{ m.role }}|>" + body + "<|end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


ID_BEFORE_NAME = _turns(
    "{% if m.tool_calls %}{{ m.content or '' }}<|calls|>{% for c in m.tool_calls %}<|call|>{{ c.id }}<|name|>"
    "{{ c.function.name }}<|args|>{{ c.function.arguments | tojson }}<|/call|>{% endfor %}<|/calls|>"
    "{% else %}{{ m.content }}{% endif %}")
NAME_AS_KEY = _turns(
    "{% if m.tool_calls %}<|calls|>[{% for c in m.tool_calls %}{% if not loop.first %}, {% endif %}"
    '{"{{ c.function.name }}": {{ c.function.arguments | tojson }}}{% endfor %}]<|/calls|>'
    "{% else %}{{ m.content }}{% endif %}")
PROMPT_OPENS_THINK = (
    "{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|><think>{% endif %}{# the model closes it with </think> #}")


def test_a_call_id_in_the_markers_becomes_the_id_group() -> None:
    result = derive_response_template(ID_BEFORE_NAME, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"(?:<\|calls\|>\s*)?<\|call\|>(?P<id>.+?)\s*<\|name\|>(?P<name>[\w.\-]+)\s*"
                        r"<\|args\|>\s*",
        "close": "<|/call|>", "repeats": True, "content": "json",
        "transform": {"id": "{id}", **CALL_TRANSFORM}}
    assert result.verified
    message = parse_response('<|calls|><|call|>a7<|name|>f<|args|>{"x": 1}<|/call|><|/calls|>',
                             result.response_template, prefix="<|assistant|>")
    assert message["tool_calls"] == [
        {"id": "a7", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]


def test_a_name_written_as_a_json_key_uses_x_json_calls() -> None:
    result = derive_response_template(NAME_AS_KEY, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open": "<|calls|>", "close": "<|/calls|>", "content": "x-json-calls",
        "content_args": {"name_as_key": True},
        "transform": {"id": "{id?}", "type": "function",
                      "function": {"name": "{name}", "arguments": "{arguments}"}},
        "transform_each": True}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}


def test_a_think_block_only_the_prompt_opens_is_a_heuristic_kept_in_the_prefix() -> None:
    result = derive_response_template(PROMPT_OPENS_THINK, variables={"eos_token": "<|end|>"})
    template: dict[str, Any] = result.response_template
    assert template["start_anchor"] == "<|assistant|>"
    assert template["fields"]["reasoning_content"] == {"open_pattern": "(?:<think>)+", "close": "</think>"}
    label = result.capabilities["reasoning"]
    assert label.status == "heuristic"
    assert label.reason.startswith("h1: the generation prompt ends with '<think>'")
    message = parse_response("Plan.</think>Done.", template, prefix="<|user|>Hi<|end|><|assistant|><think>")
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": "Done."}


def test_a_template_that_renders_no_assistant_turn_verifies_nothing() -> None:
    result = derive_response_template("{{ messages[0].content }}{% if add_generation_prompt %}>{% endif %}")
    assert statuses(result)["content"] == "unsupported"
    assert not result.capabilities["content"].applicable


BARE_CONCATENATED = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}"
    '{"name": "{{ c.function.name }}", "parameters": {{ c.function.arguments | tojson }}}{% endfor %}'
    "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")
TRAILER = ("{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
           "<|system|>Answer briefly.<|end|>{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_bare_json_calls_written_back_to_back_are_read_by_one_region() -> None:
    result = derive_response_template(BARE_CONCATENATED, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r'(?=\{\s*"name"\s*:)', "close": "<|end|>", "content": "x-json-calls",
        "content_args": {"name_keys": ["name"], "arguments_keys": ["parameters"]},
        "transform": {"id": "{id?}", "type": "function",
                      "function": {"name": "{name}", "arguments": "{arguments}"}},
        "transform_each": True}
    assert statuses(result)["parallel_calls"] == "verified"


def test_a_trailer_before_the_generation_prompt_is_realigned() -> None:
    result = derive_response_template(TRAILER, variables={"eos_token": "<|end|>"})
    assert statuses(result)["content"] == "verified"
    case = result.report.capabilities["content"].cases[0]
    assert case.note == ("the template renders text between the history and the generation prompt that "
                         "the render of this turn puts elsewhere; the turn was read after its own generation "
                         "prompt")
    assert case.output == "It is sunny in Paris today."
