"""Input preparation: plain-data rebuild, None-dropping, reasoning aliases, tools and documents."""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
from typing import Any

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.chat_templates.inputs import (
    ConversationError,
    alias_reasoning,
    plain_template_data,
    prepare_documents,
    prepare_messages,
    prepare_tools,
)
from chatcodec.chat_templates.render import render_chat_template


class Role(str, enum.Enum):
    USER = "user"


class Count(enum.IntEnum):
    ONE = 1


class Shade(enum.Enum):
    DARK = "dark"


@dataclasses.dataclass
class Block:
    type: str
    text: str


class Model:
    """Looks like a pydantic model: has ``model_dump``."""

    def model_dump(self) -> dict[str, Any]:
        return {"role": "user", "content": "from a model"}


class TestPlainData:
    def test_plain_values_are_copied(self) -> None:
        value = {"a": [1, 2.5, "x", True, None, {"b": (1, 2)}]}
        copy = plain_template_data(value)
        assert copy == value
        assert copy is not value
        assert copy["a"] is not value["a"]
        assert copy["a"][5]["b"] == (1, 2)

    def test_subclasses_become_their_base_type(self) -> None:
        copy = plain_template_data({"role": Role.USER, "n": Count.ONE})
        assert copy == {"role": "user", "n": 1}
        assert type(copy["role"]) is str
        assert type(copy["n"]) is int

    def test_plain_enum_becomes_its_value(self) -> None:
        # reference: "<Shade>" (the value is lost)
        assert plain_template_data({"shade": Shade.DARK}) == {"shade": "dark"}

    def test_dataclasses_and_models_become_dicts(self) -> None:
        assert plain_template_data([Block("text", "hi"), Model()]) == [
            {"type": "text", "text": "hi"},
            {"role": "user", "content": "from a model"},
        ]

    def test_anything_else_is_a_placeholder(self) -> None:
        assert plain_template_data({"image": object(), "data": b"x", "ids": {1, 2}, "fn": len}) == {
            "image": "<object>",
            "data": "<bytes>",
            "ids": "<set>",
            "fn": "<builtin_function_or_method>",
        }

    def test_mapping_keys_are_rebuilt(self) -> None:
        assert plain_template_data(types.MappingProxyType({Role.USER: 1})) == {"user": 1}

    def test_numpy_scalars_use_their_python_value(self, monkeypatch: pytest.MonkeyPatch) -> None:
        class Generic:
            def __init__(self, value: Any) -> None:
                self.value = value

            def item(self) -> Any:
                return self.value

        monkeypatch.setitem(sys.modules, "numpy", types.SimpleNamespace(generic=Generic))
        assert plain_template_data({"flag": Generic(False), "n": Generic(3)}) == {"flag": False, "n": 3}


class TestMessages:
    def test_none_values_are_dropped(self) -> None:
        messages = [{"role": "assistant", "content": None, "tool_calls": [{"id": None}]}]
        assert prepare_messages(messages) == [{"role": "assistant", "tool_calls": [{"id": None}]}]

    def test_dataclass_and_model_messages(self) -> None:
        @dataclasses.dataclass
        class Message:
            role: str
            content: str | None

        assert prepare_messages([Message("user", "hi"), Message("assistant", None), Model()]) == [
            {"role": "user", "content": "hi"},
            {"role": "assistant"},
            {"role": "user", "content": "from a model"},
        ]

    def test_a_conversation_object_is_its_messages(self) -> None:
        # as transformers 5.24's apply_chat_template (_normalize_chat_messages reads .messages)
        @dataclasses.dataclass
        class Conversation:
            messages: list[Any]

        chat = Conversation([{"role": "user", "content": "hi", "name": None}, Model()])
        assert prepare_messages(chat) == [{"role": "user", "content": "hi"},
                                          {"role": "user", "content": "from a model"}]
        template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        assert render_chat_template(template, chat) == "<user>hi<user>from a model"

    def test_multimodal_content_lists_are_kept(self) -> None:
        content = [{"type": "image", "url": "https://x/cat.png"}, Block("text", "What is it?")]
        assert prepare_messages([{"role": "user", "content": content}]) == [
            {
                "role": "user",
                "content": [
                    {"type": "image", "url": "https://x/cat.png"},
                    {"type": "text", "text": "What is it?"},
                ],
            }
        ]

    @pytest.mark.parametrize(
        ("messages", "message"),
        [
            ([], "empty conversation"),
            ("hello", "expected a list of message dicts, got str"),
            ({"role": "user"}, "expected a list of message dicts, got dict"),
            (["hello"], r"messages\[0\]: chat messages should be dicts"),
            ([{"role": "user"}, 3], r"messages\[1\]: chat messages should be dicts"),
        ],
        ids=["empty", "string", "dict", "string-message", "number-message"],
    )
    def test_unusable_conversations(self, messages: Any, message: str) -> None:
        with pytest.raises(ConversationError, match=message) as caught:
            prepare_messages(messages)
        assert isinstance(caught.value, ValueError)
        assert isinstance(caught.value, TypeError)


