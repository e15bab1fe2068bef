r"""Streaming guard: every tool-calling profile streams a call while it is being written.

A profile can be right on whole outputs and still stream badly: a delimiter pattern that needs
text far ahead (a lookbehind over the calls, a lookahead over the rest of the output) makes the
engine hold everything from the call's open to the end of generation, so a client sees no tool-call
header and no argument until the model has finished. This test feeds, for every bundled profile
with tool calls, a real output of its format from ``peer_vectors.json`` in chunks of
``CHUNK`` characters to a parser made with ``value_deltas=True``, and asserts on the events that
came out BEFORE the last chunk was fed:

* the tool-call region opened (``{"type": "region_open", "field": "tool_calls"}``);
* the region's streamed text starts with ``raw``: the call's text up to (a start of) the value of
  its first argument, as the model wrote it;
* where the profile's content parser streams values (``docs/streaming_values.md``), the first
  ``region_value`` event under the first call's arguments is ``first`` (a key's ``begin`` of a
  string, or its ``set`` of a number).

Vectors are picked so that text follows the first call (a second call, a close, trailing text);
``qwen3``, ``granite33_think`` and ``granite_reasoning`` have no call in their own family's vectors
and use outputs of the same call syntax (``hermes``, ``qwq``, ``granite``); ``qwen3`` is fed one
output without and one with the reasoning the generation prompt opens, because a reasoning
delimiter that looks behind a call (``(?<=</tool_call>\s*)</think>``) held the call only there.
``functionary_v3_2`` has no real output with a call in the corpus and is listed in
``NO_CORPUS_CALL``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import chatcodec
from chatcodec import profiles
from tests.conftest import load_json

#: Characters per fed chunk.
CHUNK = 3
VECTORS: dict[str, dict[str, Any]] = {
    vector["id"]: vector for vector in load_json("peer_vectors.json")["vectors"]}
#: Tool-calling profiles without a real output with a call of their syntax in the corpus.
NO_CORPUS_CALL = frozenset({"functionary_v3_2"})
#: Profiles whose response templates another branch changes: their first argument event is checked
#: by its path (a value that branch streams as text or sets whole is its choice), the rest exactly.
OTHER_BRANCH = frozenset({"deepseek_v32", "longcat", "minicpm5", "lfm2", "llama4_pythonic", "pythonic"})


def _begin(key: str) -> dict[str, Any]:
    """The first argument is a string whose text streams: its ``begin`` event."""
    return {"op": "begin", "path": [0, "function", "arguments", key], "kind": "string"}


def _set(key: str, value: Any) -> dict[str, Any]:
    """The first argument is a number (or a value that is not streamed): its ``set`` event."""
    return {"op": "set", "path": [0, "function", "arguments", key], "value": value}


@dataclass(frozen=True)
class Guard:
    """The vector fed, and what must have streamed before its last chunk."""

    vector: str
    raw: str
    first: dict[str, Any] | None


GUARDS: list[tuple[str, Guard]] = [
    ("apertus", Guard(
        "apertus-lcpp-name-as-key",
        '[{"special_function": {"arg1": 1',
        _set("arg1", 1))),
    ("apriel", Guard(
        "apriel15-lcpp-tool-calls",
        '[{"name": "special_function", "arguments": {"arg1": 1',
        _set("arg1", 1))),
    ("cohere2", Guard(
        "cohere2moe-lcpp-parallel",
        '[\n    {"tool_call_id": "0", "tool_name": "special_function", "parameters": {"arg1": 1',
        _set("arg1", 1))),
    ("command_r7b", Guard(
        "r7b-lcpp-thinking-action",
        '[\n    {"tool_call_id": "0", "tool_name": "special_function", "parameters": {"arg1": 1',
        _set("arg1", 1))),
    ("command_r_plus", Guard(
        "commandrplus-lcpp-action-json",
        '[{"tool_name": "special_function", "parameters": {"arg1": 1',
        _set("arg1", 1))),
    ("deepseek_r1", Guard(
        "r1qwen-lcpp-call-non-thinking",
        '<｜tool▁call▁begin｜>function<｜tool▁sep｜>special_function\n```json\n{"arg1": 1',
        _set("arg1", 1))),
    ("deepseek_v3", Guard(
        "dsv3-vllm-parallel",
        '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Tokyo',
        _begin("city"))),
    ("deepseek_v31", Guard(
        "dsv31-vllm-two-calls-suffix",
        '<｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1',
        _set("x", 1))),
    ("deepseek_v32", Guard(
        "dsv32-sgl-messy-whitespace",
        '\n\n            <｜DSML｜invoke name="get_favorite_tourist_spot"'
        '>\n\n                <｜DSML｜parameter name="city" string="true">San Francisc',
        _set("city", "San Francisco"))),
    ("firefunction_v2", Guard(
        "firefunction-lcpp-functools",
        '[{"name": "special_function", "arguments": {"arg1": 1',
        None)),
    ("functionary_v3_1", Guard(
        "functionary31-lcpp-function-tag",
        '{"arg1": 1',
        None)),
    ("gemma4", Guard(
        "gemma4-lcpp-parallel",
        '{city:<|"|>London',
        None)),
    ("gigachat3", Guard(
        "gigachat3-lcpp-function-call",
        '{"name": "special_function", "arguments": {"arg1": 1',
        _set("arg1", 1))),
    ("glm45", Guard(
        "glm45-vllm-text-between-calls",
        "\n<arg_key>city</arg_key>\n<arg_value>Beijing",
        None)),
    ("glm47", Guard(
        "glm47-lcpp-parallel",
        "<arg_key>arg1</arg_key><arg_value>1",
        None)),
    ("gpt_oss", Guard(
        "llmjp-lcpp-spaced-harmony-parallel",
        ' {"arg1": 1',
        None)),
    ("granite", Guard(
        "granite-vllm-parallel-multiline",
        ' [\n  {"name": "get_weather", "arguments": {"city": "Tokyo',
        _begin("city"))),
    ("granite33_think", Guard(
        "granite-vllm-parallel-multiline",
        ' [\n  {"name": "get_weather", "arguments": {"city": "Tokyo',
        _begin("city"))),
    ("granite4", Guard(
        "granite4-lcpp-hermes-style",
        '\n{"name": "special_function", "arguments": {"arg1": 1',
        _set("arg1", 1))),
    ("granite_20b_fc", Guard(
        "granite20b-vllm-parallel",
        '<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo',
        _begin("city"))),
    ("granite_reasoning", Guard(
        "granite-vllm-parallel-multiline",
        ' [\n  {"name": "get_weather", "arguments": {"city": "Tokyo',
        _begin("city"))),
    ("hermes", Guard(
        "reka-lcpp-parallel-no-separator",
        '\n{"name": "special_function", "arguments": {"arg1": 1',
        _set("arg1", 1))),
    ("hunyuan_a13b", Guard(
        "hunyuan-vllm-two-calls-types",
        '[{"name": "get_weather", "arguments": {"city": "San Francisc',
        _begin("city"))),
    ("internlm2", Guard(
        "internlm2-vllm-single",
        '{"name": "get_weather", "parameters": {"city": "Tokyo',
        _begin("city"))),
    ("jamba", Guard(
        "jamba-vllm-parallel",
        '[\n    {"name": "get_current_weather", "arguments": {"city": "Dallas',
        _begin("city"))),
    ("kimi_k2", Guard(
        "kimik2-vllm-three-calls",
        '<|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{"city": "New York',
        _begin("city"))),
    ("lfm2", Guard(
        "lfm2-lcpp-double-quoted-str",
        '[get_time(city="XYZCITY',
        _begin("city"))),
    ("ling3", Guard(
        "ling3-lcpp-call-ends-think",
        "\n<arg_key>city</arg_key>\n<arg_value>Paris",
        None)),
    ("llama3_json", Guard(
        "llama3json-vllm-semicolon-multi",
        '{"name": "searchTool", "parameters": {"query": "test1',
        _begin("query"))),
    ("llama4_pythonic", Guard(
        "llama4-vllm-start-tag-no-end",
        "[get_weather(city='LA",
        _begin("city"))),
    ("longcat", Guard(
        "longcat-vllm-parallel",
        '{"name": "get_weather", "arguments": {"city": "Tokyo',
        _begin("city"))),
    ("minicpm5", Guard(
        "minicpm5-lcpp-cdata",
        '<param name="markup"><![CDATA[<a href="/x"',
        None)),
    ("minimax_m1", Guard(
        "minimaxm1-vllm-two-lines",
        '\n{"name": "get_current_weather", "arguments": {"city": "Dallas',
        _begin("city"))),
    ("minimax_m2", Guard(
        "minimaxm2-vllm-two-invokes",
        '<invoke name="search_web"><parameter name="query">OpenAI',
        _begin("query"))),
    ("minimax_m3", Guard(
        "minimaxm3-lcpp-think-call",
        '\n]<]minimax[>[<invoke name="get_time">]<]minimax[>[<city>Tokyo',
        _begin("city"))),
    ("mistral", Guard(
        "mistral-vllm-prev11-two-calls-args-first",
        ' [{"arguments": {"a": 3.5',
        _set("a", 3.5))),
    ("mistral_args", Guard(
        "mistral32-lcpp-parallel-call-ids",
        'special_function[CALL_ID]000000001[ARGS]{"arg1": 1',
        _set("arg1", 1))),
    ("mistral_reasoning", Guard(
        "ministral3-lcpp-parallel",
        'special_function[ARGS]{"arg1": 1',
        _set("arg1", 1))),
    ("mistral_v11", Guard(
        "mistral-vllm-v11-single",
        'add_this_and_that{"a": 3.5',
        _set("a", 3.5))),
    ("nemotron3", Guard(
        "nemotron3-lcpp-call-trailing-newline",
        "\n<parameter=arg1>\n1",
        None)),
    ("nemotron_v2", Guard(
        "nemotronv2-lcpp-toolcall",
        '[{"name": "special_function", "arguments": {"arg1": 1',
        _set("arg1", 1))),
    ("phi4_mini_json", Guard(
        "phi4mini-vllm-single",
        '[{"name": "get_weather", "arguments": {"city": "Tokyo',
        _begin("city"))),
    ("pythonic", Guard(
        "pythonic-sgl-nested-containers",
        "[get_weather(location='Paris",
        _begin("location"))),
    ("qwen3", Guard(
        "reka-lcpp-parallel-no-separator",
        '\n{"name": "special_function", "arguments": {"arg1": 1',
        _set("arg1", 1))),
    ("qwen3", Guard(
        "hermes-vllm-qwq32b-think-then-call",
        '\n{"name": "internet_search", "arguments": {"question": "5MW燃气轮机设计参数 ',
        _begin("question"))),
    ("qwen3_coder", Guard(
        "qwen35-lcpp-parallel",
        "\n<parameter=arg1>\n1",
        None)),
    ("qwq", Guard(
        "hermes-vllm-qwq32b-think-then-call",
        '\n{"name": "internet_search", "arguments": {"question": "5MW燃气轮机设计参数 ',
        _begin("question"))),
    ("seed_oss", Guard(
        "seedoss-lcpp-parallel",
        "\n<parameter=arg1>1",
        None)),
    ("step3", Guard(
        "step3-vllm-single",
        '<｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo',
        _begin("city"))),
    ("step3p5", Guard(
        "stepfun35-lcpp-quoted-vs-unquoted",
        '\n<parameter=quoted>\n"printf(\\"fo',
        None)),
    ("xlam", Guard(
        "xlam-vllm-bare-array",
        '[{"name": "get_current_weather", "arguments": {"city": "Dallas',
        _begin("city"))),
]


def _tool_profiles() -> list[str]:
    return [name for name in profiles.names()
            if "tool_calls" in profiles.load(name).response_template["fields"]]


def _events_before_last_chunk(family: str, vector: dict[str, Any]) -> list[dict[str, Any]]:
    profile = profiles.load(family)
    parser = chatcodec.ResponseParser(
        profile.response_template, prefix=profile.generation_prompt_ending(vector["prompt_suffix"]),
        tools=vector["tools"], value_deltas=True)
    output = vector["output"]
    chunks = [output[start:start + CHUNK] for start in range(0, len(output), CHUNK)]
    events = list(parser.initial_events)
    for chunk in chunks[:-1]:
        events += parser.feed(chunk)
    return events


def _id(value: Any) -> str:
    return value.vector if isinstance(value, Guard) else str(value)


def test_every_tool_calling_profile_is_guarded() -> None:
    assert sorted(set(_tool_profiles()) - NO_CORPUS_CALL) == sorted({family for family, _ in GUARDS})


@pytest.mark.parametrize(("family", "guard"), GUARDS, ids=_id)
def test_the_first_call_streams_before_the_output_ends(family: str, guard: Guard) -> None:
    vector = VECTORS[guard.vector]
    events = _events_before_last_chunk(family, vector)
    assert {"type": "region_open", "field": "tool_calls"} in events
    streamed = "".join(event["text"] for event in events
                       if event["type"] == "region_chunk" and event["field"] == "tool_calls")
    assert streamed.startswith(guard.raw), f"streamed before the last chunk: {streamed!r}"
    if guard.first is None:
        return
    arguments = [event for event in events if event["type"] == "region_value"
                 and event["path"][:3] == [0, "function", "arguments"] and len(event["path"]) == 4]
    assert arguments, "no argument value streamed before the last chunk"
    if family in OTHER_BRANCH:
        assert arguments[0]["path"] == guard.first["path"]
        return
    assert arguments[0] == {"type": "region_value", "field": "tool_calls", **guard.first}


@pytest.mark.parametrize(("family", "guard"), GUARDS, ids=_id)
def test_the_guard_names_the_vectors_first_argument(family: str, guard: Guard) -> None:
    """The table agrees with the peer's expected parse (a typo in it would weaken the guard)."""
    first_call = VECTORS[guard.vector]["expected"]["tool_calls"][0]
    key, value = next(iter(first_call["arguments"].items()))
    assert guard.raw in VECTORS[guard.vector]["output"]
    if guard.first is not None:
        assert guard.first["path"] == [0, "function", "arguments", key]
        assert guard.first.get("value", value) == value
