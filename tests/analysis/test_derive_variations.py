"""What a new template of a known style varies, and the general rules the derivation has for it.

Found on the fourth independent set (``bench/derive_external4_sources.json``), whose templates are not
part of chatcodec: each form is shown on a small template written here with the structure the
external template has (named in each comment); the corpus and earlier sets check that the rules
change no derivation that was verified before (``docs/derive.md``).
"""

from __future__ import annotations

from typing import Any

import markupsafe
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import parse_response
from chatcodec.analysis.derive import derive_response_template
from chatcodec.analysis.doctor import round_trip_findings
from chatcodec.analysis.probes import mode_variants, used_as_boolean
from chatcodec.analysis.round_trip import MARKUP_DECODED, markup_escaped, unescape_markup
from chatcodec.errors import ResponseParseError
from tests.profiles.helpers import parse_three_ways

VERIFIED = {"content": "verified", "reasoning": "verified", "one_call": "verified",
            "parallel_calls": "verified"}
NO_REASONING = {**VERIFIED, "reasoning": "unsupported"}


def statuses(result: Any) -> dict[str, str]:
    return {name: label.status for name, label in result.capabilities.items()}


# --- reasoning with no closer of its own ---------------------------------------------------------------

#: The State Model Interface template's form (aabbdev/smi): ``<|think|>`` opens reasoning and nothing
#: closes it; the next message's marker (``<|out|>`` before an answer, ``<|act|>`` before a call) ends it.
REASONING_WITHOUT_CLOSER = (
    "{%- for m in messages %}{% if m.role == 'assistant' %}"
    "{% if m.reasoning_content %}<|think|>\n{{ m.reasoning_content }}\n{% endif %}"
    "{% if m.content %}<|out|>\n{{ m.content }}\n{% endif %}"
    "{% for c in m.tool_calls or [] %}<|act|>\n"
    "{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}\n{% endfor %}<|eot|>\n"
    "{% else %}<|{{ m.role }}|>\n{{ m.content }}\n<|eot|>\n{% endif %}{% endfor %}")


def test_reasoning_without_a_closer_ends_before_whichever_message_follows_it() -> None:
    result = derive_response_template(REASONING_WITHOUT_CLOSER, variables={"eos_token": "<|eot|>"})
    fields = result.response_template["fields"]
    assert fields["reasoning_content"] == {"open_pattern": r"(?:<\|think\|>)+(?:\n)?",
                                           "close_pattern": r"(?:\n)?(?=<\|out\|>|<\|act\|>)",
                                           "content_args": {"strip": "blank"}}
    assert fields["tool_calls"]["open_pattern"] == r"(?:\n)?<\|act\|>"
    # the answer ends with the template's "\n" before <|eot|>, which no marker follows: stripped as before
    assert fields["content"] == {"close_pattern": r"<\|out\|>(?:\n)?|<\|eot\|>"}
    assert statuses(result) == VERIFIED
    output = ('<|think|>\nThe forecast first.\n<|act|>\n'
              '{"name": "get_weather", "arguments": {"city": "Oslo"}}\n')
    message = parse_three_ways(result.response_template, output, prefix="<|user|>\nHi\n<|eot|>\n")
    assert message == {"role": "assistant", "reasoning_content": "The forecast first.", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}
    message = parse_three_ways(result.response_template, "<|think|>\nEasy.\n<|out|>\nIt is 4.\n",
                               prefix="<|user|>\nHi\n<|eot|>\n")
    assert message == {"role": "assistant", "reasoning_content": "Easy.", "content": "It is 4."}


# --- renders Jinja HTML-escaped ---------------------------------------------------------------------------

#: mistral-common's v3 and v7 reference templates: the call is built with ``+`` around a ``|safe``
#: value, so Jinja escapes every plain string joined to it (``{&#34;name&#34;: ...}``) while the
#: arguments stay as written.
ESCAPED_CALLS = (
    "{%- for m in messages %}{% if m.role == 'user' %}[INST]{{ m.content }}[/INST]"
    "{% elif m.role == 'tool' %}[TOOL_RESULTS]{{ m.content }}[/TOOL_RESULTS]"
    "{% elif m.tool_calls %}[TOOL_CALLS][{% for c in m.tool_calls %}"
    "{{ '{\"name\": \"' + c.function.name + '\", \"arguments\": ' + c.function.arguments|tojson|safe + '}' }}"
    "{% if not loop.last %}, {% endif %}{% endfor %}]</s>"
    "{% else %}{{ m.content }}</s>{% endif %}{% endfor %}")


