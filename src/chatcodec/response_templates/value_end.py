"""A region that ends where its value ends: the ``close_at_value_end`` field key (chatcodec extension).

Some formats write a tool call bare, with no close marker, and go on with prose or another block
after it (Llama 3's ``{"name": ..., "parameters": ...}``, ``;``- or newline-separated JSON calls).
A field with ``"close_at_value_end": true`` closes its region where its content parser's value is
complete: its value scanner (:mod:`.scanners`) reads the region's text as it is routed, and the
first character that cannot continue the value (after a JSON value, anything but whitespace; after
``x-json-calls``' values, anything but whitespace, a separator or another ``{``/``[``) is where the
region closes. That character and what follows are read again outside any region (the implicit
field, or another field's open). The field's ``close``, when it has one, still closes it when it
comes first; the end of generation closes it as any region.

:class:`ValueEndMatcher` is how the engine asks: it stands in for the region's close matcher,
feeds the scanner exactly the text that the engine is about to route (each character once, in
order, whatever the chunking), and answers with a zero-width commit at the value's end. Text the
scanner has not decided on yet (the start of a separator) is held back like a partial delimiter,
so nothing after the value is ever routed into the region. Streaming and one-shot parsing agree
because both run this same engine.

The engine's fast path (a chunk with no possible close start is routed whole, with no scan) stays
on: :meth:`ValueEndMatcher.search` is the ``quiet`` test the engine runs on each chunk. When the
field's own close cannot start in the chunk, it feeds the chunk to the scanner right there (the
same text a scan would feed it, in one piece) and answers "plain" unless the value ended in it or
the scanner holds part of it back; then it answers "maybe" at the chunk's start, the engine scans,
and :meth:`~ValueEndMatcher.scan` knows the chunk was read already. So each character still goes
to the scanner once, and a chunk inside a value costs one close test and one scanner feed.

:data:`VALUE_END_PARSERS` are the content parsers whose scanners find a value's end; the
template loader refuses the key for any other parser, naming the field and the key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import regex

from chatcodec.response_templates.delimiters import Delimiter
from chatcodec.response_templates.matcher import Commit, Matcher

TYPE_CHECKING = False
if TYPE_CHECKING:  # the scanners are imported by the regions that stream values, not by every parse
    from typing import Any

    from chatcodec.response_templates.scanners.protocol import Delta, ValueScanner
    from chatcodec.response_templates.value_stream import RegionValues

__all__ = ["VALUE_END_PARSERS", "ValueEndMatcher", "value_end_problem"]

#: Content parsers whose scanners say where a value ends (``json`` without ``allow_non_json``;
#: ``x-first`` and ``x-switch`` when each of their parsers is one of these; ``x-wrap``'s value runs to
#: the region's end).
VALUE_END_PARSERS = ("json", "x-json-calls", "x-bare-object", "x-pythonic", "python-call-list", "x-first",
                     "x-switch", "x-named-call", "x-wrap")

_NEVER = regex.compile("(?!)")
#: The "maybe" answer of :meth:`ValueEndMatcher.search`: an empty match at the chunk's start (the
#: engine then scans the chunk from its start).
_AT_START = re.compile("")
#: A ``RegionValues.pending`` with nothing in it (shared: pending lists are replaced, never changed).
_NO_DELTAS: list[Delta] = []
#: The zero-width close at a value's end, per field name (made once: a Delimiter costs more to
#: make than the rest of the matcher, and one matcher is made per region).
_VALUE_ENDS: dict[str, Delimiter] = {}


def value_end_problem(content: str, args: Mapping[str, Any]) -> str | None:
    """Why a field with this content parser cannot close at its value's end, or ``None``."""
    if content not in VALUE_END_PARSERS:
        return (f"the content parser {content!r} cannot say where its value ends; "
                f"close_at_value_end works with {', '.join(VALUE_END_PARSERS)}")
    if content == "json" and args.get("allow_non_json"):
        return "a json region with allow_non_json has no value end (any text is a value)"
    if content in ("x-first", "x-switch"):
        specs = args.get("parsers", []) if content == "x-first" else \
            [case.get("parser", {}) for case in args.get("cases", []) if isinstance(case, Mapping)]
        for spec in specs:
            name = spec.get("name", "text") if isinstance(spec, Mapping) else spec
            inner = spec.get("args", {}) if isinstance(spec, Mapping) else {}
            problem = value_end_problem(str(name), inner if isinstance(inner, Mapping) else {})
            if problem is not None:
                return f"{content} parser {name!r}: {problem}"
    return None


