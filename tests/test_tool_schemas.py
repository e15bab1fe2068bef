"""get_json_schema: every supported type hint and docstring form, and every error.

Expected schemas are literals; where chatcodec deliberately differs from the reference
(transformers 5.24), the reference's output is noted next to the test.
"""

from __future__ import annotations

import enum
import string
from typing import Any, Literal, Optional, Union

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import get_json_schema
from chatcodec.errors import DocstringParsingException, TypeHintParsingException
from chatcodec.tool_schemas import parse_google_docstring, tool_to_schema


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    A = "a"
    B = 1


class Empty(enum.Enum):
    pass


class Opaque(enum.Enum):
    X = (1, 2)


class Custom:
    pass


def _parameters(func: Any) -> dict[str, Any]:
    return get_json_schema(func)["function"]["parameters"]


def _property(hint_func: Any) -> dict[str, Any]:
    schema: dict[str, Any] = _parameters(hint_func)["properties"]["x"]
    del schema["description"]
    return schema


def _one(hint: Any) -> Any:
    """A function ``f(x: hint)`` with a docstring."""

    def f(x):  # type: ignore[no-untyped-def]
        """Take x.

        Args:
            x: the value
        """

    f.__annotations__ = {"x": hint}
    return f


class TestTypeHints:
    @pytest.mark.parametrize(
        ("hint", "expected"),
        [
            (str, {"type": "string"}),
            (int, {"type": "integer"}),
            (float, {"type": "number"}),
            (bool, {"type": "boolean"}),
            (type(None), {"type": "null"}),
            (Any, {}),
            (list, {"type": "array"}),
            (dict, {"type": "object"}),
            (tuple, {"type": "array"}),
            (list[int], {"type": "array", "items": {"type": "integer"}}),
            (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
            (tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}),
            (
                list[dict[str, list[int]]],
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": {"type": "array", "items": {"type": "integer"}},
                    },
                },
            ),
        ],
        ids=[
            "str",
            "int",
            "float",
            "bool",
            "None",
            "Any",
            "list",
            "dict",
            "tuple",
            "list[int]",
            "dict[str,float]",
            "tuple[int,str]",
            "nested",
        ],
    )
    def test_basic_and_generic_hints(self, hint: Any, expected: dict[str, Any]) -> None:
        assert _property(_one(hint)) == expected

    @pytest.mark.parametrize(
        ("hint", "expected"),
        [
            (Union[int, str], {"type": ["integer", "string"]}),  # noqa: UP007 - the typing form is what is tested
            (int | str, {"type": ["integer", "string"]}),
            (Optional[str], {"type": "string", "nullable": True}),  # noqa: UP045
            (int | None, {"type": "integer", "nullable": True}),
            (list | tuple, {"type": "array"}),
            (
                list[int] | str,
                {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}]},
            ),
            (
                list[int] | str | None,
                {
                    "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}],
                    "nullable": True,
                },
            ),
        ],
        ids=["Union", "pipe", "Optional", "pipe-None", "same-type-deduplicated", "anyOf", "anyOf-nullable"],
    )
    def test_unions(self, hint: Any, expected: dict[str, Any]) -> None:
        assert _property(_one(hint)) == expected

    @pytest.mark.parametrize(
        ("hint", "expected"),
        [
            (Color, {"type": "string", "enum": ["red", "green"]}),
            (Level, {"type": "integer", "enum": [1, 2]}),
            (Mixed, {"type": ["string", "integer"], "enum": ["a", 1]}),
            (Literal["x", 1, True], {"type": ["string", "integer", "boolean"], "enum": ["x", 1, True]}),
            (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        ],
        ids=["Enum", "IntEnum", "mixed-Enum", "mixed-Literal", "Literal"],
    )
    def test_enums_and_literals(self, hint: Any, expected: dict[str, Any]) -> None:
        assert _property(_one(hint)) == expected

    def test_optional_literal_puts_null_in_the_enum(self) -> None:
        # reference: {"type": "string", "enum": ["a", "b"], "nullable": True} (null can never be produced)
        assert _property(_one(Optional[Literal["a", "b"]])) == {  # noqa: UP045
            "type": "string",
            "enum": ["a", "b", None],
            "nullable": True,
        }

    def test_optional_enum_puts_null_in_the_enum(self) -> None:
        assert _property(_one(Color | None)) == {
            "type": "string",
            "enum": ["red", "green", None],
            "nullable": True,
        }

    def test_string_annotations_are_resolved(self) -> None:
        def f(x: list[Color], y: Optional[int] = None) -> None:  # noqa: UP045
            """F.

            Args:
                x: colors
                y: a number
            """

        assert _parameters(f) == {
            "type": "object",
            "properties": {
                "x": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["red", "green"]},
                    "description": "colors",
                },
                "y": {"type": "integer", "nullable": True, "description": "a number"},
            },
            "required": ["x"],
        }


