"""Deriving a response template from a chat template, and the labels the round trip gives it.

Real corpus templates come from the development part only (``corpus_split.py``); the generic
mechanisms (a call id inside the markers, a name written as a JSON key, a bare JSON call, reasoning
markers only the generation prompt shows) are also shown on small templates written here.
"""

from __future__ import annotations

import json
from re import escape as regex_escape
from typing import Any

import pytest

from chatcodec import parse_response
from chatcodec.analysis.derivation.atoms import Atoms
from chatcodec.analysis.derive import CapabilityLabel, DerivedTemplate, derive_response_template
from chatcodec.analysis.probes import probe_matrix
from chatcodec.analysis.round_trip import render_case, round_trip
from chatcodec.errors import ResponseParseError
from tests.analysis.corpus_split import corpus_template_names, is_held_out
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
NEMOTRON_9B = "nvidia--NVIDIA-Nemotron-Nano-9B-v2.jinja"
COMMAND_A_03 = "CohereLabs--c4ai-command-a-03-2025.jinja"
CORPUS = (QWEN25, DEVSTRAL, GLM46, LLAMA32, SEED_OSS, SMOLLM3, DEEPSEEK_R1, MINICPM3, NEMOTRON_9B,
          COMMAND_A_03)

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
#: A bare call object opens on the keys it starts with: the name and the arguments key after it.
NAME_THEN_PARAMETERS = r'(?=\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"parameters"\s*:)'
CALL_TRANSFORM = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


def test_the_corpus_templates_used_here_are_development_templates() -> None:
    assert not any(is_held_out(name) for name in CORPUS)


def test_qwen25_hermes_calls() -> None:
    result = derived(QWEN25)
    assert result.response_template == {
        "version": 1, "defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "tool_calls": {"open_pattern": r"(?:\n)?<tool_call>", "close": "</tool_call>", "repeats": True,
                           "content": "json", "transform": {"type": "function", "function": {
                               "name": "{content.name}", "arguments": "{content.arguments}"}}},
            "content": {"close": ["<|im_end|>"], "content_args": {"strip": "blank"}}}}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    assert result.verified
    assert result.capabilities["reasoning"].applicable is False
    assert result.notes == ["message shape: the standard message shape", "tool calls: JSON object per call"]


def test_devstral_name_then_json_arguments_and_an_anchor_after_tool_results() -> None:
    result = derived(DEVSTRAL)
    assert result.response_template["start_anchor"] == ["[/INST]", "[/TOOL_RESULTS]"]
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"\[TOOL_CALLS\](?P<name>[\w.\-]+)\s*\[ARGS\]\s*|\[TOOL_CALLS\]",
        "close_pattern": r"(?=\[TOOL_CALLS\])|</s>", "repeats": True, "content": "json",
        "transform": CALL_TRANSFORM}
    assert result.verified


def test_glm46_tagged_arguments_and_both_thinking_modes() -> None:
    result = derived(GLM46)
    fields = result.response_template["fields"]
    assert fields["reasoning_content"] == {"open_pattern": r"(?:\n)?(?:<think>)+",
                                           "close_pattern": r"</think>(?:\n)?",
                                           "content_args": {"strip": "blank"}}
    assert fields["tool_calls"] == {
        "open_pattern": r"(?:\n)?(?:<tool_call>(?P<name>[\w.\-]+)\s*|<tool_call>)", "close": "</tool_call>",
        "repeats": True,
        "require_close": True, "content": "xml-inline",
        "content_args": {"tag_pattern": r"<arg_key>(?P<key>[^\s<>=\"']+)</arg_key>\s*"
                                        r"<arg_value>(?P<value>.*?)</arg_value>",
                         "value_parser": {"name": "text", "args": {"strip": False}}},
        "transform": CALL_TRANSFORM}
    assert result.report.modes == [{}, {"enable_thinking": False}]
    assert statuses(result) == dict.fromkeys(ALL, "verified")


def test_a_tagged_call_cut_off_before_its_close_is_a_parse_problem() -> None:
    """As in every bundled profile (docs/profiles.md, "Cut-off calls"): never a call with half its
    arguments."""
    result = derived(GLM46)
    prompt = "<|user|>\nHi<|assistant|>\n<think></think>\n"
    cut = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par"
    with pytest.raises(ResponseParseError, match="the output ends before this region's close"):
        parse_response(cut, result.response_template, prefix=prompt)
    kept = parse_response(cut, result.response_template, prefix=prompt, errors="keep")
    assert kept["content"] == cut  # nothing is lost
    assert kept["parse_errors"][0]["raw"] == cut
    whole = parse_response(cut + "is</arg_value></tool_call>", result.response_template, prefix=prompt)
    assert whole["tool_calls"] == [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]


def test_a_template_that_refuses_two_calls_is_verified_without_them() -> None:
    result = derived(LLAMA32)
    assert result.response_template["fields"]["tool_calls"]["open_pattern"] == NAME_THEN_PARAMETERS
    parallel = result.capabilities["parallel_calls"]
    assert (parallel.status, parallel.applicable) == ("unsupported", False)
    assert parallel.reason == ("the template refuses it: parallel_calls/two_calls/single: the chat "
                               "template raised on this conversation (This model only supports single "
                               "tool-calls at once!)")
    assert result.verified



