"""gpt-oss (harmony): text outside every channel message is kept in ``content`` (SPEC 1.5).

The profile's implicit field is ``content``: the visible channels' headers (final, commentary
without a recipient), the role header and the message ends are its framing, so a final message
and text the model wrote without a header both end up in ``content``, in order.
"""

from __future__ import annotations

import pytest

from chatcodec import profiles
from chatcodec.analysis.lint import lint_response_template
from tests.profiles.helpers import parse_three_ways

PROFILE = profiles.load("gpt_oss")
PREFIX = PROFILE.generation_prompt_ending(None)


def _parse(output: str, errors: str = "strict") -> dict[str, object]:
    return parse_three_ways(PROFILE.response_template, output, prefix=PREFIX, errors=errors)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "<|channel|>final<|message|>Hi<|end|>The model kept talking here without a header.",
            {"role": "assistant", "content": "HiThe model kept talking here without a header."},
        ),
        ("Hello without any channel", {"role": "assistant", "content": "Hello without any channel"}),
        (
            "<|startQZ|>assistant<|channel|>final<|message|>Hello",
            {"role": "assistant", "content": "<|startQZ|>assistantHello"},
        ),
        (
            "<|channel|>analysis<|message|>Think.<|end|>stray<|start|>assistant<|channel|>final<|message|>Hi",
            {"role": "assistant", "reasoning_content": "Think.", "content": "strayHi"},
        ),
        # QA: the doubled-start close took any start token another one followed, role or not,
        # and dropped it: start tokens without a role after them are the answer's text.
        (
            "<|channel|>final<|message|>x<|start|><|start|>y",
            {"role": "assistant", "content": "x<|start|><|start|>y"},
        ),
        (
            "<|channel|>final<|message|>x<|start|><|start|><|start|>y",
            {"role": "assistant", "content": "x<|start|><|start|><|start|>y"},
        ),
        (
            "<|channel|>analysis<|message|>Think.<|end|><|start|><|start|><|start|>assistant"
            "<|channel|>final<|message|>Hi<|return|>",
            {"role": "assistant", "reasoning_content": "Think.", "content": "Hi"},
        ),
    ],
)
def test_text_outside_channel_messages_is_content(output: str, expected: dict[str, object]) -> None:
    assert _parse(output) == expected
    assert _parse(output, "keep") == expected


def test_channel_messages_still_parse() -> None:
    output = (
        "<|channel|>analysis<|message|>Need weather.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        '<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>'
        '{"city": "Paris"}<|call|>'
    )
    assert _parse(output) == {
        "role": "assistant",
        "reasoning_content": "Need weather.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        ],
        "content": "Checking.",
    }


def test_a_broken_call_goes_back_into_content_with_keep() -> None:
    output = "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{oops<|call|>"
    message = _parse(output, "keep")
    assert message["content"] == (
        "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{oops<|call|>"
    )
    assert [record["field"] for record in message["parse_errors"]] == ["tool_calls"]


def test_lint_finds_no_missing_implicit_field() -> None:
    codes = [finding.code for finding in lint_response_template(PROFILE.response_template)]
    # the look-aheads that end reasoning and calls at the next <|start|> (a header written without
    # <|end|>/<|call|> first) and content at a start token that another follows (the token written
    # twice, vllm #43408), the negative look-aheads of tool_calls (a recipient without the
    # functions. namespace is a function unless it is python) and of builtin_tool_calls, and strip
    # "blank" of content and reasoning; no RT010
    assert codes == ["RT001"] * 8 + ["RT012", "RT012"]


WEATHER_CALL = {
    "role": "assistant",
    "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    ],
}


@pytest.mark.parametrize(
    "output",
    [
        (
            '<|channel|>commentary to=functions.get_weather <|constrain|>json'
            '<|message|>{"city": "Paris"}<|call|>'
        ),
        (
            '<|channel|> commentary to=functions.get_weather <|constrain|>  json'
            '<|message|>{"city": "Paris"}<|call|>'
        ),
        (
            '<|start|>assistant to=functions.get_weather<|channel|>commentary json'
            '<|message|>{"city": "Paris"}<|call|>'
        ),
        'to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        '<|channel|>analysis to=functions.get_weather<|message|>{"city": "Paris"}<|call|>',
        'to=functions.get_weather<|channel|>commentary<|message|>{"city": "Paris"}<|call|>',
    ],
)
def test_header_with_a_known_channel_and_constrain_is_a_tool_call(output: str) -> None:
    assert _parse(output) == WEATHER_CALL


@pytest.mark.parametrize(
    ("output", "content"),
    [
        (
            (
                '<|channel|>commentary to=functions.get_weather <|constrain|>IMPORTANT_NOTE'
                '<|message|>{"city": "Paris"}<|call|>'
            ),
            (
                '<|channel|>commentary to=functions.get_weather <|constrain|>IMPORTANT_NOTE'
                '<|message|>{"city": "Paris"}'
            ),
        ),
        (
            'to=functions.get_weather<|channel|>commentary please_ignore<|message|>{"city": "Paris"}<|call|>',
            'to=functions.get_weather<|channel|>commentary please_ignore<|message|>{"city": "Paris"}',
        ),
        (
            '<|channel|>please_ignore to=functions.get_weather<|message|>{"city": "Paris"}<|call|>',
            '<|channel|>please_ignore to=functions.get_weather<|message|>{"city": "Paris"}',
        ),
        (
            "<|channel|>commentary to=functions.get_weather <|constrain|>jsonx<|message|>{}<|call|>",
            "<|channel|>commentary to=functions.get_weather <|constrain|>jsonx<|message|>{}",
        ),
        (
            "<|channel|>analysis to=browser.search <|constrain|>NOTE<|message|>{}<|call|>",
            "<|channel|>analysis to=browser.search <|constrain|>NOTE<|message|>{}",
        ),
        (
            "<|channel|>please_ignore to=assistant<|message|>hi",
            "<|channel|>please_ignore to=assistant<|message|>hi",
        ),
        (
            "<|channel|>analysis please_ignore<|message|>hm<|end|>",
            "<|channel|>analysis please_ignore<|message|>hm",
        ),
    ],
)
def test_an_unknown_header_word_keeps_the_whole_message_as_content(output: str, content: str) -> None:
    """Round-3 audit: the header is framing only when every word is harmony's (channel, json, code).

    An unknown constrain value or channel name used to be swallowed with the header; now the header
    does not match and the message stays in ``content``, as the text the model wrote.
    """
    expected = {"role": "assistant", "content": content}
    assert _parse(output) == expected
    assert _parse(output, "keep") == expected
