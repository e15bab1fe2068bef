"""Tool-argument typing: cast the string arguments of parsed tool calls with the tools' JSON schemas.

Formats such as Qwen3-Coder's XML write every argument as text (``<parameter=hour>7</parameter>``);
the called tool's parameter schema says that ``hour`` is an integer. SPEC §1.6, following the
reference: a string argument is cast by the first type of its schema that accepts it
(``integer``: ``"7"``, ``"3.0"``; ``number``: finite, ``"2"`` stays an int; ``boolean``:
``true/false/1/0``; ``null``: ``null``/``None``; ``object``/``array``: JSON, or a Python literal
as ``str()`` writes a dict or list, as vLLM and SGLang read it), trying ``type`` lists,
``anyOf``/``oneOf`` and ``nullable`` in order.

Rules kept here (differences from the reference, see docs/compatibility.md): numeric and boolean
types listed after ``string`` are not tried (``anyOf: [string, integer]`` leaves ``"5"`` alone)
while ``null`` and JSON objects/arrays still are; numbers are ASCII (``"1_000"`` and non-ASCII
digits stay text); casting never raises and never mutates its input; a JSON object/array cast
whose result would put the value deeper than ``MAX_NESTING_DEPTH`` (or that Python cannot parse
for depth) fails like any other cast, so the text stays. Any value shaped like a tool call is typed,
whatever its field is called.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

from chatcodec.response_templates.content import parse_float, parse_int
from chatcodec.response_templates.lax_json import loads_finite_json
from chatcodec.response_templates.limits import MAX_NESTING_DEPTH, exceeds_depth

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

__all__ = [
    "ToolParameters",
    "argument_room",
    "called_names",
    "cast_tool_calls",
    "coerce_argument",
    "schema_types",
    "tool_parameters",
    "type_argument",
]

#: Tool name -> the ``properties`` of its parameter schema.
ToolParameters: TypeAlias = "dict[str, dict[str, Any]]"


def tool_parameters(tools: Iterable[dict[str, Any] | Callable[..., Any]] | None) -> ToolParameters:
    """Map each tool's name to its parameter properties.

    Args:
        tools: JSON schemas (``{"type": "function", "function": {...}}`` or the bare function
            object) or Python functions (converted with :func:`chatcodec.tool_schemas.tool_to_schema`).

    Returns:
        ``{name: properties}``; tools without properties map to ``{}``, and a tool of another
        ``type`` than ``"function"`` (``{"type": "custom", ...}``) that has no ``function`` is left
        out (its calls, having no parameter schema, are never typed).

    Raises:
        TypeError: a tool is neither a dict nor a function.
        ValueError: a function tool without a function name (``{"x": 1}``, ``{"type": "function"}``,
            ``{"function": {"parameters": ...}}``: a typo that would silently leave every call
            untyped), or a parameter schema that typing cannot read (``"anyOf": 5``, ``"type": 5``, a
            non-boolean ``nullable``); the message names the entry (``tools[1]``) and what is
            wrong. Checked here, when the parser is built or given tools, so a bad schema never
            fails in the middle of a stream.
    """
    params: ToolParameters = {}
    for index, tool in enumerate(tools or []):
        if not isinstance(tool, dict):  # a Python function: only then load the schema builder
            from chatcodec.tool_schemas import tool_to_schema

            tool = tool_to_schema(tool)
        if "function" not in tool and isinstance(tool.get("type"), str) and tool["type"] != "function":
            continue  # not a function tool: nothing to type its calls with
        function = tool.get("function", tool)
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"tools[{index}]: {_missing_name(tool, function)}")
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        properties = properties if isinstance(properties, dict) else {}
        for key, schema in properties.items():
            problem = _schema_problem(schema)
            if problem is not None:
                raise ValueError(f"tools[{index}] ({name}): parameter {key!r}: {problem}")
        params[name] = properties
    return params


#: The two shapes a function tool may have, for the error that names what is missing.
_TOOL_SHAPES = ('expected {"type": "function", "function": {"name": ..., "parameters": {...}}} or the '
                'function object itself ({"name": ..., "parameters": {...}})')


def _missing_name(tool: dict[str, Any], function: Any) -> str:
    """What is wrong with a function tool whose name cannot be read (for :func:`tool_parameters`)."""
    if function is tool and tool.get("type") == "function":
        return f"a tool of type 'function' has no 'function' object; {_TOOL_SHAPES}"
    if function is not tool and not isinstance(function, dict):
        return f"'function' must be an object with a 'name', got {type(function).__name__}; {_TOOL_SHAPES}"
    where = "'function'" if function is not tool else "the tool"
    name = function.get("name")
    if name is None:
        keys = ", ".join(map(repr, function)) or "none"
        return f"{where} has no 'name' (its keys: {keys}); {_TOOL_SHAPES}"
    return f"{where}'s 'name' must be a non-empty string, got {name!r}; {_TOOL_SHAPES}"


def _schema_problem(schema: Any) -> str | None:
    """What typing cannot read in a parameter schema (and its ``anyOf``/``oneOf`` choices), or ``None``."""
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        where, item = stack.pop()
        if not isinstance(item, dict):
            continue
        declared = item.get("type")
        if declared is not None and not isinstance(declared, str) and not (
                isinstance(declared, list) and all(isinstance(t, str) for t in declared)):
            return f"{where}type must be a type name or a list of them, got {type(declared).__name__}"
        if not isinstance(item.get("nullable", False), bool):
            return f"{where}nullable must be true or false, got {type(item['nullable']).__name__}"
        for union in ("anyOf", "oneOf"):
            choices = item.get(union)
            if choices is None:
                continue
            if not isinstance(choices, list):
                return f"{where}{union} must be a list of schemas, got {type(choices).__name__}"
            for position, choice in enumerate(choices):
                if not isinstance(choice, (dict, bool)):
                    got = type(choice).__name__
                    return f"{where}{union}[{position}] must be a schema (an object), got {got}"
                stack.append((f"{where}{union}[{position}]: ", choice))
    return None


def schema_types(schema: Any) -> tuple[str, ...]:
    """The JSON types a parameter schema allows, in the order a cast should try them."""
    if not isinstance(schema, dict):
        return ()
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else []
    if isinstance(declared, list):
        types.extend(t for t in declared if isinstance(t, str))
    for union in ("anyOf", "oneOf"):
        choices = schema.get(union)
        for choice in choices if isinstance(choices, list) else ():
            types.extend(schema_types(choice))
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    return tuple(types)


_NO_CAST = object()


def _cast(raw: str, type_name: str, max_depth: int) -> Any:
    """``raw`` as ``type_name``, or ``_NO_CAST`` (also for JSON nested more than ``max_depth`` deep)."""
    text = raw.strip()
    try:
        if type_name == "integer":
            try:
                return parse_int(text)
            except ValueError:
                number = parse_float(text)
                return int(number) if number.is_integer() else _NO_CAST
        if type_name == "number":
            number = parse_float(text)
            if number != number or number in (float("inf"), float("-inf")):
                return _NO_CAST
            return int(number) if number.is_integer() and "." not in text else number
        if type_name == "boolean" and text.lower() in ("true", "1", "false", "0"):
            return text.lower() in ("true", "1")
        if type_name == "null" and text in ("null", "None"):
            return None
        if type_name in ("object", "array"):
            decoded = _container(raw)
            if isinstance(decoded, dict if type_name == "object" else list) \
                    and not exceeds_depth(decoded, max_depth):
                return decoded
    except (ValueError, RecursionError):
        pass
    return _NO_CAST


#: The longest argument text read as a Python literal (``ast`` builds a tree many times its size).
MAX_LITERAL_CHARS = 100_000


def _container(raw: str) -> Any:
    """``raw`` read as JSON, else as one Python literal (``{'k': 'v'}``, ``['a', 'b']``: what a
    chat template's ``str()`` of a dict or list writes back, and what vLLM's and SGLang's XML-ish
    tool parsers decode with ``ast.literal_eval`` after ``json.loads`` fails), else as JSON written
    backslash-escaped (:func:`_escaped_json`).

    The literal is read by ``x-pythonic``'s reader (:mod:`ast`, never ``eval``), only when its text
    starts with ``{``/``[`` and is at most ``MAX_LITERAL_CHARS`` long. A number that does not fit a
    float (``[1e999]``) makes every reading fail, so the argument keeps its raw text, as the
    peers keep it (SGLang's ``test_nonfinite_coercion.py``).

    Raises:
        ValueError: no reading gives a value.
    """
    try:
        return loads_finite_json(raw)
    except ValueError:
        text = raw.strip()
        if not text or text[0] not in "[{" or len(text) > MAX_LITERAL_CHARS:
            raise
    from chatcodec.response_templates.ext_pythonic import parse_python_literal

    try:
        return parse_python_literal(text)
    except ValueError:
        if '\\"' not in text:
            raise
    return _escaped_json(text)


def _escaped_json(text: str) -> Any:
    """``text`` read as JSON written inside a JSON string, its quotes escaped: the whole argument
    ``[{\\"id\\": \\"1\\", \\"task\\": \\"a\\\\nb\\"}]`` is the list ``[{"id": "1", "task": "a\\nb"}]``.
    GLM-4.6 writes an object or array argument this way at times (with literal ``\\n`` between its
    tags); SGLang's GLM-4 parser reads it so (``glm4_moe_detector.py``, ``parse_arguments``: the
    text unescaped as a JSON string, then read as JSON). Only object/array casts try it, and only
    after JSON and the Python literal failed, so text that reads as written never changes.

    Raises:
        ValueError: the text is not a JSON string's body, or its unescaped text is no JSON.
    """
    try:
        unescaped = json.loads(f'"{text}"', strict=False)
    except json.JSONDecodeError as error:
        raise ValueError(str(error)) from None
    return loads_finite_json(unescaped)


#: Casts that still apply after a ``string`` type in a union: ``null`` and JSON containers are
#: unmistakable, while scalar text (``"5"``, ``"true"``) is already a valid string.
_CASTS_AFTER_STRING = ("null", "object", "array")


def coerce_argument(raw: str, types: tuple[str, ...], max_depth: int = MAX_NESTING_DEPTH) -> Any:
    """Cast one string argument by the first of ``types`` that accepts it, in order.

    Once a ``string`` type has been passed, later numeric and boolean types are not tried (the
    text is a valid string as it stands); ``null`` and JSON objects/arrays still are. So
    ``["integer", "string"]`` casts ``"5"`` to ``5`` while ``["string", "integer"]`` keeps ``"5"``.

    Args:
        raw: the argument's text.
        types: the JSON types its schema allows, in order (:func:`schema_types`).
        max_depth: how deep a decoded JSON object/array may nest (deeper: the cast fails).

    Returns:
        The cast value, or ``raw`` unchanged when nothing accepts it.
    """
    after_string = False
    for type_name in types:
        if type_name == "string":
            after_string = True
            continue
        if after_string and type_name not in _CASTS_AFTER_STRING:
            continue
        value = _cast(raw, type_name, max_depth)
        if value is not _NO_CAST:
            return value
    return raw


def type_argument(argument: Any, types: tuple[str, ...], room: int) -> Any:
    """One argument of a tool call, typed with its parameter's ``types`` (:func:`schema_types`).

    A string is cast by :func:`coerce_argument`; a list (repeated keys collected by xml-inline's
    ``merge_duplicates``) of a parameter that is not an ``array`` has each string element cast; any
    other value is returned as it is.

    Args:
        argument: the argument's value.
        types: the JSON types its schema allows, in order (empty: no typing).
        room: how deep a value decoded here may nest.

    Returns:
        The typed value (``argument`` itself when nothing is cast).
    """
    if types and isinstance(argument, str):
        return coerce_argument(argument, types, room)
    if types and isinstance(argument, list) and "array" not in types:
        return [coerce_argument(a, types, room - 1) if isinstance(a, str) else a for a in argument]
    return argument


def _cast_arguments(arguments: dict[str, Any], properties: Mapping[str, Any], room: int) -> dict[str, Any]:
    return {key: type_argument(argument, schema_types(properties.get(key)) if key in properties else (), room)
            for key, argument in arguments.items()}


def argument_room(depth: int) -> int:
    """How deep an argument value decoded by a cast may nest, for a call ``depth`` lists deep.

    The call, its ``"function"`` and its ``"arguments"`` are three levels; each argument's value
    starts below them, and the whole value stays within ``MAX_NESTING_DEPTH``.
    """
    return MAX_NESTING_DEPTH - depth - 3


def cast_tool_calls(value: Any, params: ToolParameters, depth: int = 0) -> Any:
    """Type the arguments of every tool call in ``value`` (a call, a list of calls, or anything else).

    A tool call is ``{"function": {"name": str, "arguments": dict}, ...}``; only top-level string
    arguments (and lists of strings for non-array parameters) are cast.

    Args:
        value: a region's value.
        params: the tools' parameter properties (:func:`tool_parameters`).
        depth: how deep ``value`` sits in the region's value (a cast keeps the whole value within
            ``MAX_NESTING_DEPTH``).

    Returns:
        ``value`` itself when nothing is cast, else a new structure sharing the untouched parts.
    """
    if not params:
        return value
    if isinstance(value, list):
        return [cast_tool_calls(item, params, depth + 1) for item in value]
    function = value.get("function") if isinstance(value, dict) else None
    if not isinstance(function, dict):
        return value
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return value
    properties = params.get(name)
    if not properties:
        return value
    room = argument_room(depth)
    return {**value, "function": {**function, "arguments": _cast_arguments(arguments, properties, room)}}


def called_names(value: Any) -> list[str]:
    """The function names of the tool calls in ``value`` (a call, a list of calls, or anything else).

    A tool call is shaped as :func:`cast_tool_calls` reads it: ``{"function": {"name": str, ...}}``.

    Args:
        value: a region's value.

    Returns:
        The names, in order (a name called twice is listed twice); ``[]`` for anything else.
    """
    names = []
    for item in value if isinstance(value, list) else [value]:
        function = item.get("function") if isinstance(item, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names
