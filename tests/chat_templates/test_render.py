"""render_chat_template: options, continue_final_message and its checks, variables and special tokens.

Expected prompts of real corpus templates were produced by the reference (transformers 5.24
``render_jinja_template``) on the same inputs.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

import chatcodec
from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.chat_templates.render import render_chat_template, render_chat_template_with_spans
from tests.conftest import corpus_template

HAIKU = [
    {"role": "user", "content": "Write a haiku."},
    {"role": "assistant", "content": "Crisp leaves drift "},
]
CLOCK = datetime.datetime(2026, 1, 15, 12, 0, 0)
LIST_TEMPLATE = (
    "{% for m in messages %}<{{ m.role }}>{% if m.content is string %}{{ m.content }}{% else %}"
    "{% for b in m.content %}{{ b.text }}{% endfor %}{% endif %}</{{ m.role }}>{% endfor %}"
)



class TestPublicApi:
    def test_exported_at_the_package_root(self) -> None:
        assert chatcodec.render_chat_template is render_chat_template
        assert chatcodec.render_chat_template_with_spans is render_chat_template_with_spans

    def test_generation_prompt(self) -> None:
        template = corpus_template("Qwen--Qwen2.5-7B-Instruct.jinja")
        assert render_chat_template(template, HAIKU[:1], add_generation_prompt=True).endswith(
            "<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\n"
        )


class TestContinueFinalMessage:
    def test_content_keeps_trailing_space_when_the_template_does(self) -> None:
        out = render_chat_template(
            corpus_template("Qwen--Qwen2.5-7B-Instruct.jinja"), HAIKU, continue_final_message=True
        )
        assert out == (
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. "
            "You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\nCrisp leaves drift "
        )

    def test_content_trimmed_by_the_template(self) -> None:
        out = render_chat_template(
            corpus_template("meta-llama--Llama-3.1-8B-Instruct.jinja"), HAIKU, continue_final_message=True
        )
        assert out == (
            "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
            "Today Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWrite a haiku."
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nCrisp leaves drift"
        )

    def test_reasoning_content_field(self) -> None:
        messages = [HAIKU[0], {"role": "assistant", "reasoning_content": "Let me think", "content": "x"}]
        out = render_chat_template(
            corpus_template("Qwen--Qwen3-0.6B.jinja"), messages, continue_final_message="reasoning_content"
        )
        assert (
            out == "<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\n<think>\nLet me think"
        )

    def test_thinking_alias_read_by_gpt_oss(self) -> None:
        messages = [HAIKU[0], {"role": "assistant", "thinking": "Plan: ", "content": "x"}]
        out = render_chat_template(
            corpus_template("openai--gpt-oss-120b.jinja"),
            messages,
            continue_final_message="thinking",
            now=CLOCK,
        )
        assert out == (
            "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
            "Knowledge cutoff: 2024-06\nCurrent date: 2026-01-15\n\nReasoning: medium\n\n"
            "# Valid channels: analysis, commentary, final. "
            "Channel must be included for every message.<|end|>"
            "<|start|>user<|message|>Write a haiku.<|end|>"
            "<|start|>assistant<|channel|>analysis<|message|>Plan: "
        )

    def test_last_text_block_of_a_content_list(self) -> None:
        messages = [
            HAIKU[0],
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "one "},
                    {"type": "image"},
                    {"type": "text", "text": "two"},
                ],
            },
        ]
        out = render_chat_template(LIST_TEMPLATE, messages, continue_final_message=True)
        assert out == "<user>Write a haiku.</user><assistant>one two"

    def test_the_callers_messages_are_not_tagged(self) -> None:
        messages = [dict(message) for message in HAIKU]
        render_chat_template("{{ messages[-1].content }}", messages, continue_final_message=True)
        assert messages == HAIKU

    @pytest.mark.parametrize(
        ("template", "messages", "field", "message"),
        [
            (
                "{{ messages[-1].content }}",
                HAIKU,
                "reasoning_content",
                'the final message has no "reasoning_content" to continue',
            ),
            (
                "{{ messages[-1].body }}",
                HAIKU,
                True,
                'continue_final_message is set to "content" but this is not an accepted field',
            ),
            (
                "{% for m in messages %}{{ m.role }}{% endfor %}content",
                HAIKU,
                True,
                "the final message does not appear in the chat after applying the chat template",
            ),
            (
                "{{ messages[-1].content }}",
                [HAIKU[0], {"role": "assistant", "content": [{"type": "image"}]}],
                True,
                "could not find any text to continue in the final message",
            ),
        ],
        ids=["missing-field", "field-not-in-template", "template-deletes-it", "no-text-block"],
    )
    def test_the_references_checks(self, template: str, messages: Any, field: Any, message: str) -> None:
        with pytest.raises(ConversationError, match=message) as caught:
            render_chat_template(template, messages, continue_final_message=field)
        assert isinstance(caught.value, ValueError)

    def test_the_final_message_missing_is_reported_as_the_reference_does(self) -> None:
        with pytest.raises(ConversationError) as caught:
            render_chat_template("{% for m in messages %}{{ m.role }}{% endfor %}content", HAIKU,
                                 continue_final_message=True)
        assert str(caught.value) == (  # the reference's message, byte for byte
            "continue_final_message is set but the final message does not appear in the chat after applying "
            "the chat template! This can happen if the chat template deletes portions of the final message. "
            "Please verify the chat template and final message in your chat to ensure they are compatible."
            "Final message to continue: Crisp leaves drift\nRendered chat:\nuserassistantcontent"
        )

    def test_incompatible_with_the_generation_prompt(self) -> None:
        with pytest.raises(
            ConversationError, match="continue_final_message and add_generation_prompt are not"
        ):
            render_chat_template(
                "{{ messages }}", HAIKU, continue_final_message=True, add_generation_prompt=True
            )

    def test_not_visible_to_the_template(self) -> None:
        out = render_chat_template(
            "{{ continue_final_message is defined }}{{ messages[-1].content }}",
            HAIKU,
            continue_final_message=True,
        )
        assert out == "FalseCrisp leaves drift "


class TestVariables:
    def test_special_tokens_and_extra_variables(self) -> None:
        out = render_chat_template(
            "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}{{ enable_thinking }}",
            HAIKU[:1],
            bos_token="<s>",
            eos_token="</s>",
            enable_thinking=False,
        )
        assert out == "<s>Write a haiku.</s>False"

    def test_reserved_names_are_set_by_the_renderer(self) -> None:
        out = render_chat_template("{{ tools }}|{{ documents }}|{{ add_generation_prompt }}", HAIKU[:1])
        assert out == "None|None|False"

    def test_variables_are_rebuilt_as_plain_data(self) -> None:
        class Opaque:
            pass

        out = render_chat_template(
            "{{ thing }}|{{ nested.x }}", HAIKU[:1], thing=Opaque(), nested={"x": (1, 2)}
        )
        assert out == "<Opaque>|(1, 2)"

    def test_documents(self) -> None:
        out = render_chat_template(
            "{% for d in documents %}[{{ d.title }}: {{ d.text }}]{% endfor %}",
            HAIKU[:1],
            documents=[{"title": "A", "text": "alpha"}, {"title": "B", "text": "beta"}],
        )
        assert out == "[A: alpha][B: beta]"

    def test_now_that_is_not_a_datetime_is_an_ordinary_variable(self) -> None:
        # the reference passes now= to the template like any keyword; only a datetime pins the clock
        out = render_chat_template("{{ now }}|{{ strftime_now('%Y') > '2000' }}", HAIKU, now="x")
        assert out == "x|True"

    def test_now_is_visible_as_the_reference_shows_it(self) -> None:
        moment = datetime.datetime(2020, 1, 1)
        out = render_chat_template("{{ now }}|{{ strftime_now('%Y') }}", HAIKU, now=moment)
        assert out == "<datetime>|2020"  # the reference: '<datetime>|' and the current year
        assert render_chat_template("{{ now is defined }}", HAIKU) == "False"

    def test_template_must_be_text(self) -> None:
        with pytest.raises(ConversationError, match="chat_template: expected the template text"):
            render_chat_template(None, HAIKU)  # type: ignore[arg-type]


EMPTY_TEMPLATE_MESSAGE = (
    "chat template: the template text is empty (or only whitespace), so every prompt would be too; "
    "check the file or the chat_template value it came from")


@pytest.mark.parametrize("template", ["", " ", "\n", " \t\n\n"])
def test_an_empty_template_is_an_error(template: str) -> None:
    # transformers 5.24 renders "" (and "   \n" as "   ") without a word: docs/compatibility.md
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(chatcodec.ChatTemplateNotFoundError) as caught:
        render_chat_template(template, messages)
    assert str(caught.value) == EMPTY_TEMPLATE_MESSAGE
    assert isinstance(caught.value, ValueError)
    with pytest.raises(chatcodec.ChatTemplateNotFoundError) as caught:
        render_chat_template_with_spans(template, messages)
    assert str(caught.value) == EMPTY_TEMPLATE_MESSAGE
