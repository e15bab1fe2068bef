"""Every line of the corpus's golden renders: byte-identical prompts, and the same errors.

The goldens were rendered by the reference (transformers 5.23; 5.24 re-renders them byte for
byte) with the clock pinned to 2026-01-15 12:00:00 (``now=`` reproduces it). Test ids read
``template|conversation|agp=..|variant`` where the variant names the extra template variables of
that render (``base`` for none).
"""

from __future__ import annotations

import datetime
from typing import Any

import jinja2
import pytest

from chatcodec.chat_templates.errors import ChatTemplateError
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import corpus_template, golden_renders, load_json

CLOCK = datetime.datetime(2026, 1, 15, 12, 0, 0)

#: Exception type names found in the golden error lines -> the class they name.
ERROR_TYPES: dict[str, type[BaseException]] = {
    "TypeError": TypeError,
    "UndefinedError": jinja2.UndefinedError,
    "TemplateError": jinja2.TemplateError,
}



def _variant(line: dict[str, Any], base: dict[str, Any]) -> str:
    extra = {key: value for key, value in line["kwargs"].items() if base.get(key, object()) != value}
    return ",".join(f"{key}={value!r}" for key, value in sorted(extra.items())) or "base"


def _cases() -> list[Any]:
    first_kwargs: dict[tuple[str, str, bool], dict[str, Any]] = {}
    cases = []
    for line in golden_renders():
        group = (line["template"], line["conversation"], line["add_generation_prompt"])
        base = first_kwargs.setdefault(group, line["kwargs"])
        case_id = (f"{line['template'].removesuffix('.jinja')}|{line['conversation']}|"
                   f"agp={line['add_generation_prompt']}|{_variant(line, base)}")
        cases.append(pytest.param(line, id=case_id))
    return cases


CASES = _cases()


def _render(line: dict[str, Any]) -> str:
    conversation = load_json("conversations.json")[line["conversation"]]
    return render_chat_template(
        corpus_template(line["template"]),
        conversation["messages"],
        tools=conversation["tools"],
        documents=conversation["documents"],
        add_generation_prompt=line["add_generation_prompt"],
        now=CLOCK,
        **line["kwargs"],
    )


def test_the_corpus_has_every_golden_line() -> None:
    assert len(CASES) == 1704
    assert sum("error" in case.values[0] for case in CASES) == 248


@pytest.mark.parametrize("line", CASES)
def test_golden_render(line: dict[str, Any]) -> None:
    if "rendered" in line:
        assert _render(line) == line["rendered"]
        return
    type_name, _, message = line["error"].partition(": ")
    with pytest.raises(ChatTemplateError) as caught:
        _render(line)
    error = caught.value
    assert isinstance(error, ERROR_TYPES[type_name])
    assert isinstance(error, jinja2.TemplateError)
    assert error.message == message
    assert error.original_type == type_name
    assert isinstance(error.lineno, int) and error.lineno > 0
    assert str(error).startswith(message + f"\n  line {error.lineno} of the chat template")
    assert error.source_line is not None
    assert error.source_line == corpus_template(line["template"]).splitlines()[error.lineno - 1]
