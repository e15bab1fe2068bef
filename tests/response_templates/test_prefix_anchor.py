"""A prefix without the start anchor: the same warning from every entry point (SPEC §1.5: such a
prompt is parsed whole, which is almost always a prompt rendered without add_generation_prompt),
and a parse error inside such a prefix says why it happened."""

from __future__ import annotations

import warnings

import pytest

import chatcodec
from chatcodec.errors import ResponseParseError
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN

WARNING = (
    "the prefix does not contain the response template's start anchor '<|im_start|>assistant\\n', so the "
    "whole prompt is parsed as the start of the assistant message and ends up in it. Build the prompt with "
    "add_generation_prompt=True (chatcodec render --generation-prompt), or pass prefix='' (chatcodec parse "
    "--no-prefix) when there is no prompt.")

NO_GENERATION_PROMPT = "<|im_start|>user\nHi<|im_end|>\n"
GENERATION_PROMPT = NO_GENERATION_PROMPT + "<|im_start|>assistant\n"


def test_parse_response_warns_at_the_callers_line() -> None:
    with pytest.warns(UserWarning) as caught:
        message = chatcodec.parse_response("Hello!<|im_end|>", QWEN, prefix=NO_GENERATION_PROMPT)
    assert [str(warning.message) for warning in caught] == [WARNING]
    assert caught[0].filename == __file__
    assert message == {"role": "assistant", "content": "<|im_start|>user\nHi\nHello!"}


def test_response_parser_and_batch_warn_too() -> None:
    with pytest.warns(UserWarning) as caught:
        chatcodec.ResponseParser(QWEN, prefix=NO_GENERATION_PROMPT)
    assert [str(warning.message) for warning in caught] == [WARNING]
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning) as caught:
        chatcodec.parse_response_batch(["a", "b"], QWEN, prefix=[NO_GENERATION_PROMPT, GENERATION_PROMPT])
    assert [str(warning.message) for warning in caught] == [WARNING]
    assert caught[0].filename == __file__


@pytest.mark.parametrize("prefix", ["", [], GENERATION_PROMPT, "<|im_start|>assistant\n"])
def test_no_warning_with_the_anchor_or_the_explicit_opt_out(prefix: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parser = chatcodec.ResponseParser(QWEN, prefix=prefix)
        parser.feed("Hi<|im_end|>")
        assert parser.finalize()[0] == {"role": "assistant", "content": "Hi"}


def test_an_error_in_a_prefix_without_the_anchor_says_why() -> None:
    prompt = "<|im_start|>system\nExample: <tool_call></tool_call><|im_end|>\n<|im_start|>user\nHi<|im_end|>"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ResponseParseError) as caught:
            chatcodec.ResponseParser(QWEN, prefix=prompt)
    assert str(caught.value).splitlines()[0] == (
        "field 'tool_calls' (content parser 'json') at offset 39 of the prefix (the prefix has no start "
        "anchor, so all of it is parsed as the assistant message: was it rendered without "
        "add_generation_prompt?): could not parse region as JSON: Expecting value (line 1, column 1, char 0)")


def test_an_error_in_a_prefix_with_the_anchor_has_no_such_hint() -> None:
    prompt = "<|im_start|>assistant\n<tool_call>{"
    parser = chatcodec.ResponseParser(QWEN, prefix=prompt)
    with pytest.raises(ResponseParseError) as caught:
        parser.feed("</tool_call>")
    assert str(caught.value).splitlines()[0] == (
        "field 'tool_calls' (content parser 'json') at offset 0 of the output (the region began at offset "
        "22 of the prefix): could not parse region as JSON: Expecting property name enclosed in double "
        "quotes (line 1, column 2, char 1)")