LLAMA_PROMPT = ("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                "<|start_header_id|>assistant<|end_header_id|>\n\n")


@pytest.mark.parametrize("output", [
    '{"name": "toolWithoutParams"}',  # vLLM's llama3json-vllm-missing-params
    'The JSON {"name": "Ada", "age": 36} describes her.',
])
def test_a_bare_call_object_opens_on_its_name_and_arguments_keys(output: str) -> None:
    """A bare JSON call has no marker: the keys every call starts with are its marker. An object with a
    name alone is no call the template writes; it stays text, as vLLM and the bundled profile read it."""
    template = derived(LLAMA32).response_template
    assert parse_three_ways(template, output, prefix=LLAMA_PROMPT) == {"role": "assistant", "content": output}


def test_a_bare_call_object_with_its_keys_is_a_call_and_broken_json_there_is_a_parse_problem() -> None:
    template = derived(LLAMA32).response_template
    output = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert parse_three_ways(template, output, prefix=LLAMA_PROMPT) == {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}
    broken = '{"name": "invalidTool", "parameters": {invalid json}'  # vLLM's llama3json-vllm-invalid-json
    with pytest.raises(ResponseParseError, match="could not parse region as JSON"):
        parse_response(broken, template, prefix=LLAMA_PROMPT)
    kept = parse_response(broken, template, prefix=LLAMA_PROMPT, errors="keep")
    assert kept["content"] == broken
    assert kept["parse_errors"][0]["raw"] == broken


GLM46_PROMPT = "[gMASK]<sop><|user|>\nHi<|assistant|>"


@pytest.mark.parametrize(("output", "error"), [
    ("<tool_call>   ", "the output ends before this region's close"),  # vLLM's glm45-vllm-open-tag-only
    ("Let me look.<tool_call></tool_call>", "transform placeholder '{name}' is not defined"),
])
def test_a_call_marker_without_a_name_still_opens_a_call(output: str, error: str) -> None:
    """GLM-4.6 writes ``<tool_call>`` only before a call's name: written alone it opens a call that cannot
    be read, a parse problem as in the bundled profile, never prose; nothing is lost in keep mode."""
    template = derived(GLM46).response_template
    with pytest.raises(ResponseParseError, match=regex_escape(error)):
        parse_response(output, template, prefix=GLM46_PROMPT)
    kept = parse_response(output, template, prefix=GLM46_PROMPT, errors="keep")
    assert kept["content"] == output
    assert kept["parse_errors"][0]["raw"] == output.removeprefix("Let me look.")


EACH_CALL = {"id": "{id?}", "type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}


def test_a_failing_round_trip_is_never_verified() -> None:
    """Nemotron-Nano-9B-v2 renders the final turn's content inside the <think> its prompt opens, with
    no </think>: the content comes back as reasoning, which the template cannot vouch for either way
    (heuristic); a call after text is read as reasoning too, so the call is lost (unsupported)."""
    result = derived(NEMOTRON_9B)
    content = result.capabilities["content"]
    assert (content.status, content.applicable) == ("heuristic", True)
    assert content.reason == (
        "not verifiable: content/content/single: the template renders this turn's content where a "
        "model writes its reasoning (a reasoning channel, or after a reasoning block the generation prompt "
        "opens and the turn never closes), so the render cannot say where a model writes its answer")
    assert result.report.capabilities["content"].status == "inconsistent"
    one_call = result.capabilities["one_call"]
    assert (one_call.status, one_call.reason) == (
        "unsupported", "the round trip fails: one_call/with_content/single: tool_calls: expected "
        "[{'name': 'get_weather', 'arguments': {'city': 'Lyon', 'days': 3}}], parsed None")
    assert result.report.capabilities["one_call"].status == "fail"
    assert not result.verified
    assert result.unverified == ["content", "reasoning", "one_call", "parallel_calls"]


def test_arguments_written_with_python_str_are_read_back_as_literals() -> None:
    """Seed-OSS writes a dict or list argument with `| string`: {'units': 'metric', 'on': True}."""
    result = derived(SEED_OSS)
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"(?:\n\n|\n)?<seed:tool_call>\s*<function=(?P<name>[\w.\-]+)>\s*",
        "close_pattern": r"</function>\s*</seed:tool_call>", "repeats": True, "require_close": True,
        "content": "xml-inline",
        "content_args": {"tag_pattern": r"<parameter=(?P<key>[^\s<>=\"']+)>(?P<value>.*?)</parameter>",
                         "value_parser": {"name": "x-python-literal"}},
        "transform": CALL_TRANSFORM}
    assert statuses(result) == dict.fromkeys(ALL, "verified")
    cases = result.report.capabilities["one_call"].cases
    nested = next(case for case in cases if case.probe.case == "nested")
    assert "<parameter=settings>{'units': 'metric', 'alerts': [1, 2.5], 'deep': {'on': True, 'note': None}}" \
        in (nested.output or "")
    assert nested.parsed is not None
    assert nested.parsed["tool_calls"][0]["function"]["arguments"] == {
        "settings": {"units": "metric", "alerts": [1, 2.5], "deep": {"on": True, "note": None}},
        "tags": ["home", "eco"]}


#: Tagged arguments where a mapping is written as JSON and every other value with ``| string``, so a
#: list comes out as Python writes it (['home', 'eco']): the shape of Qwen3-Coder's template.
LISTS_WITH_STR = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}<tool_call>\n<function={{ c.function.name }}>\n"
    "{%- for k, v in c.function.arguments | items %}<parameter={{ k }}>\n"
    "{{- v | tojson if v is mapping else v | string }}\n</parameter>\n{% endfor %}</function>\n</tool_call>"
    "{%- endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_a_list_written_with_python_str_beside_a_json_mapping_is_read_back() -> None:
    result = derive_response_template(LISTS_WITH_STR, variables={"eos_token": "<|im_end|>"})
    field = result.response_template["fields"]["tool_calls"]
    assert field["content_args"]["value_parser"] == {"name": "x-python-literal"}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    cases = result.report.capabilities["one_call"].cases
    nested = next(case for case in cases if case.probe.case == "nested")
    output = nested.output or ""
    assert "<parameter=tags>['home', 'eco']\n</parameter>" in output
    assert '<parameter=settings>{"units": "metric", "alerts": [1, 2.5], "deep": {"on": true' in output
    assert nested.parsed is not None
    assert nested.parsed["tool_calls"][0]["function"]["arguments"] == {
        "settings": {"units": "metric", "alerts": [1, 2.5], "deep": {"on": True, "note": None}},
        "tags": ["home", "eco"]}


def test_python_calls_one_per_line_in_a_fenced_block() -> None:
    result = derived(MINICPM3)
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"<\|tool_call_start\|>\s*```python", "close_pattern": r"```\s*<\|tool_call_end\|>",
        "require_close": True, "content": "x-pythonic", "content_args": {"lines": True},
        "transform": EACH_CALL, "transform_each": True}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    assert result.notes[-1] == "tool calls: Python-style calls, one per line"


