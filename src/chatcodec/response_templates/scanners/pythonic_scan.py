"""The value scanner of Python-style call lists: ``x-pythonic`` and ``python-call-list``.

``[get_weather(city="Paris", days=3), get_time()]`` becomes, as it is written, a list of
``{"name", "arguments"}``: a call begins when its ``name(`` is complete, each keyword argument's
value streams under ``arguments`` once its ``keyword=`` is complete (a string's text as it comes,
an escape sequence held until complete; numbers and ``True``/``None``/... once the character
after them arrives; lists and dicts as they open), and the call ends at its ``)``.

The scanner follows the subset of the syntax both parsers read alike, and stops (the engine then
completes the value from the parser's result at close) at anything else: a string prefix
(``r"..."``), a triple-quoted string, a tuple or parenthesised value, a trailing comma, a comment,
a positional argument, a call written as a dict with other keys or in another order, a repeated
keyword or key. With ``strict`` (``python-call-list``) it also keeps that parser's limits: only
space, tab, LF and CR as whitespace, single-line strings with JSON-style escapes (a surrogate pair
joins, a lone one stops it), JSON numbers (integers of at most 17 characters and 2^53 - 1), a list
at the root, names with ``-``/``.`` segments. Otherwise (``x-pythonic``) strings take Python's
escapes and concatenate (``"a" "b"``), numbers are Python literals (``1_000``, ``0x1F``, ``- 5``)
that must be finite ints or floats, and the root may be a single call.

``x-pythonic`` also reads a call written as a dict (``[{"name": "f", "arguments": {"a": 1}}]``: models
that switch to JSON inside Python-call markers); the scanner follows such an element when it writes
``name`` (a string) and then ``arguments`` or ``parameters`` (a dict), and only those, and streams
it as ``x-json-calls`` does (the name as a string, as it comes), so that under ``x-first`` the two
scanners agree on JSON calls and those stream as written too.

In ``x-pythonic`` a quote ends a string only where the next character that is not whitespace can
follow a value (``,`` ``)`` ``]`` ``}`` ``:``, or another string's quote); any other quote is text of
the string (``'sed -n '1,2p' f'``), as :mod:`..pythonic_repair` reads it. A ``{`` is streamed as a
dict once its first ``:`` (or its ``}``) arrives: ``{'a', 'b'}`` is a set, which ``x-pythonic``
reads as a list, and the scanner stops there.

``complete``: after the root list (or single call), the first character that is not whitespace.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

import regex

from chatcodec.response_templates.scanners.protocol import Delta, Path

__all__ = ["PythonicScanner", "python_call_list_scanner", "pythonic_scanner"]

_MAX_DEPTH = 100
_MAX_INTEGER = 2**53 - 1
_NAMED = {"True": True, "true": True, "False": False, "false": False, "None": None, "null": None}
_STRICT_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*"
_LAX_NAME = r"[^\W\d]\w*(?:\.[^\W\d]\w*)*"
_JSON_NUMBER = regex.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_HEX4 = regex.compile(r"[0-9a-fA-F]{4}")
_STRICT_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t"}
_OCTAL = frozenset("01234567")
#: What may follow a string's closing quote in x-pythonic (``pythonic_repair.ends_string``), besides
#: another string's quote.
_AFTER_VALUE = frozenset(",)]}:")

# states
_ROOT, _CALL, _KEYWORD, _VALUE, _AFTER, _DICT_KEY, _COLON, _STRING, _AFTER_STRING, _DONE, _DEAD = range(11)


def _json_space(char: str) -> bool:
    return char in " \t\n\r"


class _Frame:
    """An open call list, call, list or dict."""

    __slots__ = ("count", "kind", "names", "path", "pending")

    def __init__(self, kind: str, path: Path) -> None:
        self.kind = kind  # "calls", "call", "list", "dict", "element" (a call written as a dict)
        self.path = path
        self.count = 0
        self.names: set[str] = set()  # keywords of a call, keys of a dict
        self.pending = kind == "dict"  # a dict's begin waits for its first ":" or "}" (else a set)


class PythonicScanner:
    """See the module docstring."""

    def __init__(self, strict: bool, method: str | None = None) -> None:
        self._strict = strict
        self._method_suffix = f".{method}" if method else None  # x-pythonic's ``method``
        self._space = _json_space if strict else str.isspace
        name = _STRICT_NAME if strict else _LAX_NAME
        space = r"[ \t\n\r]*" if strict else r"\s*"
        keyword = _STRICT_NAME if strict else r"[^\W\d]\w*"
        self._call_head = regex.compile(f"({name}){space}\\(")
        self._keyword = regex.compile(f"({keyword}){space}=(?!=)")
        self._stack: list[_Frame] = []
        self._state = _ROOT
        self._carry = ""
        self._offset = 0
        self._key: str | None = None  # the keyword or dict key whose value comes next
        self._path: Path = ()
        self._quote = ""
        self._for_key = False  # the string being read is a dict key
        self._key_parts: list[str] = []
        self._bare_root = False
        self._calls = 0
        self.complete: int | None = None

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if self._state == _DEAD or self.complete is not None:
            return out
        text = self._carry + text
        start = self._offset - len(self._carry)
        self._carry = ""
        self._offset = start + len(text)
        i = 0
        while i < len(text) and self._state != _DEAD and self.complete is None:
            i = self._step(text, i, out)
        return out

    @property
    def refuted(self) -> bool:
        """``python-call-list`` (strict): the scanner stops only where its grammar is broken."""
        return self._strict and self._state == _DEAD

    def end(self) -> list[Delta]:
        return []  # anything undecided at the end is an error or is completed from the value

    def _stop(self) -> int:
        self._state = _DEAD
        return 1 << 62

    def _keep(self, text: str, i: int) -> int:
        self._carry = text[i:]
        return len(text)

    def _step(self, text: str, i: int, out: list[Delta]) -> int:
        state = self._state
        if state == _STRING:
            return self._string(text, i, out)
        if state == _AFTER_STRING:
            return self._string_end(text, i, out)
        n = len(text)
        while i < n and self._space(text[i]):
            i += 1
        if i >= n:
            return n
        char = text[i]
        if char == "#" or char == "\\":
            return self._stop()  # a comment, a line continuation
        if state == _DONE:
            self.complete = self._offset - n + i
            return n
        if state == _ROOT:
            if char == "[":
                out.append(("begin", (), "array"))
                self._stack.append(_Frame("calls", ()))
                self._state = _CALL
                return i + 1
            if self._strict:
                return self._stop()
            out.append(("begin", (), "array"))
            self._bare_root = True
            self._stack.append(_Frame("calls", ()))
            self._state = _CALL
            return i
        if state == _CALL:
            frame = self._stack[-1]
            if char == "]" and frame.count == 0 and not self._bare_root:
                return self._close(i, out)
            if char == "{" and not self._strict:
                return self._element(i, out)
            return self._call(text, i, out)
        if state == _KEYWORD:
            frame = self._stack[-1]
            if char == ")" and frame.count == 0:
                return self._close(i, out)
            return self._keyword_start(text, i)
        if state == _VALUE:
            return self._value(text, i, out)
        if state == _DICT_KEY:
            frame = self._stack[-1]
            if char == "}" and frame.count == 0 and frame.kind == "dict":
                self._begin_dict(frame, out)
                return self._close(i, out)
            if char not in "'\"":
                return self._stop()
            return self._open_string(text, i, (), True, out)
        if state == _COLON:
            if char != ":":
                return self._stop()  # a set's "," or "}" among them: the value is a list, not followed
            self._begin_dict(self._stack[-1], out)
            self._state = _VALUE
            return i + 1
        return self._after(text, i, out)

    # -- structure ----------------------------------------------------------------------------------

    def _after(self, text: str, i: int, out: list[Delta]) -> int:
        frame = self._stack[-1]
        char = text[i]
        closer = {"calls": "]", "call": ")", "list": "]", "dict": "}", "element": "}"}[frame.kind]
        if char == ",":
            if (frame.kind == "calls" and self._bare_root) or (frame.kind == "element" and frame.count > 1):
                return self._stop()  # a tuple of calls, a key after a call's arguments: not followed
            self._state = {"calls": _CALL, "call": _KEYWORD, "list": _VALUE, "dict": _DICT_KEY,
                           "element": _DICT_KEY}[frame.kind]
            return i + 1
        if char == closer and not (frame.kind == "calls" and self._bare_root) \
                and not (frame.kind == "element" and frame.count < 2):
            return self._close(i, out)
        return self._stop()

    @staticmethod
    def _begin_dict(frame: _Frame, out: list[Delta]) -> None:
        """A ``{`` is a dict once its first ``:`` or its ``}`` arrives (``{'a', 'b'}`` is a set)."""
        if frame.pending:
            frame.pending = False
            out.append(("begin", frame.path, "object"))

    def _close(self, i: int, out: list[Delta]) -> int:
        frame = self._stack.pop()
        if frame.kind == "call":
            out.append(("end", (*frame.path, "arguments"), None))
        out.append(("end", frame.path, None))
        if frame.kind in ("call", "element") and self._bare_root:  # one call at the root: the list ends too
            self._stack.pop()
            out.append(("end", (), None))
        self._done()
        return i + 1

    def _done(self) -> None:
        if not self._stack:
            self._state = _DONE
            return
        self._stack[-1].count += 1
        self._state = _AFTER

    def _call(self, text: str, i: int, out: list[Delta]) -> int:
        match = self._call_head.match(text, i, partial=True)
        if match is None:
            return self._stop()
        if match.partial:
            return self._keep(text, i)
        name = match.group(1)
        suffix = self._method_suffix
        if suffix is not None and name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
        path: Path = (self._calls,)
        self._calls += 1
        out += [("begin", path, "object"), ("set", (*path, "name"), name),
                ("begin", (*path, "arguments"), "object")]
        self._stack.append(_Frame("call", path))
        self._state = _KEYWORD
        return int(match.end())

    def _element(self, i: int, out: list[Delta]) -> int:
        """A call written as a dict begins (``x-pythonic``; see the module docstring)."""
        path: Path = (self._calls,)
        self._calls += 1
        out.append(("begin", path, "object"))
        self._stack.append(_Frame("element", path))
        self._state = _DICT_KEY
        return i + 1

    def _keyword_start(self, text: str, i: int) -> int:
        match = self._keyword.match(text, i, partial=True)
        if match is None:
            return self._stop()  # a positional argument, ** unpacking, a trailing comma
        if match.partial:
            return self._keep(text, i)
        name = match.group(1)
        frame = self._stack[-1]
        if name in frame.names:
            return self._stop()  # Python would keep the last
        frame.names.add(name)
        self._key = name
        self._state = _VALUE
        return int(match.end())

    def _child(self) -> Path:
        frame = self._stack[-1]
        if frame.kind == "call":
            return (*frame.path, "arguments", self._key)  # type: ignore[arg-type]
        if frame.kind in ("dict", "element"):
            return (*frame.path, self._key)  # type: ignore[arg-type]
        return (*frame.path, frame.count)

    def _value(self, text: str, i: int, out: list[Delta]) -> int:
        char = text[i]
        frame = self._stack[-1]
        if char == "]" and frame.kind == "list" and frame.count == 0:
            return self._close(i, out)
        path = self._child()
        if frame.kind == "element" and char != ("{" if self._key == "arguments" else self._quote_of(char)):
            return self._stop()  # a call's name is a string, its arguments a dict
        if char in "[{":
            if sum(f.kind in ("list", "dict") for f in self._stack) >= _MAX_DEPTH:
                return self._stop()
            kind = "list" if char == "[" else "dict"
            if kind == "list":
                out.append(("begin", path, "array"))
            self._stack.append(_Frame(kind, path))
            self._state = _VALUE if kind == "list" else _DICT_KEY
            return i + 1
        if char in "'\"":
            return self._open_string(text, i, path, False, out)
        if char.isdigit() or char in "+-." or (char == "-" and self._strict):
            return self._number(text, i, path, out)
        if char.isalpha() or char == "_":
            return self._name_value(text, i, path, out)
        return self._stop()

    def _name_value(self, text: str, i: int, path: Path, out: list[Delta]) -> int:
        end = i
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        if end >= len(text):
            return self._keep(text, i)
        word = text[i:end]
        if word not in _NAMED or text[end] in "'\"":
            return self._stop()  # another name, or a string prefix such as r"..."
        out.append(("set", path, _NAMED[word]))
        self._done()
        return end

    def _number(self, text: str, i: int, path: Path, out: list[Delta]) -> int:
        end = i
        n = len(text)
        sign = 1
        if not self._strict:
            while end < n and (text[end] in "+-" or self._space(text[end])):
                if text[end] == "-":
                    sign = -sign
                end += 1
            digits = end
        else:
            digits = end + (1 if text[end] == "-" else 0)
        while end < n and (text[end].isalnum() or text[end] in "._"
                           or (text[end] in "+-" and text[end - 1] in "eE" and end > digits)):
            end += 1
        if end >= n:
            return self._keep(text, i)
        token = text[i:end] if self._strict else text[digits:end]
        value = self._strict_number(token) if self._strict else self._python_number(token, sign)
        if value is None:
            return self._stop()
        out.append(("set", path, value))
        self._done()
        return end

    @staticmethod
    def _strict_number(token: str) -> Any:
        match = _JSON_NUMBER.fullmatch(token)
        if match is None:
            return None
        if match.group(1) is None and match.group(2) is None:
            value = int(token)
            return value if len(token) <= 17 and abs(value) <= _MAX_INTEGER else None
        number = float(token)
        return number if math.isfinite(number) else None

    @staticmethod
    def _python_number(token: str, sign: int) -> Any:
        if not token or not (token[0].isdigit() or token[0] == "."):
            return None
        try:
            value = ast.literal_eval(token)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return -value if sign < 0 else value

    # -- strings ------------------------------------------------------------------------------------

    def _open_string(self, text: str, i: int, path: Path, for_key: bool, out: list[Delta]) -> int:
        quote = text[i]
        if len(text) - i < 3 and text[i:] == quote * (len(text) - i):
            return self._keep(text, i)  # '' at the end: an empty string, or a triple-quoted one
        if text.startswith(quote * 3, i):
            return self._stop()  # a triple-quoted string: not followed
        if not for_key:
            out.append(("begin", path, "string"))
        else:
            self._key_parts = []
        self._quote, self._path, self._for_key = quote, path, for_key
        self._state = _STRING
        return i + 1

    def _string(self, text: str, i: int, out: list[Delta]) -> int:
        quote = self._quote
        n = len(text)
        j = i
        pieces: list[str] = []
        while j < n:
            char = text[j]
            if char == quote:
                self._add(pieces, out)
                self._state = _AFTER_STRING
                return j + 1
            if char == "\\":
                decoded, length = self._escape(text, j)
                if length == 0:
                    self._add(pieces, out)
                    return self._keep(text, j)
                if decoded is None:
                    return self._stop()
                pieces.append(decoded)
                j += length
                continue
            if char in "\n\r":
                return self._stop()  # strings are single-line
            stop = j + 1
            while stop < n and text[stop] not in (quote, "\\", "\n", "\r"):
                stop += 1
            pieces.append(text[j:stop])
            j = stop
        self._add(pieces, out)
        return n

    def _add(self, pieces: list[str], out: list[Delta]) -> None:
        if not pieces:
            return
        piece = "".join(pieces)
        pieces.clear()
        if self._for_key:
            self._key_parts.append(piece)
        elif piece:
            out.append(("text", self._path, piece))

    def _string_end(self, text: str, i: int, out: list[Delta]) -> int:
        """After a closing quote: another string literal continues it (x-pythonic), else it ends."""
        if not self._strict:
            n = len(text)
            j = i
            while j < n and self._space(text[j]):
                j += 1
            if j >= n:
                return self._keep(text, i)
            if text[j] in "'\"":
                if n - j < 3 and text[j:] == text[j] * (n - j):
                    return self._keep(text, i)
                if text.startswith(text[j] * 3, j):
                    return self._stop()
                self._quote, self._state = text[j], _STRING  # "a" "b" is "ab"
                return j + 1
            if text[j] not in _AFTER_VALUE:  # the string's own quote, unescaped (pythonic_repair)
                self._add([self._quote + text[i:j]], out)
                self._state = _STRING
                return j
        if self._for_key:
            key = "".join(self._key_parts)
            frame = self._stack[-1]
            if key in frame.names:
                return self._stop()  # a dict keeps the last
            if frame.kind == "element":
                if key != ("name" if frame.count == 0 else key if key in ("arguments", "parameters") else ""):
                    return self._stop()  # another key, or the arguments before the name
                key = "arguments" if frame.count else key
            frame.names.add(key)
            self._key, self._state = key, _COLON
            return i
        out.append(("end", self._path, None))
        self._done()
        return i

    @staticmethod
    def _quote_of(char: str) -> str:
        """``char`` when it opens a string, else a character no value starts with."""
        return char if char in "'\"" else "\0"

    def _escape(self, text: str, j: int) -> tuple[str | None, int]:
        """``(decoded text, length)`` of the escape at ``j``; length 0: the text ends inside it."""
        n = len(text)
        if j + 1 >= n:
            return None, 0
        code = text[j + 1]
        if self._strict:
            if code in _STRICT_ESCAPES:
                return _STRICT_ESCAPES[code], 2
            if code != "u":
                return None, 2
            if j + 6 > n:
                return None, 0
            if _HEX4.fullmatch(text, j + 2, j + 6) is None:
                return None, 6
            value = int(text[j + 2 : j + 6], 16)
            if 0xDC00 <= value <= 0xDFFF:
                return None, 6
            if 0xD800 <= value <= 0xDBFF:
                if j + 12 > n:
                    return None, 0
                if text[j + 6 : j + 8] != "\\u" or _HEX4.fullmatch(text, j + 8, j + 12) is None:
                    return None, 12
                low = int(text[j + 8 : j + 12], 16)
                if not 0xDC00 <= low <= 0xDFFF:
                    return None, 12
                return chr(0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)), 12
            return chr(value), 6
        size = {"x": 4, "u": 6, "U": 10}.get(code)
        if code == "N":
            close = text.find("}", j)
            if close < 0:
                return None, 0
            size = close + 1 - j
        elif code in _OCTAL:
            size = 2
            while size < 4 and j + size < n and text[j + size] in _OCTAL:
                size += 1
            if size < 4 and j + size >= n:
                return None, 0  # more octal digits may follow
        elif size is None:
            size = 2
        if j + size > n:
            return None, 0
        if code in "\n\r":
            return None, size  # a line continuation inside a string: not followed
        try:
            decoded = ast.literal_eval(self._quote + text[j : j + size] + self._quote)
        except (ValueError, SyntaxError):
            return None, size
        return (decoded if isinstance(decoded, str) else None), size


def pythonic_scanner(args: Mapping[str, Any]) -> PythonicScanner:
    """The scanner of an ``x-pythonic`` region."""
    method = args.get("method")
    return PythonicScanner(strict=False, method=method if isinstance(method, str) else None)


def python_call_list_scanner(args: Mapping[str, Any]) -> PythonicScanner:
    """The scanner of a ``python-call-list`` region."""
    return PythonicScanner(strict=True)
