"""The ``x-pythonic`` content parser: tool calls written as Python calls.

Llama 3.2 / Llama 4, LFM2 and others write parallel tool calls as a Python list of calls::

    [get_weather(city="Paris", days=3), get_time()]

The text is parsed with :mod:`ast` and never evaluated: only literals are accepted as argument
values (strings, numbers, ``True``/``False``/``None`` and their JSON spellings ``true``/``false``/
``null``, lists, tuples, dicts, and sets, read as the list of their elements as written). Each call
becomes ``{"name": ..., "arguments": {...}}``; a dict element such as ``{"name": "f", "arguments":
{...}}`` (some models switch to JSON inside the same markers) is accepted too, with the keys
``x-json-calls`` accepts: ``name``, one of ``arguments``/``parameters``, an optional string ``id``
(kept, first) and ``"type": "function"``.

What models write that Python's grammar rejects though its meaning is plain (a line break or a NUL
written raw inside a one-line string, an integer with leading zeros, a string's own quote written
unescaped inside it) is read as :mod:`.pythonic_repair` says, only when the text as written is no
Python.

``content_args``: ``lines`` (bool, default false) also reads calls written one per line without a
list (``f(a=1)`` and ``g(b=2)`` on two lines: MiniCPM3 writes them so in a fenced block); every line
must then be a call. ``method`` (a name, default none) reads a call written ``NAME.METHOD(...)`` as
a call to ``NAME``: Llama 3.1 calls its built-in tools so (``brave_search.call(query="...")``, Meta's
Llama 3.1 prompt format), and llama.cpp reads that as a call to ``brave_search``; other names stay
as written. Nothing is dropped: text that is not a list of calls (a syntax error, prose
after the list), an element that is not a call (``[f(), 5]``), a positional argument, an argument
given twice (``f(a=1, a=2)``: Python would keep the last), a dict key given twice (``{"k": 1, "k":
2}``), a set element given twice, any other key of a dict element (or both ``arguments`` and
``parameters``), a ``#`` comment (:mod:`ast` drops it) and a value that is not a literal (``a=x``,
``a=1+2``, ``a=g(b=1)``, ``b'z'``, ``1e999``) all raise ``ValueError`` naming the call and argument,
which the engine turns into a ``ResponseParseError`` (strict) or a ``parse_errors`` record with the
raw text (keep). Peers that drop such a call and keep its siblings differ here on purpose (see
"Known differences").

This module only turns text into a list of calls; the response template's transform shapes them.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import tokenize
from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.ext_common import reject_skip_invalid
from chatcodec.response_templates.pythonic_repair import repair

__all__ = ["parse_python_literal", "parse_pythonic", "validate_pythonic"]

_NAMED_LITERALS: dict[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "true": True,
    "false": False,
    "null": None,
}


_CALL_KEYS = frozenset({"name", "arguments", "parameters", "id", "type"})


class _NotJSON(ValueError):
    """An argument value that has no JSON equivalent."""


def validate_pythonic(args: Mapping[str, Any], where: str) -> None:
    """Check the ``content_args`` of an ``x-pythonic`` region: ``lines`` (a bool) and ``method`` (a
    Python name).

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: any other key (``skip_invalid`` gets a hint saying why it is gone), a
            ``lines`` that is not a bool, or a ``method`` that is not a Python name.
    """
    reject_skip_invalid(args, where)
    unknown = sorted(set(args) - {"lines", "method"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; x-pythonic takes only 'lines' and 'method'")
    if not isinstance(args.get("lines", False), bool):
        raise ValueError(f"{where}.lines: must be true or false, got {args['lines']!r}")
    method = args.get("method", "call")
    if not isinstance(method, str) or not method.isidentifier():
        raise ValueError(f"{where}.method: must be a Python name, got {args['method']!r}")


def parse_pythonic(text: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Parse ``[f(a=1), g(b="x")]`` (or a single call ``f(a=1)``) into a list of calls.

    Args:
        text: the region's raw text.
        args: the region's ``content_args``: ``lines`` (default false) also accepts calls written
            one per line without a list (``f(a=1)\ng(b=2)``, MiniCPM3's fenced block); ``method``
            (default none) names ``NAME.METHOD(...)`` calls ``NAME``.

    Returns:
        ``[{"name": str, "arguments": dict}, ...]``; an empty or whitespace-only text gives ``[]``.

    Raises:
        ValueError: the text is not a list of calls, an element is not a call, or a value is not
            a JSON value; the message names the offending element, call, argument or offset.
    """
    method = args.get("method")
    suffix = f".{method}" if isinstance(method, str) and method else ""
    source = text.strip()
    if not source:
        return []
    try:
        try:
            tree = ast.parse(source, mode="eval").body
        except SyntaxError as error:
            repaired = _parse_repaired(source)
            if repaired is not None:
                source, tree = repaired
                _reject_comments(source)
                return _calls(tree, suffix)
            lines = _call_lines(source) if args.get("lines") else None
            if lines is None:
                raise ValueError(
                    f"x-pythonic: not a Python list of calls (offset {error.offset}): {error.msg}"
                ) from None
            _reject_comments(source)
            return [_checked_call(node, f"line {node.lineno}: ", suffix) for node in lines]
        _reject_comments(source)
        return _calls(tree, suffix)
    except (RecursionError, MemoryError):
        raise ValueError("x-pythonic: the call list is nested too deeply") from None


