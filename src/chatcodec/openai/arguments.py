"""The incremental canonical argument writer: a call's arguments as JSON text, while they are written.

The engine's ``region_value`` events (``docs/streaming_values.md``) describe the arguments value as
it grows, in document order, append-only: ``begin`` a container or string, ``text`` appended to a
string, ``set`` a finished value, ``end`` a container or string. :class:`ArgumentWriter` turns
them into fragments of exactly :func:`~chatcodec.openai.messages.arguments_text` of the final
value (``json.dumps(value, ensure_ascii=False)``: ``", "`` and ``": "`` separators, keys in the
order written), so the concatenation of the fragments equals the arguments string of the whole
message, however the output was split. Nothing is held back here: the engine already holds back
what later text could change (an unfinished number or literal, an escape in progress, a string
whose schema type is not decided), and JSON escapes each character on its own, so escaping a
string piece by piece writes what escaping it whole writes.

Arguments that are a string at the top (text a lax parser kept) are written raw, without quotes,
as :func:`~chatcodec.openai.messages.arguments_text` writes them.

Rule kept: the writer only appends; an event that breaks the contract (a path that is not the next
one in document order) stops it (:attr:`ArgumentWriter.broken`), and the stream then settles the
call from the region's final value (``docs/openai.md``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from chatcodec.openai.messages import arguments_text, json_text

__all__ = ["ArgumentWriter", "escape"]

#: What ``json.dumps(..., ensure_ascii=False)`` escapes inside a string.
_ESCAPED = re.compile(r'["\\\x00-\x1f]')
_OPENERS = {"object": "{", "array": "[", "string": '"'}
_CLOSERS = {"object": "}", "array": "]", "string": '"'}


def escape(text: str) -> str:
    """``text`` as the inside of a JSON string (``json.dumps(text, ensure_ascii=False)`` unquoted)."""
    if _ESCAPED.search(text) is None:  # the usual text: nothing to escape
        return text
    return json.dumps(text, ensure_ascii=False)[1:-1]


class _Frame:
    """One open container or string: its kind, its path length and how many children it has."""

    __slots__ = ("count", "depth", "kind")

    def __init__(self, kind: str, depth: int) -> None:
        self.kind = kind
        self.depth = depth
        self.count = 0


class ArgumentWriter:
    """Builds one call's arguments text from value events whose paths start at the arguments.

    Each method returns the fragment the event adds (possibly ``""``).

    Attributes:
        text: everything written so far (the concatenation of the returned fragments).
        complete: the arguments value has ended (nothing more will be written).
        broken: an event did not follow the contract; nothing more is written.
    """

    __slots__ = ("_parts", "_raw", "_stack", "broken", "complete", "started")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._stack: list[_Frame] = []
        self._raw = False  # the arguments are a string at the top: written without quotes
        self.started = False
        self.complete = False
        self.broken = False

    @property
    def text(self) -> str:
        """The arguments text written so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def begin(self, path: list[Any], kind: str) -> str:
        """A container or string (``kind``: ``"object"``, ``"array"``, ``"string"``) starts at ``path``."""
        if kind not in _OPENERS:
            return self._break()
        depth = len(path)
        lead = self._child(path, depth)
        if lead is None:
            return ""
        if not path and kind == "string":
            self._raw = True
            opener = ""
        else:
            opener = _OPENERS[kind]
        self._stack.append(_Frame(kind, depth))
        fragment = lead + opener
        if fragment:  # (_write(), inlined: once per argument value)
            self._parts.append(fragment)
        return fragment

    def add_text(self, path: list[Any], text: str) -> str:
        """``text`` is appended to the string begun at ``path``."""
        stack = self._stack
        if self.broken or not stack or stack[-1].kind != "string" or stack[-1].depth != len(path):
            return self._break()
        if not self._raw and _ESCAPED.search(text) is not None:  # (escape(), inlined: once per chunk)
            text = json.dumps(text, ensure_ascii=False)[1:-1]
        if text:
            self._parts.append(text)
        return text

    def set(self, path: list[Any], value: Any) -> str:
        """The complete value at ``path``."""
        lead = self._child(path, len(path))
        if lead is None:
            return ""
        if not path:
            self.complete = True
            written = arguments_text(value)
        else:
            written = json_text(value)
        return self._write(lead + written)

    def end(self, path: list[Any]) -> str:
        """The container or string begun at ``path`` is complete."""
        stack = self._stack
        if self.broken or not stack or stack[-1].depth != len(path):
            return self._break()
        frame = stack.pop()
        if stack:  # (_write(), inlined: once per argument value)
            closer = _CLOSERS[frame.kind]
            self._parts.append(closer)
            return closer
        self.complete = True
        return self._write("" if self._raw else _CLOSERS[frame.kind])

    def _child(self, path: list[Any], depth: int) -> str | None:
        """What goes before a new value at ``path`` (``depth`` long: its length) (separator, key), or
        ``None`` when it cannot be the next value in document order."""
        if self.broken or self.complete:
            self._break()
            return None
        stack = self._stack
        if not path:
            if self.started:
                self._break()
                return None
            self.started = True
            return ""
        parent = stack[-1] if stack else None
        if parent is None or parent.depth != depth - 1 or parent.kind == "string":
            self._break()
            return None
        key = path[-1]
        if parent.kind == "object":
            if key.__class__ is not str and not isinstance(key, str):  # (no call for the usual key)
                self._break()
                return None
            if _ESCAPED.search(key) is None:  # the usual key: nothing to escape
                lead = f'{", " if parent.count else ""}"{key}": '
            else:
                lead = f"{', ' if parent.count else ''}{json.dumps(key, ensure_ascii=False)}: "
        else:
            if key != parent.count:
                self._break()
                return None
            lead = ", " if parent.count else ""
        parent.count += 1
        return lead

    def _write(self, fragment: str) -> str:
        if fragment:
            self._parts.append(fragment)
        return fragment

    def _break(self) -> str:
        self.broken = True
        return ""