def order(drink: str, size: int = 1, note: str | None = None) -> str:
    """Order a drink.

    The description may span
    several lines.

    Args:
        drink: The drink to order (choices: ["tea", "coffee "])
        size: The size,
            on a continuation line (choices: [1, 2, 3])
        note: An optional note (choices: ["hot", "cold"])

    Returns:
        The order id,
        on two lines.

    Raises:
        ValueError: never
    """
    return drink


class TestDocstrings:
    def test_full_schema(self) -> None:
        assert get_json_schema(order) == {
            "type": "function",
            "function": {
                "name": "order",
                "description": "Order a drink.\n\nThe description may span\nseveral lines.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "drink": {
                            "type": "string",
                            "enum": ["tea", "coffee"],
                            "description": "The drink to order",
                        },
                        "size": {
                            "type": "integer",
                            "enum": [1, 2, 3],
                            "description": "The size, on a continuation line",
                        },
                        "note": {  # choices give the enum as written: no null (the reference's output)
                            "type": "string",
                            "nullable": True,
                            "enum": ["hot", "cold"],
                            "description": "An optional note",
                        },
                    },
                    "required": ["drink"],
                },
                "return": {"type": "string", "description": "The order id,\n    on two lines."},
            },
        }

    def test_typed_argument_lines(self) -> None:
        # the same in transformers 5.24 (5.23 did not recognise "x (int): ..." and raised)
        def f(x: int, y: str = "") -> None:
            """F.

            Args:
                x (int): the x
                    continued
                y (str, optional): the y
            """

        properties = _parameters(f)["properties"]
        assert properties["x"]["description"] == "the x continued"
        assert properties["y"]["description"] == "the y"

    def test_return_without_description_and_without_hint(self) -> None:
        def with_hint(x: int) -> list[int]:
            """F.

            Args:
                x: the x
            """
            return [x]

        def without_hint(x: int):  # type: ignore[no-untyped-def]
            """F.

            Args:
                x: the x
            """

        assert get_json_schema(with_hint)["function"]["return"] == {
            "type": "array",
            "items": {"type": "integer"},
        }
        assert "return" not in get_json_schema(without_hint)["function"]

    def test_unconvertible_return_hint_is_left_out(self) -> None:
        def f(x: int) -> Custom:
            """F.

            Args:
                x: the x
            """
            return Custom()

        assert "return" not in get_json_schema(f)["function"]

    def test_no_arguments_has_no_required_list(self) -> None:
        def ping():  # type: ignore[no-untyped-def]
            """Ping the server."""

        assert get_json_schema(ping) == {
            "type": "function",
            "function": {
                "name": "ping",
                "description": "Ping the server.",
                "parameters": {"type": "object", "properties": {}},
            },
        }

    def test_none_return_hint_is_a_null_return(self) -> None:
        def ping() -> None:
            """Ping the server."""

        assert get_json_schema(ping)["function"]["return"] == {"type": "null"}

    def test_args_and_kwargs_are_left_out(self) -> None:
        # reference: raises "no description for the argument 'args'", or with descriptions makes
        # "args" and "kwargs" required properties
        def f(a: int, *args: int, **kwargs: str) -> None:
            """F.

            Args:
                a: an a
                *args: extra
                **kwargs: more
            """

        assert _parameters(f) == {
            "type": "object",
            "properties": {"a": {"type": "integer", "description": "an a"}},
            "required": ["a"],
        }

    def test_args_need_no_description(self) -> None:
        def f(a: int, *rest: int) -> None:
            """F.

            Args:
                a: an a
            """

        assert _parameters(f)["required"] == ["a"]

    @pytest.mark.parametrize(
        "header", ["Note", "Notes", "Example", "Examples", "Warning", "Warnings", "Attributes", "Todo",
                   "References", "See Also", "Yields"]
    )
    def test_sections_after_the_description_stay_in_it(self, header: str) -> None:
        # reference: the description runs until Args:, Returns: or Raises:
        doc = f"Do a thing.\n\n{header}:\n    Be careful with x.\n\nArgs:\n    x: The x."
        assert parse_google_docstring(doc) == (
            f"Do a thing.\n\n{header}:\n    Be careful with x.", {"x": "The x."}, None
        )

    @pytest.mark.parametrize(
        "name", ["params", "note", "example", "returns", "args", "raises", "yields", "attributes"]
    )
    def test_arguments_named_like_headers(self, name: str) -> None:
        doc = f"Send a query.\n\nArgs:\n    {name}:\n        Query {name}.\n    other:\n        More.\n"
        expected = {name: f"Query {name}.", "other": "More."}
        assert parse_google_docstring(doc) == ("Send a query.", expected, None)

    def test_an_argument_called_params_with_its_description_below(self) -> None:
        def send(params: dict) -> None:  # type: ignore[type-arg]
            """Send a query.

            Args:
                params:
                    Query parameters.
            """

        assert _parameters(send)["properties"] == {
            "params": {"type": "object", "description": "Query parameters."}
        }

    def test_returns_runs_until_raises(self) -> None:
        # reference: "Returns:" text stops only at "Raises:" (or the end), sections in between included
        doc = (
            "Do.\n\nArgs:\n    x: The x.\n\nReturns:\n    A string.\n\nExample:\n    >>> f(1)\n\n"
            "Raises:\n    E: e"
        )
        assert parse_google_docstring(doc)[2] == "A string.\n\nExample:\n    >>> f(1)"

    def test_sections_after_args_end_them(self) -> None:
        doc = "Do.\n\nArgs:\n    x: The x.\n\nExamples:\n    >>> f(1)\n\nYields:\n    Values."
        assert parse_google_docstring(doc) == ("Do.", {"x": "The x."}, None)

    def test_yields_is_not_returns(self) -> None:
        def count(x: int) -> int:
            """Count.

            Args:
                x: The x.

            Yields:
                Values.
            """
            return x

        assert get_json_schema(count)["function"]["return"] == {"type": "integer"}  # the reference's

    def test_star_args_line_does_not_leak_into_the_previous_description(self) -> None:
        _, args, _ = parse_google_docstring("F.\n\nArgs:\n    x: The x.\n    *args: more")
        assert args == {"x": "The x.", "args": "more"}


