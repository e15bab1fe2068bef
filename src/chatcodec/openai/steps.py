"""Region events to output steps: the one state machine both OpenAI streams share.

:class:`StepWriter` reads the engine's events (``region_open`` / ``region_chunk`` /
``region_value`` / ``region_close``) and writes *steps*, small tuples that say what the client
sees, in order:

* ``("text", kind, text)``: reasoning (``kind == "reasoning"``) or content text;
* ``("call", index, id, name)``: tool call ``index`` (counted from 0 in output order) starts;
* ``("arguments", index, fragment)``: more of its arguments text;
* ``("call_done", index, arguments, status)``: it ended with the whole ``arguments`` text;
  ``status`` is ``"completed"``, or ``"incomplete"`` when its region failed after it began.

:mod:`chatcodec.openai.chat` and :mod:`chatcodec.openai.responses` only encode steps.

The rules kept here, so that the steps add up to :func:`~chatcodec.openai.to_chat_message` of the
final message for any chunking of the output (``docs/openai.md``):

* **Text as the message has it.** A text field that strips whitespace (``content_args.strip``, the
  default) holds back leading whitespace until text follows and trailing whitespace until more
  text follows (dropped at the end); a ``"blank"`` field holds back a region's whitespace until
  text follows in the region (dropped if none does), and leaves out whitespace the prompt wrote
  (:meth:`StepWriter.prompt`); a ``join`` field strips each region and writes the separator
  between regions. Nothing else is held back.
* **Calls in order, arguments as written.** A call starts once its name is known and either its
  id is known or its arguments begin (the model's id, else one from ``ids``); its arguments go
  out as the engine's ``region_value`` events deliver them (:class:`ArgumentWriter`), or whole at
  the region's close for a content parser without value events. A call starts only after the
  calls before it ended (Responses items are sequential).
* **Nothing lost, nothing left open.** A region that fails (``errors="keep"``) ends the calls it
  began as they are (``"incomplete"``); its text then comes back as content through the engine's
  own events. Every call that starts also ends.
"""

from __future__ import annotations

import warnings
from typing import Any

from chatcodec.object_cache import ObjectCache
from chatcodec.openai.arguments import ArgumentWriter
from chatcodec.openai.ids import IdFactory
from chatcodec.openai.messages import REASONING_KEYS, arguments_text, call_parts, generated_id
from chatcodec.response_templates.content import BLANK

__all__ = ["ARGUMENTS", "CALL", "CALL_DONE", "TEXT", "StepWriter", "text_fields"]

TEXT = "text"
CALL = "call"
ARGUMENTS = "arguments"
CALL_DONE = "call_done"

#: The message key holding tool calls.
TOOL_CALLS = "tool_calls"


class _TextField:
    """How one reasoning or content field's text reaches the client (see the module docstring).

    ``strip`` is the field's ``content_args.strip``: ``True`` (leading and trailing whitespace of
    the value are not part of it), ``False`` (text as written) or ``"blank"`` (each region's text
    as written, but a region of only whitespace is layout: its whitespace waits until text
    follows in the same region, and is dropped when the region ends first).
    """

    __slots__ = ("blank", "join", "kind", "pending", "regions", "separator", "started", "strip")

    def __init__(self, kind: str, strip: bool | str, join: str | None) -> None:
        self.kind = kind
        self.blank = strip == BLANK
        self.strip = strip is True
        self.join = join
        self.started = False  # non-whitespace text went out (in this region, for a join field)
        self.pending: list[str] = []  # whitespace held back until text follows
        self.separator = ""  # a join field's separator, written before the region's first text
        self.regions = 0

    def open(self) -> None:
        """A region starts: a join field or a ``"blank"`` one judges each region's text on its own."""
        if self.blank or self.join is not None:
            self.started, self.pending = False, []
        if self.join is not None:
            self.regions += 1
            self.separator = self.join if self.regions > 1 else ""

    def feed(self, text: str) -> str:
        if not text:
            return ""
        if self.strip:
            if self.started and not self.pending and not self.separator and not text[-1].isspace():
                return text  # the usual chunk: text after text, ending in text
            text = self._stripped(text)
        elif self.blank and not self.started:
            if text.isspace():
                self.pending.append(text)
                return ""
            self.started = True
            if self.pending:
                text, self.pending = "".join(self.pending) + text, []
        if text and self.separator:
            text, self.separator = self.separator + text, ""
        return text

    def _stripped(self, text: str) -> str:
        """``text`` without leading whitespace of the value; trailing whitespace waits for text."""
        if not self.started:
            text = text.lstrip()
            if not text:
                return ""
            self.started = True
        body, tail = text, ""
        if text[-1].isspace():
            body = text.rstrip()
            if not body:
                self.pending.append(text)
                return ""
            tail = text[len(body) :]
        if self.pending:
            body = "".join(self.pending) + body
        self.pending = [tail] if tail else []
        return body

    def close(self) -> str:
        """A region ended: a join or ``"blank"`` field drops the whitespace it held (a region of only
        whitespace is layout); a join field writes the separator of an empty region."""
        if self.blank or self.join is not None:
            self.pending = []
        separator, self.separator = self.separator, ""
        return separator


