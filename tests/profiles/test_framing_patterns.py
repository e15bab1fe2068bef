"""The rule of docs/profiles.md for x-findall and xml-inline, checked on every bundled profile.

"Text the pattern matches outside its named groups is the format's framing (tags, separators): a
template must not match free text there", and ``between`` is "the section's framing and
separators". Framing text is dropped, so a framing pattern that matches free text loses it: Step3's
``between`` accepted any text after ``function<｜tool_sep｜>`` (issue 13: a call cut after its
header lost the function name, prose in the header vanished even in strict mode).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import regex

from chatcodec import parse_response, profiles
from chatcodec.errors import ResponseParseError
from chatcodec.response_templates.pattern_tokens import tokens

#: Free text that no framing pattern may match in full.
PROSE = ["x", "hello", "get weather now please", "get_weather", "Paris", "1", '"quoted"', "中文", "a-b.c",
         "functions.f", "\n\tprose\n"]
#: Tokens that match (nearly) any text, outside a named group.
_FREE = regex.compile(r"\.|\[\^|\\[wWSDpPXN]|\[[^\]]*[A-Za-z]-[A-Za-z]")
_NAMED = regex.compile(r"\(\?P?<\w+>")


def framing_problem(source: str) -> str | None:
    """The token of ``source`` that matches free text outside every named group and look-around, or
    ``None``."""
    stack: list[bool] = []  # per open group: does it keep its text (a named group or a look-around)?
    for token in tokens(source):
        if (token.startswith("(") and not token.endswith(")")) or token.startswith("(?("):
            keeps = bool(_NAMED.fullmatch(token)) or token in ("(?=", "(?!", "(?<=", "(?<!")
            stack.append(keeps or (bool(stack) and stack[-1]))
        elif token == ")" and stack:
            stack.pop()
        elif not (stack and stack[-1]) and _FREE.match(token):
            return token
    return None


def framing_patterns(value: Any, where: str) -> Iterator[tuple[str, str, str]]:
    """``(path, kind, pattern)`` of every x-findall ``pattern``/``between`` and ``tag_pattern`` in a
    template, nested value parsers included."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{where}.{key}"
            if key in ("pattern", "tag_pattern") and isinstance(item, str):
                yield path, "pattern", item
            elif key == "between" and isinstance(item, str):
                yield path, "between", item
            else:
                yield from framing_patterns(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from framing_patterns(item, f"{where}[{index}]")


PATTERNS = [(name, path, kind, source) for name in profiles.names() for path, kind, source
            in framing_patterns(profiles.load(name).response_template["fields"], "fields")]


def test_there_are_patterns_to_check() -> None:
    assert {name for name, *_ in PATTERNS} >= {"step3", "kimi_k2", "deepseek_v31", "glm45", "qwen3_coder"}


@pytest.mark.parametrize(("name", "path", "kind", "source"), PATTERNS,
                         ids=[f"{name}:{path}" for name, path, *_ in PATTERNS])
def test_framing_matches_no_free_text(name: str, path: str, kind: str, source: str) -> None:
    assert framing_problem(source) is None
    if kind == "between":
        pattern = regex.compile(source, regex.DOTALL)
        assert [text for text in PROSE if pattern.fullmatch(text)] == []
        assert pattern.fullmatch(" \n") is not None  # layout stays allowed


@pytest.mark.parametrize(("source", "token"), [
    ("<c>.*?(?P<v>..)", "."),
    ("(?:\\s|<｜tool_call_begin｜>(?:function<｜tool_sep｜>[^<\\n]*\\n)?|<｜tool_call_end｜>)*", "[^<\\n]"),
    ("<t>\\w+(?P<v>x)", "\\w"),
])
def test_the_check_finds_free_text(source: str, token: str) -> None:
    assert framing_problem(source) == token


STEP3_HEADER = ('<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>{header}\n'
                '<steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter>'
                '</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>')


@pytest.mark.parametrize("output", [
    STEP3_HEADER.format(header="get weather now please"),  # prose in the header
    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>get_weather\n",  # cut after the header
])
def test_step3_loses_no_header_text(output: str) -> None:
    template = profiles.load("step3").response_template
    with pytest.raises(ResponseParseError, match="x-findall: text before the first match"):
        parse_response(output, template, prefix="")
    assert parse_response(output, template, prefix="", errors="keep")["content"] == output


def test_step3_reads_a_header_that_names_the_call() -> None:
    template = profiles.load("step3").response_template
    message = parse_response(STEP3_HEADER.format(header="get_weather"), template, prefix="")
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]
