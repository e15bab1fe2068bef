"""The value scanner of ``x-bare-object``: ``{key:value,...}`` with bare keys, as it is written.

It follows :mod:`..ext_bare_object`'s reader step by step: an object (the root must be one) or array
begins at its bracket; a delimited string value (``<|"|>...<|"|>``) streams verbatim, holding back
what may be the start of its closing delimiter; a JSON string value streams through
:class:`~.json_scan.JsonReader`; a bare value (``3``, ``true``, ``None``) is ``set`` once the ``,``,
``}`` or ``]`` after it arrives (with ``bare_strings``, any other word too, as a string; in an object
a ``,`` ends it only once the text after the ``,`` shows that it may begin a key, as the parser's
``bare_value_end`` decides). A key is
emitted with its value: a string key when it closes, a bare key (text up to the first ``:`` that a
value follows, as the parser decides; with ``bare_strings`` looked for only before the next ``,``,
``}`` or ``]``) once the start of the value after that ``:`` shows it is one. A repeated key,
nesting deeper than the parser allows and anything it would refuse stop the scanner. With
``inner_close_as``, a close delimiter is held until the text after it shows whether it ends the
string (``delim_closes``): if not, the replacement text streams in its place. With
``single_quotes``, a value that begins with ``'`` is set whole once a ``'`` that a ``,``, ``}`` or
``]`` follows ends it (``quote_closes``); until then it is kept, since without one the parser reads
a bare word. Whitespace is what :meth:`str.isspace` says.

``complete``: after the root object, the first character that is not whitespace ends it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.content import parse_float, parse_int
from chatcodec.response_templates.ext_bare_object import (
    MAX_DEPTH,
    bare_value_end,
    bare_word_end,
    delim_closes,
    quote_closes,
)
from chatcodec.response_templates.scanners.json_scan import Frame, JsonReader
from chatcodec.response_templates.scanners.protocol import Delta, Path

__all__ = ["BareObjectScanner", "bare_object_scanner"]

_NAMED = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}
_UNDECIDED = object()
_NOT_A_VALUE = object()

# states
_VALUE, _KEY, _COLON, _AFTER, _DONE, _DEAD = range(6)


def _bare(word: str) -> Any:
    """The value of a bare word (stripped), or ``_NOT_A_VALUE``."""
    if not word:
        return _NOT_A_VALUE
    if word in _NAMED:
        return _NAMED[word]
    try:
        return parse_int(word)
    except ValueError:
        pass
    try:
        number = parse_float(word)
    except ValueError:
        return _NOT_A_VALUE
    if math.isinf(number) and any(char.isdigit() for char in word):
        return word  # a number too large for a float keeps its text, as the whole-text parser does
    return number if math.isfinite(number) else _NOT_A_VALUE


class BareObjectScanner:
    """See the module docstring."""

    def __init__(self, string_delims: list[tuple[str, str]], bare_strings: bool = False,
                 inner_close_as: str | None = None, single_quotes: bool = False,
                 separators: str = ":") -> None:
        self._delims = string_delims
        self._bare_strings = bare_strings
        self._inner = inner_close_as
        self._after_string = False  # in _AFTER: the value just read was a delimited string
        self._single = single_quotes
        self._seps = separators  # what may end a key
        self._quote_from = 1  # where, after the ', the look for its end goes on
        self._stack: list[Frame] = []
        self._state = _VALUE
        self._first = False  # in _KEY: right after "{" (a "}" may come)
        self._carry = ""  # undecided text: a bare key or value, a delimiter start
        self._offset = 0  # region offset of the text being read (carry included)
        self._key: str | None = None
        self._path: Path = ()
        self._reader: JsonReader | None = None  # a JSON string being read
        self._reader_key = False
        self._closer: str | None = None  # a delimited string being read
        self._closer_key = False
        self._key_parts: list[str] = []
        self.complete: int | None = None

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if self._state == _DEAD:
            return out
        text = self._carry + text
        start = self._offset - len(self._carry)
        self._carry = ""
        self._offset = start + len(text)
        i = 0
        while i < len(text) and self._state < _DEAD and self.complete is None:
            i = self._step(text, i, out)
        return out

    def end(self) -> list[Delta]:
        return []  # what is still undecided (a bare value without its terminator) is an error

    def _dead(self) -> int:
        self._state = _DEAD
        return 1 << 62

    def _child(self) -> Path:
        if not self._stack:
            return ()
        frame = self._stack[-1]
        return (*frame.path, self._key if frame.is_object else frame.count)  # type: ignore[arg-type]

    def _step(self, text: str, i: int, out: list[Delta]) -> int:
        if self._reader is not None:
            return self._json_string(text, i, out)
        if self._closer is not None:
            return self._delimited(text, i, out)
        n = len(text)
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return n
        state = self._state
        if state == _DONE:
            self.complete = self._offset - n + i
            return n
        if state == _VALUE:
            return self._value(text, i, out)
        if state == _KEY:
            if self._first and text[i] == "}":
                return self._close(i, out)
            return self._key_start(text, i, out)
        if state == _COLON:
            if text[i] not in self._seps:
                return self._dead()
            self._state = _VALUE
            return i + 1
        frame = self._stack[-1]  # _AFTER
        if text[i] == ",":
            self._state, self._first = (_KEY, False) if frame.is_object else (_VALUE, False)
            return i + 1
        if text[i] == ("}" if frame.is_object else "]"):
            return self._close(i, out)
        if self._after_string and frame.is_object and text[i] not in "]:":
            self._state, self._first = _KEY, False  # its close showed a bare key and ':' follow
            return i
        return self._dead()

    def _close(self, i: int, out: list[Delta]) -> int:
        frame = self._stack.pop()
        out.append(("end", frame.path, None))
        self._done()
        return i + 1

    def _done(self) -> None:
        self._after_string = False
        if not self._stack:
            self._state = _DONE
        else:
            self._stack[-1].count += 1
            self._state = _AFTER

    def _value(self, text: str, i: int, out: list[Delta]) -> int:
        char = text[i]
        path = self._child()
        if not self._stack and char != "{":
            return self._dead()  # the root is an object
        if char in "{[":
            if len(self._stack) >= MAX_DEPTH:
                return self._dead()
            out.append(("begin", path, "object" if char == "{" else "array"))
            self._stack.append(Frame(path, char == "{"))
            self._state, self._first = (_KEY, True) if char == "{" else (_VALUE, False)
            if char == "[":
                self._first = True
            return i + 1
        if char == "]" and self._first and not self._stack[-1].is_object:
            return self._close(i, out)
        if char == "'" and self._single:
            return self._single_quoted(text, i, path, out)
        opened = self._open_delimiter(text, i)
        if opened is _UNDECIDED:
            return len(text)
        if opened is not None:
            out.append(("begin", path, "string"))
            self._closer, self._closer_key, self._path = opened[1], False, path
            return i + len(opened[0])
        if char == '"':
            out.append(("begin", path, "string"))
            self._reader, self._reader_key = JsonReader(base=path), False
            return i
        return self._bare_value(text, i, path, out)

    def _open_delimiter(self, text: str, i: int) -> Any:
        for opening, closing in self._delims:
            if text.startswith(opening, i):
                return opening, closing
        rest = text[i:]
        if any(len(opening) > len(rest) and opening.startswith(rest) for opening, _ in self._delims):
            self._carry = rest
            return _UNDECIDED
        return None

    def _bare_value(self, text: str, i: int, path: Path, out: list[Delta]) -> int:
        if self._bare_strings and self._stack[-1].is_object:
            end = bare_value_end(text, i, self._delims, final=False, separators=self._seps)
        else:
            end = _terminator(text, i)
        if end < 0:
            self._carry = text[i:]
            return len(text)
        word = text[i:end].strip()
        value = _bare(word)
        if value is _NOT_A_VALUE:
            if not (self._bare_strings and word):
                return self._dead()
            value = word
        out.append(("set", path, value))
        self._done()
        return end

    def _json_string(self, text: str, i: int, out: list[Delta]) -> int:
        reader = self._reader
        assert reader is not None
        i = reader.feed(text, i)
        deltas, reader.out = reader.out, []
        if self._reader_key:
            self._key_parts += [payload for op, _, payload in deltas if op == "text"]
        else:
            out += [delta for delta in deltas if delta[0] != "begin"]
        if reader.dead:
            return self._dead()
        if reader.done:
            self._reader = None
            if self._reader_key:
                return self._take_key("".join(self._key_parts), i, _COLON)
            self._done()
        return i

    def _delimited(self, text: str, i: int, out: list[Delta]) -> int:
        closer = self._closer
        assert closer is not None
        n = len(text)
        end = text.find(closer, i)
        if end < 0:
            hold = next((size for size in range(min(len(closer) - 1, n - i), 0, -1)
                         if closer.startswith(text[n - size :])), 0)
            piece = text[i : n - hold]
            self._carry = text[n - hold :] if hold else ""
            if piece:
                if self._closer_key:
                    self._key_parts.append(piece)
                else:
                    out.append(("text", self._path, piece))
            return n
        piece = text[i:end]
        if self._inner is not None:
            closes = delim_closes(text, end + len(closer), final=False, separators=self._seps)
            if not closes:  # text of the string, or undecided: what follows the delimiter decides
                if closes is None:
                    self._carry = text[end:]
                else:
                    piece += self._inner
                if self._closer_key:
                    self._key_parts.append(piece)
                elif piece:
                    out.append(("text", self._path, piece))
                return n if closes is None else end + len(closer)
        self._closer = None
        if self._closer_key:
            return self._take_key("".join(self._key_parts) + piece, end + len(closer), _COLON)
        if piece:
            out.append(("text", self._path, piece))
        out.append(("end", self._path, None))
        self._done()
        self._after_string = True
        return end + len(closer)

    def _single_quoted(self, text: str, i: int, path: Path, out: list[Delta]) -> int:
        """A value that begins with ``'`` (``single_quotes``): set whole once a ``'`` ends it.

        Until then it is kept: the ``'`` that ends it may still come, and if none does the parser
        reads a bare word (quote included), which the scanner leaves to the value at close.
        """
        search = i + self._quote_from
        while True:
            end = text.find("'", search)
            closes = None if end < 0 else quote_closes(text, end + 1, final=False)
            if closes is None:  # keep it; look again from where this look stopped
                self._carry = text[i:]
                self._quote_from = (len(text) if end < 0 else end) - i
                return len(text)
            if closes:
                self._quote_from = 1
                out.append(("set", path, text[i + 1 : end]))
                self._done()
                return end + 1
            search = end + 1

    def _key_start(self, text: str, i: int, out: list[Delta]) -> int:
        self._key_parts = []
        opened = self._open_delimiter(text, i)
        if opened is _UNDECIDED:
            return len(text)
        if opened is not None:
            self._closer, self._closer_key = opened[1], True
            return i + len(opened[0])
        if text[i] == '"':
            self._reader, self._reader_key = JsonReader(), True
            return i
        return self._bare_key(text, i)

    def _bare_key(self, text: str, i: int) -> int:
        """A bare key: the text up to the first ``:`` that a value follows (undecided: kept).

        With ``bare_strings`` only the colons before the next ``,``, ``}`` or ``]`` count, and when
        that character has arrived and no colon before it has such a value, the first one ends the key.
        """
        limit = bare_word_end(text, i) if self._bare_strings else -1
        end = len(text) if limit < 0 else limit
        separator = ":"
        if "=" in self._seps and text.find(":", i, end) < 0:
            if limit < 0:  # a ':' may still come before the span ends
                self._carry = text[i:]
                return len(text)
            separator = "="  # equals_keys: the key's span holds no ':'
        colon = first = text.find(separator, i, end)
        while colon >= 0:
            follows = self._value_follows(text, colon + 1)
            if follows is _UNDECIDED:
                self._carry = text[i:]
                return len(text)
            if follows:
                return self._take_key(text[i:colon].strip(), colon + 1, _VALUE)
            colon = text.find(separator, colon + 1, end)
        if limit >= 0:
            if first < 0:
                return self._dead()
            return self._take_key(text[i:first].strip(), first + 1, _VALUE)
        self._carry = text[i:]
        return len(text)

    def _value_follows(self, text: str, i: int) -> Any:
        n = len(text)
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return _UNDECIDED
        if text[i] in '{["' or (text[i] == "'" and self._single):
            return True
        for opening, _ in self._delims:
            if text.startswith(opening, i):
                return True
            if opening.startswith(text[i:]):
                return _UNDECIDED
        end = _terminator(text, i)
        if end < 0:
            return _UNDECIDED
        return _bare(text[i:end].strip()) is not _NOT_A_VALUE

    def _take_key(self, key: str, i: int, state: int) -> int:
        frame = self._stack[-1]
        if key in frame.keys:
            return self._dead()  # a dict would keep the last value
        frame.keys.add(key)
        self._key, self._state = key, state
        return i


_terminator = bare_word_end


def bare_object_scanner(args: Mapping[str, Any]) -> BareObjectScanner:
    """The scanner of an ``x-bare-object`` region."""
    return BareObjectScanner([(str(a), str(b)) for a, b in args.get("string_delims", [])],
                             bool(args.get("bare_strings")), args.get("inner_close_as"),
                             bool(args.get("single_quotes")), ":=" if args.get("equals_keys") else ":")
