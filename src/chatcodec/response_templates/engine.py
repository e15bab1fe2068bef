"""The streaming parser: every state transition of response parsing lives here.

Theory of operation. A :class:`ResponseParser` owns one sequence. Text (the prompt's tail after the
start anchor, then each generated chunk) is appended to the unresolved buffer
(:class:`~chatcodec.response_templates.buffer.Buffer`: where the parser is in the text, its
offsets, the tail held back, the trims); the matcher of the current state
(:mod:`~chatcodec.response_templates.delimiters`) either commits a delimiter or says how far the
text is safe to emit; the engine applies the transition, routes text to the current region,
advances the buffer past what it decided and returns the events. Region values are computed by
pure functions (content parser, transform, argument typing) and folded into the message by
:class:`~chatcodec.response_templates.message.MessageBuilder`. ``parse_response`` runs this same
engine, so one-shot and streaming parsing cannot disagree.

Region states and transitions (``TRANSITIONS`` below; ``tests/response_templates/test_engine_states.py``
walks every row)::

    state       input                       -> next        events
    OUTSIDE     text                        -> OUTSIDE     implicit field: region_open on its first
                                                           byte, then region_chunk; none: discarded
    OUTSIDE     open(f) committed           -> INSIDE(f)   region_close(implicit) if opened; region_open(f)
    OUTSIDE     implicit close committed    -> OUTSIDE     region_close(implicit) if opened
    INSIDE(f)   text                        -> INSIDE(f)   region_chunk(f)
    INSIDE(f)   close(f) committed          -> OUTSIDE     region_close(f)
    INSIDE(f)   close(f), f opens_once      -> OUTSIDE'    region_close(f); OUTSIDE' no longer
                                                           watches open(f): it is text from now on
    any         end of generation           -> FINISHED    region_close of the open region, if opened

Lifecycle: ``FEEDING -> FINISHED`` after :meth:`ResponseParser.finalize`; ``FEEDING -> FAILED`` when
``errors="strict"`` raises; ``feed``/``finalize`` in ``FINISHED`` or ``FAILED`` raise
:class:`~chatcodec.errors.ParserStateError` and change nothing. Whatever fails while a region
closes (a content parser, a transform, typing, nesting too deep, even an unforeseen exception) is
that region's problem: a ``ResponseParseError`` (strict) or a record (keep); a region is never
half-closed, and any other exception also leaves the parser ``FAILED``.

This module never parses region content itself and never touches files.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from chatcodec.errors import (
    ChatCodecError,
    MissingFieldError,
    ParserStateError,
    ResponseParseError,
    UnknownPlaceholderError,
    caret_excerpt,
)
from chatcodec.response_templates import backtracking, prompt_end
from chatcodec.response_templates.arguments import (
    ToolParameters,
    called_names,
    cast_tool_calls,
    tool_parameters,
)
from chatcodec.response_templates.backtracking import RegexTimeout
from chatcodec.response_templates.buffer import TRIM_THRESHOLD, Buffer
from chatcodec.response_templates.content import BLANK
from chatcodec.response_templates.content_error import ContentError
from chatcodec.response_templates.delimiters import Delimiter
from chatcodec.response_templates.lax_json import StringTracker
from chatcodec.response_templates.limits import MAX_NESTING_DEPTH, NESTING_ERROR, exceeds_depth
from chatcodec.response_templates.lookbehind import LOOKBEHIND_CONTEXT
from chatcodec.response_templates.matcher import Commit, Matcher
from chatcodec.response_templates.message import PARSE_ERRORS_KEY, MessageBuilder, copy_value
from chatcodec.response_templates.prefix import (
    NO_START_ANCHOR_HINT,
    prefix_text,
    require_prefix,
    warn_without_start_anchor,
)
from chatcodec.response_templates.template import FieldSpec, ResponseTemplate, load_response_template
from chatcodec.response_templates.transform import apply_transform_each

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from chatcodec.response_templates.value_stream import RegionValues

__all__ = ["LOOKBEHIND_CONTEXT", "TRANSITIONS", "Lifecycle", "ResponseParser"]

#: The region transition table: (state, input, next state, events). Documentation as data.
TRANSITIONS: tuple[tuple[str, str, str, str], ...] = (
    ("OUTSIDE", "text", "OUTSIDE", "implicit: region_open on first byte, region_chunk"),
    ("OUTSIDE", "open(f) committed", "INSIDE(f)", "region_close(implicit) if opened; region_open(f)"),
    ("OUTSIDE", "implicit close committed", "OUTSIDE", "region_close(implicit) if opened"),
    ("INSIDE(f)", "text", "INSIDE(f)", "region_chunk(f)"),
    ("INSIDE(f)", "close(f) committed", "OUTSIDE", "region_close(f)"),
    ("INSIDE(f)", "close(f) committed, f opens_once", "OUTSIDE'",
     "region_close(f); open(f) is text from now on"),
    ("any", "end of generation", "FINISHED", "region_close of the open region, if opened"),
)

#: The longest end of a chunk the fast path keeps back as a possible delimiter start without a
#: scan (longer ones are scanned, and held by :meth:`Buffer.hold`).
_SHORT_TAIL = 8
#: What such an end may hold: an ASCII whitespace run, or one other ASCII character (a non-ASCII
#: one is scanned: every character of CJK text may start a delimiter as far as ``quiet`` knows).
_ASCII_TAIL = "".join(map(chr, range(128)))

@lru_cache(maxsize=1)
def _region_values() -> Callable[..., RegionValues | None]:
    """``value_stream.region_values``, imported on first use (a parser without value deltas never
    loads the value stream), then found without an import statement at each region open."""
    from chatcodec.response_templates.value_stream import region_values

    return region_values


class Lifecycle(enum.Enum):
    """Where a parser is in its life."""

    FEEDING = "feeding"
    FINISHED = "finished"
    FAILED = "failed"


_FEEDING = Lifecycle.FEEDING
_FINISHED = Lifecycle.FINISHED
_NONE: frozenset[Delimiter] = frozenset()
#: The captures of the implicit field's regions (no open delimiter): one empty dict, only read.
_NO_CAPTURES: dict[str, str] = {}


class _Region:
    """The region text currently goes to (the one piece of per-region state).

    A plain slotted class, not a dataclass: one is made per region, two per tool call, so its
    constructor is on the per-call path of tool-heavy output.
    """

    __slots__ = ("captures", "joined", "matcher", "offset", "opened", "opening", "parts", "quiet", "spec",
                 "strings", "tracked", "vacant", "values")

    def __init__(self, spec: FieldSpec | None, matcher: Matcher | None, captures: dict[str, str],
                 opened: bool, offset: int, opening: str, vacant: bool,
                 strings: StringTracker | None) -> None:
        self.spec = spec  # None: no implicit field, text outside regions is discarded
        self.captures = captures  # the open delimiter's named groups (read, never changed)
        self.parts: list[str] = []
        self.opened = opened
        self.offset = offset  # where the body starts, relative to the start of the generated text
        self.opening = opening  # the open delimiter's text ("" for the implicit field)
        self.vacant = vacant  # an implicit region with no text yet: a zero-width close would close nothing
        self.strings = strings  # string-aware regions: is the text so far inside a string?
        self.values: RegionValues | None = None  # value_deltas: this region's region_value events
        self.joined = 0  # parts[:joined] were joined by compact()
        self.tracked = 0  # parts[:tracked] were fed to ``strings`` (see inside_string)
        #: what to watch while in this region, and the ``search`` of ``matcher.quiet`` (None: no
        #: fast path); kept in step by :meth:`watch`
        self.matcher: Matcher | None
        self.quiet: Callable[[str], re.Match[str] | None] | None
        self.watch(matcher)

    def watch(self, matcher: Matcher | None) -> None:
        """Watch ``matcher`` from now on (and take its quiet search for the fast path)."""
        self.matcher = matcher
        quiet = matcher.quiet if matcher is not None else None
        self.quiet = quiet.search if quiet is not None else None

    def compact(self) -> None:
        """Join the parts added since the last call into one string (memory close to the text's size
        whatever the chunk size; called at each buffer trim, so each character is copied once), and
        let the value stream's short path hand its scanner what it took (the same bound)."""
        parts, joined = self.parts, self.joined
        if self.strings is not None:
            self._track()
        if len(parts) - joined > 1:
            parts[joined:] = ["".join(parts[joined:])]
        self.joined = self.tracked = len(parts)
        if self.values is not None:
            self.values.compact()

    def inside_string(self, delimiter_text: str) -> bool:
        """Whether a close delimiter (``delimiter_text``) right after the text so far is string content
        (:meth:`StringTracker.inside`); ``False`` for a region that is not string-aware.

        The tracker reads the region's text only when a close asks (and at each buffer trim, so it
        never holds more than one trim's worth), not chunk by chunk: the answer is the same, since it
        does not depend on how the text was split, and a whole region read at once is one C scan
        when it is one JSON value (:meth:`StringTracker.feed`).
        """
        if self.strings is None:
            return False
        self._track()
        return self.strings.inside(delimiter_text)

    def _track(self) -> None:
        parts, tracked = self.parts, self.tracked
        if tracked < len(parts):
            assert self.strings is not None
            self.strings.feed(parts[tracked] if tracked == len(parts) - 1 else "".join(parts[tracked:]))
            self.tracked = len(parts)


