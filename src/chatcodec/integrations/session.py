"""One request's parse inside an engine: a response parser, its OpenAI deltas, and its raw text.

A :class:`Session` is what both engine plugins feed: each engine delta goes in once, and comes out
as a :class:`Step`, the OpenAI Chat Completions delta fields that the delta produced (reasoning,
content, tool-call entries), as :class:`chatcodec.openai.ChatCompletionStream` writes them. The
engines' own plumbing also needs *raw* text (vLLM hands the text after the reasoning on to its tool
stage; SGLang's reasoning stage passes everything outside reasoning on to its tool stage), so the
session keeps the generated text and reads where reasoning regions lie from the parser's offsets
(``ResponseParser(offsets=True)``).

The parser runs with ``errors="keep"``: a region that cannot be parsed never stops the stream, and
its text goes back into ``content`` (nothing is lost).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chatcodec.errors import ParserStateError
from chatcodec.integrations.discovery import ServingTemplate
from chatcodec.object_cache import ObjectCache
from chatcodec.openai import ToolCallIds, to_chat_message
from chatcodec.openai.steps import ARGUMENTS, CALL, CALL_DONE, TEXT, StepWriter
from chatcodec.openai.stream import finish_reason_for
from chatcodec.response_templates.engine import ResponseParser
from chatcodec.response_templates.template import ResponseTemplate

__all__ = [
    "REASONING_FIELDS", "RawText", "Session", "Step", "assemble", "new_parser", "reasoning_field", "whole",
]

#: Field names that hold reasoning, in the order they are looked for (transformers 5.24 reads
#: ``reasoning_content`` and ``thinking``; vLLM and SGLang's own templates use ``thinking``).
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
#: The key the session asks the OpenAI layer to put reasoning under.
_REASONING_KEY = "reasoning_content"


def reasoning_field(template: ResponseTemplate) -> str | None:
    """The name of the template's reasoning field, or ``None`` when it has none."""
    return next((name for name in REASONING_FIELDS if name in template.fields), None)


@dataclass
class Step:
    """What one fed delta (or the end of the stream) produced.

    Attributes:
        reasoning: reasoning text.
        content: content text.
        tool_calls: Chat Completions ``delta.tool_calls`` entries, in order: the first entry of a
            call has ``index``, ``id``, ``type`` and ``function.name``; later ones ``index`` and
            ``function.arguments`` fragments.
        reasoning_end: where a reasoning region closed in this step (offset just after its close
            delimiter in the generated text), the last one when several did.
        other_start: where the first region other than reasoning opened in this step (its raw
            text's start), if one did.
        finish_reason: the Chat Completions ``finish_reason`` of the last chunk (only at the end).
        taken_back: at the end (``Session.finish(unsent_from=...)``): calls numbered from here,
            whose entries the caller holds unsent, failed and were taken back (their text is in
            ``content``); ``None`` when none were.
        outside: the raw generated text outside reasoning regions that this step decided
            (delimiters of other regions included), with ``track_outside=True``.
        parts: the same output in the order it was written: ``("reasoning", text)``,
            ``("content", text)`` and ``("call", tool-call entry)`` (for an engine that must keep
            the order within one delta).
    """

    reasoning: str = ""
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning_end: int | None = None
    other_start: int | None = None
    finish_reason: str | None = None
    taken_back: int | None = None
    outside: str = ""
    parts: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def has_output(self) -> bool:
        """Whether the step carries anything for the client."""
        return bool(self.reasoning or self.content or self.tool_calls)

    def call_start(self) -> tuple[int, str, str, str] | None:
        """The delta that starts a call, as its parts: ``(index, id, name, first argument fragment)``
        (``""`` when no arguments came with it) when :attr:`tool_calls` is a call's first entry,
        maybe followed by one entry of its arguments; ``None`` for any other list."""
        entries = self.tool_calls
        start = entries[0] if entries else None
        if start is None or "id" not in start:
            return None
        function = start["function"]
        if start is entries[-1]:
            return start["index"], start["id"], function["name"], ""
        more = entries[1]
        if entries[2:] or "id" in more or more["index"] != start["index"]:  # (a slice: no len() call)
            return None
        return start["index"], start["id"], function["name"], more["function"]["arguments"]

    def without_reasoning(self) -> Step:
        """The same step with its reasoning left out (what a tool stage hands on)."""
        return Step(content=self.content, tool_calls=self.tool_calls, finish_reason=self.finish_reason,
                    parts=[part for part in self.parts if part[0] != "reasoning"])


