"""The round trip of assistant turns through a chat template and a response template.

Real corpus templates (development part only, see ``corpus_split.py``) with the bundled profiles
of their families, and response templates broken on purpose: a capability passes, fails, or is
reported as the template's doing (not rendered, refused, inconsistent), and every case carries the
conversation that reproduces it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from chatcodec import profiles
from chatcodec.analysis.probes import PROBE_TOOLS, Conversation, MessageShape, probe_matrix
from chatcodec.analysis.round_trip import (
    check_probes,
    compare_message,
    cut_output,
    discover_shape,
    render_case,
    round_trip,
    template_modes,
)
from chatcodec.chat_templates.render import render_chat_template
from tests.analysis.corpus_split import is_held_out
from tests.analysis.helpers import template_and_variables

QWEN25 = "Qwen--Qwen2.5-7B-Instruct.jinja"
SEED_OSS = "ByteDance-Seed--Seed-OSS-36B-Instruct.jinja"
LLAMA32 = "meta-llama--Llama-3.2-11B-Vision-Instruct.jinja"
MINIMAX = "MiniMaxAI--MiniMax-M2.jinja"
GLM46 = "zai-org--GLM-4.6.jinja"
NEXT = "Qwen--Qwen3-Next-80B-A3B.jinja"


def statuses(report: Any) -> dict[str, str]:
    return {name: result.status for name, result in report.capabilities.items()}


def test_the_templates_used_here_are_development_templates() -> None:
    assert not any(is_held_out(name) for name in (QWEN25, SEED_OSS, LLAMA32, MINIMAX, GLM46, NEXT))


def test_hermes_profile_passes_on_qwen25_and_reasoning_is_not_rendered() -> None:
    template, variables = template_and_variables(QWEN25)
    report = round_trip(template, profiles.load("hermes").response_template, variables=variables)
    assert statuses(report) == {"content": "pass", "reasoning": "not_rendered", "one_call": "pass",
                                "parallel_calls": "pass"}
    assert report.modes == [{}]
    assert report.shape == MessageShape()
    assert report.failures() == []
    # one case per probe: 2 content + 2 reasoning + 6 one-call + 1 parallel, in 3 variants
    assert len(report.cases) == 33
    reasoning = report.capabilities["reasoning"]
    assert reasoning.reason == ("reasoning/reasoning/single: the template does not render the "
                                "reasoning_content of this turn")


def test_seed_oss_nested_arguments_round_trip() -> None:
    # the template writes object arguments with Python's str(): the object- and array-typed
    # parameters read that text back as the Python literal it is
    template, variables = template_and_variables(SEED_OSS)
    report = round_trip(template, profiles.load("seed_oss").response_template, variables=variables)
    assert statuses(report) == dict.fromkeys(("content", "reasoning", "one_call", "parallel_calls"), "pass")
    assert report.failures() == []


def seed_oss_without_arguments() -> dict[str, Any]:
    """The seed_oss response template broken on purpose: every call's arguments are ``{}``."""
    broken = copy.deepcopy(profiles.load("seed_oss").response_template)
    broken["fields"]["tool_calls"]["transform"]["function"]["arguments"] = {}
    return broken


def test_a_failing_case_names_the_exact_values() -> None:
    template, variables = template_and_variables(SEED_OSS)
    report = round_trip(template, seed_oss_without_arguments(), variables=variables)
    # the reasoning probes include a turn with a call too
    assert statuses(report) == {"content": "pass", "reasoning": "fail", "one_call": "fail",
                                "parallel_calls": "fail"}
    nested = next(case for case in report.failures() if case.probe.label == "one_call/nested/single")
    assert [d.to_json() for d in nested.differences] == [{
        "key": "tool_calls[0].arguments",
        "expected": {"settings": {"units": "metric", "alerts": [1, 2.5], "deep": {"on": True, "note": None}},
                     "tags": ["home", "eco"]},
        "actual": {},
    }]
    assert nested.fields == {"content": "empty", "reasoning_content": "empty", "tool_calls": "fail"}