class ResponseParser:
    """Parse one model output with a response template, chunk by chunk.

    Create one parser per generated sequence, replay :attr:`initial_events`, call :meth:`feed`
    after every generation step and :meth:`finalize` at the end. Feeding any split of the same
    text (one character at a time, random chunks, all at once) gives the same message and the
    same concatenated chunk text per region as :func:`~chatcodec.parse_response`.

    With ``errors="strict"`` (the default), content that cannot be parsed raises
    :class:`~chatcodec.errors.ResponseParseError`, carrying the message parsed so far and the raw
    text of the failing region. With ``errors="keep"`` nothing raises on model output: the failing
    region's value is left out, its ``region_close`` event has ``"value": None`` and an ``"error"``
    record, and the record (``{"field", "parser", "offset", "error", "text", "raw", "span"}``:
    ``text`` is the region's body, ``raw`` the region as written with its delimiters, ``span`` where
    ``raw`` is in the generated text) is listed under the message's ``"parse_errors"`` key and in
    :attr:`parse_errors`. The region's ``raw`` text then goes back, verbatim, into the implicit
    field when that is a plain text field (``content``): right after the failing ``region_close``
    come a ``region_open``, one ``region_chunk`` with ``raw`` and a ``region_close`` of the implicit
    field, so the message loses nothing and still agrees with the streamed chunks.

    Args:
        response_template: a template dict or a loaded :class:`ResponseTemplate`.
        prefix: the prompt that preceded generation (required; ``""`` opts out). It is cut after
            the last start-anchor match and fed first, so regions the prompt opened are continued.
            It is final text: a delimiter it ends with is decided before any output where no
            output can change that (:mod:`~chatcodec.response_templates.prompt_end`), so a prompt
            ending with ``<think>`` has the reasoning's ``region_open`` in :attr:`initial_events`.
        tools: tool JSON schemas or Python functions; tool-call arguments are typed with them, and
            a call to a function that is not among them is kept and recorded under the message's
            ``"parse_warnings"`` (:attr:`parse_warnings`).
        errors: ``"strict"`` or ``"keep"``.
        offsets: when true, every ``region_open`` event also carries ``"start"`` (where the region's
            raw text begins: its open delimiter, or its first character for the implicit field) and
            every ``region_close`` event ``"end"`` (just after its raw text: after its close
            delimiter when it has one), both offsets into the generated text (negative: inside the
            prefix). The engine plugins use them to hand raw text on (``chatcodec.integrations``).
        value_deltas: also emit ``region_value`` events: the value of every region whose content
            parser has a value scanner, as it grows (``docs/streaming_values.md``). Off by default,
            so a parser without them pays nothing for them.

    Raises:
        ResponseTemplateError: the template is invalid.
        ValueError: ``prefix`` is ``None``, or ``errors`` is neither ``"strict"`` nor ``"keep"``.
        ResponseParseError: (strict) a region closed inside the prefix cannot be parsed.

    Example:
        >>> parser = ResponseParser({"start_anchor": "<|im_start|>assistant\\n",
        ...     "fields": {"content": {"close": "<|im_end|>"}}}, prefix="")
        >>> [event["type"] for event in parser.feed("Hi<|im_")]  # "<|im_" is held back
        ['region_open', 'region_chunk']
        >>> parser.feed("end|>")
        [{'type': 'region_close', 'field': 'content', 'value': 'Hi'}]
        >>> parser.finalize()
        ({'content': 'Hi'}, [])
    """

    def __init__(self, response_template: dict[str, Any] | ResponseTemplate, prefix: str | None = None,
                 *, tools: Iterable[dict[str, Any] | Callable[..., Any]] | None = None,
                 errors: str = "strict", value_deltas: bool = False, offsets: bool = False) -> None:
        self._template = load_response_template(response_template)
        self._offsets = offsets
        prefix = require_prefix(prefix)
        if errors not in ("strict", "keep"):
            raise ValueError(f"errors: expected 'strict' or 'keep', got {errors!r}")
        self._keep = errors == "keep"
        if self._keep and PARSE_ERRORS_KEY in self._template.fields:
            raise ValueError(f"errors='keep' records problems under {PARSE_ERRORS_KEY!r}, which this "
                             "template uses as a field name; rename the field or use errors='strict'")
        self._tools: ToolParameters = tool_parameters(tools) if tools else {}
        self._message = MessageBuilder(self._template)
        self._lifecycle = _FEEDING
        self._failure: Exception | None = None
        #: the generated text not decided yet, where the parser is in it, the held tail
        self._buffer = Buffer()
        #: what OUTSIDE watches: the template's outside matcher, without the opens of the
        #: ``opens_once`` fields in ``_closed`` (those whose region closed, each closes once)
        self._outside_matcher = self._template.outside_matcher
        self._closed: tuple[str, ...] = ()
        self._region = self._outside()
        self._value_deltas = bool(value_deltas)
        if self._value_deltas:
            self._route = self._route_values  # type: ignore[method-assign]
        #: Events produced by the prefix, to replay before the first ``feed``.
        self.initial_events: list[dict[str, Any]] = []
        prompt = prefix_text(prefix)
        self._prefix_len = len(prompt)  # offsets below 0 are in the prompt: prefix_len + offset
        after = self._anchor(prompt) if prompt else None  # "" has no anchor to search for
        self._anchored = after is not None or not prompt  # "" is the explicit opt-out
        if not self._anchored:
            warn_without_start_anchor(self._template)
        remainder = prompt if after is None else after
        if remainder:
            self._buffer.origin = -len(remainder)
            self.initial_events = self._advance(remainder, eos=False)
            if self._buffer.pos < len(self._buffer.text):  # the prompt's own tail is undecided
                self._settle_prompt_end()

    def _settle_prompt_end(self) -> None:
        """Decide before any output what the prompt's undecided tail already decides (the prompt is
        final text: :mod:`~chatcodec.response_templates.prompt_end`). A delimiter no output can
        change is committed, and the rest of the tail parsed on; an open whose end only the output
        decides opens its region now (:meth:`_preopen`). Events go to :attr:`initial_events`."""
        buffer = self._buffer
        while buffer.pos < len(buffer.text):
            matcher = self._region.matcher
            decided = (prompt_end.decide(matcher, buffer.text, buffer.pos)  # not a call's ValueEndMatcher
                       if isinstance(matcher, Matcher) else None)
            if decided is None:
                return
            if not decided.final:
                self._preopen(self.initial_events, decided.commit)
                return
            buffer.held = None  # nothing was fed yet: no chunk waits with the tail
            buffer.pos = self._commit(self.initial_events, buffer.text, buffer.pos, decided.commit)
            self.initial_events += self._advance("", eos=False)

    def _preopen(self, events: list[dict[str, Any]], commit: Commit) -> None:
        """Open the region of ``commit``'s field now, though its open delimiter is still undecided
        (``buffer.text[commit.start:]`` stays unresolved): the region before it closes, and the
        delimiter's commit, once the output decides where it ends, opens the region without a
        second ``region_open`` (:meth:`_open_preopened`)."""
        start = self._buffer.origin + commit.start
        self._close(events, end=start, reopened=True)
        self._region = self._outside()  # vacant: the commit at ``commit.start`` closes nothing more
        if self._emits:
            field = commit.delimiter.field
            events.append({"type": "region_open", "field": field, "start": start}
                          if self._offsets else {"type": "region_open", "field": field})
        self._open = self._open_preopened  # type: ignore[method-assign]

    def _open_preopened(self, events: list[dict[str, Any]], commit: Commit, opening: str) -> None:
        """:meth:`_open` for the commit of the delimiter :meth:`_preopen` opened (the next open, by
        construction: only that field's delimiters could still match where the tail begins), minus
        the ``region_open`` already sent; every later open is the class's own again."""
        del self._open
        opened: list[dict[str, Any]] = []
        self._open(opened, commit, opening)
        if opened and opened[0]["type"] == "region_open":
            del opened[0]
        events += opened

    @property
    def lifecycle(self) -> Lifecycle:
        """``FEEDING``, ``FINISHED`` or ``FAILED``."""
        return self._lifecycle

    @property
    def resolved(self) -> int:
        """How much of the generated text has been decided: every character before this offset was
        routed to a region or consumed by a delimiter; the rest is held back (it may start a
        delimiter). Negative while the prefix's own tail is undecided."""
        return self._buffer.resolved

    @property
    def template(self) -> ResponseTemplate:
        """The compiled response template this parser follows (read-only; the OpenAI streams read
        its fields)."""
        return self._template

    @property
    def parse_errors(self) -> list[dict[str, Any]]:
        """The problems recorded so far with ``errors="keep"`` (empty in strict mode)."""
        return list(self._message.errors)

    @property
    def parse_warnings(self) -> list[dict[str, Any]]:
        """The warnings recorded so far, in both modes: each tool call to a function not in ``tools=``
        (``{"field", "kind": "unknown_tool", "name", "offset", "message"}``; also under the
        message's ``"parse_warnings"`` key). Without ``tools=`` there are none."""
        return list(self._message.warnings)

    def set_tools(self, tools: Iterable[dict[str, Any] | Callable[..., Any]] | None) -> None:
        """Give the parser its tools (or other ones) after it was made, as if it had been made with
        them: the events and message from now on are exactly those of a parser made with
        ``tools=tools`` and fed the same text, and so are the events it returned already.

        Tools are read where a region that can hold tool calls closes (arguments typed, unknown
        names recorded under ``parse_warnings``) and, with ``value_deltas=True``, while such a
        region streams its ``region_value`` events. So this is exact, and allowed, while:

        * no region of a field whose value can hold tool calls (a content parser other than
          ``text``, or a transform) has closed (its value was typed with the earlier tools), and
        * the open region has not emitted or typed any part of a call's ``function.arguments`` yet
          (parts held back only until their call's name is known are typed with the new tools).

        Giving the tools it already has is always allowed. A tool-call region that has only just
        opened (DeepSeek V3's call block, opened by the first generated token) can still take them.

        Args:
            tools: tool JSON schemas or Python functions, as for ``tools=``; ``None`` or empty: none.

        Raises:
            ParserStateError: too late for the tools to act exactly (the message names the field
                and why); the parser is unchanged and keeps parsing with its earlier tools. Also
                after :meth:`finalize` or a failure.
            ValueError: a tool without a function name, or a parameter schema typing cannot read
                (as ``tools=``; the message names the entry, ``tools[1]``).
            TypeError: a tool is neither a dict nor a function.
        """
        params = tool_parameters(tools) if tools else {}
        if self._lifecycle is not _FEEDING:
            raise ParserStateError(f"set_tools: {self._state_error()}")
        if params == self._tools:
            return
        fields = self._template.fields
        closed = (*self._message.matched, *(error["field"] for error in self._message.errors))
        typed = [name for name in closed if name in fields and _holds_calls(fields[name])]
        if typed:
            raise ParserStateError(
                f"set_tools: too late, a region of field {typed[0]!r} already closed with its tool calls "
                "typed by the earlier tools; give the tools when the parser is made")
        region = self._region
        if region.values is not None and not region.values.retype(params):
            raise ParserStateError(
                f"set_tools: too late, the open region of field {region.spec.name!r} already streamed "  # type: ignore[union-attr]
                "part of a call's arguments, typed by the earlier tools; give the tools when the parser "
                "is made")
        self._tools = params

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Feed the next chunk of generated text.

        Args:
            text: the new text (may be empty).

        Returns:
            The events this chunk produced, in order (possibly none: text that could still be the
            start of a delimiter is held back until more input decides).

        Raises:
            TypeError: ``text`` is not a ``str`` (token ids go through
                ``ChatCodec.get_response_parser``); nothing changes.
            ParserStateError: the parser already finished or failed.
            ResponseParseError: (strict) a region that closed cannot be parsed; the parser fails.
        """
        if type(text) is not str and not isinstance(text, str):  # (``type`` first: no call for a str)
            raise TypeError(
                f"ResponseParser.feed: expected the generated text (str), got {type(text).__name__}. "
                "Token ids go through ChatCodec.get_response_parser(), whose parser decodes them")
        if self._lifecycle is not _FEEDING:
            raise self._state_error()
        buffer = self._buffer
        if buffer.held is not None:  # the unresolved tail waits: ``text`` may wait with it
            if buffer.wait(text):
                return []
            text = buffer.release(text)
        region = self._region
        quiet = region.quiet
        if quiet is not None and text:
            buf = buffer.text
            pos = buffer.pos
            size = len(buf)
            if pos == size:
                found = quiet(text)
                if found is None:  # the fast path: all of ``text`` goes to the region, no scan
                    buffer.zero_width = _NONE
                    spec = region.spec
                    if region.opened and spec is not None:  # _route (and _route_values), inlined
                        region.parts.append(text)
                        events = [{"type": "region_chunk", "field": spec.name, "text": text,
                                   "dirty": spec.dirty}]
                        values = region.values  # only ever set with value_deltas
                        if values is not None:
                            events += values.feed(text)
                    else:
                        events = []
                        self._route(events, text, pos)
                    size += len(text)  # the buffer takes ``text``, all of it decided
                    buffer.text, buffer.pos = buf + text, size
                    if size > TRIM_THRESHOLD:
                        buffer.trim()
                        region.compact()
                    return events
                unresolved = text
            else:  # what was kept back as a possible delimiter start (or held), then ``text``
                unresolved = buf[pos:] + text
                found = quiet(unresolved)
            if found is None:
                return self._pass(text, unresolved)
            if found.end() == len(unresolved) and len(unresolved) - found.start() <= _SHORT_TAIL \
                    and not unresolved[found.start():].strip(_ASCII_TAIL):
                # only the end may start a delimiter (``t``, a whitespace run, cut off by the end):
                # the text before it is plain, the end waits for the next chunk, as a scan decides
                return self._pass(text, unresolved[:found.start()])
        return self._advance(text, eos=False)

    def _pass(self, text: str, plain: str) -> list[dict[str, Any]]:
        """The fast path's other case: ``text`` joins the buffer and ``plain`` (the unresolved text
        up to where a delimiter could start, which no scan is needed to know) goes to the region;
        the rest stays unresolved."""
        buffer = self._buffer
        pos = buffer.pos
        buffer.text += text
        events: list[dict[str, Any]] = []
        if plain:
            buffer.zero_width = _NONE
            self._route(events, plain, pos)
            buffer.pos = pos = pos + len(plain)
        if pos > TRIM_THRESHOLD:
            buffer.trim()
            self._region.compact()
        return events

    def finalize(self, *, message: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """End the generation: close the open region, check required fields, return the message.

        Args:
            message: build the message; ``False`` (a stream that read every event and needs no
                message) returns ``{}`` in its place, with the same events and checks.

        Returns:
            ``(message, events)``: the assistant message, and the events the end produced.

        Raises:
            ParserStateError: the parser already finished or failed.
            ResponseParseError: (strict) the last region cannot be parsed.
            MissingFieldError: (strict) required fields never matched.
        """
        if self._lifecycle is not _FEEDING:
            raise self._state_error()
        events = self._advance("", eos=True)
        return self._finish(build=message), events

    def _finish(self, build: bool = True) -> dict[str, Any]:
        """After the end of generation closed the last region: check the required fields, end the
        lifecycle and build the message (:meth:`finalize`, and ``parse_response``'s one pass)."""
        missing = self._message.missing_required()
        if missing and not self._keep:
            self._fail(MissingFieldError(
                f"finalize: required response_template fields missing from parsed output: {missing}. "
                "The output never matched them; check their delimiters or mark them optional",
                fields=missing, partial_message=self._message.snapshot()))
        for name in missing:
            self._message.errors.append({"field": name, "parser": None, "offset": None,
                                         "error": "required field never matched", "text": "",
                                         "raw": "", "span": None})
        self._lifecycle = _FINISHED
        return self._message.build() if build else {}

    # -- the per-chunk path -----------------------------------------------------------------------

    def _advance(self, text: str, eos: bool) -> list[dict[str, Any]]:
        """Append ``text`` and apply every transition it allows (the per-chunk path): the buffer
        takes the text, the current state's matcher scans it, the engine routes and commits, the
        buffer advances (and holds its unresolved tail, and trims)."""
        buffer = self._buffer
        if buffer.held is not None:
            text = buffer.release(text)
        buffer.text = buf = buffer.text + text
        memo: dict[Any, int] = {}  # the matchers' searches in this ``buf`` (``Matcher.scan``)
        events: list[dict[str, Any]] = []
        pos = buffer.pos
        try:
            while True:
                region = self._region
                matcher = region.matcher
                if matcher is None:
                    result: Commit | int = len(buf)
                else:
                    try:
                        result = matcher.scan(buf, pos, eos, memo, buffer.zero_width, region.vacant)
                    except RegexTimeout as timeout:
                        result = self._stop_matching(timeout, buf, pos)
                if type(result) is not int:
                    pos = self._commit(events, buf, pos, result)  # type: ignore[arg-type]
                    continue
                if result > pos:
                    buffer.zero_width = _NONE
                    self._route(events, buf[pos:result], pos)
                    pos = result
                if eos:  # the last region: nothing comes after it
                    buffer.pos = pos
                    self._close(events, cut_off=True, end=buffer.origin + pos, reopened=True)
                    return events
                buffer.pos = pos
                if matcher is not None and pos < len(buf):  # the tail may start a delimiter
                    buffer.hold(matcher.absorbed)
                break
        except ChatCodecError as error:
            self._fail(error)
        except Exception as error:  # unforeseen: never leave a half-applied transition in FEEDING
            self._lifecycle, self._failure = Lifecycle.FAILED, error
            raise
        if pos > TRIM_THRESHOLD:
            buffer.trim()
            self._region.compact()
        return events

    def _commit(self, events: list[dict[str, Any]], buf: str, pos: int, commit: Commit) -> int:
        """Act on a committed delimiter; return the new position in ``buf``."""
        region = self._region
        if commit.start > pos:
            self._route(events, buf[pos : commit.start], pos)
            pos = commit.start
            self._buffer.zero_width = _NONE
        delimiter_text = buf[pos : commit.end]
        if region.strings is not None and not commit.delimiter.is_open \
                and region.inside_string(delimiter_text):
            self._route(events, buf[pos : pos + 1], pos)  # a close inside a JSON string is text
            return pos + 1
        buffer = self._buffer
        empty = pos == commit.end
        buffer.zero_width = buffer.zero_width | {commit.delimiter} if empty else _NONE
        if commit.delimiter.is_open:
            self._close(events, end=buffer.origin + commit.start, reopened=True)
            self._open(events, commit, delimiter_text)
        else:  # the region's own close: its text, and its named groups for the transform
            self._close(events, delimiter_text, commit.captures, end=buffer.origin + commit.end)
        return commit.end

    def _route(self, events: list[dict[str, Any]], text: str, at: int) -> None:
        """Send ``text`` (found at buffer index ``at``) to the current region."""
        region = self._region
        spec = region.spec
        if spec is None:
            return
        region.parts.append(text)
        if not region.opened:
            region.opened, region.vacant = True, False
            region.offset = self._buffer.origin + at
            if self._emits:
                events.append({"type": "region_open", "field": spec.name, "start": region.offset}
                              if self._offsets else {"type": "region_open", "field": spec.name})
        if self._emits:
            events.append({"type": "region_chunk", "field": spec.name, "text": text, "dirty": spec.dirty})

    def _open(self, events: list[dict[str, Any]], commit: Commit, opening: str) -> None:
        spec = self._template.fields[commit.delimiter.field]
        origin = self._buffer.origin
        self._region = region = _Region(spec, spec.close_matcher, commit.captures, True,
                                        origin + commit.end, opening, False, _strings(spec))
        if self._emits:
            events.append({"type": "region_open", "field": spec.name, "start": origin + commit.start}
                          if self._offsets else {"type": "region_open", "field": spec.name})
        if self._value_deltas or spec.close_at_value_end:
            self._open_values(events, region, commit.captures)

    # -- the value_deltas path (docs/streaming_values.md); only parsers made with value_deltas=True --

    def _open_values(self, events: list[dict[str, Any]], region: _Region, captures: dict[str, str]) -> None:
        """Start a region's ``region_value`` events and, for ``close_at_value_end``, its value end."""
        spec = region.spec
        assert spec is not None
        values = _region_values()(spec, captures, self._tools, self._value_deltas)
        if values is None:
            return
        if self._value_deltas:
            region.values = values
            events += values.start()
        if spec.close_at_value_end:
            from chatcodec.response_templates.value_end import ValueEndMatcher

            region.watch(ValueEndMatcher(spec.name, spec.close_matcher, values.scanner,  # type: ignore[arg-type]
                                         values if self._value_deltas else None))

    def _route_values(self, events: list[dict[str, Any]], text: str, at: int) -> None:
        """:meth:`_route`, then the region's ``region_value`` events for ``text``."""
        region = self._region
        spec = region.spec
        if spec is None or not region.opened or not self._emits:
            ResponseParser._route(self, events, text, at)
        else:  # _route's usual case, inlined (this runs for nearly every chunk)
            region.parts.append(text)
            events.append({"type": "region_chunk", "field": spec.name, "text": text, "dirty": spec.dirty})
        values = region.values
        if values is not None:
            events += values.feed(text)

    def _outside(self) -> _Region:
        implicit = self._template.implicit
        return _Region(implicit, self._outside_matcher, _NO_CAPTURES, False, 0, "", True,
                       _strings(implicit))

    def _close(self, events: list[dict[str, Any]], closing: str = "",
               close_captures: dict[str, str] | None = None, *, cut_off: bool = False,
               end: int = 0, reopened: bool = False) -> None:
        """Close the current region (if it ever opened) and return to OUTSIDE.

        ``closing`` is the text of the region's own close delimiter (``""`` when something else
        ended it), for the raw span of a region that fails; ``close_captures`` are its named groups,
        which join the open's as transform variables (SPEC §1.1; a name in both: the close's).
        ``cut_off``: the end of generation closes it, so a ``require_close`` field's region is a
        parse problem (what it holds may be incomplete), and so is a region of a structured field
        (a content parser other than ``text``) that holds nothing but whitespace (its open was
        written, its value never begun: dropping it would lose the open). ``end`` is the offset just after the
        region's raw text (for ``offsets=True``). ``reopened``: the caller opens the next region
        right away (an open delimiter ended this one), or the output ended, so no OUTSIDE region
        is made in between. An ``opens_once`` field's own close takes its open out of what OUTSIDE
        watches from now on (a state change: nothing is checked per chunk).
        """
        region = self._region
        spec = region.spec
        if not reopened:
            if spec is not None and spec.opens_once:  # never opens again, so it closes only once
                closed = self._closed
                self._outside_matcher = self._template.once_outside[spec.name] if not closed \
                    else self._template.outside_after(frozenset((*closed, spec.name)))
                self._closed = (*closed, spec.name)
            self._region = self._outside()
        if spec is None or not region.opened:
            return
        raw = "".join(region.parts)
        captures = {**region.captures, **close_captures} if close_captures else region.captures
        try:
            if cut_off and spec.require_close and spec.close is not None:
                raise ContentError(f"the output ends before this region's close ({spec.name!r} has "
                                   "require_close: a region cut off may be incomplete)", len(raw))
            text = raw if region.offset >= 0 else _without_prompt_layout(spec, raw, region.offset)
            value = self._value(spec, text, captures, region.values if text is raw else None)
            if not closing and (cut_off or region.opening) and spec.close is not None \
                    and spec.content != "text" and not raw.strip():
                # an open written and nothing after it, ended by the end of the output or by the
                # next delimiter (never its own close): a value begun, not an empty one
                ended = "the output ends" if cut_off else "the next delimiter comes"
                raise ContentError(f"{ended} right after this region's open (nothing of its value "
                                   "was written)", len(raw))
            self._message.add(spec, value, text)
            if self._tools:
                self._check_tool_names(spec, region, value)
            closing_values = region.values.close(value) if region.values is not None else None
        except Exception as error:  # whatever fails here is this region's problem, never a half-close
            if not isinstance(error, (ValueError, KeyError)):
                error = ValueError(f"{type(error).__name__}: {error}")
            record = self._problem(spec, region, raw, closing, error)
            failed: dict[str, Any] = {"type": "region_close", "field": spec.name, "value": None,
                                      "error": record}
            if self._offsets:
                failed["end"] = end
            events.append(failed)
            self._restore(events, spec, record)
            return
        if closing_values:
            events += closing_values
        if not self._emits:
            return
        close = {"type": "region_close", "field": spec.name, "value": copy_value(value)}
        if self._offsets:
            close["end"] = end
        events.append(close)

    #: Whether the per-region events (``region_open``, ``region_chunk``, ``region_close``) are
    #: built: ``parse_response``, which returns none of them, turns them off (a region that fails
    #: and ``value_deltas`` still make theirs). A ``region_close`` event carries a copy of the
    #: value, so a caller editing an event's value never edits the message.
    _emits = True

    #: ``(tools, listing)``: the tools named in unknown-tool warnings, worked out once per tool set
    _tool_listing: tuple[ToolParameters, str] | None = None

    def _check_tool_names(self, spec: FieldSpec, region: _Region, value: Any) -> None:
        """Record (both modes) each tool call to a function that ``tools=`` does not list: the call
        is kept as written, and the caller who passed tools can see it is not one of them.

        The message names the tools given, alphabetically, at most ``MAX_LISTED_TOOLS`` of them
        (then ``... and N more``): the listing is worked out once per tool set, so a hundred unknown
        calls against a hundred thousand tools cost a hundred short messages, not a hundred sorts.
        """
        tools = self._tools
        if not tools:
            return
        listing = None
        for name in called_names(value):
            if name not in tools:
                if listing is None:
                    cached = self._tool_listing
                    if cached is None or cached[0] is not tools:
                        cached = self._tool_listing = (tools, _listed_tools(tools))
                    listing = cached[1]
                self._message.warnings.append({
                    "field": spec.name, "kind": "unknown_tool", "name": name, "offset": region.offset,
                    "message": f"field {spec.name!r}: a call to {name!r}, which is not one of the tools "
                               f"given ({listing}); the call is kept as written"})

    def _restore(self, events: list[dict[str, Any]], failed: FieldSpec, record: dict[str, Any]) -> None:
        """(keep) Put a failed region's raw text, delimiters included, back into the implicit text
        field as a region of its own, so the message loses nothing and agrees with the events."""
        implicit = self._template.implicit
        raw = record["raw"]
        if implicit is None or implicit is failed or not implicit.concatenates or not raw:
            return
        value = implicit.parse(raw)
        self._message.add(implicit, value, raw)
        opening: dict[str, Any] = {"type": "region_open", "field": implicit.name}
        closing: dict[str, Any] = {"type": "region_close", "field": implicit.name, "value": value}
        if self._offsets:
            opening["start"], closing["end"] = record["span"]
        chunk = {"type": "region_chunk", "field": implicit.name, "text": raw, "dirty": implicit.dirty}
        events += [opening, chunk, closing]

    def _value(self, spec: FieldSpec, raw: str, captures: dict[str, str],
               values: RegionValues | None = None) -> Any:
        """Content parser, then transform, then tool-argument typing (pure; raises on bad content).

        ``values``: the region's value stream, when it read ``raw``; a stream that vouches for the
        content parser's value of ``raw`` (:meth:`RegionValues.settled`) spares reading it again.

        A value nested deeper than ``MAX_NESTING_DEPTH`` is bad content too (``limits``); it is
        walked only when the parser's ``depth_bound`` on ``raw`` plus the levels the transform adds
        does not already rule that out (typing with ``tools`` may decode strings: always walked).
        """
        try:
            settled, value = values.settled(raw) if values is not None else (False, None)
            if not settled:
                value = spec.parse(raw)
            build = spec.build
            if build is not None:
                if spec.transform_each:
                    value = apply_transform_each(spec.transform, value, captures, build=build)
                else:
                    value = build({**captures, "content": value})
            if self._tools:
                value = cast_tool_calls(value, self._tools)
        except RecursionError:
            raise ValueError(NESTING_ERROR) from None
        bound = spec.parser.depth_bound
        if (bound is None or self._tools or bound(raw) + spec.transform_depth > MAX_NESTING_DEPTH) \
                and exceeds_depth(value):
            raise ValueError(NESTING_ERROR)
        return value

    # -- errors -----------------------------------------------------------------------------------

    def _anchor(self, prompt: str) -> str | None:
        """The prompt after its last start anchor; a ``start_anchor_pattern`` that runs out of time
        raises (strict) or is recorded, and the prompt is then left out (keep)."""
        try:
            return self._template.after_last_anchor(prompt)
        except TimeoutError:
            problem = (f"searching start_anchor_pattern in the prefix took longer than REGEX_TIMEOUT "
                       f"({backtracking.REGEX_TIMEOUT:g} s of CPU time); the prefix was left out")
            if not self._keep:
                raise ResponseParseError(problem.removesuffix("; the prefix was left out"),
                                         text=prompt, raw=prompt) from None
            self._message.errors.append({"field": None, "parser": None, "offset": None, "error": problem,
                                         "text": "", "raw": "", "span": None})
            return ""

    def _stop_matching(self, timeout: RegexTimeout, buf: str, pos: int) -> int:
        """A delimiter search ran out of time at ``buf[pos]``: raise (strict), or record it and stop
        looking for delimiters (keep): the rest of the output goes to the current region, so nothing
        is lost and the time stays bounded (one timeout per parse)."""
        field_name = timeout.where[0].split(".")[1] if timeout.where else None
        at = self._buffer.origin + pos
        problem = str(timeout)
        if not self._keep:
            raise ResponseParseError(f"{problem} (the search began {self._location(at, at)})",
                                     field=field_name,
                                     offset=at,
                                     text=buf[pos:], raw=buf[pos:], span=None,
                                     partial_message=self._message.snapshot())
        # no offset: where the search started depends on how the output was chunked
        self._message.errors.append({"field": field_name, "parser": None, "offset": None, "error": problem,
                                     "text": "", "raw": "", "span": None})
        self._region.watch(None)
        return len(buf)

    def _problem(self, spec: FieldSpec, region: _Region, raw: str, closing: str,
                 error: ValueError | KeyError) -> dict[str, Any]:
        """Record (keep) or raise (strict) a region that could not become a value."""
        what = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
        where = error.position if isinstance(error, ContentError) else None
        message = f"field {spec.name!r} (content parser {spec.content!r}): {what}"
        at = region.offset + (where or 0)
        whole = f"{region.opening}{raw}{closing}"
        start = region.offset - len(region.opening)
        record = {"field": spec.name, "parser": spec.content, "offset": at, "error": message, "text": raw,
                  "raw": whole, "span": [start, start + len(whole)]}
        if self._keep:
            self._message.errors.append(record)
            return record
        kind = UnknownPlaceholderError if isinstance(error, KeyError) else ResponseParseError
        located = f"field {spec.name!r} (content parser {spec.content!r}) {self._location(at, start)}: {what}"
        raise kind(f"{located}\n{caret_excerpt(raw, where or 0)}", field=spec.name, parser=spec.content,
                   offset=at, text=raw, raw=whole, span=(start, start + len(whole)),
                   partial_message=self._message.snapshot())

    def _location(self, at: int, start: int) -> str:
        """Where offset ``at`` is, in the output or in the prompt (``start``: where the region began)."""
        why = "" if self._anchored else NO_START_ANCHOR_HINT
        if at < 0:
            return f"at offset {self._prefix_len + at} of the prefix" + (f" ({why})" if why else "")
        why = f": {why}" if why else ""
        began = f" (the region began at offset {self._prefix_len + start} of the prefix{why})" if start < 0 \
            else ""
        return f"at offset {at} of the output{began}"

    def _fail(self, error: ChatCodecError) -> None:
        self._lifecycle = Lifecycle.FAILED
        self._failure = error
        raise error

    def _state_error(self) -> ParserStateError:
        if self._lifecycle is Lifecycle.FINISHED:
            return ParserStateError(
                "ResponseParser already finalized: feed() and finalize() cannot be called again. "
                "Create a new ResponseParser for the next sequence")
        return ParserStateError(
            f"ResponseParser failed earlier ({type(self._failure).__name__}: "
            f"{str(self._failure).splitlines()[0]}); create a new ResponseParser. The message parsed "
            "up to the failure is on that exception's partial_message")


#: The most tool names one unknown-tool warning lists (the first, alphabetically).
MAX_LISTED_TOOLS = 20


def _listed_tools(tools: ToolParameters) -> str:
    """The tools given, as an unknown-tool warning lists them: ``"f, g"``, or the first
    ``MAX_LISTED_TOOLS`` names alphabetically and ``"... and N more"`` (``heapq``: no full sort)."""
    if len(tools) <= MAX_LISTED_TOOLS:
        return ", ".join(sorted(tools))
    import heapq  # only here: off the import path of decoding
    first = heapq.nsmallest(MAX_LISTED_TOOLS, tools)
    return f"{', '.join(first)}, ... and {len(tools) - MAX_LISTED_TOOLS} more"


def _without_prompt_layout(spec: FieldSpec, raw: str, offset: int) -> str:
    """``raw`` without the whitespace the prompt wrote at its start, for a ``"strip": "blank"`` field.

    A region the prompt opened or continued starts with the prompt's text (``offset < 0``); when
    that text is only whitespace (the newline after a pre-opened ``<think>``, the blank lines after
    an empty think block) it is the template's layout, not what the model wrote.
    """
    if offset >= 0 or spec.content_args.get("strip") != BLANK:
        return raw
    written = raw[:-offset]
    return raw[-offset:] if not written.strip() else raw


def _holds_calls(spec: FieldSpec) -> bool:
    """Whether a region of ``spec`` can hold tool calls, whose arguments tools type (a ``text``
    field without a transform only ever holds a string)."""
    return spec.content != "text" or spec.build is not None


def _strings(spec: FieldSpec | None) -> StringTracker | None:
    """A string tracker for regions whose content parser is ``string_aware`` (``json``, and the
    extensions that declare it): their close only counts outside JSON strings."""
    if spec is None or not spec.parser.string_aware:
        return None
    return StringTracker(spec.content_args.get("string_delims", ()))
