"""Deliberate differences of the encoding half from the reference (transformers 5.24), one test each.

Each test states the reference's result (obtained by running it, or read from its code where noted)
and chatcodec's. ``docs/compatibility.md`` lists them with the reasons.
"""

from __future__ import annotations

import datetime
import enum
import json
import threading
from pathlib import Path
from typing import Literal, Optional

import pytest

from chatcodec import ChatCodec, get_json_schema, load_chat_templates
from chatcodec.chat_templates.errors import ChatTemplateError, ChatTemplateTypeError
from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.chat_templates.render import render_chat_template, render_chat_template_with_spans
from chatcodec.chat_templates.selection import resolve_chat_template
from chatcodec.errors import ChatTemplateNotFoundError, DocstringParsingException, ModelStorageError
from chatcodec.model.storage import save_chat_templates
from chatcodec.tool_schemas import parse_google_docstring, tool_to_schema

CHAT = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]


def test_empty_reasoning_does_not_hide_an_alias() -> None:
    template = "{{ messages[0].reasoning_content }}|{{ messages[0].thinking }}"
    messages = [{"role": "assistant", "reasoning_content": "", "thinking": "plan", "content": "x"}]
    reference = "|plan"
    assert render_chat_template(template, messages) == "plan|plan" != reference


def test_plain_enum_values_reach_the_template() -> None:
    class Role(enum.Enum):
        USER = "user"

    reference = "<Role>"
    assert render_chat_template("{{ messages[0].role }}", [{"role": Role.USER}]) == "user" != reference


def test_generation_spans_inside_a_macro_are_exact() -> None:
    template = (
        "{% macro turn(m) %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ m.content }}"
        "{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endmacro %}"
        "{% for m in messages %}{{ turn(m) }}{% endfor %}"
    )
    rendered = render_chat_template_with_spans(template, CHAT)
    reference = [(8, 14)]  # the offset of the macro call plus the block's length: "<assis"
    assert rendered.generation_spans == [(19, 25)] != reference
    assert rendered.text[19:25] == "Hello!"


def test_generation_spans_that_cannot_be_known_are_an_error() -> None:
    template = "{% set t %}{% generation %} x {% endgeneration %}{% endset %}{{ t|trim }}"
    # reference: [(0, 3)], a span of the 1-character output "x"
    with pytest.raises(ChatTemplateError, match="cannot be known"):
        render_chat_template_with_spans(template, CHAT)


def test_concurrent_span_renders() -> None:
    # as transformers 5.24 (its tracker keeps its state in a ContextVar); 5.23 kept it on the shared
    # environment, so two threads rendering with return_assistant_tokens_mask at once raised
    # "AssistantTracker should not be reused before closed"
    template = "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}"
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(50):
                assert render_chat_template_with_spans(template, CHAT).generation_spans == [(0, 2), (2, 8)]
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_unknown_template_name_is_not_rendered_as_text() -> None:
    # reference: get_chat_template returns "tool-use" itself, and the prompt becomes "tool-use"
    with pytest.raises(ChatTemplateNotFoundError, match="no template named 'tool-use'"):
        resolve_chat_template({"default": "{{ messages }}", "tool_use": "T"}, "tool-use")


def test_config_templates_merge_with_jinja_files(tmp_path: Path) -> None:
    # reference (read from tokenization_utils_base.from_pretrained): any .jinja file replaces the
    # config's templates entirely, giving {"tool_use": ...} with no default
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "D"}))
    (tmp_path / "additional_chat_templates").mkdir()
    (tmp_path / "additional_chat_templates" / "tool_use.jinja").write_text("T")
    assert load_chat_templates(tmp_path) == {"default": "D", "tool_use": "T"}


def test_processor_file_with_a_default_jinja_file_is_a_conflict(tmp_path: Path) -> None:
    # reference (processing_utils.from_pretrained): uses chat_template.json and ignores
    # chat_template.jinja without a word; only additional templates raise the conflict
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": "legacy"}))
    (tmp_path / "chat_template.jinja").write_text("modern")
    with pytest.raises(ModelStorageError, match="conflicting files"):
        load_chat_templates(tmp_path)


def test_processor_file_without_a_template_is_ignored(tmp_path: Path) -> None:
    # reference: reads json["chat_template"] and fails with KeyError
    (tmp_path / "chat_template.json").write_text(json.dumps({"note": "no template here"}))
    (tmp_path / "chat_template.jinja").write_text("modern")
    assert load_chat_templates(tmp_path) == "modern"


