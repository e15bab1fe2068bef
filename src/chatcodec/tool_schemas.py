"""Tools as JSON schemas: ``get_json_schema(func)`` and the normalisation of ``tools=`` arguments.

Shared by both halves: chat templates receive tools as JSON schemas, and response parsing types
tool-call arguments with the called tool's parameter schema. Pure Python (no jinja2).

``get_json_schema`` follows the reference (transformers 5.24 ``get_json_schema``): type hints give
the types, a Google-style docstring gives the descriptions, and argument lines with a type,
``x (int): ...`` or ``x (int, optional): ...``, are understood (the hint still gives the type; 5.23
raised). Beyond the reference (SPEC §2.4):

* a space before the colon (``x (int) : ...``) is accepted (5.24 finds no description and raises);
* a ``Returns:`` text that starts with the return type, Google style (``int: The sum.``), loses
  that prefix, which the schema's ``type`` already says (5.24 keeps ``"int: The sum."``); only a
  prefix naming a type is removed (``Note: ...`` stays);
* ``Optional[Literal[...]]`` / ``Optional[SomeEnum]`` put ``null`` into ``enum`` too, so the model
  can produce the null the schema allows;
* ``*args`` and ``**kwargs`` are left out of the schema (a tool call passes a JSON object of named
  arguments, so neither can be filled), and need no description. The reference makes them required
  properties;
* section headers are whole lines: ``Use Args: carefully.`` is description text (the reference cuts
  the description at ``Use``), a ``Returns:`` section that opens the docstring is read (the
  reference needs a line before it), and ``Args:`` may be spelled ``Arguments:``, ``Parameters:``,
  ``Params:``, in any case or with trailing spaces (the reference then finds no argument and
  raises).
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from chatcodec.errors import DocstringParsingException, TypeHintParsingException

__all__ = ["get_json_schema", "parse_google_docstring", "tool_to_schema"]

#: Python types that can appear in a JSON ``enum``, with their JSON-schema type names.
_JSON_SCALAR_TYPES: dict[type, str] = {int: "integer", float: "number", str: "string", bool: "boolean",
                                       type(None): "null"}

#: Bare type hints and their JSON schemas.
_BASIC_SCHEMAS: dict[Any, dict[str, Any]] = {
    int: {"type": "integer"}, float: {"type": "number"}, str: {"type": "string"},
    bool: {"type": "boolean"}, type(None): {"type": "null"}, list: {"type": "array"},
    tuple: {"type": "array"}, dict: {"type": "object"}, Any: {},
}

_ARGS_HEADERS = {"args", "arguments", "parameters", "params"}
_RETURNS_HEADERS = {"returns", "return"}
#: Headers that end an ``Args:`` section (elsewhere they are part of the text, as in the reference).
_OTHER_HEADERS = {"examples", "example", "note", "notes", "warning", "warnings", "see also", "todo",
                  "references", "attributes", "yields", "yield"}
_HEADER = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?):\s*$")
_ARG_LINE = re.compile(r"^(\s*)(\*{0,2})(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_CHOICES = re.compile(r"\(choices:\s*(.*?)\)\s*$", re.IGNORECASE | re.DOTALL)


def tool_to_schema(tool: dict[str, Any] | Callable[..., Any]) -> dict[str, Any]:
    """Return ``tool`` as a JSON schema: dicts pass through, functions and methods are converted.

    Args:
        tool: a JSON schema, or a function or method with type hints and a Google docstring.

    Returns:
        ``tool`` itself when it is a dict, else the schema :func:`get_json_schema` builds.

    Raises:
        TypeError: ``tool`` is neither a dict nor a function or method.
        TypeHintParsingException, DocstringParsingException: the function cannot be converted.
    """
    if isinstance(tool, dict):
        return tool
    if inspect.isfunction(tool) or inspect.ismethod(tool):
        return get_json_schema(tool)
    raise TypeError(
        f"tools: expected a JSON schema dict or a Python function, got {type(tool).__name__}. Tools should "
        "either be a JSON schema, or a function with type hints and a docstring suitable for conversion."
    )


def get_json_schema(func: Callable[..., Any]) -> dict[str, Any]:
    """Build a tool's JSON schema from a Python function's type hints and Google-style docstring.

    The result is ``{"type": "function", "function": {"name", "description", "parameters":
    {"type": "object", "properties", "required"}}}`` plus ``"return"`` when the return hint can
    be converted. An argument description may end with ``(choices: ["a", "b"])``, which becomes
    the property's ``enum``. Methods skip an unannotated ``self`` / ``cls``.

    Args:
        func: the function or method.

    Returns:
        The tool's JSON schema.

    Raises:
        DocstringParsingException: no docstring, or an argument without a description.
        TypeHintParsingException: an argument without a type hint, or a hint with no JSON schema.

    Example:
        >>> def multiply(x: float, y: float = 2.0) -> float:
        ...     '''Multiply two numbers.
        ...
        ...     Args:
        ...         x: The first number.
        ...         y: The second number.
        ...     '''
        ...     return x * y
        >>> get_json_schema(multiply)["function"]["parameters"]["required"]
        ['x']
    """
    name = getattr(func, "__name__", "operation")
    doc = inspect.getdoc(func)
    if not doc or not doc.strip():
        raise DocstringParsingException(
            f"get_json_schema({name}): cannot generate a JSON schema because the function has no docstring. "
            "Add a Google-style docstring with a description and an Args: section."
        )
    description, arg_docs, returns_doc = parse_google_docstring(doc.strip())
    parameters, return_schema = _schema_from_hints(func, name)
    for arg, schema in parameters["properties"].items():
        if arg not in arg_docs:
            raise DocstringParsingException(
                f"get_json_schema({name}): the docstring has no description for the argument '{arg}'. "
                f"Add a line '{arg}: <description>' to its Args: section."
            )
        _describe(schema, arg_docs[arg], name, arg)
    function: dict[str, Any] = {"name": name, "description": description, "parameters": parameters}
    if return_schema is not None:
        if returns_doc is not None:
            hint = typing.get_type_hints(func)["return"]
            return_schema["description"] = _without_type_prefix(returns_doc, hint)
        function["return"] = return_schema
    return {"type": "function", "function": function}


#: Names a Google-style ``Returns:`` type prefix may start with (besides the return hint's own name).
_TYPE_NAMES = frozenset({
    "int", "float", "str", "bool", "None", "list", "dict", "tuple", "set", "frozenset", "bytes", "object",
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "Literal", "Sequence", "Mapping", "Iterable",
    "typing",
})
_TYPE_NAME = r"[A-Za-z_][\w.]*(?:\[[^\n:]*\])?"  # int, typing.List[int], dict[str, Any]
_TYPE_PREFIX = re.compile(rf"(?P<type>{_TYPE_NAME}(?:\s*\|\s*{_TYPE_NAME})*)\s*:\s+(?P<rest>.*)", re.DOTALL)


def _without_type_prefix(text: str, hint: Any) -> str:
    """``Returns:`` text without a leading ``type:`` that names a type (``int: The sum.`` → ``The sum.``).

    The prefix's first name must be a builtin or typing name (:data:`_TYPE_NAMES`) or the return
    hint's own name (an Enum class), so prose such as ``Note: ...`` is kept.
    """
    match = _TYPE_PREFIX.fullmatch(text)
    if match is None:
        return text
    first = re.split(r"[\[.|\s]", match.group("type"), maxsplit=1)[0]
    if first not in _TYPE_NAMES and first != getattr(hint, "__name__", None):
        return text
    return match.group("rest")


def _describe(schema: dict[str, Any], text: str, name: str, arg: str) -> None:
    choices = _CHOICES.search(text)
    if choices:
        try:
            values = json.loads(choices.group(1))
        except json.JSONDecodeError as error:
            raise DocstringParsingException(
                f"get_json_schema({name}): the (choices: ...) of argument '{arg}' is not a JSON list: {error}"
            ) from None
        if not isinstance(values, list):
            raise DocstringParsingException(
                f"get_json_schema({name}): the (choices: ...) of argument '{arg}' must be a JSON list"
            )
        schema["enum"] = [value.strip() if isinstance(value, str) else value for value in values]
        text = text[: choices.start()].strip()
    schema["description"] = text


def _schema_from_hints(func: Callable[..., Any], name: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``parameters`` object and the return schema (or ``None``) from ``func``'s hints."""
    hints = typing.get_type_hints(func)
    params = list(inspect.signature(func).parameters.values())
    if params and params[0].name in ("self", "cls") and params[0].annotation is inspect.Parameter.empty:
        params = params[1:]
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in params:
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue  # cannot be filled from a JSON object of named arguments
        if param.name not in hints:
            raise TypeHintParsingException(
                f"get_json_schema({name}): argument '{param.name}' is missing a type hint. "
                "Annotate it (e.g. 'x: int')."
            )
        properties[param.name] = _parse_hint(hints[param.name], name, param.name)
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return_schema = None
    if "return" in hints:
        try:
            return_schema = _parse_hint(hints["return"], name, "return")
        except TypeHintParsingException:
            return_schema = None  # the model never produces the return value: leave it out
    return parameters, return_schema


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = list(dict.fromkeys(_JSON_SCALAR_TYPES[type(value)] for value in values))
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}