def test_a_failing_case_reproduces_from_its_conversation() -> None:
    template, variables = template_and_variables(SEED_OSS)
    report = round_trip(template, seed_oss_without_arguments(), variables=variables)
    case = next(case for case in report.failures() if case.probe.label == "one_call/nested/single").to_json()
    conversation, prompt_conversation = case["conversation"], case["prompt_conversation"]
    assert set(conversation) == {"messages", "tools", "add_generation_prompt", "kwargs"}
    assert conversation["add_generation_prompt"] is False
    assert prompt_conversation["add_generation_prompt"] is True
    assert prompt_conversation["messages"] == conversation["messages"][:-1]
    assert conversation["kwargs"] == variables
    full = render_chat_template(template, conversation["messages"], tools=conversation["tools"],
                                add_generation_prompt=False, **conversation["kwargs"])
    prompt = render_chat_template(template, prompt_conversation["messages"],
                                  tools=prompt_conversation["tools"], add_generation_prompt=True,
                                  **prompt_conversation["kwargs"])
    assert full.startswith(prompt)
    assert case["output"] == full[len(prompt):].split("<seed:eos>")[0]
    assert case["output"] == ("<seed:tool_call>\n<function=save_settings>\n<parameter=settings>"
                              "{'units': 'metric', 'alerts': [1, 2.5], 'deep': {'on': True, 'note': None}}"
                              "</parameter>\n"
                              "<parameter=tags>['home', 'eco']</parameter>\n</function>\n</seed:tool_call>")
    json.dumps(case)  # plain JSON throughout


def test_a_template_that_refuses_parallel_calls_is_a_render_error_with_its_message() -> None:
    template, variables = template_and_variables(LLAMA32)
    report = round_trip(template, profiles.load("llama3_json").response_template, variables=variables)
    parallel = report.capabilities["parallel_calls"]
    assert parallel.status == "render_error"
    assert parallel.counts == {"render_error": 3}
    assert parallel.reason == ("parallel_calls/two_calls/single: the chat template raised on this "
                               "conversation (This model only supports single tool-calls at once!)")
    assert report.capabilities["one_call"].status == "pass"


def test_a_broken_response_template_fails_where_it_is_broken() -> None:
    template, variables = template_and_variables(QWEN25)
    broken = copy.deepcopy(profiles.load("hermes").response_template)
    broken["fields"]["content"]["close"] = ["<|endoftext|>"]  # forgets the turn end
    report = round_trip(template, broken, variables={**variables, "eos_token": ""}, variants=("single",))
    assert statuses(report)["content"] == "fail"
    case = next(case for case in report.failures() if case.probe.case == "content")
    assert [d.to_json() for d in case.differences] == [
        {"key": "content", "expected": "It is sunny in Paris today.",
         "actual": "It is sunny in Paris today.<|im_end|>"}]
    # with the eos token given, the output is cut before it and the same template passes
    again = round_trip(template, broken, variables=variables, variants=("single",))
    assert statuses(again)["content"] == "pass"


def test_a_parser_error_fails_the_case_and_carries_the_message() -> None:
    template, variables = template_and_variables(QWEN25)
    broken = copy.deepcopy(profiles.load("hermes").response_template)
    broken["fields"]["tool_calls"]["content"] = "int"
    broken["fields"]["tool_calls"].pop("content_args", None)
    report = round_trip(template, broken, variables=variables, variants=("single",),
                        capabilities=("one_call",))
    case = report.failures()[0]
    assert case.probe.label == "one_call/string/single"
    assert case.parsed is None
    assert case.error is not None and "tool_calls" in case.error
    assert case.reason == f"parsing failed: {case.error}"


def test_a_prompt_that_opens_think_makes_every_probe_turn_carry_reasoning() -> None:
    template, variables = template_and_variables(MINIMAX)
    shape = discover_shape(template, variables)
    assert shape == MessageShape(reasoning=True)
    assert shape.describe() == "reasoning in every assistant turn"
    report = round_trip(template, profiles.load("minimax_m2").response_template, variables=variables)
    assert statuses(report) == dict.fromkeys(("content", "reasoning", "one_call", "parallel_calls"), "pass")