def test_saving_leaves_exactly_the_given_templates(tmp_path: Path) -> None:
    # reference: save_pretrained writes the new files and leaves stale ones, so loading the
    # directory again can give back templates that were not saved
    save_chat_templates({"default": "D", "rag": "R"}, tmp_path)
    save_chat_templates("D2", tmp_path)
    assert load_chat_templates(tmp_path) == "D2"


def test_typed_docstring_argument_lines_with_a_space_before_the_colon() -> None:
    def f(x: int) -> None:
        """F.

        Args:
            x (int) : the x
        """

    # reference (5.24): DocstringParsingException "no description for the argument 'x'"; without the
    # space, "x (int): the x", 5.24 reads it as chatcodec does (5.23 raised)
    assert get_json_schema(f)["function"]["parameters"]["properties"]["x"]["description"] == "the x"


class Shade(enum.Enum):
    DARK = "dark"


@pytest.mark.parametrize(("hint", "returns", "description"), [
    (int, "int: The sum.", "The sum."),  # reference (5.24): "int: The sum."
    (list[int], "list[int]: The values,\n    one per line.", "The values,\n    one per line."),
    (Optional[str], "Optional[str]: The name, or None.", "The name, or None."),  # noqa: UP045
    (Optional[str], "str | None: The name.", "The name."),  # noqa: UP045
    (dict, "dict[str, Any]: {\"a\": 1} as a mapping.", "{\"a\": 1} as a mapping."),
    (Shade, "Shade: The shade.", "The shade."),
    (int, "Note: plain text that starts with a word and a colon.",
     "Note: plain text that starts with a word and a colon."),
    (int, "int", "int"),
    (int, "The sum: a number.", "The sum: a number."),
])
def test_a_returns_type_prefix_is_not_description(hint: object, returns: str, description: str) -> None:
    def f(x: int) -> int:
        return x

    f.__annotations__["return"] = hint
    f.__doc__ = f"F.\n\nArgs:\n    x: The x.\n\nReturns:\n    {returns}\n"
    assert get_json_schema(f)["function"]["return"]["description"] == description


def test_optional_literal_allows_null() -> None:
    def f(mode: Optional[Literal["a", "b"]] = None) -> None:  # noqa: UP045
        """F.

        Args:
            mode: the mode
        """

    reference = {"type": "string", "enum": ["a", "b"], "nullable": True, "description": "the mode"}
    schema = get_json_schema(f)["function"]["parameters"]["properties"]["mode"]
    assert schema == {"type": "string", "enum": ["a", "b", None], "nullable": True, "description": "the mode"}
    assert schema != reference


def test_varargs_are_not_required_properties() -> None:
    def f(a: int, *args: int, **kwargs: str) -> None:
        """F.

        Args:
            a: an a
            args: more
            kwargs: even more
        """

    reference_required = ["a", "args", "kwargs"]
    parameters = get_json_schema(f)["function"]["parameters"]
    assert parameters["required"] == ["a"] != reference_required
    assert list(parameters["properties"]) == ["a"]


def test_bad_choices_name_the_argument() -> None:
    def f(x: str) -> None:
        """F.

        Args:
            x: the x (choices: [tea, coffee])
        """

    # reference: a bare json.JSONDecodeError
    with pytest.raises(
        DocstringParsingException, match=r"the \(choices: \.\.\.\) of argument 'x' is not a JSON list"
    ):
        get_json_schema(f)


def test_tools_of_the_wrong_kind_are_type_errors() -> None:
    # reference: ValueError("Tools should either be a JSON schema, or a callable function ...")
    with pytest.raises(TypeError, match="Tools should either be a JSON schema"):
        tool_to_schema("get_weather")  # type: ignore[arg-type]


def test_template_errors_name_the_line_and_keep_the_original_type() -> None:
    # reference: a bare TypeError('can only concatenate str (not "list") to str')
    with pytest.raises(ChatTemplateTypeError) as caught:
        render_chat_template("\n{{ messages[0].content + [1] }}", CHAT)
    assert isinstance(caught.value, TypeError)
    assert caught.value.message == 'can only concatenate str (not "list") to str'
    assert str(caught.value).splitlines()[1] == "  line 2 of the chat template (TypeError):"


