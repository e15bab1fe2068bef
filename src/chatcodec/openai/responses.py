"""``ResponsesStream``: a generation as OpenAI Responses API stream events.

Public API (stable; the vLLM / SGLang plugins build on it)::

    stream = ResponsesStream(parser, model="qwen3", ids=ToolCallIds.for_profile("qwen3"))
    for step in generation:
        for event in stream.feed(step):        # text, or token ids with ChatCodec's parser
            send(event)                        # plain dicts; event["type"] is the SSE event name
    for event in stream.finish("length" if cut else None):
        send(event)

The events (``docs/openai.md`` has the full mapping from region events):

* the first ``feed`` begins with ``response.created`` and ``response.in_progress``;
* the output is a sequence of items, each ``response.output_item.added`` ... ``.done`` with its own
  ``output_index``: a reasoning item (``content_part`` ``reasoning_text``, ``reasoning_text.delta``
  / ``.done``), a message item (``content_part`` ``output_text``, ``output_text.delta`` / ``.done``)
  and a ``function_call`` item per tool call (``call_id``, ``name``,
  ``function_call_arguments.delta`` / ``.done``); a switch between reasoning, content and calls
  ends the current item and adds the next;
* every event carries a ``sequence_number``, counting from 0;
* the last event is ``response.completed`` (``response.incomplete`` with ``incomplete_details``
  when the caller says the generation was cut: ``length`` is ``max_output_tokens``) whose
  ``response.output`` holds every item as it ended.

Items end ``completed``; the item that the end of a cut generation ends is ``incomplete``, and so
is a call whose region failed after it began (its text then follows as a message item). The
message's keys that Responses has no item for (gpt-oss's ``builtin_tool_calls``) are left out.
"""

from __future__ import annotations

from typing import Any

from chatcodec.openai.ids import IdFactory
from chatcodec.openai.steps import ARGUMENTS, CALL, TEXT
from chatcodec.openai.stream import StreamBase, finish_reason_for, new_id

__all__ = ["ResponsesStream"]

#: ``incomplete_details.reason`` for each finish reason that cuts a response short.
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
#: Item id prefixes, as OpenAI writes them.
_PREFIX = {"reasoning": "rs", "content": "msg", "call": "fc"}


class _Item:
    """The output item being written: its kind, index, id and what it holds so far."""

    __slots__ = ("call_id", "id", "index", "kind", "name", "parts")

    def __init__(self, kind: str, index: int, item_id: str, name: str = "", call_id: str = "") -> None:
        self.kind = kind  # "reasoning", "content" or "call"
        self.index = index
        self.id = item_id
        self.name = name
        self.call_id = call_id
        self.parts: list[str] = []


