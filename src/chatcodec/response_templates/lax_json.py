"""The JSON dialect of the ``json`` content parser: strict JSON plus the knobs models need.

Three ``content_args`` knobs (SPEC §1.3), applied in this order before ``json.loads``:

* ``string_delims``: ``[[open, close], ...]`` pairs that delimit string values instead of ``"``
  (Gemma 4 writes ``<|"|>text<|"|>``). Delimited strings may hold raw newlines, quotes and
  non-ASCII; they come back as ordinary JSON strings. While they are set aside they are replaced
  by reserved sentinel characters (``\\x01``/``\\x02``), so input that already contains those is
  rejected (as the reference does).
* ``unquoted_keys``: bare identifier keys (``{city: "London"}``) are quoted. Unlike the reference,
  a key may be preceded by whitespace (``{ a: 1, b: 2}``) and nothing inside a quoted string is
  ever rewritten (``{a: "x,y:z"}`` keeps its value).
* ``allow_non_json``: on failure, return the stripped raw text instead of raising.

What this module never does: accept ``NaN``/``Infinity`` (they are not JSON, and a message holding
them cannot be serialised as JSON again). Rule kept: every failure is a ``ValueError`` whose message
says whether the dialect rewrote the text (``after dialect transforms``) or not (``could not parse
region as JSON``), with the JSON error's position.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import regex

__all__ = [
    "SENTINEL_CLOSE",
    "SENTINEL_OPEN",
    "JSONContentError",
    "loads_json",
    "parse_json_dialect",
    "quote_bare_keys",
]

#: Marks the start of a set-aside delimited string while the dialect is applied.
SENTINEL_OPEN = "\x01"
#: Marks the end of a set-aside delimited string while the dialect is applied.
SENTINEL_CLOSE = "\x02"

class JSONContentError(ValueError):
    """A region that is not JSON in its dialect.

    Attributes:
        position: index in the raw region text where decoding failed, or ``None`` when the failure
            was found in the dialect-rewritten text (positions there do not map back).
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


_BARE_KEY = regex.compile(r"(\w+)(\s*):")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


def loads_json(text: str) -> Any:
    """``json.loads`` that rejects the non-standard ``NaN``/``Infinity`` tokens.

    Raises:
        ValueError: ``text`` is not strict JSON (``json.JSONDecodeError`` is a ``ValueError``).
    """
    return json.loads(text, parse_constant=_reject_constant)


def quote_bare_keys(text: str) -> str:
    """Quote bare identifier keys that follow ``{`` or ``,`` (whitespace allowed) outside strings.

    Args:
        text: JSON-like text; double-quoted strings (with backslash escapes) are copied untouched.

    Returns:
        The text with ``key:`` rewritten to ``"key":`` wherever a key may stand.
    """
    out: list[str] = []
    i, n = 0, len(text)
    key_may_follow = False
    while i < n:
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i, key_may_follow = end, False
            continue
        if key_may_follow and not char.isspace():
            match = _BARE_KEY.match(text, i)
            if match is not None:
                out.append(f'"{match.group(1)}"{match.group(2)}:')
                i, key_may_follow = match.end(), False
                continue
        if not char.isspace():
            key_may_follow = char in "{,"
        out.append(char)
        i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """Index just past the double-quoted string starting at ``start`` (or the end of ``text``)."""
    i, n = start + 1, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == '"':
            return i + 1
        i += 1
    return n


def _set_aside_delimited(text: str, pairs: Sequence[Sequence[str]]) -> tuple[str, list[str]]:
    """Replace each delimited string by a sentinel token; return the text and the strings."""
    captured: list[str] = []

    def capture(match: Any) -> str:
        captured.append(match.group(1))
        return f"{SENTINEL_OPEN}{len(captured) - 1}{SENTINEL_CLOSE}"

    for open_delim, close_delim in pairs:
        pattern = regex.escape(open_delim) + r"(.*?)" + regex.escape(close_delim)
        text = regex.sub(pattern, capture, text, flags=regex.DOTALL)
    return text, captured


def _restore_delimited(text: str, captured: list[str]) -> str:
    for index, value in enumerate(captured):
        text = text.replace(f"{SENTINEL_OPEN}{index}{SENTINEL_CLOSE}", json.dumps(value, ensure_ascii=False))
    return text


def parse_json_dialect(text: str, args: Mapping[str, Any]) -> Any:
    """Parse ``text`` as JSON with the ``content_args`` dialect knobs.

    Args:
        text: the raw region text.
        args: ``content_args`` (``string_delims``, ``unquoted_keys``, ``allow_non_json``, ``strip``),
            already validated when the template was loaded.

    Returns:
        The decoded value, or with ``allow_non_json`` the (stripped) raw text when decoding fails.

    Raises:
        ValueError: the text is not JSON in this dialect, or contains the reserved sentinels.
    """
    pairs = args.get("string_delims") or []
    if pairs and (SENTINEL_OPEN in text or SENTINEL_CLOSE in text):
        raise JSONContentError(
            "input contains the reserved sentinel characters \\x01/\\x02 that string_delims uses "
            "internally; cannot parse it safely"
        )
    working, captured = _set_aside_delimited(text, pairs) if pairs else (text, [])
    if args.get("unquoted_keys"):
        working = quote_bare_keys(working)
    if captured:
        working = _restore_delimited(working, captured)
    try:
        return loads_json(working)
    except ValueError as error:
        if args.get("allow_non_json"):
            return text.strip() if args.get("strip", True) else text
        detail = _describe(error)
        if working == text:
            position = error.pos if isinstance(error, json.JSONDecodeError) else None
            raise JSONContentError(f"could not parse region as JSON: {detail}", position) from None
        raise JSONContentError(
            f"could not parse after dialect transforms: {detail}; the text after the dialect "
            f"rewrite was {_clip(working)}"
        ) from None


def _describe(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} (line {error.lineno}, column {error.colno}, char {error.pos})"
    return str(error)


def _clip(text: str, limit: int = 200) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."