def test_a_render_jinja_html_escaped_is_read_as_the_model_writes_it() -> None:
    result = derive_response_template(ESCAPED_CALLS, variables={"eos_token": "</s>"})
    template = result.response_template
    assert template["start_anchor"] == ["[/INST]", "[/TOOL_RESULTS]"]
    assert template["fields"]["tool_calls"] == {
        "open": "[TOOL_CALLS]", "close": "</s>", "content": "json",
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        "transform_each": True}
    assert statuses(result) == NO_REASONING
    assert result.capabilities["one_call"].reason == (
        "verified on the renders with Jinja's HTML escapes decoded: the template escapes them (`&#34;` for "
        "`\"`), a model does not")
    assert result.notes[-1] == (
        "HTML escapes: the chat template HTML-escapes text it joins to a `|safe` value with `+` (the render "
        "shows '&#34;' for '\"'); the turn was read with the escapes decoded, as a model writes it; verified "
        "on the decoded renders, while the prompts it renders show earlier calls escaped: join with `~` or "
        "drop `|safe` in the chat template")
    case = result.report.capabilities["one_call"].cases[0]
    assert case.note == MARKUP_DECODED
    assert case.output == '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'


def test_doctor_reports_a_template_that_html_escapes_its_render_as_an_error() -> None:
    template = derive_response_template(ESCAPED_CALLS, variables={"eos_token": "</s>"}).response_template
    findings = round_trip_findings(ESCAPED_CALLS, template, {"eos_token": "</s>"})
    assert [(finding.check, finding.severity, finding.line) for finding in findings] == [
        ("round-trip", "error", 1), ("round-trip", "info", None)]
    assert findings[0].message.startswith("reasoning/with_call/single: the chat template HTML-escapes text "
                                          "it joins to a `|safe` value with `+`")
    assert findings[1].message.startswith("reasoning: the chat template does not render it")


def test_html_escapes_in_the_tool_list_alone_say_nothing_about_the_turn() -> None:
    """functionary v3.1 escapes its system prompt's tool list the same way; its turns are plain."""
    assert not markup_escaped('[{"name": "f"}]', written="")
    assert markup_escaped("{&#34;name&#34;: 1}", written="")
    assert not markup_escaped("{&#34;name&#34;: 1}", written='{"content": "&#34;"}')
    assert unescape_markup("&lt;b&gt; &amp;#34; &#39;x&#39; &#34;") == "<b> &#34; 'x' \""


@given(st.text())
def test_decoding_undoes_what_jinja_escapes(text: str) -> None:
    assert unescape_markup(str(markupsafe.escape(text))) == text


# --- a template's own thinking switch ---------------------------------------------------------------------

