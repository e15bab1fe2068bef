"""One region's ``region_value`` events: scanner, path mapping, argument typing, completion at close.

The engine creates a :class:`RegionValues` for a region whose content parser has a value scanner
when the parser was made with ``value_deltas=True`` (or when the field closes at its value's end,
which needs the scanner anyway). Data flows in one direction::

    region text -> scanner (content deltas) -> PathMapper (region-value deltas)
                -> ArgumentTyping (typed, held until decided) -> Shadow (checked) -> events

At close, :meth:`RegionValues.close` completes what was emitted from the region's value (the one
from the content parser, transform and typing, the single source of truth), so replaying a
region's ``region_value`` events always builds a value equal to its ``region_close`` value when
the region closes without error. A region that fails emits nothing more. When the scanner read the
whole region itself and can vouch for the content parser's value (:meth:`RegionValues.settled`:
every match checked against the real pattern, the text around them checked as the parser checks
it), the close takes that value instead of parsing the region again; it is the same value.

The short path (``scanners.text_run``): after a chunk whose text went to a string, the scanner is
asked what its state watches (the string's end or an escape, its terminator's first characters);
each following chunk in which none of that is found is emitted as more text of that string at
once, without the scanner chain, path mapping, typing or checks (what the full path would do for
it: the same event), and the scanner reads the chunks taken later, joined, before anything else
reads it (:meth:`RegionValues._fold`). ``RegionValues.short_feeds`` counts them.

If a delta does not fit what was emitted before (a scanner bug), or the completion finds that
what was emitted contradicts the value, the region's stream stops and a :class:`ValueStreamWarning`
says so: consumers then have an incomplete value for that region and take the value from
``region_close``. The test suite turns this warning into an error.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chatcodec.object_cache import ObjectCache
from chatcodec.response_templates.arguments import ToolParameters
from chatcodec.response_templates.message import copy_value
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.protocol import Delta, Path, ValueScanner
from chatcodec.response_templates.scanners.shadow import Shadow
from chatcodec.response_templates.scanners.text_run import SEARCHES as _SEARCHES
from chatcodec.response_templates.scanners.text_run import TextRun, watch_search
from chatcodec.response_templates.value_paths import PathMapper, PathPlan, plan_paths
from chatcodec.response_templates.value_typing import ArgumentTyping

if TYPE_CHECKING:
    from chatcodec.response_templates.template import FieldSpec

__all__ = ["RegionValues", "ValueStreamWarning", "region_values"]


class ValueStreamWarning(RuntimeWarning):
    """A region's ``region_value`` events stopped because they could not stay consistent (a bug)."""


#: Path plans of the fields seen lately.
_PLANS: ObjectCache[PathPlan] = ObjectCache()


def _plan(spec: FieldSpec) -> PathPlan:
    cached = _PLANS.get(spec)
    if cached is not None:
        return cached

    def groups(delimiter: Any) -> frozenset[str]:
        if delimiter is None or delimiter.literals is not None:
            return frozenset()
        return frozenset(delimiter.pattern.groupindex)

    plan = plan_paths(spec.transform, spec.transform_each, groups(spec.open), groups(spec.close))
    return _PLANS.put(spec, plan)


#: The search of a short path: ``None`` when a chunk is plain in the scanner's state.
_Search = Callable[[str], "re.Match[str] | None"]

#: The ``pending`` of a :class:`RegionValues` whose deltas were all taken (shared, never changed).
_NO_DELTAS: list[Delta] = []