def test_a_render_that_leaves_out_what_the_prompt_opened_is_inconsistent() -> None:
    template, variables = template_and_variables(MINIMAX)
    report = round_trip(template, profiles.load("minimax_m2").response_template, variables=variables,
                        shape=MessageShape(), variants=("single",), capabilities=("content", "reasoning"))
    case = next(case for case in report.cases if case.probe.case == "content")
    assert case.status == "inconsistent"
    assert case.reason == ("the template renders this turn without '<think>\\n', which its generation prompt "
                           "ends with, so the render cannot say what a model writes after the prompt")
    assert case.fields["content"] == "inconsistent"
    # the content of the reasoning case (which continues the prompt) passes, and counts for content
    assert report.capabilities["content"].counts == {"pass": 1, "inconsistent": 2}
    assert report.capabilities["content"].status == "pass"


def test_modes_are_found_in_the_template_and_kept_only_when_they_change_the_render() -> None:
    template, variables = template_and_variables(GLM46)
    assert template_modes(template, variables) == [{}, {"enable_thinking": False}]
    template, variables = template_and_variables(QWEN25)
    assert template_modes(template, variables) == [{}]
    # a mode the caller already set is not varied
    template, variables = template_and_variables(GLM46)
    assert template_modes(template, {**variables, "enable_thinking": True}) == [{}]


def test_render_case_cuts_the_output_at_the_eos_token() -> None:
    template, variables = template_and_variables(NEXT)
    probe = probe_matrix(variables=variables, variants=("single",), capabilities=("reasoning",))[0]
    rendered = render_case(template, probe.conversation, eos_token="<|im_end|>")
    assert rendered.continues_prompt
    assert rendered.prompt.endswith("<|im_start|>assistant\n<think>\n")
    assert rendered.output == ("The user wants the weather, so I answer directly.\n</think>\n\n"
                               "It is sunny in Paris today.")


class TestCompareMessage:
    def test_arguments_compare_with_their_types(self) -> None:
        expected = {"role": "assistant", "content": "", "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "f", "arguments": {"on": True, "n": 1}}}]}
        parsed = {"tool_calls": [{"type": "function",
                                  "function": {"name": "f", "arguments": {"on": 1, "n": 1.0}}}]}
        fields, differences, dropped = compare_message(expected, parsed, "f on n")
        assert fields == {"content": "empty", "reasoning_content": "empty", "tool_calls": "fail"}
        assert [d.to_json() for d in differences] == [
            {"key": "tool_calls[0].arguments", "expected": {"on": True, "n": 1},
             "actual": {"on": 1, "n": 1.0}}]
        assert dropped == []

    def test_text_is_compared_stripped_and_a_field_the_output_lacks_is_dropped(self) -> None:
        expected = {"content": " Hi ", "reasoning_content": "why"}
        fields, differences, dropped = compare_message(expected, {"content": "Hi\n"}, "Hi\n")
        assert fields == {"content": "pass", "reasoning_content": "not_rendered", "tool_calls": "empty"}
        assert differences == []
        assert dropped == ["reasoning_content"]

    def test_json_string_arguments_and_a_wrong_parsed_id(self) -> None:
        expected = {"tool_calls": [{"id": "call0001x", "type": "function",
                                    "function": {"name": "f", "arguments": '{"a": 1}'}}]}
        parsed = {"tool_calls": [{"id": "call", "type": "function",
                                  "function": {"name": "f", "arguments": {"a": 1}}}]}
        _, differences, _ = compare_message(expected, parsed, "[call0001x] f")
        assert [d.to_json() for d in differences] == [
            {"key": "tool_calls[0].id", "expected": "call0001x", "actual": "call"}]

    def test_a_missing_call_is_one_difference(self) -> None:
        expected = {"tool_calls": [{"id": "i", "type": "function",
                                    "function": {"name": "f", "arguments": {}}}]}
        fields, differences, _ = compare_message(expected, {"content": "f()"}, "f()")
        assert fields["tool_calls"] == "fail" and fields["content"] == "fail"
        assert [d.key for d in differences] == ["content", "tool_calls"]


def test_check_probes_types_arguments_with_the_probe_tools() -> None:
    template, variables = template_and_variables(GLM46)
    probes = probe_matrix(variables=variables, variants=("single",), capabilities=("one_call",),
                          keep=lambda _capability, case: case == "number")
    results = check_probes(template, profiles.load("glm45").response_template, probes,
                           eos_token=variables.get("eos_token"))
    assert [result.status for result in results] == ["pass"]
    # GLM writes every argument as text; the schema types 21.5 back
    assert results[0].output is not None and "<arg_value>21.5</arg_value>" in results[0].output
    assert results[0].parsed == {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "set_thermostat", "arguments": {"temperature": 21.5}}}]}
    assert PROBE_TOOLS[1]["function"]["name"] == "set_thermostat"