class TestDeepInputs:
    @staticmethod
    def nested(depth: int) -> Any:
        value: Any = "x"
        for _ in range(depth):
            value = [value]
        return value

    @pytest.mark.parametrize(
        ("where", "arguments"),
        [
            ("messages[1]", {"messages": [{"role": "user", "content": "a"},
                                          {"role": "user", "content": nested(5000)}]}),
            ("tools", {"tools": [{"type": "function", "x": nested(5000)}]}),
            ("documents", {"documents": [{"text": nested(5000)}]}),
            ("the template variable 'deep'", {"deep": nested(5000)}),
        ],
        ids=["message", "tools", "documents", "variable"],
    )
    def test_a_clear_error_instead_of_a_recursion_error(self, where: str, arguments: dict[str, Any]) -> None:
        arguments.setdefault("messages", [{"role": "user", "content": "a"}])
        with pytest.raises(ConversationError) as caught:
            render_chat_template("x", **arguments)
        assert str(caught.value) == (
            f"{where}: nested too deeply to copy for the template (past Python's recursion limit of "
            f"{sys.getrecursionlimit():,} levels)"
        )

    def test_deep_but_not_too_deep(self) -> None:
        assert render_chat_template("{{ messages[0].content|length }}",
                                    [{"role": "user", "content": self.nested(200)}]) == "1"


class TestReasoningAliases:
    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ({"reasoning_content": "r"}, {"reasoning_content": "r", "thinking": "r"}),
            ({"thinking": "t"}, {"reasoning_content": "t", "thinking": "t"}),
            ({"reasoning": "x"}, {"reasoning": "x", "reasoning_content": "x", "thinking": "x"}),
            ({"reasoning_content": "r", "thinking": "t"}, {"reasoning_content": "r", "thinking": "t"}),
            ({"reasoning_content": ""}, {"reasoning_content": "", "thinking": ""}),
            ({"content": "c"}, {"content": "c"}),
        ],
        ids=["reasoning_content", "thinking", "reasoning", "both-kept", "only-empty", "none"],
    )
    def test_aliases(self, given: dict[str, Any], expected: dict[str, Any]) -> None:
        assert alias_reasoning(dict(given)) == expected

    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ({"reasoning_content": "", "thinking": "t"}, {"reasoning_content": "t", "thinking": "t"}),
            (
                {"reasoning_content": "", "reasoning": "x"},
                {"reasoning_content": "x", "thinking": "x", "reasoning": "x"},
            ),
            (
                {"thinking": "", "reasoning": "x"},
                {"reasoning_content": "x", "thinking": "x", "reasoning": "x"},
            ),
        ],
        ids=["empty-rc-thinking", "empty-rc-reasoning", "empty-thinking-reasoning"],
    )
    def test_an_empty_string_never_hides_a_non_empty_alias(
        self, given: dict[str, Any], expected: dict[str, Any]
    ) -> None:
        # reference: the first non-None value wins, so reasoning_content stays "" here
        assert alias_reasoning(dict(given)) == expected

    @pytest.mark.parametrize(
        ("given", "keys"),
        [
            (
                {"role": "assistant", "content": "x", "reasoning": "r"},
                ["thinking", "role", "content", "reasoning", "reasoning_content"],
            ),
            (
                {"role": "assistant", "reasoning_content": "a", "content": "x", "thinking": "t"},
                ["thinking", "role", "reasoning_content", "content"],
            ),
            (
                {"content": "x", "reasoning_content": "", "thinking": "t"},
                ["thinking", "content", "reasoning_content"],
            ),
        ],
        ids=["reasoning", "both", "empty-reasoning-content"],
    )
    def test_key_order_is_the_references(self, given: dict[str, Any], keys: list[str]) -> None:
        # reference: {"thinking": r, **message, "reasoning_content": r}; templates that print a
        # message with |tojson see this order
        assert list(alias_reasoning(dict(given))) == keys

    def test_tojson_of_an_aliased_message(self) -> None:
        out = render_chat_template(
            "{{ messages[0]|tojson }}", [{"role": "assistant", "content": "x", "reasoning": "r"}]
        )
        assert out == (  # the reference's output
            '{"thinking": "r", "role": "assistant", "content": "x", "reasoning": "r", '
            '"reasoning_content": "r"}'
        )

    def test_none_reasoning_is_dropped_before_aliasing(self) -> None:
        assert prepare_messages([{"role": "assistant", "reasoning_content": None, "thinking": "t"}]) == [
            {"role": "assistant", "thinking": "t", "reasoning_content": "t"}
        ]

    def test_templates_see_both_names(self) -> None:
        out = render_chat_template(
            "{{ messages[0].reasoning_content }}|{{ messages[0].thinking }}",
            [{"role": "assistant", "reasoning": "because", "content": "x"}],
        )
        assert out == "because|because"


