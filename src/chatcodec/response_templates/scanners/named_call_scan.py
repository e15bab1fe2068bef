"""The value scanner of ``x-named-call``: ``NAME[id_marker ID][arguments_marker]{arguments}``.

The head (the name, the id, the markers) is read character by character; nothing is emitted
until the arguments' ``{``, when the head is certain: the list, its one call object, the id and
the name go out, and the arguments stream through a ``json`` scanner with their paths under
``(0, "arguments")``; when the arguments end, so do the call and the list. A text that the
parser would refuse in the head (no name, an unknown marker, no JSON after the head) refutes the
scanner. ``complete`` is where the JSON scanner says the arguments (and the whitespace after them)
end, as an offset in the region's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.ext_named_call import NAME_STOP
from chatcodec.response_templates.scanners.json_scan import JsonScanner
from chatcodec.response_templates.scanners.protocol import Delta

__all__ = ["NamedCallScanner", "named_call_scanner"]

_LEAD, _NAME, _MARKER, _ID, _SPACE, _ARGUMENTS, _DEAD = range(7)
_ARGS_PATH = (0, "arguments")


class NamedCallScanner:
    """See the module docstring."""

    __slots__ = ("_args_marker", "_at", "_id", "_id_marker", "_inner", "_marker", "_name", "_offset",
                 "_start", "_state", "complete")

    def __init__(self, args: Mapping[str, Any]) -> None:
        self._id_marker: str = args.get("id_marker", "")
        self._args_marker: str = args.get("arguments_marker", "")
        self._state = _LEAD
        self._name: list[str] = []
        self._id: list[str] | None = None
        self._marker = ""  # a marker read so far
        self._inner: JsonScanner | None = None
        self._offset = 0  # region offset of the next chunk fed
        self._at = 0  # region offset of the head character being read
        self._start = 0  # region offset where the JSON arguments start
        self.complete: int | None = None

    @property
    def refuted(self) -> bool:
        """The text can never be one named call (or text follows its arguments)."""
        inner = self._inner
        return self._state == _DEAD or (inner is not None and inner.refuted)

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        i = 0
        while i < len(text) and self._state < _ARGUMENTS:
            self._at = self._offset + i
            self._step(text[i], out)
            i += 1
        if self._state == _ARGUMENTS and i < len(text):
            self._arguments(text[i:], out)
        self._offset += len(text)
        return out

    def end(self) -> list[Delta]:
        inner = self._inner
        return self._mapped(inner.end()) if inner is not None else []

    def _step(self, char: str, out: list[Delta]) -> None:
        state = self._state
        if state == _LEAD:
            if char.isspace():
                return
            if char in NAME_STOP:
                self._state = _DEAD
                return
            self._name.append(char)
            self._state = _NAME
        elif state in (_NAME, _ID):
            if char not in NAME_STOP:
                word = self._name if state == _NAME or self._id is None else self._id
                word.append(char)
                return
            self._after_word(char, out)
        elif state == _MARKER:
            self._marker += char
            for marker in (self._id_marker if self._id is None else "", self._args_marker):
                if marker and self._marker == marker:
                    if marker == self._id_marker and self._id is None:
                        self._id, self._state = [], _ID
                    else:
                        self._state = _SPACE
                    self._marker = ""
                    return
            if not any(marker.startswith(self._marker) for marker in (self._id_marker, self._args_marker)
                       if marker):
                self._state = _DEAD
        elif state == _SPACE and not char.isspace():
            self._json_start(char, out)

    def _after_word(self, char: str, out: list[Delta]) -> None:
        if char == "[":
            self._marker, self._state = "[", _MARKER
        elif char.isspace():
            self._state = _SPACE
        else:
            self._json_start(char, out)

    def _json_start(self, char: str, out: list[Delta]) -> None:
        if char != "{":
            self._state = _DEAD
            return
        self._state = _ARGUMENTS
        self._inner = JsonScanner({})
        self._start = self._at
        out += [("begin", (), "array"), ("begin", (0,), "object")]
        if self._id:
            out.append(("set", (0, "id"), "".join(self._id)))
        out.append(("set", (0, "name"), "".join(self._name)))
        self._arguments(char, out)

    def _arguments(self, text: str, out: list[Delta]) -> None:
        inner = self._inner
        assert inner is not None
        out += self._mapped(inner.feed(text))
        if inner.complete is not None and self.complete is None:
            self.complete = self._start + inner.complete

    def _mapped(self, deltas: list[Delta]) -> list[Delta]:
        out: list[Delta] = []
        for op, path, payload in deltas:
            out.append((op, _ARGS_PATH + path, payload))
            if op == "end" and not path:
                out += [("end", (0,), None), ("end", (), None)]
        return out


def named_call_scanner(args: Mapping[str, Any]) -> NamedCallScanner:
    """The scanner of an ``x-named-call`` region (see the module docstring)."""
    return NamedCallScanner(args)