class RawText:
    """The generated text, appended piece by piece and read back by offsets (O(1) per append).

    Text before :meth:`drop_before`'s offset may be forgotten; reading it is an error.
    """

    def __init__(self) -> None:
        self._text = ""  # the kept text, from offset _start
        self._pieces: list[str] = []  # appended since _text was last joined
        self._start = 0
        self.length = 0

    def append(self, text: str) -> None:
        """Add the next generated text."""
        if text:
            self._pieces.append(text)
            self.length += len(text)

    def _joined(self) -> str:
        if self._pieces:
            self._text = self._text + "".join(self._pieces)
            self._pieces = []
        return self._text

    def slice(self, start: int, end: int | None = None) -> str:
        """``text[start:end]`` of the generated text (``start`` clamped to what is kept)."""
        pieces = self._pieces
        whole = start <= self._start and (end is None or end >= self.length)
        if whole and not self._text and len(pieces) == 1:
            return pieces[0]  # the usual read: all that is kept, in one piece (nothing to join)
        text = self._joined()
        begin = max(start, self._start) - self._start
        return text[begin:] if end is None else text[begin : max(end - self._start, begin)]

    def drop_before(self, offset: int) -> None:
        """Forget the text before ``offset`` (it will never be read again)."""
        if offset >= self.length:  # the usual case: everything was handed out
            self._text, self._pieces, self._start = "", [], self.length
            return
        cut = offset - self._start
        if cut > 0:
            self._text = self._joined()[cut:]
            self._start += cut


#: whether this chatcodec's parser can stream values (``value_deltas``), looked up once
_STREAMS_VALUES = "value_deltas" in inspect.signature(ResponseParser).parameters
#: profile name (or None) -> an id factory in its tool-call id form: reading a profile costs more
#: than a whole short stream, and reading the form costs a sixth of a session's start; a factory
#: without a seed keeps no state between calls, so every request shares it
_ID_FACTORIES: dict[str | None, Any] = {}


def _ids(profile: str | None) -> Any:
    """The id factory (``chatcodec.openai.ToolCallIds``) in the form the profile's chat template
    accepts (the default form for ``None``)."""
    factory = _ID_FACTORIES.get(profile)
    if factory is None:
        factory = _ID_FACTORIES[profile] = ToolCallIds.for_profile(profile)
    return factory


