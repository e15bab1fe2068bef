"""A region's close reuses the value its stream already read (``RegexItemsScanner.settled``).

An ``x-findall`` or ``xml-inline`` region streamed with ``value_deltas=True`` has its matches read,
checked against the real pattern and parsed by the time it closes; the close takes that value
instead of reading the region again, but only when the scanner can vouch for it. These tests pin
what it vouches for (exact values), what it refuses (then the content parser reads the text and
raises or records exactly what it always did), and, for any text and any chunking, that a value it
vouches for is the content parser's own value of the same text.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles
from chatcodec.response_templates.content import prepare_parser
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.regex_items_scan import RegexItemsScanner
from chatcodec.response_templates.template import load_response_template

DEEPSEEK_V3 = load_response_template(profiles.load("deepseek_v3").response_template)
GLM45 = load_response_template(profiles.load("glm45").response_template)


def _args(template: Any, field: str = "tool_calls") -> tuple[str, Any]:
    spec = template.fields[field]
    return spec.content, spec.content_args


def _settled(template: Any, chunks: list[str]) -> tuple[bool, Any]:
    content, args = _args(template)
    scanner = scanner_for(content, args)
    assert isinstance(scanner, RegexItemsScanner)
    for chunk in chunks:
        scanner.feed(chunk)
    return scanner.settled("".join(chunks))


def _parsed(template: Any, text: str) -> Any:
    spec = template.fields["tool_calls"]
    return prepare_parser(spec.parser, spec.content_args)(text)


V3_CALL = ("<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```"
           "<｜tool▁call▁end｜>")
V3_OTHER = ("<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"zone\": \"UTC\", \"n\": 2}\n```"
            "<｜tool▁call▁end｜>")
GLM_CALL = "get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n" \
           "<arg_key>date</arg_key>\n<arg_value>2025</arg_value>\n"


def test_the_matches_read_are_the_value_when_every_one_ended() -> None:
    text = V3_CALL + "\n" + V3_OTHER
    assert _settled(DEEPSEEK_V3, [text[:40], text[40:]]) == (True, [
        {"type": "function", "name": "get_weather", "arguments": {"city": "Tokyo"}},
        {"type": "function", "name": "get_time", "arguments": {"zone": "UTC", "n": 2}}])


def test_a_match_its_terminator_still_holds_is_taken_as_the_end_of_the_text_ends_it() -> None:
    # the call's end marker is complete, but a regex terminator waits for one more character
    assert _settled(DEEPSEEK_V3, list(V3_CALL)) == (True, [
        {"type": "function", "name": "get_weather", "arguments": {"city": "Tokyo"}}])


def test_xml_inline_keys_and_values() -> None:
    text = GLM_CALL.split("\n", 1)[1]
    assert _settled(GLM45, [text]) == (True, {"city": "Beijing", "date": "2025"})


@pytest.mark.parametrize("text", [
    V3_CALL + "some prose" + V3_OTHER,  # text between matches that ``between`` refuses
    "noise " + V3_CALL,  # text before the first match
    V3_CALL + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": ",  # a call cut off
    V3_CALL + "\n```",  # after the last match, text that could begin no match but is not allowed
])
def test_it_does_not_vouch_for_what_the_parser_would_refuse_or_read_otherwise(text: str) -> None:
    ok, value = _settled(DEEPSEEK_V3, [text])
    assert (ok, value) == (False, None)


def test_it_does_not_vouch_for_text_it_did_not_read() -> None:
    content, args = _args(DEEPSEEK_V3)
    scanner = scanner_for(content, args)
    assert isinstance(scanner, RegexItemsScanner)
    scanner.feed(V3_CALL)
    assert scanner.settled(V3_CALL + "\n") == (False, None)


def test_it_does_not_vouch_when_a_match_may_start_with_a_dollar() -> None:
    # ``$`` may match once the text has ended, where the search (more text to come) said no match
    # starts: the content parser reads such a region itself
    scanner = scanner_for("x-findall", {"pattern": "(?P<v>[a-z]+)$"})
    assert isinstance(scanner, RegexItemsScanner)
    scanner.feed("abc")
    assert scanner.settled("abc") == (False, None)


def test_xml_inline_refuses_a_repeated_key_and_stray_text() -> None:
    repeated = "<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>a</arg_key><arg_value>2</arg_value>"
    assert _settled(GLM45, [repeated]) == (False, None)
    stray = "<arg_key>a</arg_key><arg_value>1</arg_value> stray <arg_key>b</arg_key><arg_value>2</arg_value>"
    assert _settled(GLM45, [stray]) == (False, None)


def _close_events(template: Any, prefix: str, output: str, value_deltas: bool) -> tuple[Any, list[Any]]:
    parser = ResponseParser(template, prefix=prefix, errors="keep", value_deltas=value_deltas, offsets=True)
    events = [event for chunk in output for event in parser.feed(chunk)]
    message, final = parser.finalize()
    return message, [event for event in events + final if event["type"] != "region_value"]


def test_a_region_the_stream_cannot_vouch_for_fails_as_it_always_did() -> None:
    prefix = profiles.load("deepseek_v3").generation_prompt_ending(None)
    output = f"<｜tool▁calls▁begin｜>{V3_CALL}some prose{V3_OTHER}<｜tool▁calls▁end｜>"
    message, events = _close_events(DEEPSEEK_V3, prefix, output, True)
    assert (message, events) == _close_events(DEEPSEEK_V3, prefix, output, False)
    assert message["parse_errors"][0]["error"] == (
        "field 'tool_calls' (content parser 'x-findall'): x-findall: text between matches at offset 97: "
        "'some prose' is not a match of the pattern (a malformed tool call, or text the format does not "
        "allow there)")
    assert message["content"] == output


#: Pieces of DeepSeek V3 call blocks: whole calls (most often), their parts, separators, and text no
#: call allows.
V3_PIECES = [*[V3_CALL, V3_OTHER, "\n"] * 4, " ", "x", "```", "\n```", "<｜tool▁call▁end｜>",
             "<｜tool▁call▁begin｜>", "function<｜tool▁sep｜>f\n```json\n", "{\"a\": 1}",
             "\n```<｜tool▁call▁end｜>", "```json\n{}"]
GLM_PIECES = [*["<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n",
                "<arg_key>j</arg_key><arg_value>w</arg_value>", "\n"] * 4,
              "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "city", "Beijing", " ", "\\n",
              "</tool_call>", "x<y"]


@pytest.mark.parametrize(("template", "pieces"), [(DEEPSEEK_V3, V3_PIECES), (GLM45, GLM_PIECES)],
                         ids=["deepseek_v3", "glm45"])
@given(data=st.data())
def test_a_value_it_vouches_for_is_the_content_parsers(template: Any, pieces: list[str], data: Any) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=8)))
    cuts = sorted(data.draw(st.sets(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=6)))
    bounds = [0, *(cut for cut in cuts if cut < len(text)), len(text)]
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    ok, value = _settled(template, chunks)
    try:
        expected = _parsed(template, text)
    except ValueError:
        assert not ok  # the parser refuses the text: the stream never vouches for a value
        return
    if ok:
        assert value == expected