class ResponsesStream(StreamBase):
    """Feed a generation, get Responses API stream event dicts (see the module docstring).

    Args:
        parser: a fresh :class:`~chatcodec.ResponseParser` or ``ChatCodec.get_response_parser()``
            parser; create it with ``value_deltas=True`` so tool-call arguments stream as they are
            written, and with ``errors="keep"`` so that malformed output becomes content.
        model: the response's ``model``.
        id: the response's ``id`` (default ``resp_`` and 32 random hex digits); item ids are made
            from it (``rs_<id>_<n>``, ``msg_...``, ``fc_...``, ``n`` the item's ``output_index``).
        created: the response's ``created_at`` Unix time (default: now).
        ids: ``(function name, call index) -> id`` for the ``call_id`` of calls without the model's
            own id (default ``ToolCallIds()``).

    Raises:
        TypeError: ``parser`` is not a response parser.
        ValueError: the template's reasoning or content field is not plain text.
    """

    def __init__(self, parser: Any, *, model: str = "", id: str | None = None, created: int | None = None,
                 ids: IdFactory | None = None) -> None:
        super().__init__(parser, ids=ids, created=created)
        self.id = id or new_id("resp_")
        self.model = model
        self._token = self.id.split("_", 1)[-1]
        self._sequence = 0
        self._item: _Item | None = None
        self._output: list[dict[str, Any]] = []
        self._started = False
        self._truncated = False

    def feed(self, step: Any) -> list[dict[str, Any]]:
        """Feed one generation step (text, or token ids with ``ChatCodec``'s parser).

        Returns:
            The events this step gives (the first call always gives at least ``response.created``
            and ``response.in_progress``).

        Raises:
            ResponseParseError: (``errors="strict"``) the output cannot be parsed.
            ParserStateError: the stream already finished.
        """
        events = self._feed(step)
        if self._started:
            steps = self._events(events) if events else events
            return self._encode(steps) if steps else []
        steps, self._initial = self._events([*self._initial, *events]), []
        return self._encode(steps)

    def finish(self, finish_reason: str | None = None) -> list[dict[str, Any]]:
        """End the generation: the last events, ending with ``response.completed`` (or ``.incomplete``).

        Args:
            finish_reason: ``"length"`` when generation was cut at the token limit,
                ``"content_filter"``, or ``None`` / ``"stop"`` when the model stopped by itself.

        Returns:
            The remaining events. The parsed message is then :attr:`message`.

        Raises:
            ValueError: an unknown finish reason.
            ResponseParseError, MissingFieldError: (``errors="strict"``) the output cannot be parsed.
            ParserStateError: the stream already finished.
        """
        reason = finish_reason_for(finish_reason, 0)
        self._truncated = reason in _INCOMPLETE
        steps = self._finish_steps()
        events = self._encode(steps)
        self._end_item(events)
        status = "incomplete" if self._truncated else "completed"
        incomplete = {"reason": _INCOMPLETE[reason]} if self._truncated else None
        events.append(self._event(f"response.{status}", response=self._response(status, incomplete)))
        return events

    # -- steps to events ----------------------------------------------------------------------

    def _encode(self, steps: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            events.append(self._event("response.created", response=self._response("in_progress", None)))
            events.append(self._event("response.in_progress", response=self._response("in_progress", None)))
        for step in steps:
            kind = step[0]
            if kind == TEXT:
                self._text(events, step[1], step[2])
            elif kind == CALL:
                self._end_item(events)
                self._start_call(events, call_id=step[2], name=step[3])
            elif kind == ARGUMENTS:
                item = self._item
                if item is not None and step[2]:
                    item.parts.append(step[2])
                    events.append(self._event("response.function_call_arguments.delta", item_id=item.id,
                                              output_index=item.index, delta=step[2]))
            else:  # CALL_DONE
                self._end_call(events, step[2], step[3])
        return events

    def _text(self, events: list[dict[str, Any]], kind: str, text: str) -> None:
        item = self._item
        if item is None or item.kind != kind:
            self._end_item(events)
            item = self._start_text(events, kind)
        item.parts.append(text)
        if kind == "content":
            events.append(self._event("response.output_text.delta", item_id=item.id, output_index=item.index,
                                      content_index=0, delta=text, logprobs=[]))
        else:
            events.append(self._event("response.reasoning_text.delta", item_id=item.id,
                                      output_index=item.index, content_index=0, delta=text))

    def _start_text(self, events: list[dict[str, Any]], kind: str) -> _Item:
        item = self._item = self._new_item(kind)
        events.append(self._event("response.output_item.added", output_index=item.index,
                                  item=_text_item(item, "in_progress", None)))
        events.append(self._event("response.content_part.added", item_id=item.id, output_index=item.index,
                                  content_index=0, part=_part(kind, "")))
        return item

    def _start_call(self, events: list[dict[str, Any]], *, call_id: str, name: str) -> None:
        item = self._item = self._new_item("call", name=name, call_id=call_id)
        events.append(self._event("response.output_item.added", output_index=item.index,
                                  item=_call_item(item, "", "in_progress")))

    def _end_call(self, events: list[dict[str, Any]], arguments: str, status: str) -> None:
        item = self._item
        if item is None or item.kind != "call":
            return
        self._item = None
        if self._truncated:
            status = "incomplete"
        events.append(self._event("response.function_call_arguments.done", item_id=item.id,
                                  output_index=item.index, arguments=arguments))
        done = _call_item(item, arguments, status)
        self._output.append(done)
        events.append(self._event("response.output_item.done", output_index=item.index, item=done))

    def _end_item(self, events: list[dict[str, Any]]) -> None:
        """End the open reasoning or message item (a call item ends with its call)."""
        item = self._item
        if item is None or item.kind == "call":
            return
        self._item = None
        text = "".join(item.parts)
        if item.kind == "content":
            events.append(self._event("response.output_text.done", item_id=item.id, output_index=item.index,
                                      content_index=0, text=text, logprobs=[]))
        else:
            events.append(self._event("response.reasoning_text.done", item_id=item.id,
                                      output_index=item.index, content_index=0, text=text))
        events.append(self._event("response.content_part.done", item_id=item.id, output_index=item.index,
                                  content_index=0, part=_part(item.kind, text)))
        done = _text_item(item, "incomplete" if self._truncated else "completed", text)
        self._output.append(done)
        events.append(self._event("response.output_item.done", output_index=item.index, item=done))

    # -- shapes -------------------------------------------------------------------------------

    def _new_item(self, kind: str, name: str = "", call_id: str = "") -> _Item:
        index = len(self._output)
        return _Item(kind, index, f"{_PREFIX[kind]}_{self._token}_{index}", name, call_id)

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, **fields, "sequence_number": self._sequence}
        self._sequence += 1
        return event

    def _response(self, status: str, incomplete: dict[str, Any] | None) -> dict[str, Any]:
        output = [_copy_item(item) for item in self._output] if status != "in_progress" else []
        return {"id": self.id, "object": "response", "created_at": self.created, "model": self.model,
                "status": status, "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "error": None, "incomplete_details": incomplete}


def _part(kind: str, text: str) -> dict[str, Any]:
    if kind == "content":
        return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"type": "reasoning_text", "text": text}


def _text_item(item: _Item, status: str, text: str | None) -> dict[str, Any]:
    content = [] if text is None else [_part(item.kind, text)]
    if item.kind == "content":
        return {"id": item.id, "type": "message", "role": "assistant", "status": status, "content": content}
    return {"id": item.id, "type": "reasoning", "summary": [], "content": content, "status": status}


def _call_item(item: _Item, arguments: str, status: str) -> dict[str, Any]:
    return {"id": item.id, "type": "function_call", "call_id": item.call_id, "name": item.name,
            "arguments": arguments, "status": status}


def _copy_item(item: dict[str, Any]) -> dict[str, Any]:
    copied = dict(item)
    if "content" in copied:
        copied["content"] = [dict(part) for part in copied["content"]]
    if "summary" in copied:
        copied["summary"] = list(copied["summary"])
    return copied
