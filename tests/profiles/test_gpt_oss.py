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
    assert codes == ["RT001", "RT001"]  # the negative look-aheads of builtin_tool_calls; no RT010