class RegionValues:
    """The ``region_value`` events of one region (see the module docstring).

    Args:
        spec: the region's field.
        scanner: its content parser's scanner.
        captures: the open pattern's named groups.
        params: the tools' parameter properties (typing), possibly empty.
        emit: whether to produce events (``False``: the scanner only finds the value's end).
    """

    __slots__ = ("_events", "_fast", "_field", "_mapper", "_shadow", "_short", "_short_parts", "_short_path",
                 "_skipped", "_text_run", "_typed_run", "_typing", "emit", "pending", "scanner",
                 "short_feeds", "stopped")

    #: Whether chunks may take the short path (``scanners.text_run``); the same events either way
    #: (the tests compare the two paths by turning it off).
    short_path = True

    def __init__(self, spec: FieldSpec, scanner: ValueScanner, captures: dict[str, str],
                 params: ToolParameters, emit: bool) -> None:
        self.scanner = scanner
        #: deltas read by a ValueEndMatcher, not yet turned into events (``None``: feed reads itself);
        #: replaced, never changed in place (an empty one may be shared)
        self.pending: list[Delta] | None = None
        self.emit = emit
        self.stopped = not emit
        self._field = spec.name
        self._shadow = Shadow()
        self._mapper = PathMapper(_plan(spec), captures)
        self._typing = ArgumentTyping(params, self._shadow) if params else None
        self._events: list[dict[str, Any]] = []
        #: (content path, region path, its text parts) of the string the last text went to
        self._fast: tuple[Path, Path, list[str]] | None = None
        #: the scanner's ``text_run`` (``None``: no short path), the search of the current state's run
        #: (``None``: no short path now), where its text goes (region path) and is recorded, and the
        #: chunks it took that the scanner has not read yet (:meth:`_fold`)
        self._text_run: Callable[[], TextRun | None] | None = getattr(scanner, "text_run", None)
        self._short: _Search | None = None
        self._short_path: Path | None = None
        self._short_parts: list[str] | None = None
        self._skipped: list[str] = []
        #: after a text that typing holds to its string's end: (its content path, the held parts)
        self._typed_run: tuple[Path, list[str]] | None = None
        #: chunks the short path took (the scanner read them later, joined)
        self.short_feeds = 0

    def start(self) -> list[dict[str, Any]]:
        """The events known when the region opens (the transform's skeleton, open captures)."""
        if self.stopped:
            return []
        return self._out(self._mapper.start())

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Read region text; return its events.

        When the scanner is read by a :class:`~..value_end.ValueEndMatcher` (``pending`` is not
        ``None``), the text was read already: its deltas wait in ``pending``. Otherwise a chunk in
        which the scanner's current state watches nothing (``scanners.text_run``) takes the short
        path: the scanner gets it later, with the chunks after it (:meth:`_fold`), and its event
        is the text delta the scanner would have given.
        """
        deltas = self.pending
        if deltas is not None:
            if deltas:
                self.pending = _NO_DELTAS
            asks = False
        else:
            short = self._short
            if short is not None:
                if short(text) is None:
                    self._skipped.append(text)
                    self.short_feeds += 1
                    path = self._short_path
                    if path is None:
                        return []
                    return [{"type": "region_value", "field": self._field, "op": "text", "path": list(path),
                             "text": text}]
                self._short = None
                if self._skipped:
                    self._fold()
            deltas = self.scanner.feed(text)
            asks = self._text_run is not None
        if self.stopped or not deltas:
            return []
        fast = self._fast
        if fast is not None and len(deltas) == 1 and deltas[0][0] == "text" and deltas[0][1] == fast[0]:
            # more text of the string that the last text went to: same place, nothing to decide
            payload = deltas[0][2]
            fast[2].append(payload)
            events = [{"type": "region_value", "field": self._field, "op": "text", "path": list(fast[1]),
                       "text": payload}]
        else:
            events = self.take(deltas)
            fast = self._fast
        if asks and (fast is not None or self._typed_run is not None):  # more text of it may follow
            self._short = self._short_for(fast)
        return events

    def _short_for(self, fast: tuple[Path, Path, list[str]] | None) -> _Search | None:
        """The short path's search in the scanner's current state (``None``: none), asked after a
        chunk whose text went to a string (``fast``: where it went and was emitted; or
        ``_typed_run``: where typing holds it): the scanner's run, when its text goes to that
        string too (no mapping, typing or check to apply) or nowhere."""
        if self.stopped or not self.short_path:
            return None
        run = self._text_run()  # type: ignore[misc]
        if run is None:
            return None
        watch, path = run
        typed = self._typed_run
        if path is None:
            self._short_path = self._short_parts = None
        elif fast is not None and path == fast[0]:
            self._short_path, self._short_parts = fast[1], fast[2]
        elif typed is not None and path == typed[0]:
            self._short_path, self._short_parts = None, typed[1]  # held: no event
        else:
            return None
        try:
            return _SEARCHES[watch]
        except KeyError:
            return watch_search(watch)

    def _fold(self) -> None:
        """Hand the scanner the chunks the short path took (joined), and record their text."""
        skipped = self._skipped
        if not skipped:
            return
        text = skipped[0] if len(skipped) == 1 else "".join(skipped)
        self._skipped = []
        self.scanner.skip(text)  # type: ignore[attr-defined]
        parts = self._short_parts
        if parts is not None:
            parts.append(text)

    def compact(self) -> None:
        """Hand the scanner what the short path took so far (the engine calls this at each buffer
        trim, so the chunks waiting never hold more than one trim's worth of text)."""
        self._fold()

    def take(self, deltas: list[Delta]) -> list[dict[str, Any]]:
        """The events of content deltas already read from the scanner."""
        self._fast = self._typed_run = None
        if self.stopped:
            return []
        mapped: list[Delta] = []
        for delta in deltas:
            before = len(mapped)
            mapped += self._mapper.map(delta)
        events = self._out(mapped)
        op, path, payload = deltas[-1]
        last = events[-1] if events else None
        if (op == "text" or (op == "begin" and payload == "string")) and len(mapped) == before + 1 \
                and last is not None and last["path"] == list(mapped[-1][1]) and last["op"] == mapped[-1][0]:
            parts = self._shadow.open_string(mapped[-1][1])
            if parts is not None:
                self._fast = (path, mapped[-1][1], parts)
        elif op == "text" and not events and len(mapped) == before + 1 and self._typing is not None:
            held = self._typing.held_text(mapped[-1][1])
            if held is not None:  # typing holds this string's text to its end (JSON in a typed argument)
                self._typed_run = (path, held)
        return events

    def close(self, value: Any) -> list[dict[str, Any]]:
        """The region closed with ``value``: the events that complete what was emitted into it."""
        self._fold()
        if self.stopped:
            return []
        consistent, rest = self._shadow.complete(value)
        if not consistent:
            self._stop("what was streamed contradicts the region's value")
            return []
        return [self._event(delta) for delta in rest]

    def settled(self, text: str) -> tuple[bool, Any]:
        """The content parser's value of the region's ``text`` as the scanner already read it:
        ``(True, value)`` when the scanner read the whole region itself and vouches for the value
        (``RegexItemsScanner.settled``), else ``(False, None)``: the caller parses ``text``. So a
        region's close need not read its text again when the stream already did.
        """
        self._fold()
        settled = getattr(self.scanner, "settled", None)
        if settled is None or self.pending is not None or self.stopped:
            return False, None
        result: tuple[bool, Any] = settled(text)
        return result

    def retype(self, params: ToolParameters) -> bool:
        """Type tool-call arguments with ``params`` (the tools' parameter properties, possibly
        empty) from now on, if the events emitted so far are those ``params`` would have given
        (:meth:`ArgumentTyping.retype`); always, once the events stopped.

        Returns:
            Whether the typing now follows ``params`` (``False`` changes nothing).
        """
        self._fold()
        if self.stopped:
            return True
        typing = self._typing if self._typing is not None else ArgumentTyping({}, self._shadow)
        if not typing.retype(params):
            return False
        self._typing = typing if params else None
        return True

    def _out(self, deltas: list[Delta]) -> list[dict[str, Any]]:
        events = self._events = []
        typing = self._typing
        if typing is None:  # _emit and _event, inlined: no typing step between deltas
            apply, field = self._shadow.apply, self._field
            for delta in deltas:
                if self.stopped:
                    return []
                if not apply(delta):
                    self._stop(f"the delta {delta[0]!r} at {list(delta[1])} does not fit what came before")
                    return []
                op, path, payload = delta
                event: dict[str, Any] = {"type": "region_value", "field": field, "op": op, "path": list(path)}
                if op == "begin":
                    event["kind"] = payload
                elif op == "text":
                    event["text"] = payload
                elif op == "set":
                    event["value"] = copy_value(payload)
                events.append(event)
            return events
        for delta in deltas:
            typing.filter(delta, self._emit)
            if self.stopped:
                return []
        return events

    def _emit(self, delta: Delta) -> None:
        if self.stopped:
            return
        if not self._shadow.apply(delta):
            self._stop(f"the delta {delta[0]!r} at {list(delta[1])} does not fit what came before")
            return
        self._events.append(self._event(delta))

    def _event(self, delta: Delta) -> dict[str, Any]:
        op, path, payload = delta
        event: dict[str, Any] = {"type": "region_value", "field": self._field, "op": op, "path": list(path)}
        if op == "begin":
            event["kind"] = payload
        elif op == "text":
            event["text"] = payload
        elif op == "set":
            event["value"] = copy_value(payload)
        return event

    def _stop(self, why: str) -> None:
        self.stopped = True
        warnings.warn(f"region_value events of field {self._field!r} stopped: {why} (please report this)",
                      ValueStreamWarning, stacklevel=4)


def region_values(spec: FieldSpec, captures: dict[str, str], params: ToolParameters,
                  emit: bool) -> RegionValues | None:
    """A :class:`RegionValues` for a region of ``spec``, or ``None`` when its parser has no scanner."""
    if not spec.dirty:
        return None
    scanner = scanner_for(spec.content, spec.content_args)
    if scanner is None:
        return None
    return RegionValues(spec, scanner, captures, params, emit)
