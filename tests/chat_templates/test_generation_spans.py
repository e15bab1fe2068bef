"""{% generation %} spans: exact character offsets, whichever way the template writes its blocks."""

from __future__ import annotations

import datetime
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import RenderedChat
from chatcodec.chat_templates.errors import ChatTemplateError
from chatcodec.chat_templates.generation import SPAN_MARKERS, choose_span_markers, strip_span_markers
from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.chat_templates.render import render_chat_template, render_chat_template_with_spans
from tests.conftest import corpus_template

SPAN_START, SPAN_END = SPAN_MARKERS[:2]
CLOCK = datetime.datetime(2026, 1, 15, 12, 0, 0)
CHAT = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Bye"},
    {"role": "assistant", "content": "See you."},
]
MACRO = (
    "{% macro turn(m) %}<{{ m.role }}>{% generation %}{{ m.content }}{% endgeneration %}</{{ m.role }}>"
    "{% endmacro %}{% for m in messages %}{{ turn(m) }}{% endfor %}"
)



def spans_text(rendered: RenderedChat) -> list[str]:
    return [rendered.text[start:end] for start, end in rendered.generation_spans]


class TestCorpusTemplates:
    """Spans equal the reference's on the corpus templates that have generation blocks."""

    def test_smollm3(self) -> None:
        rendered = render_chat_template_with_spans(
            corpus_template("HuggingFaceTB--SmolLM3-3B.jinja"), CHAT, now=CLOCK
        )
        assert rendered.generation_spans == [(1335, 1374), (1405, 1446)]
        assert spans_text(rendered) == [
            "<|im_start|>assistant\nHello!<|im_end|>\n",
            "<|im_start|>assistant\nSee you.<|im_end|>\n",
        ]
        assert rendered.text == render_chat_template(
            corpus_template("HuggingFaceTB--SmolLM3-3B.jinja"), CHAT, now=CLOCK
        )

    def test_phi4_reasoning(self) -> None:
        rendered = render_chat_template_with_spans(corpus_template("microsoft--Phi-4-reasoning.jinja"), CHAT)
        assert rendered.generation_spans == [(1339, 1355), (1425, 1443)]
        assert spans_text(rendered) == ["Hello!<|im_end|>", "See you.<|im_end|>"]


class TestBufferedBlocks:
    def test_blocks_inside_a_macro_are_exact(self) -> None:
        # reference: [(0, 2), (15, 21), (44, 47), (60, 68)], i.e. '<u', '<assis', '<us', '<assista'
        rendered = render_chat_template_with_spans(MACRO, CHAT)
        assert (
            rendered.text
            == "<user>Hi</user><assistant>Hello!</assistant><user>Bye</user><assistant>See you.</assistant>"
        )
        assert rendered.generation_spans == [(6, 8), (26, 32), (50, 53), (71, 79)]

    def test_blocks_inside_a_set_block(self) -> None:
        source = (
            "{% for m in messages %}{% set turn %}[{% generation %}{{ m.content }}{% endgeneration %}]"
            "{% endset %}{{ turn }}{% endfor %}"
        )
        rendered = render_chat_template_with_spans(source, CHAT)
        assert rendered.text == "[Hi][Hello!][Bye][See you.]"
        assert spans_text(rendered) == ["Hi", "Hello!", "Bye", "See you."]

    def test_nested_blocks(self) -> None:
        source = "a{% generation %}b{% generation %}c{% endgeneration %}d{% endgeneration %}e"
        rendered = render_chat_template_with_spans(source, CHAT)
        assert rendered.text == "abcde"
        assert rendered.generation_spans == [(1, 4), (2, 3)]

    def test_a_template_that_transforms_a_block_is_an_error(self) -> None:
        source = "{% set turn %}{% generation %} x {% endgeneration %}{% endset %}[{{ turn|trim }}]"
        assert render_chat_template(source, CHAT) == "[x]"
        with pytest.raises(ChatTemplateError, match=r"changes the text of a \{% generation %\} block"):
            render_chat_template_with_spans(source, CHAT)

    def test_marker_characters_in_the_input_are_ordinary_text(self) -> None:
        # U+10FFFE / U+10FFFF are legal characters; content holding them still gets exact spans
        content = f"ok{SPAN_START}a{SPAN_END}b{SPAN_START}"
        chat = [{"role": "user", "content": "\ufdd0\ufdd1"}, {"role": "assistant", "content": content}]
        rendered = render_chat_template_with_spans(MACRO, chat)
        assert rendered.text == f"<user>\ufdd0\ufdd1</user><assistant>{content}</assistant>"
        assert rendered.generation_spans == [(6, 8), (26, 26 + len(content))]

    def test_blocks_called_through_self(self) -> None:
        source = "{% block b %}XX{% generation %}Hello{% endgeneration %}{% endblock %}|{{ self.b() }}"
        rendered = render_chat_template_with_spans(source, CHAT)
        assert rendered.text == "XXHello|XXHello"
        assert rendered.generation_spans == [(2, 7), (10, 15)]
        assert spans_text(rendered) == ["Hello", "Hello"]

    def test_direct_blocks_with_marker_characters_in_the_input_are_exact(self) -> None:
        source = "{% for m in messages %}<{% generation %}{{ m.content }}{% endgeneration %}>{% endfor %}"
        content = f"a{SPAN_END}b"
        rendered = render_chat_template_with_spans(source, [{"role": "assistant", "content": content}])
        assert spans_text(rendered) == [content]