class Tools:
    def search(self, query: str) -> list[str]:
        """Search.

        Args:
            query: what to look for
        """
        return []

    @classmethod
    def create(cls, name: str) -> None:
        """Create.

        Args:
            name: the name
        """

    @staticmethod
    def helper(value: int) -> None:
        """Help.

        Args:
            value: the value
        """


class TestMethods:
    @pytest.mark.parametrize(
        ("method", "arg"),
        [
            (Tools().search, "query"),
            (Tools.search, "query"),
            (Tools.create, "name"),
            (Tools.helper, "value"),
        ],
        ids=["bound", "unbound-self", "classmethod", "staticmethod"],
    )
    def test_receiver_is_skipped(self, method: Any, arg: str) -> None:
        parameters = _parameters(method)
        assert list(parameters["properties"]) == [arg]
        assert parameters["required"] == [arg]


class TestErrors:
    def test_no_docstring(self) -> None:
        def f(x: int) -> None:
            pass

        with pytest.raises(DocstringParsingException, match=r"get_json_schema\(f\): .*no docstring"):
            get_json_schema(f)

    def test_missing_description(self) -> None:
        def f(x: int, y: int) -> None:
            """F.

            Args:
                x: the x
            """

        with pytest.raises(DocstringParsingException, match="no description for the argument 'y'"):
            get_json_schema(f)

    def test_missing_type_hint(self) -> None:
        def f(x, y: int) -> None:  # type: ignore[no-untyped-def]
            """F.

            Args:
                x: the x
                y: the y
            """

        with pytest.raises(TypeHintParsingException, match="argument 'x' is missing a type hint"):
            get_json_schema(f)

    @pytest.mark.parametrize(
        ("hint", "message"),
        [
            (Custom, "cannot convert the type hint"),
            (Empty, "has no members"),
            (Opaque, "not JSON scalars"),
            (Literal[b"x"], "Literal values must be"),
            (tuple[int], "tuple with a single element"),
            (tuple[int, ...], r"tuple\[X, \.\.\.\] is not supported"),
            (set[int], "cannot convert the type hint"),
        ],
        ids=[
            "custom-class",
            "empty-Enum",
            "non-scalar-Enum",
            "non-scalar-Literal",
            "one-tuple",
            "tuple-ellipsis",
            "set",
        ],
    )
    def test_unsupported_hints(self, hint: Any, message: str) -> None:
        with pytest.raises(TypeHintParsingException, match=message) as caught:
            get_json_schema(_one(hint))
        assert "argument 'x'" in str(caught.value)

    @pytest.mark.parametrize(
        ("choices", "message"),
        [
            ('["a", ', "is not a JSON list"),
            ('{"a": 1}', "must be a JSON list"),
        ],
        ids=["invalid-JSON", "not-a-list"],
    )
    def test_bad_choices(self, choices: str, message: str) -> None:
        def f(x: str) -> None:
            pass

        f.__doc__ = f"F.\n\nArgs:\n    x: the x (choices: {choices})\n"
        with pytest.raises(DocstringParsingException, match=message):
            get_json_schema(f)

    def test_errors_are_value_errors(self) -> None:
        assert issubclass(TypeHintParsingException, ValueError)
        assert issubclass(DocstringParsingException, ValueError)