@pytest.mark.parametrize("shape", [MessageShape(arguments="json_string"), MessageShape(ids="functions"),
                                   MessageShape(call_content=None), MessageShape(tools="function")])
def test_shapes_change_only_what_they_say(shape: MessageShape) -> None:
    conversation: Conversation = probe_matrix(shape, variants=("single",), capabilities=("one_call",),
                                              keep=lambda _capability, case: case == "string")[0].conversation
    call = conversation.messages[-1]["tool_calls"][0]
    tools = conversation.tools or []
    assert call["function"]["arguments"] == ('{"city": "Paris"}' if shape.arguments == "json_string"
                                             else {"city": "Paris"})
    assert call["id"] == ("functions.get_weather:1" if shape.ids == "functions" else "call0001x")
    assert conversation.messages[-1]["content"] == (None if shape.call_content is None else "")
    assert ("function" in tools[0]) is (shape.tools == "openai")


def test_a_render_without_the_prompts_empty_block_passes_with_a_note() -> None:
    template, variables = template_and_variables("google--gemma-4-31B-it.jinja")
    report = round_trip(template, profiles.load("gemma4").response_template, variables=variables,
                        variants=("single",), modes=[{}], capabilities=("one_call",))
    case = next(case for case in report.cases if case.probe.case == "string")
    assert case.status == "pass"
    assert case.note == ("the render of this turn does not continue the generation prompt (the prompt has "
                         "'<|channel>thought\\n<channel|>' where the render differs); the output was parsed "
                         "after the whole prompt")
    # the common part ended inside "<|": the output starts with the whole marker
    assert case.output == '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>'


def test_schema_forms_fill_in_or_drop_what_templates_read() -> None:
    """A template that raises on the probe schemas as given gets them completed, then scalar only."""
    complete = MessageShape(schemas="complete").tool_schemas(PROBE_TOOLS[2:3])
    assert complete == [{"type": "function", "function": {
        "name": "save_settings", "description": "Save the user's settings.", "parameters": {
            "type": "object", "required": ["settings"], "description": "The arguments.",
            "additionalProperties": {}, "properties": {
                "settings": {"type": "object", "description": "The settings.", "properties": {},
                             "required": [], "additionalProperties": {}},
                "tags": {"type": "array", "items": {"type": "string", "description": "An item."},
                         "description": "Labels."}}}}}]
    scalar = MessageShape(schemas="scalar", tools="function").tool_schemas(PROBE_TOOLS[:3])
    assert [tool["parameters"] for tool in scalar] == [
        PROBE_TOOLS[0]["function"]["parameters"], PROBE_TOOLS[1]["function"]["parameters"],
        {"type": "object", "required": [], "properties": {}}]
    assert PROBE_TOOLS[2]["function"]["parameters"]["required"] == ["settings"]  # copies, never the originals
    assert MessageShape(schemas="scalar").describe() == "tool schemas with scalar parameters only"


#: Command R+ tool_use's shape: an instruction turn after the last message, which the generation prompt
#: follows, and a call turn the template closes with no end-of-turn marker, so the render of that turn runs
#: on into the instruction turn.
INSTRUCTION_AFTER_THE_LAST_TURN = (
    "{%- for m in messages %}<|START|><|{{ m.role | upper }}|>"
    "{%- if m.tool_calls %}Calls: {{ m.tool_calls | map(attribute='function.name') | join(',') }}\n"
    "{% else %}{{ m.content }}<|END|>{% endif %}{% endfor %}"
    "<|START|><|SYSTEM|>Write the calls.<|END|>{% if add_generation_prompt %}<|START|><|BOT|>{% endif %}")


