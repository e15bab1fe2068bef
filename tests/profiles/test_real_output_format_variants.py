"""More format variants real models wrote that the bundled profiles once missed (DeepSeek, MiniMax, ...).

The cases follow :mod:`tests.profiles.test_real_output_variants` (same ``Case`` and the same run):
each output is parsed whole, one character at a time and three characters at a time, and the
message, the region and value events (``text`` events joined) and the region text per field must be
exactly those below however the output is fed. Each case names where its output was seen.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.profiles.test_real_output_variants import Case, _run

ARGS = ("function", "arguments")
NS = "]<]minimax[>["
Value = tuple[str, tuple[str | int, ...], Any]


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _typed_head(name: str) -> list[Value]:
    """The first events of a flattened call list whose ``type`` the model wrote (DeepSeek V3/R1)."""
    return [("begin", (), "array"), ("begin", (0,), "object"), ("begin", (0, "function"), "object"),
            ("set", (0, "type"), "function"), ("set", (0, "function", "name"), name),
            ("begin", (0, *ARGS), "object")]


def _head(name: str) -> list[Value]:
    """The first events of a flattened call list whose ``type`` is the transform's constant."""
    return [("begin", (), "array"), ("begin", (0,), "object"), ("set", (0, "type"), "function"),
            ("begin", (0, "function"), "object"), ("set", (0, "function", "name"), name),
            ("begin", (0, *ARGS), "object")]


def _string(key: str, text: str) -> list[Value]:
    path = (0, *ARGS, key)
    return [("begin", path, "string"), ("text", path, text), ("end", path, None)]


TAIL: list[Value] = [("end", (0, *ARGS), None), ("end", (0, "function"), None), ("end", (0,), None),
                     ("end", (), None)]

DS_BARE = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>analysis_input\n"
           '{"work_dir_name":"q3_report"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>')

