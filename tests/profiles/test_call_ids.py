"""A call id the model wrote is kept on the tool call, OpenAI shape ``{"id", "type", "function"}``.

Profiles read ids from JSON call objects (``id``, ``tool_call_id``, ``call_id``: ``x-json-calls``)
and from id markers (Mistral's ``[CALL_ID]``); a call without one has no ``id`` key.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import profiles
from tests.conftest import corpus_path, load_json
from tests.profiles.helpers import parse_three_ways
from tests.profiles.test_peer_vectors import KNOWN_DIFFERENCES

VECTORS: list[dict[str, Any]] = load_json("peer_vectors.json")["vectors"]

JSON_PROFILES = sorted(
    name
    for name in profiles.names()
    if any(
        "x-json-calls" in str(spec.get("content")) + str(spec.get("content_args"))
        for spec in profiles.load(name).response_template["fields"].values()
    )
)


def _parse(name: str, output: str) -> dict[str, Any]:
    profile = profiles.load(name)
    return parse_three_ways(profile.response_template, output, prefix=profile.generation_prompt)


def test_every_json_call_profile_is_covered() -> None:
    assert JSON_PROFILES == [
        "apertus", "apriel", "cohere2", "command_r7b", "command_r_plus", "firefunction_v2", "gigachat3",
        "granite", "granite33_think", "granite4", "granite_20b_fc", "granite_reasoning", "hermes",
        "hunyuan_a13b", "internlm2", "jamba", "lfm2", "llama3_json", "llama4_pythonic", "longcat",
        "minimax_m1", "mistral", "mistral_args", "mistral_reasoning", "mistral_v11", "nemotron_v2",
        "phi4_mini_json", "qwen3", "qwq", "xlam",
    ]


def test_cohere_tool_call_id_is_the_call_id() -> None:
    output = (
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "special_function", '
        '"parameters": {"arg1": 1}},\n    {"tool_call_id": "1", "tool_name": "python", '
        '"parameters": {"code": "x"}}\n]<|END_ACTION|>'
    )
    assert _parse("command_r7b", output)["tool_calls"] == [
        {"id": "0", "type": "function", "function": {"name": "special_function", "arguments": {"arg1": 1}}},
        {"id": "1", "type": "function", "function": {"name": "python", "arguments": {"code": "x"}}},
    ]


def test_hermes_keeps_an_id_and_a_call_without_one_has_none() -> None:
    output = (
        '<tool_call>{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    )
    assert _parse("hermes", output)["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
        },
        {"type": "function", "function": {"name": "get_time", "arguments": {}}},
    ]


#: Outputs with an id for the families without a peer vector that writes a JSON call object, and
#: for llama3_json, whose call opens only at ``{"name": ..., "parameters":`` (as vLLM's).
OWN_OUTPUTS = {
    "granite33_think": '<|tool_call|>[{"name": "f", "id": "call_7", "arguments": {"a": 1}}, {"name": "g"}]',
    "granite_reasoning": '<|tool_call|>[{"name": "f", "id": "call_7", "arguments": {"a": 1}}, {"name": "g"}]',
    "llama3_json": '{"name": "f", "parameters": {"a": 1}, "id": "call_7"}; {"name": "g", "parameters": {}}',
    "llama4_pythonic": '{"name": "f", "parameters": {"a": 1}, "id": "call_7"}',
    # the pre-v11 list some Mistral checkpoints still write after [TOOL_CALLS] (vLLM's pre-v11 form)
    "mistral_args": '[TOOL_CALLS][{"name": "f", "id": "call_7", "arguments": {"a": 1}}, '
                    '{"name": "g", "arguments": {}}]',
    "mistral_reasoning": '[TOOL_CALLS][{"name": "f", "id": "call_7", "arguments": {"a": 1}}]',
    "mistral_v11": '[TOOL_CALLS][{"name": "f", "id": "call_7", "arguments": {"a": 1}}]',
    "qwen3": '<tool_call>\n{"name": "f", "id": "call_7", "arguments": {"a": 1}}\n</tool_call>\n'
             '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>',
}


def _first_call_vector(name: str) -> tuple[str, str | None, Any]:
    """Output, prompt suffix and tools of the first peer vector of the family that writes a call object."""
    if name in OWN_OUTPUTS:
        return OWN_OUTPUTS[name], None, None
    for vector in VECTORS:
        if (vector["family"] == name and vector["expected"]["tool_calls"]
                and vector["id"] not in KNOWN_DIFFERENCES
                and ('"name": "' in vector["output"] or '"tool_name": "' in vector["output"])):
            return vector["output"], vector["prompt_suffix"], vector["tools"]
    raise AssertionError(f"{name}: no peer vector with a JSON call object")


@pytest.mark.parametrize("name", [name for name in JSON_PROFILES if name != "apertus"])
def test_every_json_call_profile_puts_an_id_on_the_call(name: str) -> None:
    """An output with ``"id": "call_7"`` added after the name of its first call object (Cohere's
    outputs carry their own ``tool_call_id``)."""
    output, suffix, tools = _first_call_vector(name)
    expected_id = "0" if '"tool_call_id": "0"' in output else "call_7"
    if expected_id == "call_7" and name not in OWN_OUTPUTS:
        name_at = min(at for at in (output.find('"name": "'), output.find('"tool_name": "')) if at >= 0)
        at = output.index('"', output.index(': "', name_at) + 3) + 1
        output = output[:at] + ', "id": "call_7"' + output[at:]
    profile = profiles.load(name)
    prefix = profile.generation_prompt_ending(suffix)
    message = parse_three_ways(profile.response_template, output, prefix=prefix, tools=tools)
    first = message["tool_calls"][0]
    assert first["id"] == expected_id
    assert list(first) == ["id", "type", "function"]
    if expected_id == "call_7":
        assert all("id" not in call for call in message["tool_calls"][1:])


@pytest.mark.parametrize("name", ["mistral_args", "mistral_reasoning", "mistral_v11"])
def test_mistral_call_id_marker_is_the_call_id(name: str) -> None:
    profile = profiles.load(name)
    output = (
        '[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{"city": "Paris"}'
        '[TOOL_CALLS]get_time[ARGS]{}'
    )
    message = parse_three_ways(
        profile.response_template, output, prefix=profile.generation_prompt_ending(None)
    )
    assert message["tool_calls"] == [
        {
            "id": "abc123XYZ",
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
        },
        {"type": "function", "function": {"name": "get_time", "arguments": {}}},
    ]


@pytest.mark.parametrize("name", ["mistral_args", "mistral_reasoning", "mistral_v11"])
def test_mistral_empty_call_id_marker_gives_no_id(name: str) -> None:
    """``[CALL_ID]`` with nothing before ``[ARGS]`` names no id: the key is left out, not ``""``."""
    profile = profiles.load(name)
    output = (
        '[TOOL_CALLS]get_weather[CALL_ID][ARGS]{"city": "Paris"}'
        "[TOOL_CALLS]get_time[CALL_ID]t1[ARGS]{}</s>"
    )
    message = parse_three_ways(profile.response_template, output, prefix="")
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "t1", "type": "function", "function": {"name": "get_time", "arguments": {}}},
    ]


@pytest.mark.parametrize("name", ["deepseek_r1", "deepseek_v3"])
def test_deepseek_call_type_is_the_tool_call_type(name: str) -> None:
    """The type DeepSeek writes before the name (always ``function`` in the peers' outputs) is kept."""
    call = "<｜tool▁call▁begin｜>{}<｜tool▁sep｜>f\n```json\n{{}}\n```<｜tool▁call▁end｜>"
    output = f"<｜tool▁calls▁begin｜>{call.format('function')}{call.format('retrieval')}<｜tool▁calls▁end｜>"
    profile = profiles.load(name)
    message = parse_three_ways(
        profile.response_template, output, prefix=profile.generation_prompt_ending(None)
    )
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {}}},
        {"type": "retrieval", "function": {"name": "f", "arguments": {}}},
    ]