def new_parser(serving: ServingTemplate, prefix: str, tools: list[dict[str, Any]] | None,
               *, stream_values: bool = True) -> ResponseParser:
    """The response parser a session (or a one-shot parse) uses: nothing raises on model output.

    A prompt without the template's start anchor is parsed whole, as everywhere in chatcodec; the
    warning that says so is not repeated for every request (the engines decode the prompt
    themselves, so it says nothing the user can act on per request).
    """
    options: dict[str, Any] = {"tools": tools or None, "errors": "keep", "offsets": True}
    if stream_values and _STREAMS_VALUES:
        options["value_deltas"] = True  # arguments streamed as they are written, where supported
    if _anchored(serving.template, prefix):  # nothing to silence (silencing costs a filter change)
        return ResponseParser(serving.template, prefix=prefix, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ResponseParser(serving.template, prefix=prefix, **options)


#: (a loaded template, a short prompt) -> whether the prompt is anchored: the engines' prompts end
#: in one of a few generation prompts (SGLang's is always the same)
_ANCHORED: ObjectCache[bool] = ObjectCache()
#: longer prompts are not kept (nor searched twice)
_ANCHORED_SPAN = 512


def _anchored(template: ResponseTemplate, prefix: str) -> bool:
    """Whether a parser given ``prefix`` surely gives no missing-start-anchor warning: the prefix is
    empty, or a short one known to hold the anchor. ``False`` means it may (a long prefix is not
    searched here: the parser searches it)."""
    if not prefix:
        return True
    if len(prefix) > _ANCHORED_SPAN:
        return False
    known = _ANCHORED.get(template, key=prefix)
    if known is None:
        try:
            known = template.after_last_anchor(prefix) is not None
        except TimeoutError:  # the parser records it
            known = False
        _ANCHORED.put(template, known, key=prefix)
    return known


#: (a loaded template) -> what a session reads of it (see _template_facts)
_FACTS: ObjectCache[tuple[str | None, str | None, bool]] = ObjectCache()


def _template_facts(template: ResponseTemplate) -> tuple[str | None, str | None, bool]:
    """The template's reasoning field, its implicit field, and whether the implicit field keeps
    whitespace as written (its ``strip`` is ``false``); read once per loaded template, not once
    per request."""
    known = _FACTS.get(template)
    if known is None:
        implicit = template.implicit
        known = _FACTS.put(template, (
            reasoning_field(template),
            implicit.name if implicit is not None else None,
            implicit is not None and implicit.content_args.get("strip", True) is False,
        ))
    return known


#: the events that open or close a region
_BOUNDARIES = frozenset(("region_open", "region_close"))


class Session:
    """One generated sequence parsed incrementally: raw deltas in, :class:`Step` out.

    Args:
        serving: the model's response template.
        prefix: the prompt the generation continues (``""``: unknown; the output is parsed from
            outside every region).
        tools: the request's tools as chat tool dicts (for argument typing).
        keep_raw: keep the generated text in :attr:`raw` (off once nobody needs it; a session with
            ``track_outside`` keeps only the text it has not handed out, and not in :attr:`raw`).
        track_outside: fill :attr:`Step.outside` (the text outside reasoning, raw), forgetting the
            raw text as it is handed out.
        stream_values: stream tool-call arguments as they are written (off for a stage that never
            sends calls: it saves the value scanners' work).
    """

    def __init__(
        self,
        serving: ServingTemplate,
        prefix: str,
        tools: list[dict[str, Any]] | None,
        *,
        keep_raw: bool = True,
        track_outside: bool = False,
        stream_values: bool = True,
    ) -> None:
        self.serving = serving
        self._reasoning, self._implicit, self._keeps_blank = _template_facts(serving.template)
        self._parser = new_parser(serving, prefix, tools, stream_values=stream_values)
        # the OpenAI layer's step writer: a Step is made from its steps without writing Chat
        # Completions chunks first (the same fields ChatCompletionStream would write)
        self._writer = StepWriter(self._parser.template, _ids(serving.profile))
        self._events = self._writer.events
        self._texts = self._writer.texts
        #: :attr:`calls_started` before the last :meth:`feed` (calls from there started in its step)
        self.calls_before_feed = 0
        initial = self._parser.initial_events
        #: the prompt's events, which go out with the first delta (as ``StreamBase`` replays them)
        self._initial = self._writer.prompt(list(initial))
        self._parsed: dict[str, Any] | None = None  # the parser's message, when finish built it
        self.raw = RawText()
        self._track_outside = track_outside
        self.keep_raw = keep_raw and not track_outside
        self._cursor = 0  # with track_outside: the text before this offset was handed out or skipped
        self._unsent = ""  # with track_outside: the generated text from _cursor on
        # with track_outside: whitespace outside reasoning not handed out yet, while all the text of
        # the implicit field's region so far is whitespace (the message may leave it out as layout)
        self._blank: str | None = ""
        self.finished = False
        #: whether a reasoning region is open right now (the prefix may have opened one)
        self.in_reasoning = self._reasoning is not None and _open_field(initial) == self._reasoning

    def adopt_tools(self, tools: list[dict[str, Any]] | None) -> bool:
        """Give the parse the request's tools (argument typing, unknown-name warnings) after it
        started, as if the session had been built with them, when that is exact
        (:meth:`ResponseParser.set_tools`: no call region closed yet, and the open one, if any, has
        not streamed any arguments yet).

        Args:
            tools: the request's tools as chat tool dicts.

        Returns:
            Whether the session took them; ``False`` changes nothing (build a session with the tools
            and feed it the text again).

        Raises:
            ValueError: a parameter schema typing cannot read (as ``ResponseParser(tools=...)``).
        """
        if self.finished:
            return False
        try:
            self._parser.set_tools(tools)
        except ParserStateError:
            return False
        return True

    @property
    def message(self) -> dict[str, Any] | None:
        """After :meth:`finish` with ``message=True``: the whole message as an OpenAI assistant
        message (:func:`chatcodec.openai.to_chat_message` of the parse; ``reasoning_content`` for
        the reasoning); ``None`` before, or when the session ended without building it. It can
        differ from what was streamed only where a stream cannot take back what it sent: a call
        that started and then failed is in the stream, not here (``docs/openai.md``)."""
        parsed = self._parsed
        return None if parsed is None else to_chat_message(parsed, ids=_ids(self.serving.profile))

    @property
    def resolved(self) -> int:
        """How much of the generated text the parser has decided (see ``ResponseParser.resolved``)."""
        return self._parser.resolved

    @property
    def position(self) -> tuple[Any, ...]:
        """Where the session stands, as a value two sessions fed the same text can be compared by:
        how much text was fed and decided, whether reasoning is open, how much raw text was handed
        out (``track_outside``), the whitespace held back, and whether it finished."""
        fed = self._cursor + len(self._unsent) if self._track_outside else self.raw.length
        return (fed, self.resolved, self.in_reasoning, self._cursor, self._blank, self.finished)

    def feed(self, text: str) -> Step:
        """Feed one engine delta (any number of tokens' text)."""
        self.calls_before_feed = self._writer.calls
        if not text:
            return Step()
        if self.keep_raw:
            self.raw.append(text)
        events = self._parser.feed(text)
        if self._initial:  # the prompt's events go out with the first delta
            batch, self._initial = [*self._initial, *events], []
            return self._step(self._events(batch), events, None, text)
        if not events:  # nothing decided: an empty step (the raw text's bookkeeping aside)
            return self._step((), events, None, text) if self._track_outside else Step()
        # the usual deltas take a short path (no walk over the events, no list of steps): one
        # text chunk of a reasoning or content field, or a call region's raw chunk with more text
        # of the argument string being written, or with value events of the arguments being
        # written (a value begins or ends, the call ends); the same state changes and the same step as
        # self._step(self._events(events), ...) gives them (tests/integrations/test_session.py)
        first, last = events[0], events[-1]
        texts = self._texts
        if first is last:
            if first["type"] != "region_chunk":
                return self._step(self._events(events), events, None, text)
            if first["field"] not in texts:  # a call region's raw text: nothing for the writer
                step = Step(tool_calls=[], parts=[])
            else:
                text_field = texts[first["field"]]
                written = text_field.feed(first["text"])
                if not written:
                    step = Step(tool_calls=[], parts=[])
                elif text_field.kind == "content":
                    step = Step(content=written, tool_calls=[], parts=[("content", written)])
                else:
                    step = Step(reasoning=written, tool_calls=[], parts=[("reasoning", written)])
        elif (last["type"] == "region_value" and first["type"] == "region_chunk"
              and first["field"] not in texts):
            more = self._writer.more_arguments(last) if events[1] is last and last["op"] == "text" else None
            if more is not None:
                if more[1]:
                    entry = {"index": more[0], "function": {"arguments": more[1]}}
                    step = Step(tool_calls=[entry], parts=[("call", entry)])
                else:
                    step = Step(tool_calls=[], parts=[])
            else:  # a value of the arguments begins or ends, or they end (and the call with them)
                steps = self._writer.argument_values(events, 1)
                if steps is None:
                    return self._step(self._events(events), events, None, text)
                if not steps:
                    step = Step(tool_calls=[], parts=[])
                else:
                    only, end = steps[0], steps[-1]
                    if only[0] != ARGUMENTS or not (only is end or (end[0] == CALL_DONE and steps[1] is end)):
                        return self._step(steps, events, None, text)
                    entry = {"index": only[1], "function": {"arguments": only[2]}}
                    step = Step(tool_calls=[entry], parts=[("call", entry)])
        else:
            return self._step(self._events(events), events, None, text)
        if not self._track_outside:
            return step
        self._unsent += text
        resolved = self._parser.resolved
        cut = resolved - self._cursor
        if self.in_reasoning:  # nothing decided inside reasoning goes out
            if cut > 0:
                self._unsent, self._cursor = self._unsent[cut:], resolved
        elif self._blank is None:
            if cut > 0:  # the text decided goes out as it is
                unsent = self._unsent  # (slices, no len(): a whole slice is the string itself)
                step.outside, self._unsent = unsent[:cut], unsent[cut:]
                self._cursor = resolved
        else:
            outside: list[str] = []
            self._hand_out(outside, resolved)
            if outside:
                step.outside = "".join(outside)
        return step

    @property
    def calls_started(self) -> int:
        """How many tool calls the steps so far started (the next call's index)."""
        return self._writer.calls

    def finish(self, finish_reason: str | None = None, *, unsent_from: int | None = None,
               message: bool = False) -> Step:
        """End the sequence: held text resolves, the open region closes (idempotent).

        Args:
            finish_reason: the engine's finish reason (``None``: ``"stop"``).
            unsent_from: for a caller that completes its last delta in place: calls numbered from
                here (:attr:`calls_started` before the last feed) were not sent yet, so a region
                that fails at the end takes them back too (:attr:`Step.taken_back`).
            message: also build the whole message (:attr:`message`); a stream, which sends every
                step, ends without it.

        Raises:
            ValueError: an unknown ``finish_reason`` (as ``ChatCompletionStream.finish``).
        """
        if self.finished:
            return Step()
        finish_reason_for(finish_reason, 0)  # an unknown reason is an error before anything ends
        self.finished = True
        writer = self._writer
        before = writer.calls
        if message:
            self._parsed, events = self._parser.finalize()
        else:
            events = self._parser.finalize(message=False)[1]
        steps = writer.finish([*self._initial, *events], unsent_from)
        self._initial = []
        step = self._step(steps, events, finish_reason_for(finish_reason, writer.completed), "")
        if writer.calls < before:
            step.taken_back = writer.calls
        return step

    def _step(self, steps: Sequence[tuple[Any, ...]], events: list[dict[str, Any]], finish_reason: str | None,
              text: str) -> Step:
        """The :class:`Step` of the OpenAI layer's ``steps`` (``chatcodec.openai.steps``), with the
        region bookkeeping of the parser's ``events`` that gave them; ``text`` is the raw text fed."""
        only = steps[0] if steps else None
        if only is None:
            step = Step(finish_reason=finish_reason, tool_calls=[], parts=[])
        elif only is steps[-1] and only[0] == TEXT:  # one text (no lists to join)
            written = only[2]
            if only[1] == "content":
                step = Step(content=written, finish_reason=finish_reason, tool_calls=[],
                            parts=[("content", written)])
            else:
                step = Step(reasoning=written, finish_reason=finish_reason, tool_calls=[],
                            parts=[("reasoning", written)])
        elif only is steps[-1] and only[0] == ARGUMENTS and only[2]:  # one argument fragment
            fragment = {"index": only[1], "function": {"arguments": only[2]}}
            step = Step(finish_reason=finish_reason, tool_calls=[fragment], parts=[("call", fragment)])
        else:
            step = Step(finish_reason=finish_reason, tool_calls=[], parts=[])
            parts, calls = step.parts, step.tool_calls
            reasoning, content = [], []
            for item in steps:
                kind = item[0]
                if kind == TEXT:
                    if item[1] == "content":
                        content.append(item[2])
                        parts.append(("content", item[2]))
                    else:
                        reasoning.append(item[2])
                        parts.append(("reasoning", item[2]))
                    continue
                if kind == CALL:
                    entry: dict[str, Any] = {"index": item[1], "id": item[2], "type": "function",
                                             "function": {"name": item[3], "arguments": ""}}
                elif kind == ARGUMENTS and item[2]:
                    entry = {"index": item[1], "function": {"arguments": item[2]}}
                else:  # CALL_DONE (Chat Completions has no end-of-call delta), or no arguments
                    continue
                calls.append(entry)
                parts.append(("call", entry))
            step.reasoning, step.content = "".join(reasoning), "".join(content)
        if not self._track_outside:
            for event in events:
                if event["type"] in _BOUNDARIES:  # most deltas open and close no region
                    self._regions(step, events, [])
                    break
            return step
        if text:
            self._unsent += text  # the raw text from the cursor on, which region offsets cut
        outside: list[str] = []
        for event in events:
            if event["type"] in _BOUNDARIES:
                self._regions(step, events, outside)
                break
        resolved = self._parser.resolved
        if self.in_reasoning:  # nothing decided inside reasoning goes out
            self._skip(resolved)
        elif not outside and self._blank is None and not self.finished:
            cut = resolved - self._cursor
            if cut > 0:  # the usual delta: the text decided goes out as it is
                unsent = self._unsent  # (slices, no len(): a whole slice is the string itself)
                step.outside, self._unsent = unsent[:cut], unsent[cut:]
                self._cursor = resolved
        else:
            self._hand_out(outside, resolved)
            if self.finished:
                self._region_ends(outside)
        if outside:
            step.outside = "".join(outside)
        return step

    def _regions(self, step: Step, events: list[dict[str, Any]], outside: list[str]) -> None:
        """Where regions opened and closed in ``events``: reasoning's state, the step's offsets, and
        (``track_outside``) the raw text they decide."""
        field = self._reasoning
        for event in events:
            kind = event["type"]
            if kind == "region_open":
                if event["field"] == field:
                    self.in_reasoning = True
                    self._hand_out(outside, event["start"])
                    self._region_ends(outside)
                elif step.other_start is None:
                    step.other_start = event["start"]
            elif kind == "region_close" and event["field"] == field:
                self.in_reasoning = False
                step.reasoning_end = event["end"]
                self._skip(event["end"])
            elif kind == "region_close" and event["field"] != self._implicit and not self.in_reasoning:
                self._hand_out(outside, event["end"])  # a call's region: the next text starts anew
                self._region_ends(outside)

    def _skip(self, upto: int) -> None:
        """The raw text before ``upto`` is not handed out (``track_outside``)."""
        if upto > self._cursor:
            self._unsent = self._unsent[upto - self._cursor :]
            self._cursor = upto

    def _hand_out(self, outside: list[str], upto: int) -> None:
        if self._track_outside and upto > self._cursor:
            cut = upto - self._cursor
            text, self._unsent = self._unsent[:cut], self._unsent[cut:]
            self._cursor = upto
            if self._blank is not None and not text.strip():
                self._blank += text  # only whitespace so far: what follows decides
                return
            outside.append((self._blank or "") + text)
            self._blank = None

    def _region_ends(self, outside: list[str]) -> None:
        """A region of the implicit field ends (reasoning or a call opens after it, a call's region
        closed, or the output ended): held whitespace was the whole region, which the message leaves
        out (its ``strip`` is not ``false``) or keeps; the next region starts with nothing."""
        if self._blank and self._keeps_blank:
            outside.append(self._blank)
        self._blank = ""


def whole(session: Session, text: str) -> tuple[list[Step], dict[str, Any]]:
    """Parse a whole output with a fresh session: its steps, and the message in the form
    :func:`assemble` gives, from :attr:`Session.message` (what non-streaming paths answer)."""
    steps = [session.feed(text), session.finish(message=True)]
    message = session.message or {}
    calls = [{"id": call["id"], "type": "function", "function": dict(call["function"])}
             for call in message.get("tool_calls") or []]
    return steps, {"reasoning": message.get("reasoning_content") or None,
                   "content": message.get("content") or None, "tool_calls": calls}


def assemble(steps: list[Step]) -> dict[str, Any]:
    """The whole message that a list of steps streamed: ``{"reasoning", "content", "tool_calls"}``.

    Tool-call entries are merged per ``index``: ``id``, ``type`` and ``function.name`` from the
    entries that carry them, ``function.arguments`` concatenated. ``reasoning`` / ``content`` are
    ``None`` when nothing was streamed for them.
    """
    calls: dict[int, dict[str, Any]] = {}
    for step in steps:
        for entry in step.tool_calls:
            call = calls.setdefault(
                entry["index"], {"id": None, "type": "function", "function": {"name": None, "arguments": ""}}
            )
            call["id"] = entry.get("id") or call["id"]
            function = entry.get("function") or {}
            call["function"]["name"] = function.get("name") or call["function"]["name"]
            call["function"]["arguments"] += function.get("arguments") or ""
    reasoning = "".join(step.reasoning for step in steps)
    content = "".join(step.content for step in steps)
    return {
        "reasoning": reasoning or None,
        "content": content or None,
        "tool_calls": [calls[index] for index in sorted(calls)],
    }


def _open_field(events: list[dict[str, Any]]) -> str | None:
    """The field whose region ``events`` leave open (``None``: none)."""
    open_field = None
    for event in events:
        if event["type"] == "region_open":
            open_field = event["field"]
        elif event["type"] == "region_close":
            open_field = None
    return open_field
