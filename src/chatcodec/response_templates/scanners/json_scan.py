"""The value scanner of the ``json`` content parser, and the JSON reader other scanners build on.

:class:`JsonReader` reads one JSON value incrementally and emits its deltas (paths relative to the
value): containers and strings ``begin`` when their first character arrives, a string's text as it
comes (an escape sequence is held until complete; a high surrogate until the next escape says
whether it pairs), numbers are ``set`` once the character after them arrives, ``true``/``false``/
``null`` once complete, keys once closed. It follows exactly the grammar :func:`json.loads` accepts
(ASCII digits, strict strings: no raw control characters, JSON whitespace only), plus the ``json``
parser's dialect (``lax_json``): ``unquoted_keys`` (a ``\\w+`` key where a key may stand) and
``string_delims`` (verbatim strings between delimiters; a delimiter inside a ``"..."`` string, or
the reserved ``\\x01``/``\\x02``, stops the reader, since the dialect's rewrite would change the text
there). Anything else it does not follow stops it (*dead*): a repeated key, nesting deeper than
``MAX_NESTING_DEPTH``, invalid JSON.

:class:`JsonScanner` is the ``json`` parser's scanner: one value and whitespace, then anything
else refutes it (``complete``). With ``allow_non_json``, :class:`JsonOrTextScanner` emits nothing
while the text may still be JSON and streams it as text once it cannot be.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

import regex

from chatcodec.response_templates.lax_json import SENTINEL_CLOSE, SENTINEL_OPEN, decode_number
from chatcodec.response_templates.limits import MAX_NESTING_DEPTH
from chatcodec.response_templates.scanners.protocol import Delta, Path
from chatcodec.response_templates.scanners.text_run import NOTHING, TextRun

__all__ = ["STRING_WATCH", "JsonOrTextScanner", "JsonReader", "JsonScanner", "json_scanner"]

# ASCII classes: the standard ``re`` module runs them in about half the time of ``regex`` on the
# short texts of a stream (``\w`` stays with ``regex``, whose idea of a word character the
# ``unquoted_keys`` dialect shares)
_WS = cast("_Run", re.compile(r"[ \t\n\r]*"))
_QUOTED_RUN = cast("_Run", re.compile(r'[^"\\\x00-\x1f]*'))
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_NUMBER_CHARS = cast("_Run", re.compile(r"[-+0-9.eE]*"))
_LETTERS = cast("_Run", re.compile(r"[a-zA-Z]*"))
_WORD = regex.compile(r"\w*")
_LITERALS = {"true": True, "false": False, "null": None}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")

#: What a reader state watches on its short path (``scanners.text_run``): inside a ``"..."``
#: string its end, an escape or a control character; in a number anything that cannot continue it;
#: between tokens anything but JSON whitespace.
STRING_WATCH = (r'["\\\x00-\x1f]',)
_NUMBER_WATCH = ("[^-+0-9.eE]",)
_SPACE_WATCH = (r"[^ \t\n\r]",)
_NOTHING_WATCH = (NOTHING,)


class _Run(Protocol):
    """A pattern of the form ``[...]*``: it matches (maybe nothing) at every position."""

    def match(self, string: str, pos: int = 0) -> re.Match[str]: ...


# reader states
_VALUE, _ARRAY_FIRST, _OBJECT_FIRST, _KEY, _COLON, _AFTER = range(6)
_STRING, _NUMBER_RUN, _LITERAL, _BARE_KEY, _DONE, _DEAD = range(6, 12)


class Frame:
    """One open array or object while a value is read: its ``path``, whether it is an object, how
    many items it has so far (``count``) and, for an object, the keys it has read (``keys``: a key
    given twice is refused)."""

    __slots__ = ("count", "is_object", "keys", "path")

    def __init__(self, path: Path, is_object: bool) -> None:
        self.path = path
        self.is_object = is_object
        self.count = 0
        self.keys: set[str] = set()


class JsonReader:
    """Reads one JSON value (in the ``json`` parser's dialect) and emits its deltas into ``out``.

    Args:
        string_delims: the dialect's ``[open, close]`` string delimiter pairs.
        unquoted_keys: accept bare ``\\w+`` keys.
        base: prefix of every emitted path.

    Attributes:
        out: the deltas emitted so far (the caller takes them).
        state: ``done`` once the value is complete, ``dead`` once the reader stopped following.
    """

    def __init__(self, string_delims: Sequence[Sequence[str]] = (), unquoted_keys: bool = False,
                 base: Path = ()) -> None:
        self.out: list[Delta] = []
        #: the text can never be JSON in this dialect (set when the reader stops for that reason)
        self.refuted = False
        self._pairs = [(str(a), str(b)) for a, b in string_delims] if string_delims else []
        self._unquoted = unquoted_keys
        self._base = base
        self._stack: list[Frame] = []
        self._state = _VALUE
        self._key: str | None = None  # the key whose value comes next
        self._path: Path = base  # the path of the string/number/literal being read
        self._is_key = False  # the string being read is a key
        self._closer = '"'  # what ends the string being read
        self._run: list[str] = []  # key text, number or literal characters, held string text
        self._carry = ""  # an escape sequence or a delimiter start cut off by the chunk end
        self._high: str | None = None  # a high surrogate waiting for its pair
        self._text: list[str] = []  # string text to emit at the next flush
        if self._pairs:
            self._opens = regex.compile("|".join(regex.escape(a) for a, _ in self._pairs))
            inside = "|".join(regex.escape(a) for a, _ in self._pairs)
            self._special = regex.compile(f'["\\\\\\x00-\\x1f]|{inside}')
        else:
            self._special = None

    @property
    def done(self) -> bool:
        """The value is complete."""
        return self._state == _DONE

    @property
    def dead(self) -> bool:
        """The reader stopped following (the text is not JSON it can follow)."""
        return self._state == _DEAD

    def stop(self, refuted: bool = False) -> None:
        """Stop following: nothing more is emitted (``refuted``: the text can never be valid)."""
        self._flush()
        self._state = _DEAD
        self.refuted = self.refuted or refuted

    # -- reading ----------------------------------------------------------------------------------

    def feed(self, text: str, i: int = 0) -> int:
        """Read ``text[i:]``; return where reading stopped: ``len(text)``, or just after the value
        when it completed (a number completes at the character after it, which is not read)."""
        if self._state >= _DONE:
            return i
        if self._pairs and (SENTINEL_OPEN in text or SENTINEL_CLOSE in text):
            # the dialect refuses the whole text: follow it up to the reserved character, then stop
            cut = min(at for at in (text.find(SENTINEL_OPEN, i), text.find(SENTINEL_CLOSE, i)) if at >= 0)
            self.feed(text[:cut], i)
            self.stop(refuted=True)
            return len(text)
        carry = self._carry
        if not carry:
            if self._state == _STRING and self._special is None and self._high is None \
                    and self._closer == '"' and not self._is_key and not self._text:
                end: int = _QUOTED_RUN.match(text, i).end()
                if end == len(text):  # plain string text to the end of the chunk
                    if end > i:
                        self.out.append(("text", self._path, text[i:]))
                    return end
            return self._read(text, i)
        self._carry = ""
        at = self._read(carry + text[i:], 0)
        return max(i, i + at - len(carry))

    def plain_string(self) -> Path | None:
        """The path of the value string being read when a chunk without a quote, a backslash or a
        control character (:data:`STRING_WATCH`) only adds its text there (``feed`` then emits
        one text delta and changes nothing else), else ``None`` (a key, an escape or a delimiter
        start cut off, the ``string_delims`` dialect, any other state)."""
        if self._state != _STRING or self._is_key or self._carry or self._pairs or self._closer != '"' \
                or self._high is not None or self._text:
            return None
        return self._path

    def finish(self) -> None:
        """The text ended: a number at the very end is complete."""
        if self._state == _NUMBER_RUN and not self._stack:
            self._end_number()
        self._flush()

    def _read(self, text: str, i: int) -> int:
        n = len(text)
        while i < n:
            state = self._state
            if state == _STRING:
                i = self._string(text, i)
                continue
            if state == _NUMBER_RUN:
                m = _NUMBER_CHARS.match(text, i)
                self._run.append(m.group())
                i = m.end()
                if i < n:
                    self._end_number()
                continue
            if state == _LITERAL:
                i = self._literal(text, i)
                continue
            if state == _BARE_KEY:
                m = _WORD.match(text, i)
                self._run.append(m.group())
                i = m.end()
                if i < n:
                    self._bare_key_end()
                continue
            if state >= _DONE:
                break
            i = _WS.match(text, i).end()
            if i >= n:
                break
            i = self._structural(text, i)
        if self._text:  # _flush's own test
            self._flush()
        return i

    def _structural(self, text: str, i: int) -> int:
        char = text[i]
        state = self._state
        if state in (_VALUE, _ARRAY_FIRST):
            if state == _ARRAY_FIRST and char == "]":
                return self._close_container(i)
            return self._value_start(text, i)
        if state in (_OBJECT_FIRST, _KEY):
            if state == _OBJECT_FIRST and char == "}":
                return self._close_container(i)
            return self._key_start(text, i)
        if state == _COLON:
            if char != ":":
                return self._die(i)
            self._state = _VALUE
            return i + 1
        # _AFTER: a value inside a container ended
        frame = self._stack[-1]
        if char == ",":
            self._state = _KEY if frame.is_object else _VALUE
            return i + 1
        if char == ("}" if frame.is_object else "]"):
            return self._close_container(i)
        return self._die(i)

    def _die(self, i: int, refuted: bool = True) -> int:
        self.stop(refuted)
        return i

    def _child_path(self) -> Path:
        if not self._stack:
            return self._base
        frame = self._stack[-1]
        return (*frame.path, self._key if frame.is_object else frame.count)  # type: ignore[arg-type]

    def _value_start(self, text: str, i: int) -> int:
        char = text[i]
        path = self._child_path()
        if char in "{[":
            if len(self._stack) >= MAX_NESTING_DEPTH:
                return self._die(i)
            is_object = char == "{"
            self._emit(("begin", path, "object" if is_object else "array"))
            self._stack.append(Frame(path, is_object))
            self._state = _OBJECT_FIRST if is_object else _ARRAY_FIRST
            return i + 1
        if char == '"':
            self._emit(("begin", path, "string"))
            return self._open_string(path, '"', False, i + 1)
        if self._pairs:
            opened = self._delimiter_at(text, i)
            if opened == "":
                return len(text)  # the start of a delimiter, cut off
            if opened is not None:
                self._emit(("begin", path, "string"))
                return self._open_string(path, opened[1], False, i + len(opened[0]))
        if char == "-" or "0" <= char <= "9":
            self._path, self._run, self._state = path, [], _NUMBER_RUN
            return i
        if "a" <= char <= "z" or "A" <= char <= "Z":
            self._path, self._run, self._state = path, [], _LITERAL
            return i
        return self._die(i)

    def _key_start(self, text: str, i: int) -> int:
        char = text[i]
        if char == '"':
            return self._open_string((), '"', True, i + 1)
        if self._pairs:
            opened = self._delimiter_at(text, i)
            if opened == "":
                return len(text)
            if opened is not None:
                return self._open_string((), opened[1], True, i + len(opened[0]))
        if self._unquoted and _WORD.match(text, i).end() > i:
            self._run, self._state = [], _BARE_KEY
            return i
        return self._die(i)

    def _delimiter_at(self, text: str, i: int) -> tuple[str, str] | str | None:
        """The pair whose open starts at ``i``; ``""`` when the text ends inside one; else ``None``."""
        for opening, closing in self._pairs:
            if text.startswith(opening, i):
                return opening, closing
        rest = text[i:]
        if any(len(opening) > len(rest) and opening.startswith(rest) for opening, _ in self._pairs):
            self._carry = rest
            return ""
        return None

    def _open_string(self, path: Path, closer: str, is_key: bool, i: int) -> int:
        self._path, self._closer, self._is_key, self._run = path, closer, is_key, []
        self._state = _STRING
        return i

    def _string(self, text: str, i: int) -> int:
        """Read string text from ``i``; return where reading continues."""
        if self._closer != '"':
            return self._delimited(text, i)
        n = len(text)
        if self._high is not None:
            i = self._pair_surrogate(text, i)
            if i < 0:
                return n
        if self._special is None:
            end = _QUOTED_RUN.match(text, i).end()
            hold = 0
        else:
            m = self._special.search(text, i)
            end = n if m is None else m.start()
            hold = self._open_prefix(text, i) if m is None else 0
        if end - hold > i:
            self._add_text(text[i : end - hold])
        if end >= n:
            self._carry = text[n - hold :] if hold else ""
            return n
        char = text[end]
        if char == '"':
            return self._end_string(end + 1)
        if char == "\\":
            return self._escape(text, end)
        return self._die(end, char != "\\" and char < " ")  # a control character, or a delimiter

    def _open_prefix(self, text: str, i: int) -> int:
        """How many characters at the end of ``text[i:]`` may start a string delimiter."""
        longest = max(len(a) for a, _ in self._pairs) - 1
        for size in range(min(longest, len(text) - i), 0, -1):
            tail = text[len(text) - size :]
            if any(a.startswith(tail) for a, _ in self._pairs):
                return size
        return 0

    def _escape(self, text: str, at: int) -> int:
        n = len(text)
        if at + 1 >= n:
            self._carry = text[at:]
            return n
        code = text[at + 1]
        if code in _ESCAPES:
            self._add_text(_ESCAPES[code])
            return at + 2
        if code != "u":
            return self._die(at)
        if at + 6 > n:
            self._carry = text[at:]
            return n
        digits = text[at + 2 : at + 6]
        if not _HEX.issuperset(digits):
            return self._die(at)
        value = int(digits, 16)
        if 0xD800 <= value <= 0xDBFF:
            self._high = chr(value)
            return at + 6
        self._add_text(chr(value))
        return at + 6

    def _pair_surrogate(self, text: str, i: int) -> int:
        """After a high surrogate: pair it with a following ``\\uDC00``-``\\uDFFF`` escape, or keep it
        alone (as :func:`json.loads` does). Returns ``-1`` when more text is needed."""
        n = len(text)
        high = self._high
        if i + 6 > n and text.startswith("\\u"[: n - i], i):
            self._carry = text[i:]
            return -1
        self._high = None
        if text.startswith("\\u", i):
            digits = text[i + 2 : i + 6]
            if not _HEX.issuperset(digits):
                self.stop(refuted=True)
                return -1
            low = int(digits, 16)
            if 0xDC00 <= low <= 0xDFFF:
                self._add_text(chr(0x10000 + ((ord(high) - 0xD800) << 10) + (low - 0xDC00)))  # type: ignore[arg-type]
                return i + 6
        self._add_text(high)  # type: ignore[arg-type]
        return i

    def _delimited(self, text: str, i: int) -> int:
        closer = self._closer
        n = len(text)
        end = text.find(closer, i)
        stop = n if end < 0 else end
        inner = text[i:stop]
        earlier = [a for a, b in self._pairs[: self._pair_index(closer)]]
        if any(a in inner for a in earlier):
            return self._die(i, False)  # the dialect sets the earlier pair aside first: not followed
        if end < 0:
            hold = next((size for size in range(min(len(closer) - 1, n - i), 0, -1)
                         if closer.startswith(text[n - size :])), 0)
            if n - hold > i:
                self._add_text(text[i : n - hold])
            self._carry = text[n - hold :] if hold else ""
            return n
        if inner:
            self._add_text(inner)
        return self._end_string(end + len(closer))

    def _pair_index(self, closer: str) -> int:
        return next(index for index, (_, b) in enumerate(self._pairs) if b == closer)

    def _add_text(self, piece: str) -> None:
        if self._is_key:
            self._run.append(piece)
        else:
            self._text.append(piece)

    def _flush(self) -> None:
        if self._text:
            self.out.append(("text", self._path, "".join(self._text)))
            self._text = []

    def _emit(self, delta: Delta) -> None:
        if self._text:
            self._flush()
        self.out.append(delta)

    def _end_string(self, i: int) -> int:
        if self._is_key:
            key = "".join(self._run)
            return self._take_key(key, i)
        self._emit(("end", self._path, None))
        self._value_done()
        return i

    def _take_key(self, key: str, i: int) -> int:
        frame = self._stack[-1]
        if key in frame.keys:
            return self._die(i)  # a repeated key: an error (a dict would keep the last value)
        frame.keys.add(key)
        self._key, self._state, self._is_key = key, _COLON, False
        return i

    def _bare_key_end(self) -> None:
        self._take_key("".join(self._run), 0)

    def _literal(self, text: str, i: int) -> int:
        m = _LETTERS.match(text, i)
        self._run.append(m.group())
        word = "".join(self._run)
        if word in _LITERALS:
            self._emit(("set", self._path, _LITERALS[word]))
            self._value_done()
            return int(m.end())
        if m.end() == len(text) and any(literal.startswith(word) for literal in _LITERALS):
            return len(text)
        return self._die(i)

    def _end_number(self) -> None:
        run = "".join(self._run)
        if _NUMBER.fullmatch(run) is None:
            self.stop(refuted=True)
            return
        try:  # an integer is what the decoder's ``parse_int`` (``int``) makes of it, without the decoder
            value = int(run) if "." not in run and "e" not in run and "E" not in run else decode_number(run)
        except ValueError:  # an integer too long for Python's int()
            self.stop(refuted=True)
            return
        self._emit(("set", self._path, value))
        self._value_done()

    def _close_container(self, i: int) -> int:
        frame = self._stack.pop()
        self._emit(("end", frame.path, None))
        self._value_done()
        return i + 1

    def _value_done(self) -> None:
        if not self._stack:
            self._state = _DONE
            return
        frame = self._stack[-1]
        frame.count += 1
        self._state = _AFTER


class JsonScanner:
    """The ``json`` parser's scanner: one value, then only JSON whitespace (see the module docstring)."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        self._reader = JsonReader(args.get("string_delims") or (), bool(args.get("unquoted_keys")))
        self._offset = 0
        self.complete: int | None = None

    @property
    def refuted(self) -> bool:
        """The text can never be one JSON value (invalid, or text after the value)."""
        return self._reader.refuted or self.complete is not None

    def feed(self, text: str) -> list[Delta]:
        reader = self._reader
        if self.complete is None and reader._state != _DEAD:  # the reader's own state, read directly
            i = reader.feed(text) if reader._state != _DONE else 0
            if reader._state == _DONE and i < len(text):
                i = _WS.match(text, i).end()
                if i < len(text):
                    self.complete = self._offset + i
        self._offset += len(text)
        out, reader.out = reader.out, []
        return out

    def text_run(self) -> TextRun | None:
        """The short path of the current state (``scanners.text_run``): the reader's, or, once the
        value and the whitespace after it ended, every chunk is plain."""
        if self.complete is not None:
            return _NOTHING_WATCH, None
        reader = self._reader  # the reader's own state, read directly (as feed does)
        if reader._carry or reader._pairs:
            return None
        state = reader._state
        if state == _STRING:
            if reader._closer != '"' or reader._high is not None or reader._text:
                return None
            return STRING_WATCH, None if reader._is_key else reader._path
        if state == _NUMBER_RUN:
            return _NUMBER_WATCH, None
        if state <= _AFTER or state == _DONE:
            return _SPACE_WATCH, None
        return None

    def skip(self, text: str) -> None:
        """Take ``text``, plain chunks of the last :meth:`text_run` (``scanners.text_run``)."""
        self._offset += len(text)
        reader = self._reader  # the reader's own state, read directly: a key's or a number's text is kept
        state = reader._state
        if self.complete is None and (state == _NUMBER_RUN or (state == _STRING and reader._is_key)):
            reader._run.append(text)

    def end(self) -> list[Delta]:
        self._reader.finish()
        out, self._reader.out = self._reader.out, []
        return out


class JsonOrTextScanner:
    """``json`` with ``allow_non_json``: the value is the JSON, or the raw text when it is not JSON.

    While the text so far may still be JSON nothing is certain (``"a"`` is the string ``a`` as JSON,
    ``"a"`` with quotes as text), so nothing is emitted; once the JSON reader is refuted the value
    is the text: it is begun as a string and streams from then on (stripped as ``strip`` says). If
    the text ends as valid JSON, the value is completed from the parser's result.
    """

    def __init__(self, args: Mapping[str, Any]) -> None:
        self._json = JsonScanner(args)
        self._held: list[str] = []
        self._text: Any = None  # the TextScanner once the value is known to be text
        self._strip = args.get("strip", True)
        self.complete: int | None = None

    def feed(self, text: str) -> list[Delta]:
        if self._text is not None:
            return list(self._text.feed(text))
        self._held.append(text)
        self._json.feed(text)
        if not self._json.refuted:
            return []
        from chatcodec.response_templates.scanners.text_scan import TextScanner

        self._text = TextScanner(self._strip)
        held, self._held = "".join(self._held), []
        return list(self._text.feed(held))

    def end(self) -> list[Delta]:
        return list(self._text.end()) if self._text is not None else []


def json_scanner(args: Mapping[str, Any]) -> JsonScanner | JsonOrTextScanner:
    """The scanner of a ``json`` region (see the module docstring)."""
    if args.get("allow_non_json"):
        return JsonOrTextScanner(args)
    return JsonScanner(args)
