"""The ``python-call-list`` content parser: a strict Python-style list of keyword-argument calls.

transformers 5.24 added it to the standard parsers so that every implementation reads tool calls
such as ``[get_weather(city="Paris", days=3), get_time()]`` the same way. The grammar (SPEC §1.3;
``../shared/research/reference_524.md`` §3 measures 5.24 on it) is deliberately small:

* whitespace is space, tab, LF and CR only; it may stand before and between every token;
* the text is ``[`` calls separated by ``,`` ``]`` and nothing after it but whitespace;
* a call is a name, ``(``, keyword arguments ``name=value`` separated by ``,``, ``)``: no positional
  arguments, no ``*``/``**``, no trailing comma anywhere;
* a name is an ASCII identifier followed by any number of ``.``/``-`` segments of letters, digits
  and ``_`` (``math.sqrt``, ``my-tool.v2``); keyword names follow the same rule;
* a value is a string, a number, a list ``[...]``, a dict ``{"key": value, ...}`` with string keys,
  or ``True``/``true``, ``False``/``false``, ``None``/``null``;
* a string is ``'...'`` or ``"..."`` on one line, with the escapes ``\\\\ \\' \\" \\/ \\b \\f \\n \\r
  \\t`` and ``\\uXXXX`` (a surrogate pair joins into one character; a lone surrogate is an error);
* a number is a JSON number; an integer (no fraction, no exponent) has at most 17 characters and a
  magnitude of at most 2^53 - 1, a float must be finite;
* a keyword repeated in one call, or a key repeated in one dict, is an error (a dict would keep the
  last); lists and dicts nest at most 100 levels.

The value is ``[{"name": ..., "arguments": {...}}, ...]`` in source order. Every failure is a
``ValueError`` (a :class:`ContentError` carrying the position) whose message is exactly 5.24's:
``python-call-list: <reason> at position <N>.\\nContent: <repr of the text>``, where ``N`` is where
the parser stood after skipping whitespace, the opening quote of a bad string, the start of a bad
number, or just past the ``)``/``}`` that closes a call or dict with a repeated name.

The parser is pure (``parse(text, args)``) and never evaluates anything; it takes no
``content_args``. ``x-pythonic`` stays the lenient variant (tuples, comments refused with other
messages, JSON dicts as calls).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import regex

from chatcodec.response_templates.content_error import ContentError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["MAX_DEPTH", "MAX_INTEGER", "parse_python_call_list", "validate_python_call_list"]

#: The largest magnitude of an integer literal (JSON-safe integers).
MAX_INTEGER = 2**53 - 1
#: How many lists and dicts may enclose a value inside one argument.
MAX_DEPTH = 100
#: Integer literals longer than this are refused before they are converted.
_MAX_INTEGER_CHARS = 17


class _Patterns:
    """The grammar's tokens, compiled on the first parse (most templates never use this parser)."""

    __slots__ = ("hex4", "name", "number", "string", "surrogate", "whitespace")

    def __init__(self) -> None:
        self.whitespace = regex.compile(r"[ \t\n\r]*")
        self.name = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
        self.number = regex.compile(
            r"-?(?:0|[1-9][0-9]*)(?P<fraction>\.[0-9]+)?(?P<exponent>[eE][+-]?[0-9]+)?")
        self.string = {
            quote: regex.compile(quote + r"(?P<body>(?:[^" + quote + r"\\\n\r]|\\.)*)" + quote, regex.DOTALL)
            for quote in ("'", '"')
        }
        self.hex4 = regex.compile(r"[0-9a-fA-F]{4}")
        self.surrogate = regex.compile(r"[\ud800-\udfff]")


@functools.cache
def _patterns() -> _Patterns:
    return _Patterns()


_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
}
_CONSTANTS: dict[str, Any] = {
    "True": True, "true": True, "False": False, "false": False, "None": None, "null": None,
}
_VALUE_EXPECTED = "expected a string, number, list, dict, True, False or None"
_KEYWORD_EXPECTED = "a keyword argument (positional arguments and trailing commas are not supported)"


def validate_python_call_list(args: Mapping[str, Any], where: str) -> None:
    """Check the ``content_args`` of a ``python-call-list`` region: there are none.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: any key (5.24 ignores them; chatcodec refuses keys that would do nothing).
    """
    if args:
        raise ValueError(f"{where}: unknown key(s) {sorted(args)}; python-call-list takes no content_args")