def parse_python_literal(source: str) -> Any:
    """Read one Python literal (as ``str()`` / ``repr`` writes a dict, list or scalar) with :mod:`ast`,
    never ``eval``: the literals ``x-pythonic`` accepts as argument values.

    Args:
        source: the literal's text (surrounding whitespace allowed).

    Returns:
        Its JSON value (a tuple reads as a list, ``True``/``None`` and ``true``/``null`` alike).

    Raises:
        ValueError: not one literal (a syntax error, a name, an expression), a value with no JSON
            equivalent (bytes, ``1e999``), a repeated dict key, a non-string key, a ``#`` comment, or
            nested too deeply; the message says which.
    """
    text = source.strip()
    try:
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError as error:
            raise ValueError(f"not a Python literal (offset {error.offset}): {error.msg}") from None
        _reject_comments(text)
        return _literal(tree)
    except (RecursionError, MemoryError):
        raise ValueError("the literal is nested too deeply") from None


def _reject_comments(source: str) -> None:
    """Raise on a ``#`` comment: :mod:`ast` drops it, so its text would vanish."""
    if "#" not in source:
        return
    with contextlib.suppress(tokenize.TokenError, SyntaxError):  # ast.parse already accepted it
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                line, column = token.start
                offset = sum(len(row) for row in source.splitlines(keepends=True)[: line - 1]) + column
                raise ValueError(
                    f"x-pythonic: a comment is not part of a call list (offset {offset}): {token.string!r}"
                )


def _parse_repaired(source: str) -> tuple[str, ast.expr] | None:
    """``source`` as :mod:`.pythonic_repair` makes it valid, and its expression, or ``None`` when
    that changes nothing or still is no expression."""
    repaired = repair(source)
    if repaired is None:
        return None
    try:
        return repaired, ast.parse(repaired, mode="eval").body
    except SyntaxError:
        return None


def _call_lines(source: str) -> list[ast.expr] | None:
    """The expressions of ``source`` read as Python statements, one call each, or ``None`` when it
    is not statements that are all expressions (an assignment, a syntax error)."""
    try:
        module = ast.parse(source, mode="exec")
    except SyntaxError:
        return None
    if not all(isinstance(statement, ast.Expr) for statement in module.body):
        return None
    return [statement.value for statement in module.body if isinstance(statement, ast.Expr)]


def _calls(tree: ast.expr, suffix: str) -> list[dict[str, Any]]:
    if not isinstance(tree, (ast.List, ast.Tuple)):
        return [_checked_call(tree, "", suffix)]
    return [
        _checked_call(element, f"element {index} of the list: ", suffix)
        for index, element in enumerate(tree.elts, start=1)
    ]