def test_calls_rendered_only_next_to_documents_say_why_they_are_unsupported() -> None:
    result = derived(COMMAND_A_03)
    reason = ("the template renders assistant tool calls only when documents are passed (a retrieval "
              "prompt), and then it does not show the tools to the model: no prompt it renders offers tools, "
              "so a model is never asked for a call")
    assert result.capabilities["one_call"] == CapabilityLabel("unsupported", reason, False)
    assert result.capabilities["parallel_calls"] == CapabilityLabel("unsupported", reason, False)
    assert result.verified  # content is verified; calls are not applicable


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
        "close_pattern": r"<\|/call\|>(?:\s*<\|/calls\|>)?", "repeats": True, "content": "json",
        "transform": {"id": "{id}", **CALL_TRANSFORM}}
    assert result.verified
    message = parse_response('<|calls|><|call|>a7<|name|>f<|args|>{"x": 1}<|/call|><|/calls|>',
                             result.response_template, prefix="<|assistant|>")
    assert message["tool_calls"] == [
        {"id": "a7", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]


def test_a_section_end_without_a_call_before_it_stays_in_the_content() -> None:
    """The section end closes the last call (an optional part of its close), so a malformed section
    the model writes (vLLM's DeepSeek V3.1 vector: the section markers without the per-call ones)
    comes back whole as content; it was a discard of the content field, and the end marker the
    model wrote was lost."""
    result = derive_response_template(ID_BEFORE_NAME, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["content"] == {"close": ["<|end|>"],
                                                             "content_args": {"strip": "blank"}}
    output = '<|calls|>f<|args|>{"x": 1}<|/calls|>'
    assert parse_three_ways(result.response_template, output, prefix="<|assistant|>") == {
        "role": "assistant", "content": '<|calls|>f<|args|>{"x": 1}<|/calls|>'}


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
        "open_pattern": NAME_THEN_PARAMETERS, "close": "<|end|>", "content": "x-json-calls",
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


# --- Python-style calls and Python literals ------------------------------------------------------

_KWARGS = ("{% for k, v in c.function.arguments | items %}{{ k }}={{ v | tojson }}{% if not loop.last %}, "
           "{% endif %}{% endfor %}")
PYTHON_LIST = _turns(
    "{% if m.tool_calls %}{{ m.content or '' }}[{% for c in m.tool_calls %}{{ c.function.name }}(" + _KWARGS
    + "){% if not loop.last %}, {% endif %}{% endfor %}]{% else %}{{ m.content }}{% endif %}")
PYTHON_TAG_LIST = _turns(
    "{% if m.tool_calls %}{{ m.content or '' }}<|python_tag|>[{% for c in m.tool_calls %}"
    "{{ c.function.name }}("
    "{% for k, v in c.function.arguments | items %}{{ k }}={{ v | tojson if v is string else v }}"
    "{% if not loop.last %}, {% endif %}{% endfor %}){% if not loop.last %}, {% endif %}{% endfor %}]"
    "{% else %}{{ m.content }}{% endif %}")
PYTHON_PER_CALL = _turns(
    "{% if m.tool_calls %}{{ m.content or '' }}{% for c in m.tool_calls %}<call>{{ c.function.name }}("
    + _KWARGS
    + ")</call>{% endfor %}{% else %}{{ m.content }}{% endif %}")


@pytest.mark.parametrize(("template", "field"), [
    (PYTHON_LIST, {"open_pattern": r"(?=\[\s*[A-Za-z_][\w.\-]*\()", "close": "<|end|>",
                   "content": "python-call-list", "transform": EACH_CALL, "transform_each": True}),
    (PYTHON_TAG_LIST, {"open": "<|python_tag|>", "close": "<|end|>", "content": "python-call-list",
                       "transform": EACH_CALL, "transform_each": True}),
    (PYTHON_PER_CALL, {"open": "<call>", "close": "</call>", "require_close": True, "repeats": True,
                       "flatten": True,
                       "content": "x-pythonic", "transform": EACH_CALL, "transform_each": True}),
], ids=["list", "list-after-a-marker", "a-call-per-marker"])
def test_python_style_calls_use_the_standard_parser_where_the_template_writes_a_list(
        template: str, field: dict[str, Any]) -> None:
    result = derive_response_template(template, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == field
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}


def test_a_python_list_with_python_literals_reads_them() -> None:
    """``PYTHON_TAG_LIST`` writes a dict argument with Python's str(): python-call-list reads it."""
    result = derive_response_template(PYTHON_TAG_LIST, variables={"eos_token": "<|end|>"})
    message = parse_response("<|python_tag|>[save(settings={'on': True, 'note': None}, tags=['a'])]",
                             result.response_template, prefix="<|assistant|>")
    assert message["tool_calls"] == [{"type": "function", "function": {
        "name": "save", "arguments": {"settings": {"on": True, "note": None}, "tags": ["a"]}}}]


# --- tool schemas the template reads more of than the probes give ---------------------------------

_CALLS_AS_JSON = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</tool_call>'
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")
#: A parameter-type macro in the style of many tool templates, without their ``is defined`` guard:
#: an object parameter without ``additionalProperties`` raises.
NEEDS_ADDITIONAL_PROPERTIES = (
    '{%- macro py_type(spec) -%}{%- if spec.type == "object" -%}'
    "Dict[str, {{ py_type(spec.additionalProperties) }}]"
    '{%- elif spec.type == "array" -%}List[{{ py_type(spec["items"]) }}]'
    "{%- else -%}{{ spec.type }}{%- endif -%}"
    "{%- endmacro -%}{%- if tools %}<|system|>{% for t in tools %}{{ t.function.name }}("
    "{% for k, v in t.function.parameters.properties | items %}{{ k }}: {{ py_type(v) }}"
    "{% if not loop.last %}, {% endif %}{% endfor %})\n{% endfor %}<|end|>\n{% endif %}" + _CALLS_AS_JSON)
#: A template that calls a string method on the description of the parameters object.
NEEDS_DESCRIPTIONS = (
    "{%- if tools %}<|system|>{% for t in tools %}{{ t.function.name }}: "
    "{{ t.function.parameters.description.strip() }}\n{% endfor %}<|end|>\n{% endif %}" + _CALLS_AS_JSON)
#: A template that refuses object and array parameters.
SCALARS_ONLY = (
    "{%- if tools %}<|system|>{% for t in tools %}"
    "{% for k, v in t.function.parameters.properties | items %}"
    "{% if v.type in ['object', 'array'] %}{{ raise_exception('only scalar parameters') }}{% endif %}"
    "{{ t.function.name }}.{{ k }}: {{ v.type }}\n{% endfor %}{% endfor %}<|end|>\n{% endif %}"
    + _CALLS_AS_JSON)


@pytest.mark.parametrize(("template", "schemas"), [
    (NEEDS_ADDITIONAL_PROPERTIES, "complete"), (NEEDS_DESCRIPTIONS, "complete"), (SCALARS_ONLY, "scalar"),
], ids=["additionalProperties", "description", "scalar-parameters"])
def test_a_template_that_raises_on_the_probe_schemas_gets_other_schema_forms(template: str,
                                                                           schemas: str) -> None:
    result = derive_response_template(template, variables={"eos_token": "<|end|>"})
    assert result.report.shape.schemas == schemas
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    assert result.response_template["fields"]["tool_calls"]["open"] == "<tool_call>"


@pytest.mark.parametrize("name", corpus_template_names())
def test_no_capability_is_verified_unless_its_round_trip_passes(name: str) -> None:
    """Over every corpus template, the held-out part included (this asserts the labels' honesty, not
    how many templates verify): the template ``derive`` writes, loaded from its JSON, is judged again by
    a fresh round trip (its own shape and modes); a capability labelled verified must pass there with
    no failing case, and a verified template has its content and every applicable capability verified."""
    result = derived(name)
    template, variables = template_and_variables(name)
    document = json.loads(json.dumps(result.to_json()))
    assert "qz" not in json.dumps(document["response_template"]).lower()  # no sentinel leaked
    verified = [capability for capability, label in document["capabilities"].items()
                if label["status"] == "verified"]
    if verified:
        fresh = round_trip(template, document["response_template"], variables=variables)
        for capability in verified:
            judged = fresh.capabilities[capability]
            assert judged.status == "pass", (capability, judged.reason)
            assert not [case.probe.case for case in judged.cases if case.status == "fail"], capability
    assert document["verified"] == (
        document["capabilities"]["content"]["status"] == "verified"
        and all(label["status"] == "verified" for label in document["capabilities"].values()
                if label["applicable"]))


#: Apertus's shape: tools read as bare function objects (``tool.description``) and call arguments
#: concatenated as a string (a mapping raises).
BARE_TOOLS_STRING_ARGUMENTS = (
    "{%- if tools %}<|system|>{% for t in tools %}// {{ t.description + '\\n' }}{{ t.name }}\n{% endfor %}"
    "<|end|>\n{% endif %}"
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>"
    '{"name": "{{ c.function.name }}", "arguments": ' + "{{ c.function.arguments + '' }}}</tool_call>"
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_bare_tools_are_tried_with_arguments_as_a_json_string() -> None:
    result = derive_response_template(BARE_TOOLS_STRING_ARGUMENTS, variables={"eos_token": "<|end|>"})
    assert (result.report.shape.tools, result.report.shape.arguments) == ("function", "json_string")
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}


#: Command R+ tool_use's shape: a label, then the calls as a fenced JSON list.
LABELLED_FENCE = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}Action:\n```json\n["
    "{% for c in m.tool_calls %}{\"tool_name\": \"{{ c.function.name }}\", \"parameters\": "
    "{{ c.function.arguments | tojson }}}{% if not loop.last %}, {% endif %}{% endfor %}]\n```"
    "{% else %}{{ m.content }}{% endif %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_a_label_right_before_the_call_block_joins_its_opener() -> None:
    result = derive_response_template(LABELLED_FENCE, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"]["open_pattern"] == r"Action:\s*```json"
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    message = parse_response('Action: ```json\n[{"tool_name": "get_time", "parameters": {}}]\n```',
                             result.response_template, prefix="<|user|>Hi<|end|>\n<|assistant|>")
    assert message == {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "get_time", "arguments": {}}}]}
    # the word alone is prose
    assert parse_response("Action: none needed.", result.response_template,
                          prefix="<|user|>Hi<|end|>\n<|assistant|>") == {
        "role": "assistant", "content": "Action: none needed."}


# --- classes found on templates outside the corpus (bench/derive_external.py) ------------------------
# The corpus holds no template of these forms; each is shown on a small template written here with the
# structure the external template has (named in each comment), and the corpus tests above check that
# the rules change no corpus derivation.

#: granite-20b-functioncalling's form: each call opens with a marker and nothing closes it.
OPENER_NO_CLOSER = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}\n<call> "
    "{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}{% endfor %}\n"
    "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_json_calls_with_an_opener_and_no_closer_end_at_the_next_opener() -> None:
    result = derive_response_template(OPENER_NO_CLOSER, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open": "<call>", "close_pattern": r"(?=<call>)|<\|end\|>", "repeats": True, "content": "json",
        "transform": {"type": "function", "function": {"name": "{content.name}",
                                                        "arguments": "{content.arguments}"}}}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    message = parse_response('<call> {"name": "a", "arguments": {}}\n<call> {"name": "b", "arguments": '
                             '{"x": 1}}', result.response_template, prefix="<|user|>Hi<|end|><|assistant|>")
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "a", "arguments": {}}},
        {"type": "function", "function": {"name": "b", "arguments": {"x": 1}}}]


#: MiniMax-M1's form: call objects one per line inside a section, no marker of their own.
OBJECTS_IN_A_SECTION = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}<calls>\n{% for c in m.tool_calls %}"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n{% endfor %}'
    "</calls>{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_json_objects_one_per_line_inside_a_section_are_one_region() -> None:
    result = derive_response_template(OBJECTS_IN_A_SECTION, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open": "<calls>", "close": "</calls>", "content": "x-json-calls",
        "content_args": {"name_keys": ["name"], "arguments_keys": ["arguments"]},
        "transform": {"id": "{id?}", "type": "function",
                      "function": {"name": "{name}", "arguments": "{arguments}"}},
        "transform_each": True}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    message = parse_response('<calls>\n{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {"x": 1}}'
                             "\n</calls>", result.response_template, prefix="<|user|>Hi<|end|><|assistant|>")
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["a", "b"]


#: GigaChat 3's form: a call closes the answer turn and opens a ``function call`` turn.
ROLE_NAME_HEADER = (
    "{%- for m in messages %}{{ m.role }}<|sep|>{% if m.tool_calls %}<|next|>function call<|sep|>"
    "{{ {'name': m.tool_calls[0].function.name, 'arguments': m.tool_calls[0].function.arguments} | tojson }}"
    "{% else %}{{ m.content }}{% endif %}<|next|>{% endfor %}"
    "{% if add_generation_prompt %}assistant<|sep|>{% endif %}")


def test_a_role_name_between_the_markers_before_a_call_joins_its_opener() -> None:
    result = derive_response_template(ROLE_NAME_HEADER, variables={"eos_token": "</s>"})
    field = result.response_template["fields"]["tool_calls"]
    assert field["open_pattern"] == r"<\|next\|>function\s*call\s*<\|sep\|>"
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "unsupported"}
    message = parse_response('<|next|>function call<|sep|>{"name": "a", "arguments": {"x": 1}}<|next|>',
                             result.response_template, prefix="user<|sep|>Hi<|next|>assistant<|sep|>")
    assert message == {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "a", "arguments": {"x": 1}}}]}
    # the words alone are prose
    assert parse_response("A function call is needed.<|next|>", result.response_template,
                          prefix="user<|sep|>Hi<|next|>assistant<|sep|>") == {
        "role": "assistant", "content": "A function call is needed."}


#: DeepSeek-V3.2's form: tagged arguments whose tag says whether the value is raw text.
TYPED_ATTRIBUTE = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}<|calls|>{% for c in m.tool_calls %}\n"
    '<|invoke|name="{{ c.function.name }}">{% for k, v in c.function.arguments.items() %}\n'
    '<|param|name="{{ k }}" raw="{{ "true" if v is string else "false" }}">'
    "{{ v if v is string else v | tojson }}</|param|>{% endfor %}\n</|invoke|>{% endfor %}\n</|calls|>"
    "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_a_word_that_differs_inside_the_argument_tags_matches_any_word() -> None:
    result = derive_response_template(TYPED_ATTRIBUTE, variables={"eos_token": "<|end|>"})
    field = result.response_template["fields"]["tool_calls"]
    assert field["content_args"]["tag_pattern"] == (
        r'<\|param\|name="(?P<key>[^\s<>=\"' + r"']+)" + r'"\s*raw="\w+">(?P<value>.*?)</\|param\|>')
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    message = parse_response('<|calls|>\n<|invoke|name="f">\n<|param|name="city" raw="true">Paris</|param|>\n'
                             '<|param|name="days" raw="false">3</|param|>\n</|invoke|>\n</|calls|>',
                             result.response_template, prefix="<|user|>Hi<|end|><|assistant|>", tools=tools)
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {"city": "Paris", "days": 3}}}]


#: Bielik v3's form: the thinking mode's prompt opens ``<think>``; call turns render without it.
THINK_OPENED_CALLS_WITHOUT = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}"
    "\n</think>\n{% endif %}{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</tool_call>'
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% if enable_thinking %}<think>\n{% endif %}{% endif %}")


def test_renders_that_do_not_continue_their_prompt_do_not_choose_the_anchor() -> None:
    result = derive_response_template(THINK_OPENED_CALLS_WITHOUT, variables={"eos_token": "<|end|>"})
    assert result.response_template["start_anchor"] == "<|assistant|>"
    assert statuses(result) == {"content": "verified", "reasoning": "verified", "one_call": "verified",
                                "parallel_calls": "verified"}
    message = parse_response("Plan.\n</think>\nSunny.", result.response_template,
                             prefix="<|user|>Hi<|end|><|assistant|><think>\n")
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": "Sunny."}


#: functionary v3.2's form: every message of a turn starts with ``>>>`` and its recipient, ``all`` for
#: text; the generation prompt already holds the first ``>>>``.
RECIPIENTS = (
    "{%- for m in messages %}<|{{ m.role }}|>\n{% if m.role == 'assistant' %}"
    "{% if m.content %}>>>all\n{{ m.content }}{% endif %}{% for c in m.tool_calls or [] %}"
    ">>>{{ c.function.name }}\n{{ c.function.arguments | tojson }}{% endfor %}"
    "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n>>>{% endif %}")


def test_recipient_addressed_messages_tell_text_from_calls() -> None:
    result = derive_response_template(RECIPIENTS, variables={"eos_token": "<|end|>"})
    template: dict[str, Any] = result.response_template
    assert template["start_anchor"] == "<|assistant|>\n"
    assert template["fields"]["tool_calls"] == {
        "open_pattern": r">>>(?!all\s)(?P<name>[\w.\-]+)\s*", "close_pattern": r"(?=>>>)|<\|end\|>",
        "repeats": True, "content": "json", "transform": CALL_TRANSFORM}
    assert template["fields"]["content"] == {"close_pattern": r"<\|end\|>|>>>all(?:\n)?",
                                             "content_args": {"strip": "blank"}}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    prefix = "<|user|>\nHi<|end|><|assistant|>\n>>>"
    assert parse_response("all\nHello.", template, prefix=prefix) == {
        "role": "assistant", "content": "Hello."}
    message = parse_response('all\nLet me look.>>>get_time\n{"city": "Paris"}>>>get_date\n{}', template,
                             prefix=prefix)
    assert message == {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"type": "function", "function": {"name": "get_time", "arguments": {"city": "Paris"}}},
        {"type": "function", "function": {"name": "get_date", "arguments": {}}}]}


#: vLLM's Llama 4 pythonic template's form (second external set): a bare call list with every
#: value written as ``"%s" | format(value)`` inside double quotes, so a number reads back as a string.
PYTHON_LIST_QUOTED_VALUES = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}[{% for c in m.tool_calls %}"
    "{{ c.function.name }}({% for k in c.function.arguments %}{{ k }}=\""
    "{{ '%s' | format(c.function.arguments[k]) }}\"{% if not loop.last %}, {% endif %}{% endfor %})"
    "{% if not loop.last %}, {% endif %}{% endfor %}]{% else %}{{ m.content }}{% endif %}<|end|>"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_a_python_list_that_quotes_every_value_is_read_and_typed_by_the_schemas() -> None:
    result = derive_response_template(PYTHON_LIST_QUOTED_VALUES, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"(?=\[\s*[A-Za-z_][\w.\-]*\()", "close": "<|end|>", "content": "python-call-list",
        "transform": EACH_CALL, "transform_each": True}
    assert statuses(result) == {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                                "parallel_calls": "verified"}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    message = parse_response('[get_weather(city="Paris", days="2")]', result.response_template,
                             prefix="<|user|>Hi<|end|><|assistant|>", tools=tools)
    assert message["tool_calls"] == [{"type": "function", "function": {
        "name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]



#: HyperCLOVA X SEED Think's form (second external set): the generation prompt stops inside the role
#: header, and each kind of turn finishes it with its own word (``/think``, `` -> tool/function_call``).
OPEN_HEADER = (
    "{%- for m in messages %}{% if m.role == 'assistant' %}"
    "{% if m.reasoning_content %}<|im_start|>assistant/think\n{{ m.reasoning_content }}<|im_end|>\n"
    "{% endif %}"
    "{% if m.content %}<|im_start|>assistant\n{{ m.content }}<|im_end|>\n{% endif %}"
    "{% if m.tool_calls %}<|im_start|>assistant -> tool/function_call\n[{% for c in m.tool_calls %}"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}'
    "{% if not loop.last %}, {% endif %}{% endfor %}]<|im_end|>\n{% endif %}"
    "{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant{% endif %}")


def test_a_generation_prompt_that_stops_inside_the_header_makes_the_header_rests_markers() -> None:
    result = derive_response_template(OPEN_HEADER, variables={"eos_token": "<|endofturn|>"})
    template: dict[str, Any] = result.response_template
    assert template["start_anchor"] == "<|im_start|>assistant"
    after_header = r"(?:^|(?<=<\|im_start\|>assistant))\s*"
    assert template["fields"]["reasoning_content"] == {"open_pattern": after_header + r"(?:/think)(?:\n)?",
                                                       "close_pattern": r"<\|im_end\|>(?:\n)?",
                                                       "content_args": {"strip": "blank"}}
    assert template["fields"]["tool_calls"]["open_pattern"] == after_header + r"(?:\->\s*tool/function_call)"
    assert statuses(result) == {"content": "verified", "reasoning": "verified", "one_call": "verified",
                                "parallel_calls": "verified"}
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant"
    message = parse_three_ways(template, "/think\nPlan.<|im_end|>\n<|im_start|>assistant"
                               ' -> tool/function_call\n[{"name": "f", "arguments": {"x": 1}}]<|im_end|>',
                               prefix=prefix)
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}
    # the same words inside an answer are prose
    prose = "Write /think, then -> tool/function_call."
    assert parse_three_ways(template, f"\n{prose}<|im_end|>", prefix=prefix) == {
        "role": "assistant", "content": prose}


# --- found on the third independent set (bench/derive_external3_sources.json) -------------------

#: A whole OpenAI ``tool_calls`` entry written as JSON (a ChatML tool template's form): the call's
#: name and arguments inside ``function``, its id beside them.
WRAPPED_CALL = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}<call>"
    "{{ {'id': c.id, 'type': 'function', "
    "'function': {'name': c.function.name, 'arguments': c.function.arguments}} | tojson }}</call>"
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")

#: FunctionGemma's form: bare keys, every value (numbers too) between ``<esc>`` delimiters.
ESCAPED_VALUES = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}"
    "<fc>call:{{ c.function.name }}{{ '{' }}{% for k, v in c.function.arguments.items() %}"
    "{{ k }}:<esc>{{ v }}<esc>{% if not loop.last %},{% endif %}{% endfor %}{{ '}' }}</fc>{% endfor %}"
    "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")

#: MiniMax-M3's form: an element named after each argument, dicts as child elements, lists as
#: ``<item>`` elements, a marker token before every tag, null values left out.
ELEMENTS = (
    "{%- macro el(k, v) %}]<]m[>[<{{ k }}>{% if v is mapping %}"
    "{% for k2, v2 in v.items() if v2 is not none %}{{ el(k2, v2) }}{% endfor %}"
    "{% elif v is iterable and v is not string %}{% for x in v %}{{ el('item', x) }}{% endfor %}"
    "{% elif v is string %}{{ v }}{% else %}{{ v | tojson }}{% endif %}]<]m[>[</{{ k }}>{% endmacro %}"
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}]<]m[>[<calls>\n"
    "{% for c in m.tool_calls %}]<]m[>[<invoke name=\"{{ c.function.name }}\">"
    "{% for k, v in c.function.arguments.items() if v is not none %}{{ el(k, v) }}{% endfor %}"
    "]<]m[>[</invoke>\n{% endfor %}]<]m[>[</calls>{% else %}{{ m.content }}{% endif %}"
    "<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")

#: Kimi-K3's form: every marker is ``<|open|>WORD<|sep|>`` / ``<|close|>WORD<|sep|>``.
GLUED_WORDS = (
    "{%- for m in messages %}<|open|>{{ m.role }}<|sep|>{% if m.tool_calls %}<|open|>tools<|sep|>"
    "{% for c in m.tool_calls %}<|open|>call name=\"{{ c.function.name }}\"<|sep|>"
    "{% for k, v in c.function.arguments.items() %}<|open|>arg key=\"{{ k }}\"<|sep|>{{ v }}"
    "<|close|>arg<|sep|>{% endfor %}<|close|>call<|sep|>{% endfor %}<|close|>tools<|sep|>"
    "{% else %}<|open|>answer<|sep|>{{ m.content }}<|close|>answer<|sep|>{% endif %}"
    "<|close|>{{ m.role }}<|sep|><|eom|>{% endfor %}"
    "{% if add_generation_prompt %}<|open|>assistant<|sep|>{% endif %}")

VERIFIED_CALLS = {"content": "verified", "reasoning": "unsupported", "one_call": "verified",
                  "parallel_calls": "verified"}


def test_a_whole_openai_call_entry_written_as_json_reads_name_and_arguments_inside_function() -> None:
    result = derive_response_template(WRAPPED_CALL, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open": "<call>", "close": "</call>", "repeats": True, "content": "json",
        "transform": {"id": "{content.id?}", "type": "function",
                      "function": {"name": "{content.function.name}",
                                   "arguments": "{content.function.arguments}"}}}
    assert statuses(result) == VERIFIED_CALLS
    output = ('<call>{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}'
              "</call><|end|>")
    message = parse_three_ways(result.response_template, output, prefix="<|user|>Hi<|end|><|assistant|>")
    assert message == {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}


def test_a_json_dialect_that_writes_every_value_between_delimiters_is_typed_by_the_schemas() -> None:
    result = derive_response_template(ESCAPED_VALUES, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r"<fc>call:(?P<name>[\w.\-]+)\s*", "close": "</fc>", "repeats": True,
        "content": "json", "content_args": {"unquoted_keys": True, "string_delims": [["<esc>", "<esc>"]]},
        "transform": CALL_TRANSFORM}
    assert statuses(result) == VERIFIED_CALLS
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    message = parse_response("<fc>call:f{city:<esc>Paris<esc>,days:<esc>2<esc>}</fc><|end|>",
                             result.response_template, prefix="<|user|>Hi<|end|><|assistant|>", tools=tools)
    assert message["tool_calls"] == [{"type": "function", "function": {
        "name": "f", "arguments": {"city": "Paris", "days": 2}}}]


def test_marker_tokens_with_inverted_brackets_and_words_glued_between_markers_are_atoms() -> None:
    atoms = Atoms.for_tokens([])
    assert atoms.texts("]~b]ai\n]<]m[>[<calls>x[e~[") == ["]~b]", "]<]m[>[", "<calls>", "[e~["]
    assert atoms.texts("<|close|>think<|sep|><|open|>call name=\"f\"<|sep|>") == [
        "<|close|>think<|sep|>", "<|open|>", "<|sep|>"]
    # prose and code keep their brackets apart
    assert atoms.texts("a[1] = b[i]; x ]y[ [INST] [f(x=1r)]") == ["[1]", "[i]", "[INST]", "[f(x=1r)]"]


def test_arguments_written_as_elements_named_after_their_keys_are_read_as_a_tree() -> None:
    result = derive_response_template(ELEMENTS, variables={"eos_token": "<|end|>"})
    marker = r"\]\s*<\]m\[>\["
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": rf'(?:{marker}\s*<calls>\s*{marker}\s*)?<invoke\s*name="(?P<name>[\w.\-]+)">',
        "close_pattern": rf"{marker}\s*</invoke>\s*{marker}(?:\s*</calls>)?", "repeats": True,
        "require_close": True,
        "content": "x-xml-tree",
        "content_args": {"leaf_parser": {"name": "json", "args": {"allow_non_json": True, "strip": False}},
                         "remove": ["]<]m[>["]},
        "transform": CALL_TRANSFORM}
    assert statuses(result) == VERIFIED_CALLS
    output = ("]<]m[>[<calls>\n]<]m[>[<invoke name=\"f\">]<]m[>[<city>Paris]<]m[>[</city>]<]m[>[<opts>"
              "]<]m[>[<deep>true]<]m[>[</deep>]<]m[>[<tags>]<]m[>[<item>a]<]m[>[</item>]<]m[>[</tags>"
              "]<]m[>[</opts>]<]m[>[</invoke>\n]<]m[>[</calls><|end|>")
    message = parse_three_ways(result.response_template, output, prefix="<|user|>Hi<|end|><|assistant|>")
    assert message == {"role": "assistant", "tool_calls": [{"type": "function", "function": {
        "name": "f", "arguments": {"city": "Paris", "opts": {"deep": True, "tags": ["a"]}}}}]}


def test_markers_made_of_a_word_glued_between_two_tokens_are_one_marker() -> None:
    result = derive_response_template(GLUED_WORDS, variables={"eos_token": "<|eom|>"})
    template = result.response_template
    assert template["start_anchor"] == "<|open|>assistant<|sep|>"
    assert template["fields"]["content"] == {"close": [
        "<|open|>answer<|sep|>", "<|close|>answer<|sep|>", "<|close|>assistant<|sep|>", "<|eom|>"],
        "content_args": {"strip": "blank"}}
    assert template["fields"]["tool_calls"]["open_pattern"] == (
        r'(?:<\|open\|>tools\s*<\|sep\|>\s*)?<\|open\|>call\s*name="(?P<name>[\w.\-]+)"\s*<\|sep\|>')
    assert template["fields"]["tool_calls"]["close_pattern"] == (
        r"<\|close\|>call\s*<\|sep\|>(?:\s*<\|close\|>tools\s*<\|sep\|>)?")
    assert statuses(result) == VERIFIED_CALLS
    prefix = "<|open|>user<|sep|>Hi<|close|>user<|sep|><|eom|><|open|>assistant<|sep|>"
    output = "<|open|>answer<|sep|>An answer.<|close|>answer<|sep|><|close|>assistant<|sep|>"
    assert parse_three_ways(template, output, prefix=prefix) == {"role": "assistant", "content": "An answer."}


#: Hunyuan-A13B's vLLM form: a plain answer starts with the label ``助手：``, a call turn does not.
ANSWER_LABEL = (
    "{%- for m in messages %}{% if m.role == 'user' %}用户：{{ m.content }}<|extra_0|>"
    "{% elif m.role == 'assistant' %}{% if m.tool_calls %}<calls>"
    "{{ m.tool_calls | map(attribute='function') | list | tojson }}</calls>"
    "{% else %}助手：{{ m.content }}{% endif %}<|eos|>{% else %}<result>{{ m.content }}</result><|extra_0|>"
    "{% endif %}{% endfor %}")


def test_a_label_every_answer_starts_with_is_discarded_only_at_the_start() -> None:
    result = derive_response_template(ANSWER_LABEL, variables={"eos_token": "<|eos|>"})
    template = result.response_template
    assert template["fields"]["content"] == {"close_pattern": r"^\s*助手：|<\|eos\|>",
                                             "content_args": {"strip": "blank"}}
    assert statuses(result) == VERIFIED_CALLS
    prefix = "用户：Hi<|extra_0|>"
    assert parse_three_ways(template, "助手：It is 助手：sunny.<|eos|>", prefix=prefix) == {
        "role": "assistant", "content": "It is 助手：sunny."}


#: MuseGlimmer's form: every message of a turn is addressed in its header (``to=user``, ``to=self``
#: for reasoning, ``to=NAME`` for a call); the generation prompt stops before the recipient.
RECIPIENT_HEADERS = (
    "{%- for m in messages %}{% if m.role == 'assistant' %}{% if m.reasoning_content %}"
    "<|start|>assistant to=self<|message|>{{ m.reasoning_content }}<|eom|>{% endif %}"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<|start|>assistant to={{ c.function.name }}<|message|>"
    "<fn name=\"{{ c.function.name }}\">{% for k, v in c.function.arguments.items() %}<p name=\"{{ k }}\">"
    "{{ v }}</p>{% endfor %}</fn>{% if not loop.last %}<|eom|>{% endif %}{% endfor %}"
    "{% else %}<|start|>assistant to=user<|message|>{{ m.content }}{% endif %}<|eot|>"
    "{% else %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|eot|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant{% endif %}")


def test_messages_addressed_in_their_header_tell_text_reasoning_and_calls_apart() -> None:
    result = derive_response_template(RECIPIENT_HEADERS, variables={"eos_token": "<|eot|>"})
    template = result.response_template
    assert template["fields"]["reasoning_content"] == {
        "open_pattern": r"(?:^|(?<=<\|start\|>assistant))\s*(?:to=self<\|message\|>)", "close": "<|eom|>",
        "content_args": {"strip": "blank"}}
    assert template["fields"]["tool_calls"]["open_pattern"] == (
        r'(?: )?to=(?P<name>[\w.\-]+)\s*<\|message\|><fn\s*name="(?P=name)">')
    assert template["fields"]["content"] == {"close": ["<|start|>assistant", "to=user<|message|>", "<|eom|>",
                                                       "<|eot|>"], "content_args": {"strip": "blank"}}
    assert statuses(result) == {name: "verified" for name in ALL}
    output = (' to=self<|message|>Check.<|eom|><|start|>assistant to=f<|message|><fn name="f">'
              '<p name="city">Paris</p></fn><|eot|>')
    message = parse_three_ways(template, output, prefix="<|start|>user<|message|>Hi<|eot|><|start|>assistant")
    assert message == {"role": "assistant", "reasoning_content": "Check.", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"city": "Paris"}}}]}


#: Two nested loops of 100,000 iterations: ten billion steps, far past any render limit.
ENDLESS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x"


def test_a_template_that_runs_out_of_time_stops_the_derivation_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: every probe render waited MAX_RENDER_SECONDS, so `chatcodec derive` ran for over ten
    minutes on an endless loop. The plain conversation is rendered first, and its error stops it."""
    from chatcodec.chat_templates import limits
    from chatcodec.chat_templates.errors import ChatTemplateLimitError

    monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 0.2)
    with pytest.raises(ChatTemplateLimitError) as raised:
        derive_response_template(ENDLESS, variables={"eos_token": "<|im_end|>"})
    assert (raised.value.message, raised.value.limit, raised.value.value, raised.value.lineno) == (
        "derive: the chat template runs out of time on the plain conversation: chat template sandbox: the "
        "render time exceeds MAX_RENDER_SECONDS (0.2). if the template is trusted, raise "
        "chatcodec.chat_templates.limits.MAX_RENDER_SECONDS; nothing was derived (the derivation renders "
        "dozens of conversations)", "MAX_RENDER_SECONDS", 0.2, 1)


#: Doubles a string a hundred times: MAX_STRING_LENGTH stops it after 26 doublings, a fraction of a
#: second a render, but dozens of probe renders kept `chatcodec derive` busy past 120 s.
DOUBLING = ("{% set ns = namespace(x='a') %}{% for i in range(100) %}{% set ns.x = ns.x ~ ns.x %}"
            "{% endfor %}{{ ns.x }}")


def test_a_template_that_hits_any_sandbox_limit_stops_the_derivation_at_once() -> None:
    from chatcodec.chat_templates.errors import ChatTemplateLimitError

    with pytest.raises(ChatTemplateLimitError) as raised:
        derive_response_template(DOUBLING, variables={"eos_token": "<|im_end|>"})
    assert (raised.value.message, raised.value.limit, raised.value.value, raised.value.lineno) == (
        "derive: the chat template hits the sandbox limit MAX_STRING_LENGTH on the plain conversation: "
        "chat template sandbox: a concatenated string of 67,108,864 characters exceeds MAX_STRING_LENGTH "
        "(50,000,000). if the template is trusted, raise chatcodec.chat_templates.limits.MAX_STRING_LENGTH; "
        "nothing was derived (the derivation renders dozens of conversations)", "MAX_STRING_LENGTH",
        50_000_000, 1)


def test_a_template_that_fails_otherwise_is_not_stopped_by_the_time_check() -> None:
    """Running out of time stops the derivation before the probes; a template that raises on every
    probe conversation is stopped after them, with its own error, its line and the plain
    conversation (it printed ``{"start_anchor": "\\n", "fields": {"content": {}}}`` before, as if
    something had been derived)."""
    from chatcodec.analysis.render_time import plain_render_limit
    from chatcodec.chat_templates.errors import ChatTemplateError, ChatTemplateLimitError

    refusing = "{{ raise_exception('no system message') }}"
    assert plain_render_limit(refusing, {}) is None
    with pytest.raises(ChatTemplateError) as raised:
        derive_response_template(refusing)
    assert not isinstance(raised.value, ChatTemplateLimitError)
    assert raised.value.message == (
        "derive: the chat template raises on every probe conversation (33 tried) and on the plain one, so "
        "nothing can be derived; it raised 'no system message' on {\"messages\": [{\"role\": \"user\", "
        "\"content\": \"What is the capital of France?\"}], \"tools\": null, "
        "\"add_generation_prompt\": true, \"kwargs\": {}}")
    assert (raised.value.lineno, raised.value.source_line) == (1, refusing)


def test_a_template_that_renders_the_plain_conversation_is_labelled_not_stopped() -> None:
    """A template that renders the plain conversation and refuses every probe (each carries an
    assistant turn here; tools, for MiroThinker's macros) is not stopped: the labels say why."""
    refusing = ("{% for m in messages %}{% if m.role == 'assistant' %}{{ raise_exception('no assistant') }}"
                "{% endif %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}A:{% endif %}")
    derived = derive_response_template(refusing)
    assert derived.capabilities["content"].status == "unsupported"
    assert derived.capabilities["content"].reason == (
        "the template refuses it: content/content/single: the chat template raised on this conversation "
        "(no assistant)")
    assert not derived.verified