CASES = {
    "deepseek_v3 arguments as bare JSON": Case(
        "deepseek_v3",
        "google/adk-python #5654: DeepSeek-V3 served through LiteLLM writes a call's arguments "
        "code-fenced or as bare JSON after the name line (the PR reads both)",
        DS_BARE,
        {"role": "assistant", "tool_calls": [_call("analysis_input", {"work_dir_name": "q3_report"})]},
        [*_typed_head("analysis_input"), *_string("work_dir_name", "q3_report"), *TAIL],
    ),
    "deepseek_r1 arguments as bare JSON": Case(
        "deepseek_r1",
        "google/adk-python #5654 (the same call form: R1 shares DeepSeek-V3's tool-call format)",
        "The user wants the report folder.\n</think>\n\n" + DS_BARE,
        {"role": "assistant", "reasoning_content": "The user wants the report folder.\n",
         "tool_calls": [_call("analysis_input", {"work_dir_name": "q3_report"})]},
        [*_typed_head("analysis_input"), *_string("work_dir_name", "q3_report"), *TAIL],
    ),
    "deepseek_v31 the V3 call head (type, name line, json fence)": Case(
        "deepseek_v31",
        "sgl-project/sglang #9446 and vllm-project/vllm #23454 set the R1/V3 call "
        "(function<｜tool▁sep｜>NAME, then a ```json fence) beside V3.1's; a V3.1 served with the "
        "R1/V3 tool template writes it",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_weather\n"
        '```json\n{"location": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        {"role": "assistant", "tool_calls": [_call("get_current_weather", {"location": "Tokyo"})]},
        [*_head("get_current_weather"), *_string("location", "Tokyo"), *TAIL],
    ),
    "deepseek_v32 parameter tag without the DSML marker and the string attribute": Case(
        "deepseek_v32",
        "sgl-project/sglang #39435: a DeepSeek-V4.1-Flash turn whose parameter tag lacks both the "
        "DSML marker and string=...; the value is text (tools= types it), as in the other XML formats",
        "I'll call the `set_flag` function to enable the flag.\n\n<｜DSML｜tool_calls>\n"
        '<｜DSML｜invoke name="set_flag">\n<parameter name="enabled">true</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        {"role": "assistant", "content": "I'll call the `set_flag` function to enable the flag.\n\n",
         "tool_calls": [_call("set_flag", {"enabled": "true"})]},
        [*_head("set_flag"), *_string("enabled", "true"), *TAIL],
    ),
    "deepseek_v32 invokes without the tool_calls block": Case(
        "deepseek_v32",
        "sgl-project/sglang #40236: DeepSeek V4/V3.2 invokes written with no section wrapper came "
        "back as content; an invoke opens the tool-call region itself",
        'Checking.\n<｜DSML｜invoke name="get_time">\n<｜DSML｜parameter name="tz" string="true">UTC'
        '</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="get_date">\n</｜DSML｜invoke>',
        {"role": "assistant", "content": "Checking.\n",
         "tool_calls": [_call("get_time", {"tz": "UTC"}), _call("get_date", {})]},
        [*_head("get_time"), *_string("tz", "UTC"), *TAIL[:-1],
         ("begin", (1,), "object"), ("set", (1, "type"), "function"), ("begin", (1, "function"), "object"),
         ("set", (1, "function", "name"), "get_date"), ("set", (1, *ARGS), {}),
         ("end", (1, "function"), None), ("end", (1,), None), ("end", (), None)],
    ),
    "minimax_m3 markup in a value (only marked tags are structure)": Case(
        "minimax_m3",
        "smg-project/smg #2850 (review probe rendered by MiniMax-M3's template from the reference "
        "arguments): a Vue file's <template>/<div> tags inside the content value carry no "
        "]<]minimax[>[ marker, so they are the value's text",
        f"</mm:think>{NS}<tool_call>\n{NS}<invoke name=\"write_file\">{NS}<path>App.vue{NS}</path>"
        f"{NS}<content><template>\n  <div>{{{{ msg }}}}</div>\n</template>\n{NS}</content>{NS}</invoke>\n"
        f"{NS}</tool_call>",
        {"role": "assistant", "tool_calls": [_call("write_file", {
            "path": "App.vue", "content": "<template>\n  <div>{{ msg }}</div>\n</template>\n"})]},
        [*_head("write_file"), *_string("path", "App.vue"),
         *_string("content", "<template>\n  <div>{{ msg }}</div>\n</template>\n"), *TAIL],
    ),
    "minimax_m3 parameter names with a dollar sign": Case(
        "minimax_m3",
        "smg-project/smg #2850 (the same probes): OData parameters $filter and $top written as "
        "their tags <$filter>, <$top>",
        f"</mm:think>{NS}<tool_call>\n{NS}<invoke name=\"list_users\">{NS}<$filter>startswith(name, 'A')"
        f"{NS}</$filter>{NS}<$top>5{NS}</$top>{NS}</invoke>\n{NS}</tool_call>",
        {"role": "assistant", "tool_calls": [_call("list_users", {
            "$filter": "startswith(name, 'A')", "$top": 5})]},
        [*_head("list_users"), *_string("$filter", "startswith(name, 'A')"),
         ("set", (0, *ARGS, "$top"), 5), *TAIL],
    ),
    "minimax_m3 closing tags without the marker": Case(
        "minimax_m3",
        "a MiniMax provider's test of a captured MiniMax-M3 reply (agent.llm.minimax_provider "
        "_extract_text_tool_calls): the opening tags are marked, the closing ones are not",
        f"我再查几条。{NS}<tool_call>\n{NS}<invoke name=\"search\">{NS}<query>字节 AI 新闻</query>"
        f"{NS}<sources>web</sources>{NS}<limit>6</limit>{NS}</invoke>\n{NS}</tool_call>",
        {"role": "assistant", "content": "我再查几条。", "tool_calls": [_call("search", {
            "query": "字节 AI 新闻", "sources": "web", "limit": 6})]},
        [*_head("search"), *_string("query", "字节 AI 新闻"), *_string("sources", "web"),
         ("set", (0, *ARGS, "limit"), 6), *TAIL],
    ),
    "gpt_oss the start token written twice": Case(
        "gpt_oss",
        "vllm-project/vllm #43408: gpt-oss-120b on AIME25 (Tenstorrent) wrote "
        "'<|start|><|start|>assistant' between messages; a run of start tokens is one message "
        "header, not content",
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|><|start|>assistant"
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}'
        "<|call|>",
        {"role": "assistant", "reasoning_content": "Need the weather.",
         "tool_calls": [_call("get_weather", {"city": "Paris"})]},
        [("begin", (), "object"), ("set", ("type",), "function"), ("begin", ("function",), "object"),
         ("set", ("function", "name"), "get_weather"), ("begin", ARGS, "object"),
         ("begin", (*ARGS, "city"), "string"), ("text", (*ARGS, "city"), "Paris"),
         ("end", (*ARGS, "city"), None), ("end", ARGS, None), ("end", ("function",), None),
         ("end", (), None)],
    ),
    "minimax_m2 </parameter> written inside a value": Case(
        "minimax_m2",
        "vllm-project/vllm #38803: in production MiniMax-M2 wrote a parameter value holding the "
        "text </parameter>; only a </parameter> followed by the next parameter or the end of the "
        "invoke closes the value",
        '<minimax:tool_call>\n<invoke name="edit_file">\n<parameter name="path">params.xml</parameter>\n'
        '<parameter name="new_text">Each value ends with </parameter>.\n</parameter>\n'
        "</invoke>\n</minimax:tool_call>",
        {"role": "assistant", "tool_calls": [_call("edit_file", {
            "path": "params.xml", "new_text": "Each value ends with </parameter>.\n"})]},
        [*_head("edit_file"), *_string("path", "params.xml"),
         *_string("new_text", "Each value ends with </parameter>.\n"), *TAIL],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_real_output_parses_to_the_same_message_and_events_however_fed(name: str) -> None:
    case = CASES[name]
    whole = _run(case, [case.output])
    assert whole[0] == case.message
    assert _run(case, list(case.output)) == whole
    assert _run(case, [case.output[i:i + 3] for i in range(0, len(case.output), 3)]) == whole
    assert [item for item in whole[1] if len(item) == 3] == case.values
    assert ("region_close", "tool_calls") in whole[1]
