"""Template selection: explicit name, tool_use with tools, default, and errors listing the names."""

from __future__ import annotations

from typing import Any

import pytest

import chatcodec
from chatcodec.chat_templates.selection import (
    looks_like_template_text,
    resolve_chat_template,
    select_chat_template,
)
from chatcodec.errors import ChatTemplateNotFoundError

NAMED = {"default": "D {{ messages }}", "tool_use": "T {{ tools }}", "rag": "R {{ documents }}"}
TOOLS: list[dict[str, Any]] = [{"type": "function", "function": {"name": "f"}}]


class TestSelect:
    def test_public(self) -> None:
        assert chatcodec.select_chat_template is select_chat_template

    def test_single_template(self) -> None:
        assert select_chat_template("T") == "T"
        assert select_chat_template("T", "default") == "T"
        assert select_chat_template("T", tools=TOOLS) == "T"

    def test_explicit_name_wins(self) -> None:
        assert select_chat_template(NAMED, "rag", tools=TOOLS) == NAMED["rag"]

    def test_tool_use_with_tools(self) -> None:
        assert select_chat_template(NAMED, tools=TOOLS) == NAMED["tool_use"]

    def test_an_empty_tool_list_is_no_tools(self) -> None:
        # the reference selects tool_use for any list, even empty (docs/compatibility.md)
        assert select_chat_template(NAMED, tools=[]) == NAMED["default"]

    def test_default_without_tools(self) -> None:
        assert select_chat_template(NAMED) == NAMED["default"]

    def test_default_when_there_is_no_tool_use(self) -> None:
        assert select_chat_template({"default": "D", "rag": "R"}, tools=TOOLS) == "D"

    def test_unknown_name_lists_the_names(self) -> None:
        with pytest.raises(ChatTemplateNotFoundError) as caught:
            select_chat_template(NAMED, "chatml")
        error = caught.value
        assert str(error) == (
            "chat template: no template named 'chatml'. "
            "Available template names are ['default', 'rag', 'tool_use']."
        )
        assert (error.name, error.available) == ("chatml", ["default", "rag", "tool_use"])
        assert isinstance(error, LookupError)
        assert isinstance(error, ValueError)

    def test_no_default(self) -> None:
        with pytest.raises(ChatTemplateNotFoundError, match=r"no default specified.*\['rag', 'tool_use'\]"):
            select_chat_template({"tool_use": "T", "rag": "R"})

    def test_name_for_a_single_template(self) -> None:
        with pytest.raises(ChatTemplateNotFoundError, match="single template, 'default'"):
            select_chat_template("T", "tool_use")

    @pytest.mark.parametrize("templates", [None, {}])
    @pytest.mark.parametrize("name", [None, "default", "tool_use"])
    def test_no_template(self, templates: Any, name: str | None) -> None:
        # transformers 5.24 says "multiple chat templates with no default specified ... []" for {}
        with pytest.raises(ChatTemplateNotFoundError) as caught:
            select_chat_template(templates, name)
        assert str(caught.value) == (
            "chat template: this model has no chat template. Pass the template text, or add "
            "chat_template.jinja to the model directory.")
        assert (caught.value.name, caught.value.available) == (name, [])


class TestResolve:
    """``chat_template=`` of apply_chat_template: template text, or a name (never rendered as text)."""

    def test_none_selects(self) -> None:
        assert resolve_chat_template(NAMED, None, tools=TOOLS) == NAMED["tool_use"]

    def test_a_name(self) -> None:
        assert resolve_chat_template(NAMED, "rag") == NAMED["rag"]

    def test_template_text(self) -> None:
        assert resolve_chat_template(NAMED, "{{ messages }}") == "{{ messages }}"
        assert resolve_chat_template(None, "{% for m in messages %}{% endfor %}") == (
            "{% for m in messages %}{% endfor %}"
        )

    def test_an_unknown_name_is_not_rendered_as_text(self) -> None:
        # reference: get_chat_template returns "tool-use" itself, which then renders as the prompt "tool-use"
        with pytest.raises(ChatTemplateNotFoundError, match="no template named 'tool-use'"):
            resolve_chat_template(NAMED, "tool-use")

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("{{ x }}", True),
            ("{% if x %}{% endif %}", True),
            ("{# note #}", True),
            ("tool_use", False),
            ("", False),
        ],
    )
    def test_looks_like_template_text(self, value: str, expected: bool) -> None:
        assert looks_like_template_text(value) is expected
