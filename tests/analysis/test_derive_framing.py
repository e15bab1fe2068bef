"""Whitespace as framing (``chatcodec.analysis.derivation.framing``): a derived text field keeps what the
model wrote, minus the whitespace its chat template writes around it.

Real corpus templates of the development part only (``corpus_split.py``); outputs are the SGLang
peer vector ``qwen3-sgl-whitespace-preserved`` in each template's own form, and outputs with more
whitespace than the template writes.
"""

from __future__ import annotations

from typing import Any

from chatcodec.analysis.derive import DerivedTemplate, derive_response_template
from tests.analysis.corpus_split import is_held_out
from tests.analysis.helpers import template_and_variables
from tests.profiles.helpers import parse_three_ways

QWEN3_NEXT = "Qwen--Qwen3-Next-80B-A3B.jinja"
GLM4 = "THUDM--glm-4-9b-chat.jinja"
GLM46 = "zai-org--GLM-4.6.jinja"
FALCON = "tiiuae--falcon-11B.jinja"
KEEP = {"strip": "blank"}

_CACHE: dict[str, DerivedTemplate] = {}


def derived(name: str) -> dict[str, Any]:
    if name not in _CACHE:
        template, variables = template_and_variables(name)
        _CACHE[name] = derive_response_template(template, variables=variables)
    assert _CACHE[name].verified
    return _CACHE[name].response_template


def test_the_templates_used_here_are_development_templates() -> None:
    assert not any(is_held_out(name) for name in (QWEN3_NEXT, GLM4, GLM46, FALCON))


def test_qwen3_framing_moves_into_the_delimiters() -> None:
    """Qwen3 renders ``'<think>\\n' + reasoning + '\\n</think>\\n\\n' + content`` and ``'\\n<tool_call>'``."""
    fields = derived(QWEN3_NEXT)["fields"]
    assert fields["reasoning_content"] == {"open_pattern": r"(?:<think>)+(?:\n)?",
                                           "close_pattern": r"(?:\n)?</think>(?:\n\n)?", "content_args": KEEP}
    assert fields["tool_calls"]["open_pattern"] == r"(?:\n)?<tool_call>"
    assert fields["content"] == {"close_pattern": r"<\|im_end\|>|</think>(?:\n\n)?", "content_args": KEEP}


QWEN3_PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_qwen3_the_sglang_output_keeps_the_answer_s_own_newline() -> None:
    template = derived(QWEN3_NEXT)
    output = "<think>\nLet me think\n</think>\n\nThe answer is 42.\n"
    expected = {"role": "assistant", "reasoning_content": "Let me think", "content": "The answer is 42.\n"}
    assert parse_three_ways(template, output, prefix=QWEN3_PROMPT) == expected
    # the same output after the template's own generation prompt, which opens the block
    after_prompt = output.removeprefix("<think>\n")
    assert parse_three_ways(template, after_prompt, prefix=QWEN3_PROMPT + "<think>\n") == expected


def test_qwen3_whitespace_beyond_the_framing_is_kept() -> None:
    """The prompt's ``<think>\\n`` holds the opener's framing: both newlines of the output are the model's."""
    output = "\n\nStep one.\n\n  Step two.\n\n</think>\n\n\n```\ncode\n```"
    assert parse_three_ways(derived(QWEN3_NEXT), output, prefix=QWEN3_PROMPT + "<think>\n") == {
        "role": "assistant", "reasoning_content": "\n\nStep one.\n\n  Step two.\n",
        "content": "\n```\ncode\n```"}


def test_qwen3_the_newline_before_a_call_is_framing_and_whitespace_alone_is_no_content() -> None:
    template = derived(QWEN3_NEXT)
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    calls = [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]
    message = parse_three_ways(template, f"Plan.\n</think>\n\nLet me check.\n{call}",
                               prefix=QWEN3_PROMPT + "<think>\n")
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": "Let me check.",
                       "tool_calls": calls}
    message = parse_three_ways(template, f"Plan.\n</think>\n\n{call}\n", prefix=QWEN3_PROMPT + "<think>\n")
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "tool_calls": calls}


def test_glm4_the_newline_at_the_start_of_every_answer_is_framing() -> None:
    """GLM-4 writes ``<|assistant|>\\n`` + content, and its generation prompt stops before the newline."""
    template = derived(GLM4)
    assert template["fields"]["content"] == {"close_pattern": r"^(?:\n)|<\|endoftext\|>",
                                             "content_args": KEEP}
    prefix = "[gMASK]<sop><|user|>\nHi<|assistant|>"
    assert parse_three_ways(template, "\nHello.\n\nBye.\n", prefix=prefix) == {
        "role": "assistant", "content": "Hello.\n\nBye.\n"}
    assert parse_three_ways(template, "\n\n  indented", prefix=prefix) == {
        "role": "assistant", "content": "\n  indented"}
    assert parse_three_ways(template, "A line.\nNext.", prefix=prefix) == {
        "role": "assistant", "content": "A line.\nNext."}


def test_glm46_the_newlines_around_the_think_block_are_framing() -> None:
    """GLM-4.6 renders ``<|assistant|>\\n<think>...</think>\\n`` + content."""
    template = derived(GLM46)
    assert template["fields"]["reasoning_content"] == {
        "open_pattern": r"(?:\n)?(?:<think>)+", "close_pattern": r"</think>(?:\n)?", "content_args": KEEP}
    prefix = "[gMASK]<sop><|user|>\nHi<|assistant|>"
    assert parse_three_ways(template, "\n<think>Plan.</think>\nAnswer.\n", prefix=prefix) == {
        "role": "assistant", "reasoning_content": "Plan.", "content": "Answer.\n"}
    assert parse_three_ways(template, "\n<think>\nPlan.\n</think>\n\nAnswer.", prefix=prefix) == {
        "role": "assistant", "reasoning_content": "\nPlan.\n", "content": "\nAnswer."}


def test_an_answer_the_template_ends_with_whitespace_before_its_end_token_is_stripped() -> None:
    """Falcon renders ``content + '\\n'`` before the end-of-sequence token, which a server cuts off: no
    marker follows that newline to take it, so the field strips, as before."""
    template = derived(FALCON)
    assert template["fields"]["content"] == {"close": ["<|endoftext|>"]}
    assert parse_three_ways(template, "Hello.\n", prefix="User: \nHi\nFalcon:\n") == {
        "role": "assistant", "content": "Hello."}