def _parse_hint(hint: Any, name: str, arg: str) -> dict[str, Any]:
    """The JSON schema of one type hint (``arg`` names the argument in errors)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    where = f"get_json_schema({name}): argument '{arg}'"
    if origin is None and isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_class_schema(hint, where)
    if origin is None:
        if hint in _BASIC_SCHEMAS:
            return dict(_BASIC_SCHEMAS[hint])
        raise TypeHintParsingException(
            f"{where}: cannot convert the type hint {hint!r} to a JSON schema (a custom class?). Supported: "
            "str, int, float, bool, None, Any, Enum classes, Literal, and list, tuple, dict, Union and "
            "Optional of those. For anything else, write the tool's JSON schema by hand."
        )
    if origin is typing.Union or origin is types.UnionType:
        return _union_schema(hint, args, name, arg)
    if origin is typing.Literal and args:
        if any(type(value) not in _JSON_SCALAR_TYPES for value in args):
            raise TypeHintParsingException(
                f"{where}: typing.Literal values must be str, int, float, bool or None, got {hint!r}"
            )
        return _enum_schema(list(args))
    if origin is list:
        return {"type": "array", "items": _parse_hint(args[0], name, arg)} if args else {"type": "array"}
    if origin is tuple:
        return _tuple_schema(hint, args, name, arg)
    if origin is dict:
        schema: dict[str, Any] = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _parse_hint(args[1], name, arg)
        return schema
    raise TypeHintParsingException(f"{where}: cannot convert the type hint {hint!r} to a JSON schema")


def _enum_class_schema(hint: type[enum.Enum], where: str) -> dict[str, Any]:
    values = [member.value for member in hint]
    if not values:
        raise TypeHintParsingException(f"{where}: the Enum {hint.__name__} has no members")
    if any(type(value) not in _JSON_SCALAR_TYPES for value in values):
        raise TypeHintParsingException(
            f"{where}: the Enum {hint.__name__} has member values that are not JSON scalars ({values!r}); "
            "member values must be int, float, str, bool or None"
        )
    return _enum_schema(values)


def _union_schema(hint: Any, args: tuple[Any, ...], name: str, arg: str) -> dict[str, Any]:
    subtypes = [_parse_hint(sub, name, arg) for sub in args if sub is not type(None)]
    schema: dict[str, Any]
    if len(subtypes) == 1:
        schema = subtypes[0]
    elif all(sub.keys() == {"type"} and isinstance(sub["type"], str) for sub in subtypes):
        kinds = sorted({sub["type"] for sub in subtypes})
        schema = {"type": kinds[0] if len(kinds) == 1 else kinds}
    else:
        schema = {"anyOf": subtypes}
    if type(None) in args:
        schema["nullable"] = True
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
    return schema


def _tuple_schema(hint: Any, args: tuple[Any, ...], name: str, arg: str) -> dict[str, Any]:
    where = f"get_json_schema({name}): argument '{arg}'"
    if not args:
        return {"type": "array"}
    if len(args) == 1:
        raise TypeHintParsingException(
            f"{where}: {str(hint).replace('typing.', '')} is a tuple with a single element; use "
            "list[...] for several values, or the element type itself for one"
        )
    if ... in args:
        raise TypeHintParsingException(
            f"{where}: tuple[X, ...] is not supported; use list[X] for variable length"
        )
    return {"type": "array", "prefixItems": [_parse_hint(sub, name, arg) for sub in args]}


def parse_google_docstring(doc: str) -> tuple[str, dict[str, str], str | None]:
    """Split a Google-style docstring into its description, argument descriptions and return text.

    Sections as the reference reads them: the description runs until an ``Args:``, ``Returns:``
    or ``Raises:`` header (a ``Note:`` or ``Example:`` section before those stays in it); the
    returns text runs until ``Raises:`` (an ``Example:`` after it stays in it); any other header
    ends the ``Args:`` section. Headers stand alone on their line, and inside a section only a
    line indented no deeper than the section's own header is one, so an argument called
    ``params`` or ``note`` with its description on the next line is an argument.

    Args:
        doc: the docstring, dedented (``inspect.getdoc``).

    Returns:
        ``(description, {argument: description}, returns)``. Argument descriptions are joined onto
        one line; the description and the returns text keep their line breaks (as the reference).
        ``returns`` is ``None`` without a ``Returns:`` section.
    """
    sections: list[tuple[str, int, list[str]]] = [("description", -1, [])]
    for line in doc.splitlines():
        kind = _section_header(line, sections[-1][0], sections[-1][1])
        if kind is None:
            sections[-1][2].append(line)
        else:
            sections.append((kind, len(line) - len(line.lstrip()), []))
    description = "\n".join(sections[0][2]).strip()
    arg_docs: dict[str, str] = {}
    returns: str | None = None
    for kind, _, body in sections[1:]:
        if kind == "args":
            arg_docs.update(_parse_args(body))
        elif kind == "returns" and returns is None:
            returns = "\n".join(body).strip()
    return description, arg_docs, returns


def _section_header(line: str, current: str, current_indent: int) -> str | None:
    """The kind of section ``line`` opens (``"args"``, ``"returns"``, ``"raises"``, ``"other"``),
    or ``None`` when it is a line of the ``current`` section."""
    header = _HEADER.match(line)
    if header is None:
        return None
    if current != "description" and len(line) - len(line.lstrip()) > current_indent:
        return None  # deeper than the section's header: an argument name, or text
    title = header.group(1).strip().lower()
    if title in _ARGS_HEADERS:
        return "args"
    if title in _RETURNS_HEADERS:
        return "returns"
    if title == "raises":
        return "raises"
    return "other" if current == "args" and title in _OTHER_HEADERS else None


def _parse_args(body: list[str]) -> dict[str, str]:
    """``{name: description}`` from the lines of an ``Args:`` section (``*args`` lines included)."""
    result: dict[str, str] = {}
    current: str | None = None
    indent = -1
    for line in body:
        if not line.strip():
            continue
        match = _ARG_LINE.match(line)
        if match and (current is None or len(match.group(1)) <= indent):
            current = match.group(3)
            indent = len(match.group(1))
            result[current] = (match.group(5) or "").strip()
        elif current is not None:
            result[current] = f"{result[current]} {line.strip()}".strip()
    return result