_Specs = tuple[tuple[str, str, "bool | str", "str | None"], ...]
#: a compiled template's text fields as ``(name, kind, strip, join)``: read once per template, not
#: once per stream (every request of an engine plugin starts a stream over the same template)
_TEXT_SPECS: ObjectCache[_Specs] = ObjectCache(64)


def text_fields(template: Any) -> dict[str, _TextField]:
    """The reasoning and content fields of a compiled response template, as text fields (fresh
    ones: each holds one stream's state).

    Raises:
        ValueError: a reasoning or content field is not plain text (a content parser other than
            ``text``, a transform, or ``repeats`` without ``join``), or two fields hold reasoning.
    """
    specs = _TEXT_SPECS.get(template)
    if specs is None:
        specs = _TEXT_SPECS.put(template, _text_specs(template))
    return {name: _TextField(kind, strip, join) for name, kind, strip, join in specs}


def _text_specs(template: Any) -> _Specs:
    """What :func:`text_fields` builds from (same errors)."""
    specs: list[tuple[str, str, bool | str, str | None]] = []
    for name, spec in template.fields.items():
        if name not in REASONING_KEYS and name != "content":
            continue
        joined = spec.concatenates or spec.join is not None  # join: "" joins too
        if spec.content != "text" or spec.transform is not None or not joined:
            raise ValueError(
                f"field {name!r} (content parser {spec.content!r}): the OpenAI streams need reasoning and "
                "content as plain text fields (content parser 'text', no transform, and 'join' when "
                "'repeats' is set)")
        kind = "content" if name == "content" else "reasoning"
        if any(other[1] == kind for other in specs):
            raise ValueError(f"field {name!r}: a second reasoning field; the message can hold only one")
        strip = spec.content_args.get("strip", True)
        specs.append((name, kind, strip if strip == BLANK else bool(strip), spec.join))
    return tuple(specs)


class _Call:
    """One tool call of the open tool-call region, as its value events describe it."""

    __slots__ = ("args", "completed", "done", "ended", "header", "id", "id_done", "name", "name_done",
                 "pending")

    def __init__(self) -> None:
        self.name: list[str] = []
        self.name_done = False
        self.id: list[str] = []
        self.id_done = False
        self.args = ArgumentWriter()
        self.pending: list[str] = []  # argument fragments written before the call could start
        self.header: int | None = None  # the call's index once it started
        self.ended = False  # the engine said the call's value is complete
        self.done = False
        self.completed = False  # it ended "completed" (counted in StepWriter.completed)


class _Region:
    """The open tool-call region: its calls in order, the first one not done yet, the string being
    written (its ``text`` events take a short path) and the call whose arguments are being written
    (its value events take a short path)."""

    __slots__ = ("arguments_depth", "arguments_path", "calls", "first", "string", "string_call",
                 "string_path", "string_target", "writing")

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.first = 0  # calls before this one are done
        #: the last call whose arguments began (a container), the event path of its arguments and
        #: that path's length: value events under that path take :meth:`StepWriter.argument_values`
        self.writing: _Call | None = None
        self.arguments_path: list[Any] = []
        self.arguments_depth = 0
        self.string: list[Any] | None = None  # the event path of the string being written
        self.string_call: _Call | None = None
        self.string_target = ""  # "arguments", "name" or "id"
        self.string_path: list[Any] = []  # for arguments: the path inside them