def test_mistral_nemo_renders_the_id_it_parses_back() -> None:
    """Mistral-Nemo's template writes ``tool_call.id`` into the JSON call; parsing gives it back."""
    from chatcodec.chat_templates.render import render_chat_template

    profile = profiles.load("mistral")
    function = {"name": "get_weather", "arguments": {"city": "Paris"}}
    call = {"id": "call00001", "type": "function", "function": function}
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "tool_calls": [call]}]
    template = (corpus_path("chat_templates") / "mistralai--Mistral-Nemo-Instruct-2407.jinja").read_text()
    tokens = profile.special_tokens
    prompt = render_chat_template(template, messages[:1], add_generation_prompt=True, **tokens)
    whole = render_chat_template(template, messages, **tokens)
    assert whole.startswith(prompt)
    message = parse_three_ways(profile.response_template, whole[len(prompt):], prefix=prompt)
    assert message["tool_calls"] == [call]


@pytest.mark.parametrize(
    ("name", "output"),
    [
        ("pythonic", '[g(), {"id": "c1", "name": "f", "arguments": {"a": 1}}]'),
        ("llama4_pythonic", '[g(), {"id": "c1", "name": "f", "arguments": {"a": 1}}]'),
        (
            "lfm2",
            '<|tool_call_start|>[g(), {"id": "c1", "name": "f", "arguments": {"a": 1}}]<|tool_call_end|>',
        ),
    ],
)
def test_pythonic_profiles_keep_the_id_of_a_dict_element(name: str, output: str) -> None:
    """Round-3 audit: x-pythonic keeps a dict element's id; the profile's transform must carry it."""
    assert _parse(name, output) == {
        "role": "assistant",
        "tool_calls": [
            {"type": "function", "function": {"name": "g", "arguments": {}}},
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
        ],
    }