class TestToolToSchema:
    def test_dict_passes_through_unchanged(self) -> None:
        tool = {"type": "function", "function": {"name": "x"}}
        assert tool_to_schema(tool) is tool

    def test_function_is_converted(self) -> None:
        assert tool_to_schema(order)["function"]["name"] == "order"

    def test_method_is_converted(self) -> None:
        assert tool_to_schema(Tools().search)["function"]["name"] == "search"

    @pytest.mark.parametrize(
        "tool", ["get_weather", 3, Custom(), Custom], ids=["str", "int", "object", "class"]
    )
    def test_anything_else_is_refused(self, tool: Any) -> None:
        with pytest.raises(TypeError, match="expected a JSON schema dict or a Python function"):
            tool_to_schema(tool)


_names = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12).filter(
    lambda name: (
        name.lower()
        not in {
            "args",
            "arguments",
            "parameters",
            "params",
            "returns",
            "return",
            "yields",
            "raises",
            "examples",
            "example",
            "note",
            "notes",
            "warning",
            "warnings",
            "todo",
            "references",
            "attributes",
        }
    )
)
_words = (
    st.text(alphabet=string.ascii_letters + string.digits + " ,.;'-", min_size=1, max_size=40)
    .map(str.strip)
    .filter(lambda text: text and ":" not in text)
)


@given(
    st.dictionaries(st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12),
                    st.lists(_words, min_size=1, max_size=3), min_size=1, max_size=5)
)
def test_descriptions_below_their_argument_round_trip(descriptions: dict[str, list[str]]) -> None:
    """A description on the lines below its argument comes back too, whatever the argument's name
    (``params``, ``note``, ``returns``, ... included)."""
    lines = ["Summary.", "", "Args:"]
    for name, parts in descriptions.items():
        lines.append(f"    {name}:")
        lines.extend(f"        {part}" for part in parts)
    _, args, returns = parse_google_docstring("\n".join(lines))
    assert args == {name: " ".join(parts) for name, parts in descriptions.items()}
    assert returns is None


@given(st.dictionaries(_names, st.lists(_words, min_size=1, max_size=3), min_size=1, max_size=5))
def test_argument_descriptions_round_trip(descriptions: dict[str, list[str]]) -> None:
    """Every argument's description comes back, its continuation lines joined with single spaces."""
    lines = ["Summary.", "", "Args:"]
    for name, parts in descriptions.items():
        lines.append(f"    {name}: {parts[0]}")
        lines.extend(f"        {part}" for part in parts[1:])
    _, args, returns = parse_google_docstring("\n".join(lines))
    assert args == {name: " ".join(parts) for name, parts in descriptions.items()}
    assert returns is None
