"""Format variants real models write that the bundled profiles once missed, checked event by event.

Each case is a realistic output of the family (the sources are named per test: the peers' parsers
and tests, the chat templates) parsed with a bundled profile and compared exactly: the message of
``parse_response`` and every event, streamed whole and one character at a time (chunks merged,
since their boundaries depend on the split). ``tests/profiles/variants/`` holds the same variants
as vectors, parsed at random splits too.
"""

from __future__ import annotations

from typing import Any

import pytest

import chatcodec
from chatcodec import profiles
from chatcodec.events import merge_chunks
from tests.conftest import corpus_template


def events_both_ways(family: str, output: str, *, prefix: str, tools: Any = None,
                     errors: str = "strict") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The message and the merged events of ``output``, fed whole and one character at a time
    (asserted equal to each other and to ``parse_response``)."""
    template = profiles.load(family).response_template
    expected = chatcodec.parse_response(output, template, prefix=prefix, tools=tools, errors=errors)
    runs = []
    for chunks in ([output], list(output)):
        parser = chatcodec.ResponseParser(template, prefix=prefix, tools=tools, errors=errors)
        events = list(parser.initial_events)
        for chunk in chunks:
            events.extend(parser.feed(chunk))
        message, final = parser.finalize()
        assert message == expected
        runs.append(merge_chunks([*events, *final]))
    assert runs[0] == runs[1], "one character at a time gives other events than the whole output"
    return expected, runs[0]


def _opened(field: str, text: str, value: Any = None, *, dirty: bool = False) -> list[dict[str, Any]]:
    """A region of ``field`` holding ``text``, closed with ``value`` (``text`` when not given)."""
    return [{"type": "region_open", "field": field},
            {"type": "region_chunk", "field": field, "text": text, "dirty": dirty},
            {"type": "region_close", "field": field, "value": text if value is None else value}]


# --- thinking on and off: DeepSeek V3.1/V3.2 and GLM-4.7 write </think> alone for thinking off ------

_REASONING_OPEN = {"type": "region_open", "field": "reasoning_content"}
_EMPTY_REASONING = [_REASONING_OPEN, {"type": "region_close", "field": "reasoning_content", "value": ""}]
_QUOTED_TAGS = "Tags look like <think>this</think>; write <think> to open one."


def _v31_prompt(thinking: bool) -> str:
    """The corpus DeepSeek-V3.1 chat template's prompt for one user turn, with its generation prompt."""
    source = corpus_template("deepseek-ai--DeepSeek-V3.1.jinja")
    special = profiles.load("deepseek_v31").special_tokens
    return chatcodec.render_chat_template(source, [{"role": "user", "content": "Hi"}],
                                          add_generation_prompt=True, thinking=thinking, **special)


def _prompt(family: str, thinking: bool) -> str:
    """The real prompt of one user turn ``Hi``: rendered with the corpus chat template for
    DeepSeek V3.1, the family's generation prompt for the others (no corpus template; the profile's
    ``generation_prompts`` are those the chat templates write)."""
    if family == "deepseek_v31":
        return _v31_prompt(thinking)
    ending = "<think>" if thinking else "</think>"
    if family == "deepseek_v32":
        return f"<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>{ending}"
    return f"[gMASK]<sop><|user|>Hi<|assistant|>{ending}"


def _three_ways(family: str, prefix: str, output: str, tools: Any = None,
                ) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """``(initial_events, message, merged events)``, the same fed whole, 3 characters and 1 character
    at a time (asserted), and the message the same as ``parse_response``."""
    template = profiles.load(family).response_template
    runs = []
    for size in (len(output), 3, 1):
        parser = chatcodec.ResponseParser(template, prefix=prefix, tools=tools)
        initial = list(parser.initial_events)
        events = list(initial)
        for start in range(0, len(output), size):
            events += parser.feed(output[start:start + size])
        message, final = parser.finalize()
        runs.append((initial, message, merge_chunks([*events, *final])))
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert runs[0][1] == chatcodec.parse_response(output, template, prefix=prefix, tools=tools)
    return runs[0]


def test_the_deepseek_v31_chat_template_writes_think_or_a_lone_close() -> None:
    """What the prompts below are: the corpus template ends a thinking-on prompt with ``<think>``
    and a thinking-off one with ``</think>`` and no ``<think>``."""
    start = "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>"
    assert _v31_prompt(thinking=True) == f"{start}<think>"
    assert _v31_prompt(thinking=False) == f"{start}</think>"


