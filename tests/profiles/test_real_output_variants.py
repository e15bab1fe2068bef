"""Format variants that real models wrote and the bundled profiles once missed, with their events.

Each output below was written by the model named in its case (the source says where it was
captured: a peer's issue or test, or the model card's documented format). The message is checked
whole and fed one character at a time, and so are the events a parser made with
``value_deltas=True`` gives: the region opens and closes, the value events (a string's ``text``
events joined, as the chunking splits them) and the region text joined per field must be exactly
those below, however the output is fed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import chatcodec
from chatcodec import profiles

Q = '<|"|>'
NS = "]<]minimax[>["


@dataclass(frozen=True)
class Case:
    family: str
    source: str
    output: str
    message: dict[str, Any]
    #: the value events of the tool-call region, ``(op, path, payload)`` (``text`` events joined)
    values: list[tuple[str, tuple[str | int, ...], Any]]


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _head(name: str) -> list[tuple[str, tuple[str | int, ...], Any]]:
    return [("begin", (), "object"), ("set", ("type",), "function"), ("begin", ("function",), "object"),
            ("set", ("function", "name"), name), ("begin", ("function", "arguments"), "object")]


def _item_head(index: int, name: str, *,
               streamed_name: bool = True) -> list[tuple[str, tuple[str | int, ...], Any]]:
    """The events that open call ``index`` of a list, its name streamed as a string or set whole."""
    named: list[tuple[str, tuple[str | int, ...], Any]] = (
        [("begin", (index, "function", "name"), "string"), ("text", (index, "function", "name"), name),
         ("end", (index, "function", "name"), None)]
        if streamed_name else [("set", (index, "function", "name"), name)])
    return [("begin", (index,), "object"), ("set", (index, "type"), "function"),
            ("begin", (index, "function"), "object"), *named,
            ("begin", (index, "function", "arguments"), "object")]


def _item_tail(index: int) -> list[tuple[str, tuple[str | int, ...], Any]]:
    return [("end", (index, "function", "arguments"), None), ("end", (index, "function"), None),
            ("end", (index,), None)]


_TAIL: list[tuple[str, tuple[str | int, ...], Any]] = [
    ("end", ("function", "arguments"), None), ("end", ("function",), None), ("end", (), None)]
_ARGS = ("function", "arguments")

CASES = {
    "gemma4 bare value with a comma": Case(
        "gemma4",
        "Gemma 4 writes a place name unquoted (vLLM's _parse_gemma4_args keeps 'San Francisco' and "
        "drops ' CA'; Ollama's gemma4RawStringValueEnd reads it whole)",
        "<|tool_call>call:get_weather{location:San Francisco, CA}<tool_call|>",
        {"role": "assistant", "tool_calls": [_call("get_weather", {"location": "San Francisco, CA"})]},
        [*_head("get_weather"), ("set", (*_ARGS, "location"), "San Francisco, CA"), *_TAIL],
    ),
    "gemma4 string token for a quote inside a string": Case(
        "gemma4",
        "vllm-project/vllm #48678 (fixes #44715): the captured execute_python call",
        f"<|tool_call>call:execute_python{{code:{Q}result = duckdb.sql({Q}{Q}{Q} SELECT ... {Q}{Q}{Q}).df()"
        f"{Q},data_refs:[{Q}df_1{Q}],return_vars:[{Q}result{Q}]}}<tool_call|>",
        {"role": "assistant", "tool_calls": [_call("execute_python", {
            "code": 'result = duckdb.sql(""" SELECT ... """).df()', "data_refs": ["df_1"],
            "return_vars": ["result"]})]},
        [*_head("execute_python"), ("begin", (*_ARGS, "code"), "string"),
         ("text", (*_ARGS, "code"), 'result = duckdb.sql(""" SELECT ... """).df()'),
         ("end", (*_ARGS, "code"), None),
         ("begin", (*_ARGS, "data_refs"), "array"), ("begin", (*_ARGS, "data_refs", 0), "string"),
         ("text", (*_ARGS, "data_refs", 0), "df_1"), ("end", (*_ARGS, "data_refs", 0), None),
         ("end", (*_ARGS, "data_refs"), None),
         ("begin", (*_ARGS, "return_vars"), "array"), ("begin", (*_ARGS, "return_vars", 0), "string"),
         ("text", (*_ARGS, "return_vars", 0), "result"), ("end", (*_ARGS, "return_vars", 0), None),
         ("end", (*_ARGS, "return_vars"), None), *_TAIL],
    ),
    "gemma4 key after a string without its comma": Case(
        "gemma4",
        "hybridgroup/yzma #243: a Gemma output, command:<|\"|>look<|\"|>angle:90",
        f"<|tool_call>call:robot{{command:{Q}look{Q}angle:90}}<tool_call|>",
        {"role": "assistant", "tool_calls": [_call("robot", {"command": "look", "angle": 90})]},
        [*_head("robot"), ("begin", (*_ARGS, "command"), "string"), ("text", (*_ARGS, "command"), "look"),
         ("end", (*_ARGS, "command"), None), ("set", (*_ARGS, "angle"), 90), *_TAIL],
    ),
    "gemma4 single-quoted strings in an array": Case(
        "gemma4",
        "vllm-project/vllm #51284: captured gemma-4-26b-a4b emissions, data_refs:['ds_152a4bfd970b4313']",
        f"<|tool_call>call:execute_python{{code:{Q}print(1){Q},data_refs:['ds_152a4bfd970b4313']}}<tool_call|>",
        {"role": "assistant", "tool_calls": [_call("execute_python", {
            "code": "print(1)", "data_refs": ["ds_152a4bfd970b4313"]})]},
        [*_head("execute_python"), ("begin", (*_ARGS, "code"), "string"),
         ("text", (*_ARGS, "code"), "print(1)"), ("end", (*_ARGS, "code"), None),
         ("begin", (*_ARGS, "data_refs"), "array"), ("set", (*_ARGS, "data_refs", 0), "ds_152a4bfd970b4313"),
         ("end", (*_ARGS, "data_refs"), None), *_TAIL],
    ),
    "minimax_m3 parameters named like command-line flags": Case(
        "minimax_m3",
        "vllm-project/vllm-ascend #12815: a MiniMax-M3 grep call with -A and -n parameters",
        f'{NS}<tool_call>\n{NS}<invoke name="Grep">\n{NS}<pattern>TODO{NS}</pattern>\n{NS}<-A>3{NS}</-A>\n'
        f'{NS}<-n>true{NS}</-n>\n{NS}</invoke>\n{NS}</tool_call>',
        {"role": "assistant", "tool_calls": [_call("Grep", {"pattern": "TODO", "-A": 3, "-n": True})]},
        [("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "type"), "function"),
         ("begin", (0, "function"), "object"), ("set", (0, "function", "name"), "Grep"),
         ("begin", (0, *_ARGS), "object"), ("begin", (0, *_ARGS, "pattern"), "string"),
         ("text", (0, *_ARGS, "pattern"), "TODO"), ("end", (0, *_ARGS, "pattern"), None),
         ("set", (0, *_ARGS, "-A"), 3), ("set", (0, *_ARGS, "-n"), True), ("end", (0, *_ARGS), None),
         ("end", (0, "function"), None), ("end", (0,), None), ("end", (), None)],
    ),
    "llama4_pythonic JSON call with type first": Case(
        "llama4_pythonic",
        "vllm-project/vllm #46863: Llama-4-Scout-17B-16E-Instruct-FP8 writes the Llama 3.1 JSON form",
        '{"type": "function", "name": "Bash", "parameters": {"command": "echo hello", "timeout": 12000}}',
        {"role": "assistant", "tool_calls": [_call("Bash", {"command": "echo hello", "timeout": 12000})]},
        [("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "type"), "function"),
         ("begin", (0, "function"), "object"), ("set", (0, "function", "name"), "Bash"),
         ("set", (0, *_ARGS), {"command": "echo hello", "timeout": 12000}),
         ("end", (0, "function"), None), ("end", (0,), None), ("end", (), None)],
    ),
    "phi4_mini_json official tags, close left out": Case(
        "phi4_mini_json",
        "ShishirPatil/gorilla bfcl phi_fc.py: Phi-4-mini-instruct often leaves out <|/tool_call|>",
        '<|tool_call|>[{"name": "calculate_final_velocity", '
        '"arguments": {"height": 150, "initial_velocity": 0}}]',
        {"role": "assistant",
         "tool_calls": [_call("calculate_final_velocity", {"height": 150, "initial_velocity": 0})]},
        [("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "type"), "function"),
         ("begin", (0, "function"), "object"),
         ("begin", (0, "function", "name"), "string"),
         ("text", (0, "function", "name"), "calculate_final_velocity"),
         ("end", (0, "function", "name"), None),
         ("begin", (0, *_ARGS), "object"), ("set", (0, *_ARGS, "height"), 150),
         ("set", (0, *_ARGS, "initial_velocity"), 0), ("end", (0, *_ARGS), None),
         ("end", (0, "function"), None), ("end", (0,), None), ("end", (), None)],
    ),
    "functionary_v3_1 code interpreter after <|python_tag|>": Case(
        "functionary_v3_1",
        "MeetKai/functionary llama31_prompt_template.py (<|python_tag|> calls 'python' with the code); "
        "llama.cpp common/chat.cpp reads it as {'code': ...}",
        "Let me compute that.<|python_tag|>import math\nprint(math.sqrt(2))",
        {"role": "assistant", "content": "Let me compute that.",
         "tool_calls": [_call("python", {"code": "import math\nprint(math.sqrt(2))"})]},
        [*_head("python"), ("begin", (*_ARGS, "code"), "string"),
         ("text", (*_ARGS, "code"), "import math\nprint(math.sqrt(2))"), ("end", (*_ARGS, "code"), None),
         *_TAIL],
    ),
    "functionary_v3_2 python recipient with raw code": Case(
        "functionary_v3_2",
        "llama.cpp tests/test-chat.cpp, Functionary v3.2: 'python\\n# This is a program:\\nprint('hey')'",
        "python\n# This is a program:\nprint('hey')",
        {"role": "assistant",
         "tool_calls": [_call("python", {"code": "# This is a program:\nprint('hey')"})]},
        [*_head("python"), ("begin", (*_ARGS, "code"), "string"),
         ("text", (*_ARGS, "code"), "# This is a program:\nprint('hey')"), ("end", (*_ARGS, "code"), None),
         *_TAIL],
    ),
    "llama3_json built-in tool call after <|python_tag|>": Case(
        "llama3_json",
        "Meta Llama 3.1 prompt format (built-in tools: <|python_tag|>brave_search.call(query=...)"
        "<|eom_id|>); microsoft/generative-ai-for-beginners lesson 'Stockholm weather'; llama.cpp "
        "tests/test-chat.cpp reads code_interpreter.call(code=...) as a call to code_interpreter",
        '<|python_tag|>brave_search.call(query="Stockholm weather")<|eom_id|>',
        {"role": "assistant", "tool_calls": [_call("brave_search", {"query": "Stockholm weather"})]},
        [("begin", (), "array"), *_item_head(0, "brave_search", streamed_name=False),
         ("begin", (0, *_ARGS, "query"), "string"), ("text", (0, *_ARGS, "query"), "Stockholm weather"),
         ("end", (0, *_ARGS, "query"), None), *_item_tail(0), ("end", (), None)],
    ),
    "hermes two calls in one <tool_call>, separated by a comma": Case(
        "hermes",
        "sgl-project/sglang test/registered/function_call/test_function_call_parser.py "
        "TestBaseFormatDetector::test_multiple_chinese_parameters",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}, '
        '{"name": "get_tourist_attractions", "arguments": {"city": "上海"}}</tool_call>',
        {"role": "assistant", "tool_calls": [_call("get_weather", {"city": "北京"}),
                                             _call("get_tourist_attractions", {"city": "上海"})]},
        [("begin", (), "array"),
         *_item_head(0, "get_weather"), ("begin", (0, *_ARGS, "city"), "string"),
         ("text", (0, *_ARGS, "city"), "北京"), ("end", (0, *_ARGS, "city"), None), *_item_tail(0),
         *_item_head(1, "get_tourist_attractions"), ("begin", (1, *_ARGS, "city"), "string"),
         ("text", (1, *_ARGS, "city"), "上海"), ("end", (1, *_ARGS, "city"), None), *_item_tail(1),
         ("end", (), None)],
    ),
    "xlam thought and tool_calls in one JSON object": Case(
        "xlam",
        "Salesforce xLAM-7b-r model card (format instruction: {\"thought\": ..., \"tool_calls\": [...]}); "
        "the xLAM-1 function-calling models write the same object without the thought",
        '{"thought": "I need to get the weather for New York in fahrenheit.", "tool_calls": '
        '[{"name": "get_weather", "arguments": {"location": "New York", "unit": "fahrenheit"}}]}',
        {"role": "assistant", "reasoning_content": "I need to get the weather for New York in fahrenheit.",
         "tool_calls": [_call("get_weather", {"location": "New York", "unit": "fahrenheit"})]},
        [("begin", (), "array"), *_item_head(0, "get_weather"),
         ("begin", (0, *_ARGS, "location"), "string"), ("text", (0, *_ARGS, "location"), "New York"),
         ("end", (0, *_ARGS, "location"), None), ("begin", (0, *_ARGS, "unit"), "string"),
         ("text", (0, *_ARGS, "unit"), "fahrenheit"), ("end", (0, *_ARGS, "unit"), None),
         *_item_tail(0), ("end", (), None)],
    ),
    "hermes call object written as a Python dict": Case(
        "hermes",
        "NousResearch/atropos atroposlib tool_call_parser tests (test_single_quoted_dict_still_parses: "
        "Hermes outputs in RL rollouts write the call with single quotes)",
        "<tool_call>{'name': 'web_search', 'arguments': {'query': 'weather today'}}</tool_call>",
        {"role": "assistant", "tool_calls": [_call("web_search", {"query": "weather today"})]},
        [("begin", (), "array"), *_item_head(0, "web_search"),
         ("begin", (0, *_ARGS, "query"), "string"), ("text", (0, *_ARGS, "query"), "weather today"),
         ("end", (0, *_ARGS, "query"), None), *_item_tail(0), ("end", (), None)],
    ),
}


def _run(case: Case, chunks: list[str]) -> tuple[dict[str, Any], list[Any], dict[str, str]]:
    """The message, the region and value events (text joined) and the region text per field."""
    profile = profiles.load(case.family)
    parser = chatcodec.ResponseParser(profile.response_template, prefix=profile.generation_prompt,
                                      value_deltas=True)
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    events += final
    shape: list[Any] = []
    texts: dict[str, str] = {}
    for event in events:
        kind = event["type"]
        if kind == "region_chunk":
            texts[event["field"]] = texts.get(event["field"], "") + event["text"]
        elif kind == "region_value":
            payload = event.get("kind", event.get("value", event.get("text")))
            item = (event["op"], tuple(event["path"]), payload)
            if item[0] == "text" and shape and shape[-1][0] == "text" and shape[-1][1] == item[1]:
                item = ("text", item[1], shape.pop()[2] + item[2])
            shape.append(item)
        else:
            shape.append((kind, event["field"]))
    return message, shape, texts


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_real_output_parses_to_the_same_message_and_events_whole_and_streamed(name: str) -> None:
    case = CASES[name]
    whole = _run(case, [case.output])
    streamed = _run(case, list(case.output))
    assert whole[0] == case.message
    assert streamed == whole
    values = [item for item in whole[1] if len(item) == 3]
    assert values == case.values
    assert ("region_close", "tool_calls") in whole[1]
