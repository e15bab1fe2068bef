"""A malformed tool call is never dropped by a bundled profile (SPEC 1.5 "nothing is lost").

With ``errors="strict"`` the parse raises :class:`~chatcodec.ResponseParseError` carrying the
message parsed so far and the raw text of the tool-call region; with ``errors="keep"`` the message
lists the problem, with that raw text, under ``parse_errors``, and the region (delimiters included)
goes back into ``content`` verbatim. The cases cover every ``x-`` parser
the profiles use and the outputs QA found vanishing (the profiles once set ``skip_invalid``).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pytest

import chatcodec
from chatcodec import profiles
from chatcodec.cli import main
from tests.profiles.helpers import parse_three_ways

DS = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
    '{{"city": "Paris"{}<｜tool▁call▁end｜>'
)


@dataclass(frozen=True)
class Case:
    """A profile, a model output with a malformed call, and what the parse must report."""

    profile: str
    output: str
    region: str  # the raw text of the failing tool-call region
    error: str  # part of the error message
    content: str | None = None  # content beside the failing region
    content_first: bool = True  # the content comes before the region (so strict has it too)
    prefix: str | None = None  # the prompt; None: the profile's generation prompt


CASES = {
    "deepseek_v31-broken-json-first-call": Case(
        "deepseek_v31",
        DS.format("")
        + "<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"<｜tool▁call▁end｜>'
        "<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
        "x-findall: match at offset 0, group 'arguments': could not parse region as JSON",
    ),
    "pythonic-name-value": Case(
        "pythonic", "[f(a=x)]", "[f(a=x)]", "call 'f', argument 'a': 'x' is not a literal"
    ),
    "pythonic-positional": Case(
        "pythonic", "[f(1)]", "[f(1)]", "call 'f': positional arguments have no parameter names"
    ),
    "pythonic-expression": Case(
        "pythonic", "[f(a=1+2)]", "[f(a=1+2)]", "call 'f', argument 'a': '1 + 2' is not a literal"
    ),
    # the region ends where its value ends; a nested call is no value the scanners follow, so the
    # region runs to the end of the output and the text after it is part of the error
    "pythonic-nested-call-then-text": Case(
        "pythonic",
        "[f(a=g(b=1))] and more",
        "[f(a=g(b=1))] and more",
        "x-pythonic: '[f(a=g(b=1))] and more' is not a call",
    ),
    "pythonic-non-call-element": Case(
        "pythonic", "[f(a=1), 5]", "[f(a=1), 5]", "element 2 of the list: '5' is not a call"
    ),
    "lfm2-bytes-literal": Case(
        "lfm2",
        "<|tool_call_start|>[f(x=b'z'), g()]<|tool_call_end|>",
        "[f(x=b'z'), g()]",
        "call 'f', argument 'x': a bytes literal has no JSON equivalent",
    ),
    "minimax_m1-bad-line": Case(
        "minimax_m1",
        '<tool_calls>\n{"name": "a", "arguments": {}}\n{oops}\n</tool_calls>',
        '\n{"name": "a", "arguments": {}}\n{oops}\n',
        "x-json-calls: invalid JSON at offset 33",
    ),
    "jamba-not-a-call": Case(
        "jamba",
        '<tool_calls>[{"name": "a", "arguments": {}}, {"city": "Paris"}]</tool_calls>',
        '[{"name": "a", "arguments": {}}, {"city": "Paris"}]',
        "x-json-calls: the JSON value at offset 0 is not a tool call (unknown key(s) ['city']",
    ),
    "hermes-misspelled-arguments-key": Case(
        "hermes",
        '<tool_call>{"name": "get_weather", "args": {"city": "Paris"}}</tool_call>',
        '{"name": "get_weather", "args": {"city": "Paris"}}',
        "x-json-calls: the JSON value at offset 0 is not a tool call (unknown key(s) ['args']",
    ),
    "hermes-two-arguments-keys": Case(
        "hermes",
        'Sure.<tool_call>{"name": "f", "arguments": {"a": 1}, "parameters": {"unit": "c"}}</tool_call>',
        '{"name": "f", "arguments": {"a": 1}, "parameters": {"unit": "c"}}',
        "x-json-calls: the JSON value at offset 0 is not a tool call (more than one arguments key: "
        "['arguments', 'parameters'])",
        content="Sure.",
    ),
    "command_r7b-unknown-key": Case(
        "command_r7b",
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {}, "note": "x"}]'
        "<|END_ACTION|>",
        '[{"tool_call_id": "0", "tool_name": "f", "parameters": {}, "note": "x"}]',
        "x-json-calls: the JSON value at offset 0 is not a tool call (unknown key(s) ['note']",
    ),
    "kimi_k2-noise-in-section": Case(
        "kimi_k2",
        "Sure. <|tool_calls_section_begin|> noise <|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"k": 1}<|tool_call_end|><|tool_calls_section_end|>',
        ' noise <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"k": 1}<|tool_call_end|>',
        "x-findall: text before the first match at offset 0: ' noise '",
        content="Sure. ",
    ),
    "mistral_args-call-without-arguments": Case(
        "mistral_args",
        "[TOOL_CALLS]get_time",
        "get_time",
        "x-named-call: expected the JSON arguments at offset 8: ''",
    ),
    "qwen3_coder-stray-end-tag": Case(
        "qwen3_coder",
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</oops_not_a_tag>\n</function>\n</tool_call>",
        "\n<parameter=a>\n1\n</parameter>\n</oops_not_a_tag>\n",
        "xml-inline: text outside the tags at offset 30: '</oops_not_a_tag>'",
    ),
    "glm47-stray-end-tag": Case(
        "glm47",
        "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></oops></tool_call>",
        "<arg_key>a</arg_key><arg_value>1</arg_value></oops>",
        "xml-inline: text outside the tags at offset 44: '</oops>'",
        prefix="<|assistant|></think>",
    ),
    "ling3-stray-end-tag": Case(
        "ling3",
        "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></oops></tool_call>",
        "<arg_key>a</arg_key><arg_value>1</arg_value></oops>",
        "xml-inline: text outside the tags at offset 44: '</oops>'",
    ),
    "minicpm5-stray-end-tag": Case(
        "minicpm5",
        '<function name="f"><param name="a">1</param></oops></function>',
        '<param name="a">1</param></oops>',
        "xml-inline: text outside the tags at offset 25: '</oops>'",
    ),
    "minimax_m3-stray-text": Case(
        "minimax_m3",
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>1]<]minimax[>[</a> oops'
        "]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
        ']<]minimax[>[<invoke name="f">]<]minimax[>[<a>1]<]minimax[>[</a> oops]<]minimax[>[</invoke>',
        "x-xml-tree: text outside an element at offset 34: ' oops'",
    ),
}


def _parse(case: Case, errors: str) -> dict[str, object]:
    profile = profiles.load(case.profile)
    return parse_three_ways(
        profile.response_template,
        case.output,
        prefix=profile.generation_prompt if case.prefix is None else case.prefix,
        errors=errors,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_strict_raises_with_the_partial_message_and_the_raw_region(name: str) -> None:
    case = CASES[name]
    with pytest.raises(chatcodec.ResponseParseError) as caught:
        _parse(case, "strict")
    error = caught.value
    assert case.error in str(error)
    assert (error.field, error.text) == ("tool_calls", case.region)
    before = {"content": case.content} if case.content and case.content_first else {}
    assert error.partial_message == {"role": "assistant", **before}


@pytest.mark.parametrize("name", sorted(CASES))
def test_keep_records_the_problem_with_the_raw_region(name: str) -> None:
    case = CASES[name]
    message = _parse(case, "keep")
    records = message.pop("parse_errors")
    assert isinstance(records, list) and len(records) == 1
    record = records[0]
    assert (record["field"], record["text"]) == ("tool_calls", case.region)
    assert case.error in record["error"]
    start, end = record["span"]
    assert record["raw"] == case.output[start:end]  # the region with its delimiters
    # the failed region goes back, verbatim, into content: here that is the whole output
    assert message == {"role": "assistant", "content": case.output}


def test_cli_keep_prints_the_problem(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"[f(a=x)]")))
    assert main(["parse", "pythonic", "-", "--no-prefix", "--errors", "keep"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["parse_errors"][0]["text"] == "[f(a=x)]"
    assert "'x' is not a literal" in printed["parse_errors"][0]["error"]


def test_no_bundled_template_drops_invalid_calls() -> None:
    """``skip_invalid`` is gone: loading a template that sets it fails with the reason."""
    template = profiles.load("hermes").response_template
    template["fields"]["tool_calls"]["content_args"] = {"skip_invalid": True}
    with pytest.raises(chatcodec.ResponseTemplateError, match="skip_invalid was removed"):
        chatcodec.load_response_template(template)
    for name in profiles.names():
        assert "skip_invalid" not in json.dumps(profiles.load(name).response_template), name


@pytest.mark.parametrize("name", ["qwen3_coder", "nemotron3", "step3p5"])
def test_a_closing_tool_call_tag_in_prose_stays_in_content(name: str) -> None:
    """QA: these profiles once closed ``content`` on ``</tool_call>``, deleting the tag from prose;
    the tag now closes the tool call it ends (``</function>`` then ``</tool_call>``)."""
    template = profiles.load(name).response_template
    prose = "Close a call with </tool_call> and go on."
    assert parse_three_ways(template, prose, prefix="") == {"role": "assistant", "content": prose}
    output = (f"{prose}\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n"
              "</tool_call>\nDone.")
    assert parse_three_ways(template, output, prefix="") == {
        "role": "assistant",
        "content": f"{prose}\n\nDone.",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": "1"}}}],
    }


@pytest.mark.parametrize("name", ["deepseek_r1", "deepseek_v3", "deepseek_v31", "deepseek_v32", "glm47"])
def test_a_closing_think_tag_in_the_answer_stays_in_content(name: str) -> None:
    """QA: these profiles once closed ``content`` on ``</think>``, deleting it from the answer. The
    ``</think>`` of a non-thinking generation prompt is now part of the start anchor."""
    profile = profiles.load(name)
    answer = "Use the </think> tag."
    for prefix in profile.generation_prompts:
        if prefix.endswith("</think>"):
            expected = {"role": "assistant", "content": answer}
            output = answer
        elif prefix.rstrip("\n").endswith("<think>"):
            expected = {"role": "assistant", "reasoning_content": "ok", "content": answer}
            output = f"ok</think>{answer}"
        else:  # nothing pre-opened: a close without its open is text
            expected = {"role": "assistant", "content": f"ok</think>{answer}"}
            output = f"ok</think>{answer}"
        assert parse_three_ways(profile.response_template, output, prefix=prefix) == expected, prefix