@pytest.mark.parametrize("family", ["deepseek_v31", "deepseek_v32", "glm47"])
def test_a_thinking_off_answer_keeps_think_tags_as_content(family: str) -> None:
    """With thinking off the prompt's ``</think>`` is the reasoning's (empty) region: the reasoning
    field opens where the text after the start anchor begins with ``</think>`` (``^(?=</think>)``),
    so the ``opens_once`` reasoning has closed before any output, and a ``<think>...</think>`` the
    answer writes is content, as vLLM reads a thinking-off answer (its reasoning parser is then the
    identity). The start anchor used to swallow the ``</think>``, and the answer's
    ``<think>this</think>`` became reasoning."""
    initial, message, events = _three_ways(family, _prompt(family, thinking=False), _QUOTED_TAGS)
    assert initial == _EMPTY_REASONING
    assert message == {"role": "assistant", "content": _QUOTED_TAGS}
    assert events == [*_EMPTY_REASONING, *_opened("content", _QUOTED_TAGS)]


@pytest.mark.parametrize("family", ["deepseek_v31", "deepseek_v32", "glm47"])
def test_a_thinking_on_prompt_opens_the_reasoning_before_any_output(family: str) -> None:
    """A thinking-on prompt ends with ``<think>``: the prompt alone opens the reasoning, so its open
    is the parser's only initial event. The engine plugins read from that whether a request starts
    inside reasoning (SGLang's reasoning stage is forced by it): with the open a pattern
    (``<think>|^(?=</think>)``) the prompt's ``<think>`` used to stay undecided until the first
    output, and SGLang's plugin put DeepSeek V3.1's reasoning into content (bench_engines 5/6 -> 3/6).
    A ``<think>`` the answer writes after the reasoning closed is content."""
    output = f"Plan.</think>{_QUOTED_TAGS}"
    initial, message, events = _three_ways(family, _prompt(family, thinking=True), output)
    assert initial == [_REASONING_OPEN]
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": _QUOTED_TAGS}
    assert events == [_REASONING_OPEN,
                      {"type": "region_chunk", "field": "reasoning_content", "text": "Plan.", "dirty": False},
                      {"type": "region_close", "field": "reasoning_content", "value": "Plan."},
                      *_opened("content", _QUOTED_TAGS)]


@pytest.mark.parametrize("family", ["deepseek_v31", "glm47"])
def test_a_thinking_off_tool_call_follows_the_empty_reasoning(family: str) -> None:
    """The empty reasoning region the thinking-off prompt closes changes nothing for a call."""
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    if family == "deepseek_v31":
        body = '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>'
        output, value = f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>", [call]
    else:  # the call's name is captured by the open; one region per call
        body = "<arg_key>city</arg_key><arg_value>Paris</arg_value>"
        output, value = f"<tool_call>get_weather{body}</tool_call>", call
    initial, message, events = _three_ways(family, _prompt(family, thinking=False), output)
    assert initial == _EMPTY_REASONING
    assert message == {"role": "assistant", "tool_calls": [call]}
    assert events == [*_EMPTY_REASONING, *_opened("tool_calls", body, value, dirty=True)]


@pytest.mark.parametrize("family", ["deepseek_v31", "deepseek_v32", "glm47"])
def test_a_bare_header_reads_the_models_own_think(family: str) -> None:
    """After a bare header (no ``<think>``, no ``</think>``) the model's own ``<think>`` opens
    reasoning."""
    header = "<｜Assistant｜>" if family.startswith("deepseek") else "<|assistant|>"
    initial, message, events = _three_ways(family, header, "<think>Plan.</think>Answer.")
    assert initial == []
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": "Answer."}
    assert events[3:] == _opened("content", "Answer.")


# --- Mistral: the pre-v11 list in the v11+ profiles; a call cut off after its name -----------------

def _call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return call if call_id is None else {"id": call_id, **call}


@pytest.mark.parametrize("family", ["mistral_v11", "mistral_args", "mistral_reasoning"])
def test_the_v11_profiles_read_the_json_list_older_checkpoints_write(family: str) -> None:
    """``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` is the pre-v11 form that vLLM's and
    SGLang's Mistral parsers read; Mistral checkpoints of the older tokenizer (and v11 fine-tunes)
    still write it when served with a v11+ template. It was content in these profiles."""
    output = ('Checking both.[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}}, '
              '{"name": "get_weather", "id": "a1B2c3D4e", "arguments": {"city": "Bergen", "days": 2}}]'
              '\nOne moment.')
    calls = [_call("get_weather", {"city": "Oslo"}),
             _call("get_weather", {"city": "Bergen", "days": 2}, "a1B2c3D4e")]
    message, events = events_both_ways(family, output, prefix="[INST]Weather?[/INST]")
    assert message == {"role": "assistant", "content": "Checking both.One moment.", "tool_calls": calls}
    assert events == [
        *_opened("content", "Checking both."),
        *_opened("tool_calls", output[26:output.index("]\n") + 2], calls, dirty=True),
        *_opened("content", "One moment."),
    ]