def _checked_call(node: ast.expr, where: str, suffix: str) -> dict[str, Any]:
    try:
        return _call(node, suffix)
    except _NotJSON as error:
        raise ValueError(f"x-pythonic: {where}{error}") from None


def _call(node: ast.expr, suffix: str) -> dict[str, Any]:
    """One call; a name ending with ``suffix`` (``.METHOD``, ``method``) names what precedes it."""
    if isinstance(node, ast.Dict):
        return _dict_call(_literal(node))
    if not isinstance(node, ast.Call):
        raise _NotJSON(f"{ast.unparse(node)!r} is not a call")
    name = _dotted_name(node.func)
    if suffix and name.endswith(suffix) and len(name) > len(suffix):
        name = name[: -len(suffix)]
    if node.args:
        raise _NotJSON(f"call {name!r}: positional arguments have no parameter names")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise _NotJSON(f"call {name!r}: '**' unpacking is not a literal")
        if keyword.arg in arguments:  # Python keeps the last; nothing may be lost
            raise _NotJSON(f"call {name!r}: argument {keyword.arg!r} is given twice")
        try:
            arguments[keyword.arg] = _literal(keyword.value)
        except _NotJSON as error:
            raise _NotJSON(f"call {name!r}, argument {keyword.arg!r}: {error}") from None
    return {"name": name, "arguments": arguments}


def _dict_call(value: dict[str, Any]) -> dict[str, Any]:
    """A call written as a dict: the keys x-json-calls accepts, any other key is an error."""
    name = value.get("name")
    if not isinstance(name, str):
        raise _NotJSON("a dict element without a string 'name' is not a call")
    unknown = sorted(set(value) - _CALL_KEYS)
    if unknown:
        raise _NotJSON(
            f"call {name!r}: unknown key(s) {unknown}; a call object has 'name', one of "
            "'arguments'/'parameters', an optional string 'id' and \"type\": \"function\""
        )
    if "arguments" in value and "parameters" in value:
        raise _NotJSON(f"call {name!r}: both 'arguments' and 'parameters' are given")
    if value.get("type", "function") != "function":
        raise _NotJSON(f"call {name!r}: 'type' is not \"function\"")
    if "id" in value and not isinstance(value["id"], str):
        raise _NotJSON(f"call {name!r}: 'id' is not a string")
    given = value.get("arguments", value.get("parameters", {}))
    if not isinstance(given, dict):
        raise _NotJSON(f"call {name!r}: 'arguments' is not an object")
    call: dict[str, Any] = {"id": value["id"]} if "id" in value else {}
    call.update(name=name, arguments=given)
    return call


def _dotted_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise _NotJSON(f"{ast.unparse(node)!r} is not a function name")


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.Name) and node.id in _NAMED_LITERALS:
        return _NAMED_LITERALS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _literal(node.operand)
        if isinstance(operand, bool) or not isinstance(operand, (int, float)):
            raise _NotJSON(f"{ast.unparse(node)!r} is not a number")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.Set):
        return _set_items(node)
    if isinstance(node, ast.Dict):
        result: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            key = None if key_node is None else _literal(key_node)
            if not isinstance(key, str):
                raise _NotJSON("dict keys must be strings")
            if key in result:  # Python keeps the last; nothing may be lost
                raise _NotJSON(f"dict key {key!r} is given twice")
            result[key] = _literal(value_node)
        return result
    raise _NotJSON(f"{ast.unparse(node)!r} is not a literal")


def _set_items(node: ast.Set) -> list[Any]:
    """A set literal (``{'urgent', 'bug'}``, vLLM's LFM2 ``set_arg``) as the list of its elements in
    the order written (JSON has no sets); an element given twice, which the set would keep once, is
    an error (nothing may be lost)."""
    items = [_literal(element) for element in node.elts]
    seen: set[str] = set()
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key in seen:
            raise _NotJSON(f"set element {item!r} is given twice")
        seen.add(key)
    return items


def _constant(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJSON(f"{value!r} is not a finite number")
        return value
    raise _NotJSON(f"a {type(value).__name__} literal has no JSON equivalent")
