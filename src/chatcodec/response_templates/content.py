"""Content parsers: the registry that turns a region's raw text into a value.

Seven standard parsers (SPEC §1.3) and every ``x-`` extension of
:data:`chatcodec.response_templates.extensions.EXTENSIONS` sit in one table of
:class:`ContentParser` records. Each record has a pure ``parse(text, args)`` and a
``validate(args, where)`` that the template loader calls, so a bad ``content_args`` (a missing
``tag_pattern``, an unknown ``value_parser``) fails when the template is loaded, never mid-stream.

Rules kept here: parsers never see the buffer, the parser state or other fields; they raise
``ValueError`` (naming what is wrong) and the engine adds the field, offset and raw text.
Numbers are ASCII only (``1_000`` and non-ASCII digits are not numbers; Python's ``int()`` would
accept them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex

from chatcodec.errors import ResponseTemplateError
from chatcodec.response_templates import extensions
from chatcodec.response_templates.lax_json import parse_json_dialect

__all__ = [
    "STANDARD_PARSERS",
    "ContentParser",
    "compile_user_pattern",
    "get_parser",
    "known_parser_names",
    "parse_float",
    "parse_int",
]

ParseFn = Callable[[str, Mapping[str, Any]], Any]
ValidateFn = Callable[[Mapping[str, Any], str], None]


@dataclass(frozen=True, slots=True)
class ContentParser:
    """One content parser.

    Attributes:
        name: the name templates use (``"json"``, ``"x-pythonic"``, ...).
        parse: ``(raw_text, content_args) -> value``; raises ``ValueError``.
        validate: ``(content_args, where) -> None``; raises ``ValueError`` naming ``where`` and the key.
        streams_verbatim: every streamed chunk is part of the final value (``dirty: false`` events).
        extension: an ``x-`` parser, unknown to the reference; a template using it needs chatcodec.
    """

    name: str
    parse: ParseFn
    validate: ValidateFn
    streams_verbatim: bool
    extension: bool = False


_INT = regex.compile(r"[+-]?[0-9]+")
_FLOAT = regex.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))"
)


def parse_int(text: str) -> int:
    """Parse an ASCII decimal integer (sign and leading zeros allowed, no underscores).

    Raises:
        ValueError: ``text`` is not such an integer.
    """
    if _INT.fullmatch(text) is None:
        raise ValueError(f"invalid literal for int: {text!r} (expected ASCII digits)")
    return int(text)


def parse_float(text: str) -> float:
    """Parse an ASCII decimal float (``1.5``, ``2e3``, ``.5``, ``nan``, ``inf``; no underscores).

    Raises:
        ValueError: ``text`` is not such a number.
    """
    if _FLOAT.fullmatch(text) is None:
        raise ValueError(f"invalid literal for float: {text!r} (expected an ASCII decimal number)")
    return float(text)


def _strip(text: str, args: Mapping[str, Any]) -> str:
    return text.strip() if args.get("strip", True) else text


def _parse_text(text: str, args: Mapping[str, Any]) -> str:
    return _strip(text, args)


def _parse_int(text: str, args: Mapping[str, Any]) -> int:
    return parse_int(_strip(text, args))


def _parse_float(text: str, args: Mapping[str, Any]) -> float:
    return parse_float(_strip(text, args))


def _parse_bool(text: str, args: Mapping[str, Any]) -> bool:
    return _strip(text, args).lower() in ("true", "1")


def _parse_value(raw: str, value_parser: Mapping[str, Any] | None) -> Any:
    if value_parser is None:
        return raw
    parser = get_parser(value_parser.get("name", "text"))
    return parser.parse(raw, value_parser.get("args", {}))


@lru_cache(maxsize=256)
def compile_user_pattern(source: str) -> regex.Pattern[str]:
    """Compile a template regex the way every template regex is compiled (``DOTALL``, cached)."""
    return regex.compile(source, regex.DOTALL)


def _parse_xml_inline(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    pattern = compile_user_pattern(args["tag_pattern"])
    value_parser = args.get("value_parser")
    merge = bool(args.get("merge_duplicates", False))
    out: dict[str, Any] = {}
    merged: set[str] = set()
    for match in pattern.finditer(text):
        key = match.group("key")
        if key is None:
            raise ValueError(f"tag_pattern matched {match.group()!r} without its 'key' group")
        raw = match.groupdict().get("value")
        value = _parse_value("" if raw is None else raw, value_parser)
        if merge and key in out:
            if key not in merged:
                out[key] = [out[key]]
                merged.add(key)
            out[key].append(value)
        else:
            out[key] = value
    return out


def _parse_kv_lines(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    line_sep = args.get("line_sep", "\n")
    kv_sep = args.get("kv_sep", ":")
    value_parser = args.get("value_parser")
    out: dict[str, Any] = {}
    for line in text.split(line_sep):
        line = _strip(line, args)
        if not line or kv_sep not in line:
            continue
        key, value = line.split(kv_sep, 1)
        out[_strip(key, args)] = _parse_value(_strip(value, args), value_parser)
    return out


# ---------------------------------------------------------------------------------------------
# content_args validation (load time)

def _fail(where: str, key: str, what: str) -> None:
    raise ResponseTemplateError(f"{where}.{key}: {what}", path=f"{where}.{key}")


def _check_keys(args: Mapping[str, Any], where: str, allowed: frozenset[str]) -> None:
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise ResponseTemplateError(
            f"{where}: unknown keys {unknown}. Allowed keys: {', '.join(sorted(allowed))}", path=where)


def _check_bool(args: Mapping[str, Any], where: str, key: str) -> None:
    if key in args and not isinstance(args[key], bool):
        _fail(where, key, f"must be true or false, got {type(args[key]).__name__}")


def _check_separator(args: Mapping[str, Any], where: str, key: str) -> None:
    if key in args and (not isinstance(args[key], str) or not args[key]):
        _fail(where, key, "must be a non-empty string")


def _check_value_parser(args: Mapping[str, Any], where: str) -> None:
    spec = args.get("value_parser")
    if spec is None:
        return
    path = f"{where}.value_parser"
    if not isinstance(spec, Mapping):
        _fail(where, "value_parser", 'must be an object {"name": parser, "args": {...}}')
    _check_keys(spec, path, frozenset({"name", "args"}))
    name = spec.get("name", "text")
    if not isinstance(name, str) or lookup_parser(name) is None:
        known = ", ".join(known_parser_names())
        _fail(path, "name", f"unknown content parser {name!r}. Known parsers: {known}")
    sub_args = spec.get("args", {})
    if not isinstance(sub_args, Mapping):
        _fail(path, "args", "must be an object")
    get_parser(name).validate(sub_args, f"{path}.args")


def _validate_scalar(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"strip"}))
    _check_bool(args, where, "strip")


def _validate_json(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"strip", "unquoted_keys", "string_delims", "allow_non_json"}))
    for key in ("strip", "unquoted_keys", "allow_non_json"):
        _check_bool(args, where, key)
    pairs = args.get("string_delims", [])
    if not isinstance(pairs, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and s for s in pair)
        for pair in pairs
    ):
        _fail(where, "string_delims", 'must be a list of [open, close] pairs of non-empty strings, '
              'e.g. [["<|\\"|>", "<|\\"|>"]]')


def _validate_xml_inline(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"tag_pattern", "value_parser", "merge_duplicates"}))
    _check_bool(args, where, "merge_duplicates")
    source = args.get("tag_pattern")
    if not isinstance(source, str):
        _fail(where, "tag_pattern", "xml-inline requires 'tag_pattern', a regex with the named groups "
              "'key' and (optionally) 'value', e.g. \"<(?P<key>\\\\w+)>(?P<value>.*?)</(?P=key)>\"")
    try:
        pattern = compile_user_pattern(str(source))
    except regex.error as error:
        _fail(where, "tag_pattern", f"invalid tag_pattern regex: {error}")
    if "key" not in pattern.groupindex:
        _fail(where, "tag_pattern", f"tag_pattern must have a named group 'key' (found groups: "
              f"{sorted(pattern.groupindex)})")
    _check_value_parser(args, where)


def _validate_kv_lines(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"line_sep", "kv_sep", "strip", "value_parser"}))
    _check_bool(args, where, "strip")
    _check_separator(args, where, "line_sep")
    _check_separator(args, where, "kv_sep")
    _check_value_parser(args, where)


#: The seven standard content parsers, in SPEC order.
STANDARD_PARSERS: dict[str, ContentParser] = {
    parser.name: parser
    for parser in (
        ContentParser("text", _parse_text, _validate_scalar, streams_verbatim=True),
        ContentParser("int", _parse_int, _validate_scalar, streams_verbatim=True),
        ContentParser("float", _parse_float, _validate_scalar, streams_verbatim=True),
        ContentParser("bool", _parse_bool, _validate_scalar, streams_verbatim=True),
        ContentParser("json", parse_json_dialect, _validate_json, streams_verbatim=False),
        ContentParser("xml-inline", _parse_xml_inline, _validate_xml_inline, streams_verbatim=False),
        ContentParser("kv-lines", _parse_kv_lines, _validate_kv_lines, streams_verbatim=False),
    )
}


def lookup_parser(name: str) -> ContentParser | None:
    """The parser called ``name``, or ``None``. ``x-`` names come from ``extensions.EXTENSIONS``."""
    parser = STANDARD_PARSERS.get(name)
    if parser is not None:
        return parser
    if name.startswith("x-") and name in extensions.EXTENSIONS:
        parse, validate = extensions.EXTENSIONS[name]
        return ContentParser(name, parse, validate, streams_verbatim=False, extension=True)
    return None


def get_parser(name: str) -> ContentParser:
    """The parser called ``name``.

    Raises:
        KeyError: no such parser (templates are validated at load, so the engine never sees this).
    """
    parser = lookup_parser(name)
    if parser is None:
        raise KeyError(name)
    return parser


def known_parser_names() -> list[str]:
    """Every usable parser name: the standard seven, then the registered ``x-`` extensions."""
    return [*STANDARD_PARSERS, *sorted(n for n in extensions.EXTENSIONS if n.startswith("x-"))]