class StepWriter:
    """Turns one parser's events into steps (see the module docstring).

    Args:
        template: the parser's compiled response template.
        ids: ``(function name, call index) -> id`` for calls without the model's own id.

    Attributes:
        calls: how many calls started; ``completed``: how many ended ``"completed"``.
        texts: the reasoning and content fields by name, with their stream state (read-only for
            callers: a caller that takes a short path for a text chunk feeds the field itself,
            as :meth:`events` would).
    """

    def __init__(self, template: Any, ids: IdFactory) -> None:
        self._texts = self.texts = text_fields(template)
        self._ids = ids
        self._region: _Region | None = None  # the open tool-call region
        self.calls = 0
        self.completed = 0
        self._batch_first = 0
        #: while :meth:`finish` runs: calls numbered from here were not sent either (see there)
        self._unsent_from: int | None = None

    def events(self, events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        """The steps a list of events gives."""
        out: list[tuple[Any, ...]] = []
        self._batch_first = self.calls  # calls numbered from here start in this batch: not sent yet
        texts = self._texts
        for event in events:
            kind = event["type"]
            field = event["field"]
            if kind == "region_chunk":
                text_field = texts.get(field)
                if text_field is not None:
                    text = text_field.feed(event["text"])
                    if text:  # (_text(), inlined: once per chunk)
                        text_kind = text_field.kind
                        if out and out[-1][0] == TEXT and out[-1][1] == text_kind:
                            out[-1] = (TEXT, text_kind, out[-1][2] + text)
                        else:
                            out.append((TEXT, text_kind, text))
            elif kind == "region_value":
                if field == TOOL_CALLS and self._region is not None:
                    self._value(out, self._region, event)
            elif kind == "region_open":
                if field in texts:
                    texts[field].open()
                elif field == TOOL_CALLS:
                    self._region = _Region()
            elif field in texts:
                text_field = texts[field]
                self._text(out, text_field.kind, text_field.close())
            elif field == TOOL_CALLS and self._region is not None:
                self._close_calls(out, self._region, event)
                self._region = None
        return out

    def more_arguments(self, event: dict[str, Any]) -> tuple[int, str] | None:
        """A short path of :meth:`events` for a batch of one ``region_value`` event (after chunks of
        fields that are not text fields, which :meth:`events` passes over): the event appends text to
        the argument string being written of a call that started and has no fragments waiting.

        Returns:
            ``(call index, fragment)``, the one ``("arguments", index, fragment)`` step that
            :meth:`events` would give (no step when the fragment is ``""``), with the same state
            changes; ``None`` for any other event, which changes nothing (give the batch to
            :meth:`events`).
        """
        region = self._region
        if region is None or event["op"] != "text" or event["field"] != TOOL_CALLS:
            return None
        call = region.string_call
        if (event["path"] != region.string or region.string_target != "arguments" or call is None
                or call.header is None or call.pending):
            return None
        self._batch_first = self.calls
        return call.header, call.args.add_text(region.string_path, event["text"])

    def argument_values(self, events: list[dict[str, Any]], start: int) -> list[tuple[Any, ...]] | None:
        """A short path of :meth:`events` for a batch whose events from ``start`` on are all value
        events of the call whose arguments are being written (begin, text, set or end of a value
        inside them, their own end), then only ends of the containers holding them (the call's end),
        when that call started and has no fragments waiting; what comes before ``start`` is a chunk
        of a field that is not a text field (which :meth:`events` passes over).

        Returns:
            The steps :meth:`events` gives for the batch, with the same state changes: argument
            fragments of that call, and its ``call_done`` step when its arguments end; ``None`` for
            any other batch, which changes nothing (give it to :meth:`events`).
        """
        region = self._region
        if region is None:
            return None
        call = region.writing
        if call is None or call.header is None or call.pending or call.done or region.calls[-1] is not call:
            return None
        prefix, depth = region.arguments_path, region.arguments_depth
        batch = events[start:]
        for event in batch:  # the whole batch is checked before anything changes
            if event["type"] != "region_value" or event["field"] != TOOL_CALLS:
                return None
            path = event["path"]
            if path[:depth] != prefix and (event["op"] != "end" or path != prefix[: len(path)]):
                return None  # (the second test: an end of a container holding the arguments)
        self._batch_first = self.calls
        out: list[tuple[Any, ...]] = []
        writer, index = call.args, call.header
        for event in batch:
            path, op = event["path"], event["op"]
            if path[:depth] != prefix:  # a container holding the arguments ends
                if not call.done:
                    self._value(out, region, event)
                continue
            written = op != "text" or path != region.string
            if not written:  # more of the string being written
                fragment = writer.add_text(region.string_path, event["text"])
            elif call.done:
                continue  # (as _value: the call ended; the event breaks the contract)
            else:  # (_write(), inlined)
                inner = path[depth:]
                if op == "begin":
                    fragment = writer.begin(inner, event["kind"])
                    if event["kind"] == "string":
                        region.string, region.string_call = path, call
                        region.string_target, region.string_path = "arguments", inner
                elif op == "end":
                    fragment = writer.end(inner)
                    if path == region.string:
                        region.string = None
                elif op == "set":
                    fragment = writer.set(inner, event["value"])
                else:
                    fragment = ""
            if fragment:
                if not out:
                    out = [(ARGUMENTS, index, fragment)]
                elif out[-1][0] == ARGUMENTS and out[-1][1] == index:
                    out[-1] = (ARGUMENTS, index, out[-1][2] + fragment)
                else:
                    out.append((ARGUMENTS, index, fragment))
            if written and writer.complete and not writer.broken:
                self._done(out, call, writer.text, "completed")
                region.first += 1
        return out

    def prompt(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The prompt's events (a parser's ``initial_events``) as the message counts them.

        A ``"blank"`` text field leaves out what the prompt wrote in a region when it is only
        whitespace: the template's layout (the newline after a pre-opened ``<think>``), not text
        the model wrote (the engine's rule for regions that start in the prompt).
        """
        out: list[dict[str, Any]] = []
        held: dict[str, list[str]] = {}
        for event in events:
            field = event["field"]
            text_field = self._texts.get(field)
            if text_field is None or not text_field.blank:
                out.append(event)
            elif event["type"] == "region_chunk":
                held.setdefault(field, []).append(event["text"])
            else:
                if event["type"] == "region_close":
                    _written(out, field, held.pop(field, []))
                out.append(event)
        for field, parts in held.items():
            _written(out, field, parts)
        return out

    def finish(self, events: list[dict[str, Any]], unsent_from: int | None = None) -> list[tuple[Any, ...]]:
        """The steps of the events the end of generation gave; trailing whitespace held back is dropped.

        Args:
            events: the end's events.
            unsent_from: calls numbered from here started in steps the caller has not sent yet
                (a server that completes its last delta in place): a region that fails at the end
                takes them back as it takes back calls of its own batch (the caller removes their
                steps from what it holds; :attr:`calls` says how many remain).
        """
        self._unsent_from = unsent_from
        try:
            out = self.events(events)
        finally:
            self._unsent_from = None
        for text_field in self._texts.values():
            text_field.pending = []
        return out

    # -- text ---------------------------------------------------------------------------------

    @staticmethod
    def _text(out: list[tuple[Any, ...]], kind: str, text: str) -> None:
        if not text:
            return
        if out and out[-1][0] == TEXT and out[-1][1] == kind:
            out[-1] = (TEXT, kind, out[-1][2] + text)
        else:
            out.append((TEXT, kind, text))

    # -- calls from value events --------------------------------------------------------------

    def _value(self, out: list[tuple[Any, ...]], region: _Region, event: dict[str, Any]) -> None:
        path = event["path"]
        op = event["op"]
        if op == "text" and path == region.string:  # the usual event: more of the string being written
            self._string_text(out, region, event["text"])
            return
        if not path:
            return  # the region's value itself (a list of calls, or one call) begins or ends
        key, rest = path[0], path[1:]
        if key.__class__ is not int:  # (no isinstance() call: this runs for most value events)
            key, rest = 0, path
        calls = region.calls
        try:
            call = calls[key]
        except IndexError:  # the call's first event
            while len(calls) <= key:
                calls.append(_Call())
            call = calls[key]
        if calls[-1] is not call or call.done:
            return  # an event for a call the engine already moved past breaks the contract
        if not rest:
            if op == "end":
                call.ended = True
            elif op == "set":
                name, arguments, own = call_parts(event["value"], "tool call")
                call.name, call.name_done = [name], True
                call.id, call.id_done = ([own] if own else []), True
                self._arguments(call, call.args.set([], arguments))
        elif rest == ["id"]:
            call.id_done = _scalar(call.id, op, event) or call.id_done
            self._follow(region, call, event, "id", [])
        else:
            if rest[0] == "function":
                rest = rest[1:]
                if not rest:
                    if op == "set":
                        name, arguments, _ = call_parts(event["value"], "tool call")
                        call.name, call.name_done = [name], True
                        self._arguments(call, call.args.set([], arguments))
                    return self._advance(out, region)
            if rest == ["name"]:
                call.name_done = _scalar(call.name, op, event) or call.name_done
                self._follow(region, call, event, "name", [])
            elif rest[0] == "arguments":
                inner = rest[1:]
                fragment = _write(call.args, op, inner, event)
                if op == "begin":  # (_follow(), inlined: once per argument value)
                    if event.get("kind") == "string":
                        region.string, region.string_call = path, call
                        region.string_target, region.string_path = "arguments", inner
                    elif not inner:  # the arguments begin: their later events take argument_values()
                        region.writing, region.arguments_path, region.arguments_depth = call, path, len(path)
                elif op == "end" and path == region.string:
                    region.string = None
                index = call.header
                if index is not None and not call.pending and region.first == key:
                    # the usual case: the call being written (the last one) started; what
                    # _advance() does for it, without its loop
                    if fragment:
                        if out and out[-1][0] == ARGUMENTS and out[-1][1] == index:
                            out[-1] = (ARGUMENTS, index, out[-1][2] + fragment)
                        else:
                            out.append((ARGUMENTS, index, fragment))
                    if call.args.complete and not call.args.broken:
                        self._done(out, call, call.args.text, "completed")
                        region.first += 1
                    return None
                self._arguments(call, fragment)
        if call.header is None and not call.name_done and calls[region.first] is call:
            return None  # what _advance() finds first: the call being written cannot start yet
        self._advance(out, region)
        return None

    @staticmethod
    def _follow(region: _Region, call: _Call, event: dict[str, Any], target: str, inner: list[Any]) -> None:
        """Remember the string a ``begin`` starts (its ``text`` events take the short path)."""
        op = event["op"]
        if op == "begin" and event.get("kind") == "string":
            region.string, region.string_call = event["path"], call
            region.string_target, region.string_path = target, inner
        elif op == "end" and event["path"] == region.string:
            region.string = None

    @staticmethod
    def _string_text(out: list[tuple[Any, ...]], region: _Region, text: str) -> None:
        """More of the string being written (``region.string``): a call's name or id, or an
        argument string, whose fragment goes out once the call started."""
        call = region.string_call
        assert call is not None
        if region.string_target != "arguments":
            (call.name if region.string_target == "name" else call.id).append(text)
            return
        fragment = call.args.add_text(region.string_path, text)
        if not fragment:
            return
        index = call.header
        if index is None or call.pending:
            call.pending.append(fragment)
        elif out and out[-1][0] == ARGUMENTS and out[-1][1] == index:  # (_fragment(), inlined)
            out[-1] = (ARGUMENTS, index, out[-1][2] + fragment)
        else:
            out.append((ARGUMENTS, index, fragment))

    @staticmethod
    def _arguments(call: _Call, fragment: str) -> None:
        if fragment:
            call.pending.append(fragment)

    def _advance(self, out: list[tuple[Any, ...]], region: _Region) -> None:
        """Start, write and end the calls of ``region`` as far as they are known, in order."""
        calls = region.calls
        while True:  # (no len() per event: this runs for every value event of a call)
            try:
                call = calls[region.first]
            except IndexError:
                return
            if call.header is None:
                if not call.name_done:
                    return
                later = calls[-1] is not call
                if not (call.id_done or call.args.started or call.ended or later):
                    return
                self._start(out, call, "".join(call.name), "".join(call.id) or None)
            if call.pending:
                self._fragment(out, call.header, "".join(call.pending))  # type: ignore[arg-type]
                call.pending = []
            if not call.args.complete or call.args.broken:
                return
            self._done(out, call, call.args.text, "completed")
            region.first += 1

    def _start(self, out: list[tuple[Any, ...]], call: _Call, name: str, own: str | None) -> None:
        index = self.calls
        self.calls += 1
        call.header = index
        out.append((CALL, index, own or generated_id(self._ids, name, index), name))

    @staticmethod
    def _fragment(out: list[tuple[Any, ...]], index: int, fragment: str) -> None:
        if out and out[-1][0] == ARGUMENTS and out[-1][1] == index:
            out[-1] = (ARGUMENTS, index, out[-1][2] + fragment)
        else:
            out.append((ARGUMENTS, index, fragment))

    def _done(self, out: list[tuple[Any, ...]], call: _Call, arguments: str, status: str) -> None:
        call.done = True
        if status == "completed":
            self.completed += 1
            call.completed = True
        out.append((CALL_DONE, call.header, arguments, status))

    # -- the region's close: settle every call from its final value ---------------------------

    def _close_calls(self, out: list[tuple[Any, ...]], region: _Region, event: dict[str, Any]) -> None:
        started = region.calls
        if "error" in event:  # errors="keep": what began ends as it is; the text comes back as content
            self._retract(out, started)
            for call in started:
                if call.header is not None and not call.done:
                    self._flush(out, call)
                    self._done(out, call, call.args.text, "incomplete")
            return
        value = event["value"]
        calls = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        for position, parsed in enumerate(calls):
            name, arguments, own = call_parts(parsed, f"tool_calls[{self.calls}]")
            whole = arguments_text(arguments)
            call = started[position] if position < len(started) else _Call()
            if call.header is None:
                self._start(out, call, name, own)
                self._fragment(out, call.header, whole)  # type: ignore[arg-type]
                self._done(out, call, whole, "completed")
                continue
            self._flush(out, call)
            written = call.args.text
            if call.done:
                if written != whole:
                    _contract_warning(name, written, whole)
            elif whole.startswith(written):
                self._fragment(out, call.header, whole[len(written) :])
                self._done(out, call, whole, "completed")
            else:
                _contract_warning(name, written, whole)
                self._done(out, call, written, "incomplete")
        for call in started[len(calls) :]:
            if call.header is not None and not call.done:
                self._flush(out, call)
                self._done(out, call, call.args.text, "incomplete")

    def _retract(self, out: list[tuple[Any, ...]], started: list[_Call]) -> None:
        """Take back the steps of the failed region's calls that started in this batch of events.

        They were never sent: the client gets the region's text as content only, as the whole
        message has it, instead of a call with broken arguments beside that same text (so are calls
        from ``unsent_from`` on, in :meth:`finish`). Calls that started in an earlier batch were sent
        and end ``"incomplete"`` (a stream cannot take them back).
        """
        first = self._batch_first if self._unsent_from is None else min(self._unsent_from, self._batch_first)
        fresh = [call for call in started if call.header is not None and call.header >= first]
        if not fresh:
            return
        first = min(call.header for call in fresh if call.header is not None)
        out[:] = [step for step in out if step[0] == TEXT or step[1] < first]
        self.completed -= sum(1 for call in fresh if call.completed)
        self.calls = first
        for call in fresh:
            call.header, call.done, call.pending, call.completed = None, True, [], False

    def _flush(self, out: list[tuple[Any, ...]], call: _Call) -> None:
        if call.pending:
            self._fragment(out, call.header, "".join(call.pending))  # type: ignore[arg-type]
            call.pending = []


def _written(out: list[dict[str, Any]], field: str, parts: list[str]) -> None:
    """The prompt's text of one region as a chunk, unless it is only whitespace."""
    text = "".join(parts)
    if text and not text.isspace():
        out.append({"type": "region_chunk", "field": field, "text": text, "dirty": False})


def _scalar(parts: list[str], op: str, event: dict[str, Any]) -> bool:
    """Collect a streamed string (a call's name or id); returns whether it is complete."""
    if op == "set":
        value = event.get("value")
        parts[:] = [value] if isinstance(value, str) and value else []
        return True
    if op == "begin":
        parts.clear()
    elif op == "text":
        parts.append(event["text"])
    return op == "end"


def _write(writer: ArgumentWriter, op: str, path: list[Any], event: dict[str, Any]) -> str:
    if op == "text":
        return writer.add_text(path, event["text"])
    if op == "begin":
        return writer.begin(path, event["kind"])
    if op == "set":
        return writer.set(path, event["value"])
    if op == "end":
        return writer.end(path)
    return ""


def _contract_warning(name: str, written: str, whole: str) -> None:
    warnings.warn(
        f"tool call {name!r}: the arguments streamed ({written[:60]!r}...) are not the start of the "
        f"final arguments ({whole[:60]!r}...): the engine's value events broke their contract "
        "(docs/streaming_values.md); the call ends as it went out",
        RuntimeWarning, stacklevel=4)