#: A Qwen 3.6 fine-tune's form (pok14575-ops/Vivianna): thinking is off whenever tools are given unless
#: the template's own ``auto_disable_thinking_with_tools`` is false, so ``enable_thinking`` alone never
#: shows a turn that thinks after the prompt.
OWN_THINKING_SWITCH = (
    "{%- set thinking = enable_thinking | default(false) %}"
    "{%- if tools and auto_disable_thinking_with_tools | default(true) %}{% set thinking = false %}"
    "{% endif %}"
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}{% for c in m.tool_calls or [] %}<tool_call>\n{{ {'name': c.function.name, "
    "'arguments': c.function.arguments} | tojson }}\n</tool_call>{% endfor %}"
    "{% else %}{{ m.content }}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if thinking %}<think>\n{% else %}<think>\n</think>\n\n{% endif %}{% endif %}")


def test_a_thinking_switch_of_the_template_s_own_is_a_mode() -> None:
    result = derive_response_template(OWN_THINKING_SWITCH, variables={"eos_token": "<|im_end|>"})
    assert result.report.modes == [{}, {"auto_disable_thinking_with_tools": False, "enable_thinking": True}]
    assert result.report.shape.describe() == "the standard message shape"  # the prompt's </think> is no words
    assert result.response_template["fields"]["reasoning_content"] == {
        "open_pattern": r"(?:<think>)+(?:\n)?", "close_pattern": r"(?:\n)?</think>(?:\n\n)?",
        "content_args": {"strip": "blank"}}
    assert statuses(result) == VERIFIED
    assert result.notes[-1] == ("modes checked: default, auto_disable_thinking_with_tools=False, "
                                "enable_thinking=True")


def test_mode_variants_pair_a_template_s_own_switch_with_the_known_ones() -> None:
    assert mode_variants(frozenset({"enable_thinking", "preserve_thinking", "messages", "tools"})) == [
        {"enable_thinking": True}, {"enable_thinking": False},
        {"preserve_thinking": True}, {"preserve_thinking": True, "enable_thinking": True},
        {"preserve_thinking": True, "enable_thinking": False},
        {"preserve_thinking": False}, {"preserve_thinking": False, "enable_thinking": True},
        {"preserve_thinking": False, "enable_thinking": False}]
    assert mode_variants(frozenset({"messages", "bos_token"})) == []


def test_only_a_switch_the_template_uses_as_a_boolean_is_a_mode() -> None:
    source = ("{% if enable_cot and tools %}A{% endif %}{{ '<budget>' ~ thinking_budget }}"
              "{% set keep = keep_reasoning if keep_reasoning is defined else false %}"
              "{% if reasoning_format == 'tags' %}B{% endif %}")
    names = frozenset({"enable_cot", "thinking_budget", "keep_reasoning", "reasoning_format", "tools"})
    assert mode_variants(names, source) == [
        {"enable_cot": True}, {"enable_cot": False}, {"keep_reasoning": True}, {"keep_reasoning": False}]
    assert [used_as_boolean(source, name) for name in sorted(names)] == [True, True, False, False, True]


# --- reasoning the generation prompt opens with words ------------------------------------------------------

#: Apriel 1.6's form (llama.cpp's Apriel-1.6-15b-Thinker-fixed): the generation prompt ends with
#: ``Here are my reasoning steps:``, which no turn repeats; the last turn starts with its reasoning,
#: then ``[BEGIN FINAL RESPONSE]``, and earlier turns keep only the answer.
PROMPT_OPENS_REASONING_WITH_WORDS = (
    "{%- for m in messages %}{% if m.role == 'assistant' %}\n<|begin_assistant|>\n"
    "{% if m.reasoning_content and loop.last %}{{ m.reasoning_content }}\n[BEGIN FINAL RESPONSE]\n{% endif %}"
    "{{ m.content or '' }}{% if m.tool_calls %}\n<tool_calls>"
    "{{ m.tool_calls | map(attribute='function') | list | tojson }}</tool_calls>{% endif %}"
    "{% if not loop.last %}\n<|end|>\n{% endif %}"
    "{% else %}<|begin_{{ m.role }}|>\n{{ m.content }}\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}\n<|begin_assistant|>\nHere are my reasoning steps:\n{% endif %}")


def test_reasoning_the_prompt_opens_with_words_its_turns_leave_out_is_read_from_the_prefix() -> None:
    result = derive_response_template(PROMPT_OPENS_REASONING_WITH_WORDS, variables={"eos_token": "<|end|>"})
    template = result.response_template
    assert template["start_anchor"] == "<|begin_assistant|>\n"
    assert template["fields"]["reasoning_content"] == {
        "open_pattern": r"Here are my reasoning steps:(?:\n)?",
        "close_pattern": r"(?:\n)?\[BEGIN FINAL RESPONSE\](?:\n)?", "content_args": {"strip": "blank"}}
    assert template["fields"]["tool_calls"]["open"] == "<tool_calls>"
    assert statuses(result) == VERIFIED
    assert result.report.shape.reasoning
    case = result.report.capabilities["reasoning"].cases[0]
    assert case.note == ("the render of this turn does not continue the generation prompt (the prompt has "
                         "'Here are my reasoning steps:\\n' where the render differs); the output was parsed "
                         "after the whole prompt")
    prefix = "<|begin_user|>\nHi\n\n<|begin_assistant|>\nHere are my reasoning steps:\n"
    message = parse_three_ways(template, "Simple.\n[BEGIN FINAL RESPONSE]\nHello!", prefix=prefix)
    assert message == {"role": "assistant", "reasoning_content": "Simple.", "content": "Hello!"}


def test_a_bracket_token_of_capital_words_is_one_atom() -> None:
    from chatcodec.analysis.derivation.atoms import Atoms

    assert Atoms().texts("x\n[BEGIN FINAL RESPONSE]\n[see the docs] [END]") == [
        "[BEGIN FINAL RESPONSE]", "[END]"]


# --- a turn of several messages, each with the role header ------------------------------------------------

#: gpt-oss's harmony form (openai/gpt-oss-120b, corpus held-out part): each message of a turn opens
#: with ``<|start|>assistant`` (the generation prompt, again) and a channel, ``analysis`` for reasoning
#: and ``final`` for the answer.
HARMONY = (
    "{%- for m in messages %}{% if m.role == 'assistant' %}{% if m.reasoning_content %}"
    "<|start|>assistant<|channel|>analysis<|message|>{{ m.reasoning_content }}<|end|>{% endif %}"
    "{% if m.tool_calls %}{% set c = m.tool_calls[0].function %}<|start|>assistant to=functions."
    "{{ c.name }}<|channel|>commentary json<|message|>{{ c.arguments | tojson }}<|call|>"
    "{% else %}<|start|>assistant<|channel|>final<|message|>{{ m.content }}"
    "{% if loop.last %}<|return|>{% else %}<|end|>{% endif %}{% endif %}"
    "{% elif m.role == 'tool' %}<|start|>functions.{{ m.name }} to=assistant<|channel|>commentary<|message|>"
    "{{ m.content }}<|end|>"
    "{% else %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant{% endif %}")


def test_a_turn_that_repeats_its_generation_prompt_before_each_message_discards_it() -> None:
    result = derive_response_template(HARMONY, variables={"eos_token": "<|return|>"})
    fields = result.response_template["fields"]
    assert fields["reasoning_content"] == {"open_pattern": r"(?:<\|channel\|>)+analysis<\|message\|>",
                                           "close": "<|end|>", "content_args": {"strip": "blank"}}
    assert fields["content"] == {"close": ["<|start|>assistant", "<|channel|>final<|message|>", "<|end|>",
                                           "<|start|>", "<|return|>"], "content_args": {"strip": "blank"}}
    assert statuses(result) == {**VERIFIED, "parallel_calls": "unsupported"}
    output = ("<|channel|>analysis<|message|>Say hi.<|end|><|start|>assistant<|channel|>final<|message|>"
              "Hi there!")
    message = parse_three_ways(result.response_template, output, prefix="<|start|>user<|message|>Hi<|end|>"
                               "<|start|>assistant")
    assert message == {"role": "assistant", "reasoning_content": "Say hi.", "content": "Hi there!"}


def test_a_glued_marker_gives_way_to_the_one_its_last_tag_starts() -> None:
    from chatcodec.analysis.derivation.atoms import Atoms

    assert Atoms().texts("<|start|>assistant<|channel|>final<|message|>Hi") == [
        "<|start|>", "<|channel|>final<|message|>"]
    assert Atoms().texts("<|start_header_id|>assistant<|end_header_id|>\n\nHi") == [
        "<|start_header_id|>assistant<|end_header_id|>"]


# --- saying why -------------------------------------------------------------------------------------------

#: vLLM's Llama 3.2 pythonic form: ``[get_weather(city=Paris)]``, string values without quotes, which
#: no parser can tell from names or numbers (the template, not the derivation, is wrong there).
UNQUOTED_PYTHON_VALUES = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}[{% for c in m.tool_calls %}"
    "{{ c.function.name }}({% for k, v in c.function.arguments.items() %}{{ k }}={{ v }}"
    "{% if not loop.last %}, {% endif %}{% endfor %}){% if not loop.last %}, {% endif %}{% endfor %}]"
    "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_calls_no_field_reads_say_so_in_their_labels() -> None:
    result = derive_response_template(UNQUOTED_PYTHON_VALUES, variables={"eos_token": "<|end|>"})
    assert "tool_calls" not in result.response_template["fields"]
    label = result.capabilities["one_call"]
    assert (label.status, label.applicable) == ("unsupported", True)
    assert label.reason == (
        "no tool-call field was derived (the call's arguments are in no form the derivation reads (JSON, a "
        "JSON dialect, tagged arguments, or Python calls with literal values)), and the round trip fails: "
        "one_call/string/single: content: expected None, parsed '[get_weather(city=Paris)]'")
    assert not result.verified


# --- the message form a template was written for --------------------------------------------------------

#: A Hermes-style template that prints the arguments as given (``{{ c.function.arguments }}``): written
#: for OpenAI's JSON-string arguments, it prints a mapping as Python's ``str()``.
PRINTED_ARGUMENTS = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{% if m.tool_calls %}{% for c in m.tool_calls %}"
    '<tool_call>\n{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments }}}\n</tool_call>'
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

#: A template that reads a call's name and arguments at its top level (``c.name``), as some
#: fine-tunes' templates do; a standard call renders as ``{"name": "", ...}``.
TOP_LEVEL_CALLS = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{% if m.tool_calls %}{% for c in m.tool_calls %}"
    "<tool_call>\n{{ {'name': c.name, 'arguments': c.arguments} | tojson }}\n</tool_call>"
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

JSON_CALL_FIELD = {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                   "transform": {"type": "function", "function": {"name": "{content.name}",
                                                                  "arguments": "{content.arguments}"}}}


def test_a_template_that_prints_the_arguments_as_given_gets_a_json_string() -> None:
    result = derive_response_template(PRINTED_ARGUMENTS, variables={"eos_token": "<|im_end|>"})
    assert result.report.shape.describe() == "tool-call arguments as a JSON string"
    assert result.response_template["fields"]["tool_calls"] == JSON_CALL_FIELD
    assert statuses(result) == NO_REASONING


def test_a_template_that_reads_the_call_at_its_top_level_gets_it_there_too() -> None:
    result = derive_response_template(TOP_LEVEL_CALLS, variables={"eos_token": "<|im_end|>"})
    assert result.report.shape.describe() == "each call's name and arguments beside its function object"
    assert result.response_template["fields"]["tool_calls"] == JSON_CALL_FIELD
    assert statuses(result) == NO_REASONING


# --- bare call objects joined by punctuation ------------------------------------------------------------

#: vLLM's Phi-4-mini form: bare call objects, one per line, joined by a comma with no list around them
#: (``{...},\n{...}``), then the end of the turn.
COMMA_JOINED_CALLS = (
    "{%- for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}{% for c in m.tool_calls %}\n"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}'
    "{% if not loop.last %},{% endif %}{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_bare_call_objects_joined_by_a_comma_read_the_comma_as_their_separator() -> None:
    result = derive_response_template(COMMA_JOINED_CALLS, variables={"eos_token": "<|end|>"})
    assert result.response_template["fields"]["tool_calls"] == {
        "open_pattern": r'(?=\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"arguments"\s*:)', "close": "<|end|>",
        "content": "x-json-calls",
        "content_args": {"name_keys": ["name"], "arguments_keys": ["arguments"], "separators": [","]},
        "transform": {"id": "{id?}", "type": "function",
                      "function": {"name": "{name}", "arguments": "{arguments}"}},
        "transform_each": True}
    assert statuses(result) == NO_REASONING
    output = '\n{"name": "f", "arguments": {"x": 1}},\n{"name": "g", "arguments": {}}'
    assert parse_three_ways(result.response_template, output, prefix="<|user|>Hi<|end|><|assistant|>") == {
        "role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
            {"type": "function", "function": {"name": "g", "arguments": {}}}]}


# --- several markers before each call ---------------------------------------------------------------------

#: InternLM2's form (vLLM's ``tool_chat_template_internlm2_tool``; the corpus has no InternLM2 template):
#: every call is written ``<|action_start|><|plugin|>\n{"name": ..., "arguments": ...}<|action_end|>``.
ACTION_MARKERS = (
    "{{- bos_token }}{%- for m in messages %}{%- if m.role == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' + (m.content or '') }}"
    "{%- for c in m.tool_calls or [] %}{{- '<|action_start|><|plugin|>\\n' }}"
    "{{- {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}{{- '<|action_end|>' }}"
    "{%- endfor %}{{- '<|im_end|>\\n' }}"
    "{%- elif m.role == 'tool' %}"
    "{{- '<|im_start|>environment name=<|plugin|>\\n' + m.content + '<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")
ACTION_TOKENS = {"eos_token": "<|im_end|>", "bos_token": "<s>"}
ACTION_PROMPT = "<s><|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_every_marker_each_call_repeats_is_part_of_its_opener() -> None:
    """``<|action_start|>`` was a discard of the content and ``<|plugin|>`` alone opened the call, so a
    call that could not be read lost that marker; now both open it, and nothing is lost."""
    result = derive_response_template(ACTION_MARKERS, variables=ACTION_TOKENS)
    fields = result.response_template["fields"]
    assert fields["tool_calls"]["open_pattern"] == r"<\|action_start\|>\s*<\|plugin\|>"
    assert fields["tool_calls"]["close"] == "<|action_end|>"
    assert fields["content"] == {"close": ["<|im_end|>"], "content_args": {"strip": "blank"}}
    assert statuses(result) == NO_REASONING
    template = result.response_template
    call = '<|action_start|> <|plugin|>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}<|action_end|>'
    assert parse_three_ways(template, "Checking." + call, prefix=ACTION_PROMPT) == {
        "role": "assistant", "content": "Checking.",
        "tool_calls": [{"type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}


@pytest.mark.parametrize("output", [
    "<|action_start|><|plugin|>not json<|action_end|>",  # vLLM's internlm2-vllm-not-json
    'Sure.<|action_start|><|plugin|>\n{"name": "f", "arguments": {"x": 1}',  # cut off
    "<|action_start|><|plugin|>",
])
def test_a_call_that_cannot_be_read_keeps_its_markers(output: str) -> None:
    template = derive_response_template(ACTION_MARKERS, variables=ACTION_TOKENS).response_template
    with pytest.raises(ResponseParseError, match="field 'tool_calls' \\(content parser 'json'\\)"):
        parse_response(output, template, prefix=ACTION_PROMPT)
    kept = parse_response(output, template, prefix=ACTION_PROMPT, errors="keep")
    assert kept["content"] == output
    assert kept["parse_errors"][0]["raw"] == output.removeprefix("Sure.")


def test_the_first_marker_alone_is_text() -> None:
    template = derive_response_template(ACTION_MARKERS, variables=ACTION_TOKENS).response_template
    assert parse_three_ways(template, "Type <|action_start|> to act.", prefix=ACTION_PROMPT) == {
        "role": "assistant", "content": "Type <|action_start|> to act."}


# --- the whole tool_calls list written as JSON -------------------------------------------------------------

#: Jibay Chat Format's form (``bench/derive_external6_sources.json``): a call turn writes
#: ``message.tool_calls | tojson``, the OpenAI entries themselves, then its end marker.
WHOLE_LIST = (
    "{%- for m in messages %}{%- if m.role == 'assistant' %}<[assistant]>\n"
    "{%- if m.tool_calls %}{{ m.tool_calls | tojson }}{% else %}{{ m.content }}{% endif %}<[assistant_end]>\n"
    "{%- else %}<[{{ m.role }}]>\n{{ m.content }}<[{{ m.role }}_end]>\n{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<[assistant]>\n{%- endif %}")


def test_the_whole_tool_calls_list_written_as_json_is_one_array_of_entries() -> None:
    """Each entry holds its call inside ``function``: the array is the unit, read with the entry's
    keys as paths, and it opens on the keys an entry starts with (its ``id`` and ``type``)."""
    result = derive_response_template(WHOLE_LIST, variables={"eos_token": "<[assistant_end]>"})
    field = result.response_template["fields"]["tool_calls"]
    assert field == {
        "open_pattern": r'(?=\[\s*\{\s*"id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"type"\s*:)',
        "close": "<[assistant_end]>", "content": "json", "transform_each": True,
        "transform": {"id": "{id?}", "type": "function",
                      "function": {"name": "{function.name}", "arguments": "{function.arguments}"}}}
    assert statuses(result) == NO_REASONING
    output = ('[{"id": "call_7", "type": "function", "function": {"name": "get_weather", '
              '"arguments": {"city": "Oslo"}}}]')
    prefix = "<[user]>\nHi<[user_end]>\n<[assistant]>"
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    assert parse_three_ways(result.response_template, output, prefix=prefix) == {
        "role": "assistant", "tool_calls": [{"id": "call_7", "type": "function", "function": call}]}
    prose = 'A list: [{"id": 3, "name": "x"}] is data.'
    assert parse_three_ways(result.response_template, prose, prefix=prefix) == {
        "role": "assistant", "content": prose}