def test_strftime_now_is_read_once_per_render() -> None:
    # reference: datetime.now() at every call, so two calls can straddle a second (or midnight)
    template = "{{ strftime_now('%f') }}{% for i in range(50) %}|{{ strftime_now('%f') }}{% endfor %}"
    out = render_chat_template(template, CHAT)
    assert len(set(out.split("|"))) == 1


def test_now_pins_the_clock_only_when_it_is_a_datetime() -> None:
    codec = ChatCodec("{{ now }}|{{ strftime_now('%Y') }}")
    moment = datetime.datetime(2020, 1, 1)
    assert codec.apply_chat_template(CHAT, tokenize=False, now=moment) == "<datetime>|2020"
    # reference: "<datetime>|" and the current year; a string is an ordinary variable in both
    assert codec.apply_chat_template(CHAT, tokenize=False, now="x").startswith("x|20")


def test_header_words_inside_a_line_do_not_cut_the_description() -> None:
    # reference: "Use" and "Get weather." (its description stops at the first "Args:" or
    # "Returns:" anywhere, even inside a sentence)
    assert parse_google_docstring("Use Args: carefully.\n\nArgs:\n    x: x.")[0] == "Use Args: carefully."
    assert parse_google_docstring("Get weather. Returns: JSON.\n\nArgs:\n    x: x.")[0] == (
        "Get weather. Returns: JSON."
    )


def test_a_returns_section_at_the_start_is_read() -> None:
    # reference: its Returns: pattern needs a line before it, so the return gets no description
    assert parse_google_docstring("Returns:\n    Something.\n\nArgs:\n    x: x.") == (
        "", {"x": "x."}, "Something."
    )


@pytest.mark.parametrize("header", ["Args: ", "Arguments:", "Parameters:", "Params:", "args:"])
def test_lenient_args_headers(header: str) -> None:
    # reference: only an exact "Args:" line opens the section, so "x" has no description and it raises
    assert parse_google_docstring(f"D.\n\n{header}\n    x: x.") == ("D.", {"x": "x."}, None)


def test_a_named_template_called_file_is_not_the_default(tmp_path: Path) -> None:
    # reference: additional_chat_templates/file.jinja reaches its loader as "chat_template_file",
    # the key of chat_template.jinja, so it replaces the default ('FILE hi' below)
    (tmp_path / "additional_chat_templates").mkdir()
    (tmp_path / "chat_template.jinja").write_text("DEFAULT {{ messages[0].content }}", encoding="utf-8")
    (tmp_path / "additional_chat_templates" / "file.jinja").write_text("FILE {{ messages[0].content }}",
                                                                       encoding="utf-8")
    assert load_chat_templates(tmp_path) == {
        "default": "DEFAULT {{ messages[0].content }}", "file": "FILE {{ messages[0].content }}"
    }
    assert ChatCodec.from_pretrained(tmp_path).apply_chat_template(CHAT[:1], tokenize=False) == "DEFAULT Hi"


@pytest.mark.parametrize("content", [["a", "b"], ["a text", "b"]], ids=["plain", "containing-text"])
def test_continue_final_message_with_a_list_of_plain_strings(content: list[str]) -> None:
    # reference: "could not find any text" for the first, but a TypeError ("string indices must be
    # integers") for the second, whose string contains the word "text"
    with pytest.raises(ConversationError, match="could not find any text to continue in the final message"):
        render_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}",
                             [CHAT[0], {"role": "assistant", "content": content}],
                             continue_final_message=True)


def test_an_empty_conversation_in_a_batch_is_an_error() -> None:
    # reference: an empty conversation inside a batch is rendered (as "" by a template that only
    # loops, or it fails inside the template); alone it is refused. chatcodec refuses it everywhere.
    codec = ChatCodec("{% for m in messages %}{{ m.content }}{% endfor %}")
    with pytest.raises(ConversationError, match="cannot apply a chat template to an empty conversation"):
        codec.apply_chat_template([CHAT, []], tokenize=False)


def test_saving_keeps_the_other_keys_of_tokenizer_config_byte_for_byte(tmp_path: Path) -> None:
    # reference: save_pretrained rewrites the whole file (1e400 would come back as Infinity)
    config = '{"x": 1e400, "chat_template": "B", "eos_token": "</s>"}'
    (tmp_path / "tokenizer_config.json").write_text(config, encoding="utf-8")
    save_chat_templates("A", tmp_path)
    saved = (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8")
    assert saved == '{"x": 1e400, "eos_token": "</s>"}'