@pytest.mark.parametrize("family", ["mistral_v11", "mistral_args", "mistral_reasoning"])
def test_the_v11_form_still_streams_per_call(family: str) -> None:
    """The v11+ form ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}``, one region per marker."""
    output = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Oslo"}[TOOL_CALLS]get_time{}'
    message, events = events_both_ways(family, output, prefix="[INST]Weather?[/INST]")
    first, second = _call("get_weather", {"city": "Oslo"}, "a1B2c3D4e"), _call("get_time", {})
    assert message == {"role": "assistant", "tool_calls": [first, second]}
    assert events == [
        *_opened("tool_calls", 'get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Oslo"}', [first], dirty=True),
        *_opened("tool_calls", "get_time{}", [second], dirty=True)]


@pytest.mark.parametrize("family", ["mistral", "mistral_v11", "mistral_args", "mistral_reasoning"])
def test_a_call_cut_off_after_its_name_keeps_the_marker(family: str) -> None:
    """``[TOOL_CALLS]NAME`` and then the end of generation: a parse problem whose text, marker
    included, is kept (``errors="keep"``: content and a record). The pre-v11 profile read the
    marker as a bare delimiter there and dropped it (content ``get_weather``)."""
    output = "Let me check.[TOOL_CALLS]get_weather"
    cut_off = "x-named-call: expected the JSON arguments at offset 11"
    with pytest.raises(chatcodec.ResponseParseError, match=cut_off):
        chatcodec.parse_response(output, profiles.load(family).response_template, prefix="[/INST]")
    message, events = events_both_ways(family, output, prefix="[/INST]", errors="keep")
    error = {"field": "tool_calls", "parser": "x-switch", "offset": 36,
             "error": f"field 'tool_calls' (content parser 'x-switch'): {cut_off}: ''",
             "text": "get_weather", "raw": "[TOOL_CALLS]get_weather", "span": [13, 36]}
    assert message == {"role": "assistant", "content": output, "parse_errors": [error]}
    assert events == [*_opened("content", "Let me check."),
                      {"type": "region_open", "field": "tool_calls"},
                      {"type": "region_chunk", "field": "tool_calls", "text": "get_weather", "dirty": True},
                      {"type": "region_close", "field": "tool_calls", "value": None, "error": error},
                      *_opened("content", "[TOOL_CALLS]get_weather")]


# --- GLM-4.6: an object or array argument written as backslash-escaped JSON ----------------------

_TODO_TOOLS = [{"type": "function", "function": {"name": "todo_write", "parameters": {
    "type": "object", "properties": {"todos": {"type": "array"}, "note": {"type": "string"}}}}}]


@pytest.mark.parametrize(("family", "layout"), [("glm45", "\\n"), ("glm47", "")])
def test_glm_escaped_json_arguments_are_typed_by_the_schema(family: str, layout: str) -> None:
    """GLM-4.6 at times writes the whole call escaped: literal ``\\n`` between the tags and an array
    argument as ``[{\\"id\\": \\"1\\", ...}]``. SGLang's GLM-4 parser unescapes such a value and reads
    its JSON; so does typing for an ``array``/``object`` parameter (it was kept as text). A string
    parameter keeps what the model wrote, escapes and all."""
    todos = r'[{\"id\": \"1\", \"task\": \"Check the backend\\nthen the frontend\", \"status\": \"pending\"}]'
    inner = (f"todo_write{layout}<arg_key>todos</arg_key>{layout}<arg_value>{todos}</arg_value>{layout}"
             rf"<arg_key>note</arg_key>{layout}<arg_value>say \"done\"</arg_value>{layout}")
    call = _call("todo_write", {"todos": [{"id": "1", "task": "Check the backend\nthen the frontend",
                                           "status": "pending"}], "note": r'say \"done\"'})
    output = f"On it.<tool_call>{inner}</tool_call>"
    message, events = events_both_ways(family, output, prefix="<|assistant|>", tools=_TODO_TOOLS)
    assert message == {"role": "assistant", "content": "On it.", "tool_calls": [call]}
    region = inner.removeprefix(f"todo_write{layout}")  # the open pattern takes the name and its layout
    assert events == [*_opened("content", "On it."), *_opened("tool_calls", region, call, dirty=True)]