def weather(city: str) -> str:
    """Get the weather.

    Args:
        city: the city
    """
    return city


class TestToolsAndDocuments:
    def test_functions_become_schemas(self) -> None:
        schema = {"type": "function", "function": {"name": "x", "parameters": {}}}
        assert prepare_tools([schema, weather]) == [
            schema,
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Get the weather.",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string", "description": "the city"}},
                        "required": ["city"],
                    },
                    "return": {"type": "string"},
                },
            },
        ]

    def test_none_stays_none(self) -> None:
        assert prepare_tools(None) is None
        assert prepare_documents(None) is None

    def test_tools_must_be_a_list(self) -> None:
        with pytest.raises(ConversationError, match="tools: expected a list"):
            prepare_tools({"type": "function"})  # type: ignore[arg-type]

    def test_a_tool_of_the_wrong_kind(self) -> None:
        with pytest.raises(ConversationError) as caught:
            prepare_tools([weather, 1])  # type: ignore[list-item]
        assert isinstance(caught.value, TypeError)  # the type tool_to_schema raises
        assert str(caught.value) == (
            "tools[1]: expected a JSON schema dict or a Python function, got int. Tools should either be a "
            "JSON schema, or a function with type hints and a docstring suitable for conversion."
        )

    def test_documents_keep_their_tuple(self) -> None:
        documents = ({"title": "T", "text": "body"},)
        assert prepare_documents(documents) == ({"title": "T", "text": "body"},)
        # the reference prints a tuple of documents as a tuple
        assert render_chat_template("{{ documents }}", [{"role": "user", "content": "hi"}],
                                    documents=documents) == "({'title': 'T', 'text': 'body'},)"

    def test_documents(self) -> None:
        documents = [{"title": "T", "text": "body", "score": Count.ONE}]
        assert prepare_documents(documents) == [{"title": "T", "text": "body", "score": 1}]
        with pytest.raises(ConversationError, match=r"documents\[1\]: documents should be a list of dicts"):
            prepare_documents([{"title": "T"}, "text"])
        with pytest.raises(ConversationError, match="documents: expected a list of dicts"):
            prepare_documents("text")  # type: ignore[arg-type]

    def test_templates_receive_tools_as_schemas(self) -> None:
        out = render_chat_template(
            "{% for t in tools %}{{ t.function.name }}:{{ t.function.parameters.required|join }}{% endfor %}",
            [{"role": "user", "content": "hi"}],
            tools=[weather],
        )
        assert out == "weather:city"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(item for child in value.values() for item in _containers(child))]
    if isinstance(value, list):
        return [value, *(item for child in value for item in _containers(child))]
    return []


@given(_json)
def test_plain_data_is_an_equal_copy_sharing_no_container(value: Any) -> None:
    copy = plain_template_data(value)
    assert copy == value
    originals = {id(container) for container in _containers(value)}
    assert not originals & {id(container) for container in _containers(copy)}


def test_a_key_dropped_as_none_is_named_when_the_template_then_misses_it() -> None:
    """``{"role": "system", "content": None}`` failed naming only the template line."""
    template = "{{ 'system: ' + messages[0].content }}"
    messages = [{"role": "system", "content": None}, {"role": "user", "content": "hi"}]
    with pytest.raises(jinja2.UndefinedError) as raised:
        render_chat_template(template, messages)
    assert raised.value.message == "'dict object' has no attribute 'content'"
    assert str(raised.value) == (
        "'dict object' has no attribute 'content'\n"
        "  line 1 of the chat template (UndefinedError):\n"
        "    {{ 'system: ' + messages[0].content }}\n"
        "messages[0] (system) has content: None, and keys set to None are left out before rendering "
        "(as transformers does), so the template found no 'content': give a value "
        "(\"\" for an empty content)")


def test_an_undefined_key_not_dropped_as_none_gets_no_note() -> None:
    with pytest.raises(jinja2.UndefinedError) as raised:
        render_chat_template("{{ 'x' + messages[0].name.x }}",
                             [{"role": "user", "content": None, "name": {}}])
    assert str(raised.value).splitlines()[-1] == "    {{ 'x' + messages[0].name.x }}"