class TestDirectBlocks:
    def test_no_generation_block(self) -> None:
        assert render_chat_template_with_spans("{{ messages[0].content }}", CHAT) == RenderedChat("Hi", [])

    def test_empty_and_whitespace_blocks(self) -> None:
        source = "{% for m in messages %}|{% generation %}{{ ' ' if m.role == 'user' }}{% endgeneration %}"
        source += "{% endfor %}"
        rendered = render_chat_template_with_spans(source, CHAT)
        assert rendered.text == "| || |"
        assert rendered.generation_spans == [(1, 2), (3, 3), (4, 5), (6, 6)]

    def test_generation_prompt_has_no_span(self) -> None:
        source = (
            "{% for m in messages %}{% if m.role == 'assistant' %}A:{% generation %}{{ m.content }}"
            "{% endgeneration %}{% else %}U:{{ m.content }}{% endif %}|{% endfor %}"
            "{% if add_generation_prompt %}A:{% endif %}"
        )
        rendered = render_chat_template_with_spans(source, CHAT, add_generation_prompt=True)
        assert rendered.text == "U:Hi|A:Hello!|U:Bye|A:See you.|A:"
        assert spans_text(rendered) == ["Hello!", "See you."]

    def test_continue_final_message_is_not_accepted(self) -> None:
        with pytest.raises(
            ConversationError, match="continue_final_message is not compatible with generation spans"
        ):
            render_chat_template_with_spans(MACRO, CHAT, continue_final_message=True)

    def test_concurrent_renders_keep_their_own_spans(self) -> None:
        source = "{% for m in messages %}<{% generation %}{{ m.content }}{% endgeneration %}>{% endfor %}"
        results: dict[int, Any] = {}

        def worker(index: int) -> None:
            chat = [{"role": "assistant", "content": "x" * (index + 1)}] * 50
            results[index] = [render_chat_template_with_spans(source, chat) for _ in range(20)]

        threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for index, renders in results.items():
            for rendered in renders:
                assert spans_text(rendered) == ["x" * (index + 1)] * 50


_contents = st.text(
    alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(SPAN_MARKERS[:4])), max_size=12
)


@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _contents), min_size=1, max_size=8),
    st.booleans(),
)
def test_spans_cover_exactly_the_assistant_contents(turns: list[tuple[str, str]], in_macro: bool) -> None:
    chat = [{"role": role, "content": content} for role, content in turns]
    body = (
        "{% if m.role == 'assistant' %}<a>{% generation %}{{ m.content }}{% endgeneration %}</a>"
        "{% else %}<u>{{ m.content }}</u>{% endif %}"
    )
    if in_macro:
        source = (
            "{% macro turn(m) %}" + body + "{% endmacro %}{% for m in messages %}{{ turn(m) }}{% endfor %}"
        )
    else:
        source = "{% for m in messages %}" + body + "{% endfor %}"
    rendered = render_chat_template_with_spans(source, chat)
    assert rendered.text == render_chat_template(source, chat)
    assert spans_text(rendered) == [content for role, content in turns if role == "assistant"]


class TestStripSpanMarkers:
    def test_markers_are_removed_and_spans_read(self) -> None:
        marked = f"a{SPAN_START}bc{SPAN_END}d{SPAN_START}{SPAN_END}"
        assert strip_span_markers(marked, SPAN_START, SPAN_END) == ("abcd", [(1, 3), (4, 4)])

    @pytest.mark.parametrize(
        "text",
        [f"a{SPAN_END}b", f"{SPAN_START}a", f"{SPAN_END}{SPAN_START}"],
        ids=["close", "open", "reversed"],
    )
    def test_unbalanced_markers(self, text: str) -> None:
        assert strip_span_markers(text, SPAN_START, SPAN_END) is None

    def test_markers_are_chosen_absent_from_the_text(self) -> None:
        assert choose_span_markers("plain text") == (SPAN_START, SPAN_END)
        assert choose_span_markers(f"x{SPAN_START}") == (SPAN_END, SPAN_MARKERS[2])
        assert choose_span_markers("".join(SPAN_MARKERS[:-1])) is None
        assert len(SPAN_MARKERS) == 66 and len(set(SPAN_MARKERS)) == 66