# --- Hermes: a bare <function=NAME> call outside <tool_call> -------------------------------------

def test_hermes_reads_a_bare_function_call_as_llama_cpp_does() -> None:
    """Hermes-template fine-tunes of Qwen3-Coder-style models write ``<function=NAME>...</function>``
    without ``<tool_call>``; llama.cpp's Hermes 2 Pro parser reads it (a bare ``<function=NAME>`` or
    ``<function name="NAME">`` in its open regex, and its test-chat.cpp cases), vLLM and SGLang
    leave it as content. Its region runs to the end of the turn (here ``<|im_end|>``)."""
    body = ('<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n'
            '<function name="get_time">{}</function>')
    output = f"Let me check.\n{body}<|im_end|>"
    calls = [_call("get_weather", {"city": "Paris"}), _call("get_time", {})]
    message, events = events_both_ways("hermes", output, prefix="<|im_start|>assistant\n")
    assert message == {"role": "assistant", "content": "Let me check.\n", "tool_calls": calls}
    assert events == [*_opened("content", "Let me check.\n"), *_opened("tool_calls", body, calls, dirty=True)]


# --- Kimi K2: the call id is kept exactly as the model wrote it ------------------------------------

_KIMI_PROMPT = "<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>"


@pytest.mark.parametrize(("call_id", "name"), [
    ("functions.get_weather:0", "get_weather"),  # Kimi's own form (docs/tool_call_guidance.md)
    ("get_weather:3", "get_weather"),  # without the prefix (vLLM's no_functions_prefix test)
    ("functions.get-weather:12", "get-weather"),  # a counter over the conversation, a hyphen
    ("functions.mcp.files.read:0", "mcp.files.read"),  # a dotted name is the name, not its last part
    ("functions.mcp:github:create_issue:1", "mcp:github:create_issue"),  # vLLM's id: anything, then :N
])
def test_kimi_call_ids_are_kept_as_written(call_id: str, name: str) -> None:
    """Kimi K2 names each call ``functions.NAME:N`` (N counts the calls), or ``NAME:N`` without the
    prefix; vLLM's parser takes any id ending in ``:N`` (``[^<]+:\\d+``). The id is the call's
    ``id`` exactly, the name is what follows ``functions.`` (vLLM keeps only the last dotted part)."""
    second_id = f'functions.get_time:{call_id.rsplit(":", 1)[1]}1'
    section = (f"<|tool_calls_section_begin|> <|tool_call_begin|> {call_id} <|tool_call_argument_begin|>"
               f'{{"city": "Oslo"}}<|tool_call_end|><|tool_call_begin|>{second_id}'
               "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>")
    message, events = events_both_ways("kimi_k2", f"Checking.{section}", prefix=_KIMI_PROMPT)
    calls = [_call(name, {"city": "Oslo"}, call_id), _call("get_time", {}, second_id)]
    assert message == {"role": "assistant", "content": "Checking.", "tool_calls": calls}
    body = section.removeprefix("<|tool_calls_section_begin|>").removesuffix("<|tool_calls_section_end|>")
    assert events == [*_opened("content", "Checking."), *_opened("tool_calls", body, calls, dirty=True)]


@pytest.mark.parametrize("call_id", ["functions_get_weather_0", "functions.get_weather", "call_8f2a"])
def test_a_kimi_id_without_its_index_is_a_parse_problem_never_dropped(call_id: str) -> None:
    """No peer reads these (vLLM and SGLang need ``:N``; vLLM skips such a call silently): the
    section is a parse problem, and ``errors="keep"`` keeps its text as content."""
    section = (f"<|tool_calls_section_begin|><|tool_call_begin|>{call_id}<|tool_call_argument_begin|>"
               '{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>')
    template = profiles.load("kimi_k2").response_template
    unread = "x-findall: text before the first match at offset 0"
    with pytest.raises(chatcodec.ResponseParseError, match=unread):
        chatcodec.parse_response(section, template, prefix=_KIMI_PROMPT)
    message, _ = events_both_ways("kimi_k2", section, prefix=_KIMI_PROMPT, errors="keep")
    assert message["content"] == section and "tool_calls" not in message