class ValueEndMatcher:
    """The close matcher of a ``close_at_value_end`` region (see the module docstring).

    Args:
        field: the field's name.
        inner: the field's own close matcher (``None``: no close delimiter).
        scanner: the region's value scanner.
        keep: the region's ``region_value`` events, whose ``pending`` gets the scanner's deltas (a
            new list each time, never one changed in place), or ``None`` to drop them.
    """

    __slots__ = ("_ahead", "_buf", "_busy", "_close_quiet", "_delimiter", "_ended", "_fed", "_held", "_holds",
                 "_inner", "_keep", "_offset", "absorbed", "quiet", "scanner")

    def __init__(self, field: str, inner: Matcher | None, scanner: ValueScanner,
                 keep: RegionValues | None) -> None:
        self._inner = inner
        self.scanner = scanner
        self._keep = keep
        if keep is not None:
            keep.pending = _NO_DELTAS
        delimiter = _VALUE_ENDS.get(field)
        if delimiter is None:
            delimiter = _VALUE_ENDS[field] = Delimiter(field, False, _NEVER, None, (1, field))
        self._delimiter = delimiter
        self.absorbed = inner.absorbed if inner is not None else ""
        close_quiet = inner.quiet if inner is not None else None
        #: the close's own quiet search (``None``: no close delimiter)
        self._close_quiet: Callable[[str], re.Match[str] | None] | None = \
            close_quiet.search if close_quiet is not None else None
        #: the engine's fast-path test: this matcher's :meth:`search`, or ``None`` (no fast path)
        #: when the close may start nearly anywhere
        self.quiet: ValueEndMatcher | None = None if inner is not None and close_quiet is None else self
        self._holds = hasattr(scanner, "held")  # whether the scanner can hold text back at all
        self._buf: str | None = None
        self._fed = 0  # buffer index up to which the scanner has read
        self._held = 0  # of that, how much it has not decided on (left in the buffer)
        self._offset = 0  # region offset of buffer index _fed
        self._ahead = 0  # what search() fed past the engine's position, for the next scan
        self._ended = False
        self._busy = False  # search() leaves the chunk to a scan: _ended, _held or _ahead is set

    def search(self, text: str) -> re.Match[str] | None:
        """The engine's fast-path test of a chunk (``quiet.search``), with the value's end.

        Args:
            text: the region's unresolved text: everything after the engine's position (which is
                where the scanner stopped reading, when it holds nothing back).

        Returns:
            ``None`` when ``text`` is plain region text whole: the close cannot start in it and
            the value goes on past it (the scanner has read it; the engine routes it with no scan).
            Otherwise an empty match at the start of ``text``: the engine scans, and :meth:`scan`
            answers as if no search had run (text fed here is not fed again).
        """
        if self._busy:  # the value ended, or the scanner holds text, or read this feed's start
            return _AT_START.match(text)
        close = self._close_quiet
        if close is not None and close(text) is not None:
            return _AT_START.match(text)
        scanner = self.scanner
        deltas = scanner.feed(text)
        if deltas:
            keep = self._keep
            if keep is not None:
                pending = keep.pending
                keep.pending = pending + deltas if pending else deltas
        self._offset += len(text)
        if scanner.complete is None and not (self._holds and scanner.held):  # type: ignore[attr-defined]
            return None
        self._ahead, self._busy = len(text), True
        return _AT_START.match(text)

    def scan(self, buf: str, pos: int, eos: bool, memo: dict[Any, int],
             zero_width: frozenset[Delimiter] = frozenset(), vacant: bool = False) -> Commit | int:
        """As :meth:`~chatcodec.response_templates.matcher.RegexMatcher.scan`, plus the value's end."""
        inner = self._inner
        result: Commit | int = len(buf) if inner is None else \
            inner.scan(buf, pos, eos, memo, zero_width, vacant)
        if self._ended:
            return result
        if buf is not self._buf:  # a new feed: the engine consumed everything up to pos
            # (search() may have read the start of this feed already)
            self._buf, self._fed, self._ahead = buf, pos + self._held + self._ahead, 0
        elif pos > self._fed:  # the engine routed a character itself (a close inside a JSON string)
            self._read(buf[self._fed : pos])
        limit = result.start if isinstance(result, Commit) else result
        if limit > self._fed:
            self._read(buf[self._fed : limit])
        if eos and self.scanner.complete is None:
            self._take(self.scanner.end())
        complete = self.scanner.complete
        if complete is not None:
            self._ended = self._busy = True
            at = self._fed - (self._offset - complete)
            return Commit(self._delimiter, at, at, {})
        self._held = int(getattr(self.scanner, "held", 0)) if not eos else 0
        self._busy = bool(self._held)
        if isinstance(result, Commit) or not self._held:
            return result
        return max(pos, self._fed - self._held)

    def _read(self, text: str) -> None:
        self._take(self.scanner.feed(text))
        self._fed += len(text)
        self._offset += len(text)

    def _take(self, deltas: list[Delta]) -> None:
        keep = self._keep
        if deltas and keep is not None:
            pending = keep.pending
            keep.pending = pending + deltas if pending else deltas