def test_a_turn_after_a_trailer_is_read_between_the_generation_prompt_and_the_trailer() -> None:
    # the generation prompt shares its first marker (<|START|>) with the trailer; the turn ends where
    # the render repeats the trailer
    user = {"role": "user", "content": "Hi"}
    turn = {"role": "bot", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]}
    rendered = render_case(INSTRUCTION_AFTER_THE_LAST_TURN, Conversation([user, turn], None, False, {}),
                           eos_token="<|END|>")
    assert rendered.prompt == ("<|START|><|USER|>Hi<|END|><|START|><|SYSTEM|>Write the calls.<|END|>"
                               "<|START|><|BOT|>")
    assert rendered.full == ("<|START|><|USER|>Hi<|END|><|START|><|BOT|>Calls: f\n"
                             "<|START|><|SYSTEM|>Write the calls.<|END|>")
    assert (rendered.realigned, rendered.continues_prompt) == (True, True)
    assert rendered.output == "Calls: f\n"


def test_a_newline_only_the_generation_prompt_writes_is_realigned() -> None:
    """vLLM's Llama 4 JSON template (second external set) writes ``\\n`` before the generation
    prompt's header and not before the header of a rendered answer: the turn is read after the header."""
    history = "<|header_start|>user<|header_end|>\n\nHi\n<|eot|>"
    header = "<|header_start|>assistant<|header_end|>\n\n"
    case = cut_output(history + "\n" + header, history + header + "Sunny.\n<|eot|>", "<|eot|>", history)
    assert (case.output, case.realigned) == ("Sunny.\n", True)


def _json_calls_template(drop_nulls: bool) -> str:
    """A small template writing each call as JSON; with ``drop_nulls`` it leaves null values out at
    every depth, as MiniMax-M3's template does."""
    keep = " if x is not none" if drop_nulls else ""
    return (
        "{%- macro js(v) %}{% if v is mapping %}{{ '{' }}{% for k, x in v.items()" + keep + " %}"
        "{{ k | tojson }}: {{ js(x) }}{% if not loop.last %}, {% endif %}{% endfor %}{{ '}' }}"
        "{% else %}{{ v | tojson }}{% endif %}{% endmacro %}"
        "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}"
        '<call>{"name": "{{ c.function.name }}", "arguments": {{ js(c.function.arguments) }}}</call>'
        "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}")


CALLS_JSON = {"version": 1, "start_anchor": "<|assistant|>", "fields": {
    "tool_calls": {"open": "<call>", "close": "</call>", "repeats": True, "content": "json",
                   "transform": {"type": "function", "function": {"name": "{content.name}",
                                                                  "arguments": "{content.arguments}"}}},
    "content": {"close": ["<|end|>"]}}}
END = {"eos_token": "<|end|>"}


def test_null_arguments_a_template_leaves_out_are_compared_as_absent() -> None:
    report = round_trip(_json_calls_template(drop_nulls=True), CALLS_JSON, variables=END)
    assert report.capabilities["one_call"].status == "pass"
    nested = [case for case in report.cases if case.probe.case == "nested"]
    assert nested and all(case.status == "pass" for case in nested)
    assert all(case.note == ("the template leaves arguments whose value is null out of the render (the "
                             "render without them is the same text), so they were compared as absent")
               for case in nested)
    assert '"deep": {"on": true}' in nested[0].output


def test_null_arguments_a_template_writes_must_come_back() -> None:
    report = round_trip(_json_calls_template(drop_nulls=False), CALLS_JSON, variables=END)
    nested = [case for case in report.cases if case.probe.case == "nested"]
    assert nested and all(case.status == "pass" and case.note == "" for case in nested)
    assert '"deep": {"on": true, "note": null}' in nested[0].output
    broken = copy.deepcopy(CALLS_JSON)  # a parse that loses the null fails, the render holds it
    broken["fields"]["tool_calls"]["transform"]["function"]["arguments"] = "{content.arguments.settings?}"
    failed = round_trip(_json_calls_template(drop_nulls=False), broken, variables=END)
    assert failed.capabilities["one_call"].status == "fail"