def parse_python_call_list(text: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Parse ``[f(a=1), g(b="x")]`` with the strict grammar of the module docstring.

    Args:
        text: the region's raw text (not stripped: surrounding whitespace is allowed by the grammar).
        args: the region's ``content_args`` (none).

    Returns:
        ``[{"name": str, "arguments": {keyword: value}}, ...]`` in source order; ``[]`` for ``[]``.

    Raises:
        ContentError: the text does not follow the grammar; the message is 5.24's, word for word,
            and ``position`` is the ``N`` it names.
    """
    return _Reader(text).calls()


class _Reader:
    """One pass over the text; ``position`` only moves forward."""

    __slots__ = ("patterns", "position", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.patterns = _patterns()

    # -- tokens -----------------------------------------------------------------------------------

    def fail(self, reason: str, position: int | None = None) -> NoReturn:
        at = self.position if position is None else position
        raise ContentError(f"python-call-list: {reason} at position {at}.\nContent: {self.text!r}", at)

    def skip(self) -> None:
        match = self.patterns.whitespace.match(self.text, self.position)
        assert match is not None  # the pattern matches the empty string
        self.position = match.end()

    def sees(self, char: str) -> bool:
        """Skip whitespace; whether ``char`` comes next (not consumed)."""
        self.skip()
        return self.text.startswith(char, self.position)

    def take(self, char: str) -> bool:
        """Skip whitespace and consume ``char`` if it comes next."""
        if self.sees(char):
            self.position += 1
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.take(char):
            self.fail(f"expected {char!r}")

    def name(self, what: str) -> str:
        self.skip()
        match = self.patterns.name.match(self.text, self.position)
        if match is None:
            self.fail(f"expected {what}")
        self.position = match.end()
        name: str = match.group()
        return name

    # -- grammar ----------------------------------------------------------------------------------

    def calls(self) -> list[dict[str, Any]]:
        self.expect("[")
        calls: list[dict[str, Any]] = []
        if not self.take("]"):
            while True:
                calls.append(self.call())
                if self.take("]"):
                    break
                self.expect(",")
        self.skip()
        if self.position != len(self.text):
            self.fail("unexpected content after the closing ']'")
        return calls

    def call(self) -> dict[str, Any]:
        function = self.name("a function name")
        self.expect("(")
        pairs: list[tuple[str, Any]] = []
        if not self.take(")"):
            while True:
                keyword = self.name(_KEYWORD_EXPECTED)
                if not self.take("="):
                    self.fail("expected '=' (positional arguments are not supported)")
                pairs.append((keyword, self.value(0)))
                if self.take(")"):
                    break
                self.expect(",")
        return {"name": function, "arguments": self.unique(pairs)}

    def unique(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """The pairs as a dict; a repeated name fails at the current position (past the closer)."""
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                self.fail(f"repeated name {key!r}")
            out[key] = value
        return out

    def value(self, depth: int) -> Any:
        """A value enclosed by ``depth`` lists and dicts."""
        if self.sees("'") or self.sees('"'):
            return self.string()
        if self.sees("[") or self.sees("{"):
            if depth >= MAX_DEPTH:
                self.fail(f"lists and dicts nested more than {MAX_DEPTH} levels deep")
            bracket = self.text[self.position]
            self.position += 1
            return self.array(depth + 1) if bracket == "[" else self.mapping(depth + 1)
        number = self.patterns.number.match(self.text, self.position)
        if number is not None:
            return self.number(number)
        word = self.patterns.name.match(self.text, self.position)
        if word is not None and word.group() in _CONSTANTS:
            self.position = word.end()
            return _CONSTANTS[word.group()]
        self.fail(_VALUE_EXPECTED)

    def array(self, depth: int) -> list[Any]:
        items: list[Any] = []
        if self.take("]"):
            return items
        while True:
            items.append(self.value(depth))
            if self.take("]"):
                return items
            self.expect(",")

    def mapping(self, depth: int) -> dict[str, Any]:
        pairs: list[tuple[str, Any]] = []
        if not self.take("}"):
            while True:
                if not (self.sees("'") or self.sees('"')):
                    self.fail("dict keys must be strings")
                key = self.string()
                self.expect(":")
                pairs.append((key, self.value(depth)))
                if self.take("}"):
                    break
                self.expect(",")
        return self.unique(pairs)

    def number(self, match: regex.Match[str]) -> int | float:
        literal = match.group()
        if match.group("fraction") is None and match.group("exponent") is None:
            # the length check comes first, so a huge literal is never converted
            if len(literal) > _MAX_INTEGER_CHARS or abs(int(literal)) > MAX_INTEGER:
                self.fail("integer outside the range of -(2^53 - 1) to 2^53 - 1")
            self.position = match.end()
            return int(literal)
        value = float(literal)
        if math.isinf(value):
            self.fail("number too large")
        self.position = match.end()
        return value

    def string(self) -> str:
        """A quoted string at the current position (errors point at its opening quote)."""
        start = self.position
        match = self.patterns.string[self.text[start]].match(self.text, start)
        if match is None:
            self.fail("invalid string")
        body = match.group("body")
        if self.patterns.surrogate.search(body) is not None:
            self.fail("lone surrogate in the string starting")
        decoded = _unescape(body)
        if isinstance(decoded, _BadEscape):
            self.fail(decoded.reason)
        self.position = match.end()
        return decoded


class _BadEscape:
    """Why a string body could not be unescaped (the caller reports it at the opening quote)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _unescape(body: str) -> str | _BadEscape:
    """Decode the escapes of a string body whose backslashes each pair with the next character."""
    parts: list[str] = []
    start = 0
    while (backslash := body.find("\\", start)) != -1:
        parts.append(body[start:backslash])
        escaped = body[backslash + 1]
        start = backslash + 2
        if escaped in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[escaped])
            continue
        digits = _patterns().hex4.match(body, start) if escaped == "u" else None
        if digits is None:
            return _BadEscape(f"unsupported escape {body[backslash:start]!r} in the string starting")
        code = int(digits.group(), 16)
        start = digits.end()
        if 0xD800 <= code <= 0xDBFF and body.startswith("\\u", start):
            low = _patterns().hex4.match(body, start + 2)
            if low is not None and 0xDC00 <= int(low.group(), 16) <= 0xDFFF:
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
                start = low.end()
        if 0xD800 <= code <= 0xDFFF:
            return _BadEscape("lone surrogate escape in the string starting")
        parts.append(chr(code))
    parts.append(body[start:])
    return "".join(parts)
