"""vLLM's two parser halves, backed by one chatcodec :class:`~.session.Session` per request.

vLLM composes a *reasoning* parser and a *tool* parser into one ``DelegatingParser`` per request
(``vllm/parser/abstract_parser.py``, 0.33): text goes to the reasoning half until that half says
reasoning ended, then to the tool half; the non-streaming path calls ``extract_reasoning`` and then
``extract_tool_calls`` on the content it returned. chatcodec parses a whole message with one parser,
so the halves of one request share their state: vLLM builds them one right after the other (same
thread, same tokenizer object), and the tool half takes the reasoning half built just before it
(:class:`_Pairing`). Then:

* the reasoning half feeds each delta to the request's session and returns its reasoning; once the
  session leaves reasoning (the reasoning region closed, or content / a tool call began), it returns
  the raw text from there as ``content`` and says reasoning ended. vLLM hands that raw text to its
  tool stage: to the tool half (``tool_choice`` auto), which sends what the session made of it (the
  text was parsed already), or to vLLM's own paths (``"none"``: raw content; ``"required"`` / a named
  function: vLLM's JSON tool-call path, which its structured output guarantees, as for its own
  parsers);
* the tool half feeds the rest and returns reasoning, content and tool-call deltas (arguments as
  they are written, id and name in each call's first delta, indexes in output order); it keeps
  vLLM's tool-call records in step with what it sent (:mod:`.bookkeeping`) and, at the end of the
  stream (``finish_streaming``), sends what the end of generation decides;
* ``extract_reasoning`` parses the whole output once and returns the reasoning and the raw text
  outside it; ``extract_tool_calls`` returns the tool calls and content of that same parse, so a
  non-streamed message equals the streamed one.

Without a tool half (``--reasoning-parser chatcodec`` alone) the reasoning half works the same way
and vLLM passes the raw rest on as content. Without a reasoning half (``--tool-call-parser chatcodec``
alone) vLLM never shows the plugin the prompt: the output is parsed as if the prompt opened no
region, and reasoning is still reported (streaming: as ``reasoning``; non-streaming, where vLLM has
no place for it: its raw text in front of the content).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaMessage,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning import ReasoningParser
from vllm.tool_parsers import ToolParser

from chatcodec.integrations import bookkeeping
from chatcodec.integrations.compat import decode, model_builder, tool_dicts
from chatcodec.integrations.discovery import ServingTemplate, serving_template
from chatcodec.integrations.session import Session, Step, new_parser, reasoning_field, whole
from chatcodec.object_cache import ObjectCache

__all__ = ["ChatcodecReasoningParser", "ChatcodecToolParser"]

logger = logging.getLogger("chatcodec")


class _Request:
    """The state the two halves of one request share."""

    def __init__(self, serving: ServingTemplate, tokenizer: Any) -> None:
        self.serving = serving
        self.tokenizer = tokenizer
        self.prompt: str | None = None
        self.prompt_ids: list[int] | None = None
        self.tools: list[dict[str, Any]] = []
        self.session: Session | None = None
        #: "start" (nothing fed), "reasoning" (the reasoning half feeds), "handoff" (reasoning ended;
        #: the tool stage has not asked yet), "tools" (the tool half feeds)
        self.phase = "start"
        self.pending: Step | None = None  # the transition step's content and calls, for the tool half
        self.transition = False  # the reasoning half's last step ended reasoning
        self.paired = False
        self.tool_half: weakref.ref[ChatcodecToolParser] | None = None
        #: the raw content extract_reasoning returned, and the whole message it parsed
        self.one_shot: tuple[str, dict[str, Any]] | None = None
        #: a Responses request: each delta keeps the order vLLM's Responses events need
        #: (:func:`_in_order`); what cannot go out in order waits here for the next delta
        self.responses = False
        self.held: list[tuple[str, Any]] = []
        #: the request object whose kind ``responses`` says (asked once per request object)
        self.request: Any = None
        self.last: int | str | None = None  # what the last delta sent ended with: a call index or "text"
        #: the tool half's last delta, its parts, and ``last`` before it
        self.returned: tuple[DeltaMessage | None, list[tuple[str, Any]], int | str | None] | None = None

    def set_prompt(self, prompt_ids: Sequence[int]) -> None:
        ids = list(prompt_ids)
        if ids == self.prompt_ids:
            return
        self.prompt_ids, self.prompt = ids, decode(self.tokenizer, ids)
        self.session, self.phase, self.pending, self.transition = None, "start", None, False
        self.held, self.last, self.returned = [], None, None

    def stream(self) -> Session:
        if self.session is None:
            self.session = Session(self.serving, self.prompt or "", self.tools)
        return self.session

    def send(self, step: Step, *, final: bool = False) -> DeltaMessage | None:
        """The tool half's delta for a step, with vLLM's records of the calls kept in step.

        At the end (``final``), vLLM adds what this returns to the delta the tool half returned for
        the same engine output, before it sends that delta: so a call that delta started and the
        end shows broken (``Step.taken_back``: a call cut off at the end of generation, all of it
        in the last delta) is taken out of it, its text coming as content only, as in the
        non-streamed message. For a Responses request each delta keeps the order vLLM's Responses
        events need (:func:`_in_order`): what cannot go out in order waits for the next delta, and
        the last delta is completed in place (:func:`_last_in_order`).
        """
        if not self.responses and not final:  # the usual delta (Chat Completions, not the last)
            entries = step.tool_calls
            if not entries:  # text only, or nothing
                text = step.reasoning or step.content
                delta = _new_delta(
                    {"reasoning": step.reasoning or None, "content": step.content or None, "tool_calls": []}
                ) if text else None
                self.returned = (delta, [], None)
                return delta
            if entries[0] is entries[-1] and "id" not in entries[0]:  # one more argument fragment
                entry = entries[0]
                fragment = entry["function"]["arguments"]
                half = self.tool_half() if self.tool_half is not None else None
                if half is not None:
                    bookkeeping.add_arguments(half, entry["index"], fragment)
                delta = _new_delta({
                    "reasoning": step.reasoning or None, "content": step.content or None,
                    "tool_calls": [{"index": entry["index"], "id": None, "type": None,
                                    "function": {"name": None, "arguments": fragment}}],
                })
                self.returned = (delta, [], None)
                return delta
            started = step.call_start()
            if started is not None:  # a call starts (with its first argument fragment): as _tool_calls()
                index, own, name, fragment = started
                half = self.tool_half() if self.tool_half is not None else None
                if half is not None:
                    bookkeeping.start_call(half, index, name, fragment)
                delta = _new_delta({
                    "reasoning": step.reasoning or None, "content": step.content or None,
                    "tool_calls": [{"index": index, "id": own, "type": "function",
                                    "function": {"name": name, "arguments": fragment}}],
                })
                self.returned = (delta, [], None)
                return delta
        half = self.tool_half() if self.tool_half is not None else None
        if not self.responses:  # a chat delta carries reasoning, content and calls in any order
            if final:
                returned, self.returned = self.returned, None
                first = step.taken_back
                if first is not None:
                    if half is not None:
                        bookkeeping.forget(half, first)
                    last = returned[0] if returned is not None else None
                    if last is not None:
                        last.tool_calls = [call for call in last.tool_calls if call.index < first]
            if not step.parts:
                if not final:
                    self.returned = (None, [], None)
                return None
            calls = None
            if step.tool_calls:
                if half is not None:
                    bookkeeping.record(half, step.tool_calls)
                calls = _tool_calls(step.tool_calls)
            delta = _text_delta(step.reasoning, step.content, calls)
            if not final:
                self.returned = (delta, [], None)
            return delta
        if not final:
            before = self.last
            parts, self.held = _in_order(self.held + step.parts, before)
            if parts:
                self.last = parts[-1][1]["index"] if parts[-1][0] == "call" else "text"
            if half is not None:
                bookkeeping.record(half, [entry for kind, entry in parts if kind == "call"])
            delta = _delta(parts)
            self.returned = (delta, parts, before)
            return delta
        delta, sent, before = self.returned or (None, [], self.last)
        extra, self.returned, self.held = self.held + step.parts, None, []
        parts = _last_in_order(sent + extra, before)
        kept = {id(part) for part in parts}
        if half is not None:
            dropped = [part[1] for part in sent if part[0] == "call" and id(part) not in kept]
            bookkeeping.take_back(half, dropped)
            bookkeeping.record(half, [part[1] for part in extra if part[0] == "call" and id(part) in kept])
        if delta is None:
            return _delta(parts)
        whole = _delta(parts) or DeltaMessage()
        extra_reasoning = "".join(text for kind, text in extra if kind == "reasoning")
        delta.reasoning = ((delta.reasoning or "") + extra_reasoning) or None
        delta.content, delta.tool_calls = whole.content, whole.tool_calls
        return None


#: (a loaded template, reasoning field, prompt text after its last start anchor) ->
#: :meth:`ChatcodecReasoningParser.is_reasoning_end`: vLLM asks it of every request's prompt,
#: whose end is nearly always one of a few generation prompts
_REASONING_ENDS: ObjectCache[bool] = ObjectCache()


_Facts = tuple["str | None", "str | None", "tuple[str, ...] | None", "tuple[str, ...] | None"]
#: (a loaded template) -> :func:`_reasoning_facts`: vLLM builds a reasoning half per request
_FACTS: ObjectCache[_Facts] = ObjectCache()


def _reasoning_facts(template: Any) -> _Facts:
    """The reasoning field of a loaded template, its open literal, its close literals (``None`` for
    a regex close) and the literals that end reasoning; read once per template."""
    known = _FACTS.get(template)
    if known is None:
        field = reasoning_field(template)
        spec = template.fields.get(field) if field else None
        opener = spec.open.literals[0] if spec and spec.open and spec.open.literals else None
        close = spec.close if spec else None
        literals = close.literals if close and close.literals else None
        ends = literals or (tuple(sorted(close.final)) if close else ()) or None
        known = _FACTS.put(template, (field, opener, literals, ends))
    return known


class _Pairing:
    """Hands the reasoning half built last in this thread to the tool half built right after it."""

    _local = threading.local()

    @classmethod
    def offer(cls, half: ChatcodecReasoningParser) -> None:
        cls._local.half = weakref.ref(half)

    @classmethod
    def take(cls, tokenizer: Any) -> ChatcodecReasoningParser | None:
        ref = getattr(cls._local, "half", None)
        cls._local.half = None
        half: ChatcodecReasoningParser | None = ref() if ref is not None else None
        if half is None or half.model_tokenizer is not tokenizer or half._request.paired:
            return None
        return half


def _tool_calls(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """vLLM's delta tool calls (as the data of ``DeltaToolCall``) for Chat Completions
    ``delta.tool_calls`` entries, one per call: entries of the same call in a row (a call's first
    entry and its first arguments) are one delta tool call, as the OpenAI API sends them (a client
    that reads one entry per index per chunk lost the arguments of the second)."""
    calls: list[dict[str, Any]] = []
    for entry in entries:
        function = entry.get("function") or {}
        same = calls and calls[-1]["index"] == entry["index"]
        if same and not function.get("name") and not entry.get("id"):
            last = calls[-1]["function"]
            last["arguments"] = (last["arguments"] or "") + (function.get("arguments") or "")
            continue
        calls.append({"index": entry["index"], "id": entry.get("id"), "type": entry.get("type"),
                      "function": {"name": function.get("name"), "arguments": function.get("arguments")}})
    return calls


def _delta(parts: list[tuple[str, Any]]) -> DeltaMessage | None:
    """A vLLM delta carrying ``Step.parts`` (``None`` when they carry nothing)."""
    return _text_delta(
        "".join(text for kind, text in parts if kind == "reasoning"),
        "".join(text for kind, text in parts if kind == "content"),
        _tool_calls([entry for kind, entry in parts if kind == "call"]),
    )


def _text_delta(
    reasoning: str, content: str, calls: list[dict[str, Any]] | None = None
) -> DeltaMessage | None:
    if not (reasoning or content or calls):
        return None
    return _new_delta({"reasoning": reasoning or None, "content": content or None, "tool_calls": calls or []})


#: ``DeltaMessage(**data)``, without a Python call per model (a delta with a call fragment builds three)
_new_delta = model_builder(DeltaMessage)


_RANK = {"reasoning": 0, "content": 1, "call": 2}


Parts = list[tuple[str, Any]]


def _in_order(parts: Parts, last: int | str | None) -> tuple[Parts, Parts]:
    """Split ordered output into what one vLLM delta can carry in order, and the rest.

    vLLM's Responses stream splits a delta into reasoning, then content, then tool calls grouped by
    index (``split_delta``), and opens an output item for each change of kind; a call's argument
    fragment after text in the same delta would open an item without a name. So the first part is
    the longest run of ``parts`` in which kinds never go back in that order, a call's fragments
    follow its start (or continue the call the last delta ended in, ``last``), and every call
    starts once.

    Args:
        parts: ``Step.parts`` in output order.
        last: what the previous delta ended with (a call index, ``"text"`` or ``None``).

    Returns:
        ``(now, later)``: ``now + later == parts``.
    """
    rank, current = -1, last if isinstance(last, int) else None
    started: set[int] = set()
    for at, (kind, value) in enumerate(parts):
        if _RANK[kind] < rank:
            return parts[:at], parts[at:]
        if kind == "call":
            index = value["index"]
            if (value.get("function") or {}).get("name"):
                if index in started:
                    return parts[:at], parts[at:]
                started.add(index)
            elif index != current:
                return parts[:at], parts[at:]
            current = index
        else:
            current = None
        rank = _RANK[kind]
    return parts, []


def _last_in_order(parts: list[tuple[str, Any]], last: int | str | None) -> list[tuple[str, Any]]:
    """The last delta of a Responses stream: all of ``parts`` in vLLM's order (text by kind, then
    calls), less the argument fragments of a call that text came after (see :meth:`_Request.send`)."""
    texts = sorted((part for part in parts if part[0] != "call"), key=lambda part: _RANK[part[0]])
    current = None if texts or not isinstance(last, int) else last
    calls = []
    for part in (part for part in parts if part[0] == "call"):
        index = part[1]["index"]
        if (part[1].get("function") or {}).get("name"):
            current = index
        elif index != current:
            continue
        calls.append(part)
    return texts + calls


def _adjust(request: Any) -> None:
    """Delimiters are often special tokens: the text the plugin sees must keep them."""
    if hasattr(request, "skip_special_tokens"):
        request.skip_special_tokens = False
    if hasattr(request, "spaces_between_special_tokens"):
        request.spaces_between_special_tokens = False


class ChatcodecReasoningParser(ReasoningParser):
    """vLLM reasoning parser ``chatcodec``: reasoning by the model's response template.

    Args:
        tokenizer: the model's tokenizer (the response template is found from it, see
            :mod:`chatcodec.integrations.discovery`).
        *args, **kwargs: whatever vLLM passes (``model_config``, ``chat_template_kwargs``, ...).

    Raises:
        ResponseTemplateNotFoundError: the model has no response template chatcodec can find; vLLM
            builds its parsers at startup, so this stops the server with the message.
    """

    #: alone, vLLM drives this half in its "engine" mode (deltas only); a tool half paired with it
    #: switches that off for the pair, so vLLM's required / named tool-choice paths keep their text
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._request = _Request(serving_template(tokenizer), tokenizer)
        #: the reasoning field; its open literal; its close as literals only (the token-id check of
        #: a stream; None for a regex close); the literal texts that end reasoning (a regex close's
        #: literal alternatives, such as ``</think>`` of ``</think>|(?=<tool_call>)``: what vLLM's
        #: thinking budget writes)
        self._field, self._open_literal, self._close_literals, self._end_literals = _reasoning_facts(
            self._request.serving.template
        )
        self._end_ids: list[list[int]] | None = None
        self._fed = False
        _Pairing.offer(self)

    @property
    def reasoning_start_str(self) -> str | None:
        return self._open_literal

    @property
    def reasoning_end_str(self) -> str | None:
        return self._end_literals[0] if self._end_literals else None

    # -- the prompt ------------------------------------------------------------------------------

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._request.set_prompt(prompt_token_ids)

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self._request.set_prompt(prompt_token_ids)

    def adjust_request(self, request: Any) -> Any:
        _adjust(request)
        return request

    # -- where reasoning ends, from token ids (also used by vLLM's structured output) --------------

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """Whether reasoning is over after this text (the prompt, or the prompt and some output).

        True when the template has no reasoning field, a reasoning region closed after the last
        start anchor, or content or a tool call began; False inside reasoning and before anything.
        """
        if self._field is None:
            return True
        state = self._request
        ids = list(input_ids)
        # vLLM asks this of the prompt it has just set: its text is decoded already
        text = state.prompt if state.prompt is not None and ids == state.prompt_ids else decode(
            self.model_tokenizer, ids
        )
        template = state.serving.template
        tail = template.after_last_anchor(text)
        if tail is None:  # no start anchor: the whole text counts (and is not worth keeping)
            return self._reasoning_ended(text)
        # the answer depends on the text after the anchor only
        known = _REASONING_ENDS.get(template, key=(self._field, tail))
        if known is None:
            known = _REASONING_ENDS.put(template, self._reasoning_ended(text), key=(self._field, tail))
        return known

    def _reasoning_ended(self, text: str) -> bool:
        parser = new_parser(self._request.serving, text, None, stream_values=False)
        events = list(parser.initial_events)
        probe = "\0"  # resolves a delimiter the text ends in; never counts as output
        events += parser.feed(probe)
        implicit = self._request.serving.template.implicit
        inside = ended = False
        for event in events:
            kind, field = event["type"], event["field"]
            if kind == "region_value":
                continue
            if field == self._field:
                inside = kind != "region_close"
                ended = ended or kind == "region_close"
            elif (kind == "region_chunk" and event["text"].replace(probe, "").strip()) or (
                kind == "region_open" and (implicit is None or field != implicit.name)
            ):
                ended = True
        return not inside and ended

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        if self._fed:  # this request's own stream decided it
            return self._request.transition
        end_ids = self._literal_end_ids()
        if end_ids is None:
            return self.is_reasoning_end(input_ids)
        new = len(list(delta_ids))
        ids = list(input_ids)
        return any(_ends_within(ids, end, new) for end in end_ids)

    def _literal_end_ids(self) -> list[list[int]] | None:
        if self._end_ids is None and self._close_literals:
            self._end_ids = _token_ids(self.model_tokenizer, self._close_literals)
        return self._end_ids or None

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The ids after the last reasoning close written as one of its literals (all of them when
        none is there)."""
        end_ids = _token_ids(self.model_tokenizer, self._end_literals) if self._end_literals else []
        last = -1
        for end in end_ids:
            for start in range(len(input_ids) - len(end), -1, -1):
                if input_ids[start : start + len(end)] == end:
                    last = max(last, start + len(end))
                    break
        return list(input_ids[last:]) if last >= 0 else list(input_ids)

    # -- non-streaming ---------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any = None) -> tuple[str | None, str | None]:
        """The reasoning of the whole output, and the rest, which vLLM hands to its tool stage."""
        state = self._request
        tools = tool_dicts(getattr(request, "tools", None)) or state.tools
        session = Session(state.serving, state.prompt or "", tools, track_outside=True)
        steps, message = whole(session, model_output)
        # vLLM hands this text to its tool stage, and keeps it as the content when that stage finds
        # no call: the raw text outside reasoning where calls were parsed (tool_choice "none" and
        # the JSON paths need it raw), the parsed content where none were
        rest = "".join(step.outside for step in steps) if message["tool_calls"] else message["content"] or ""
        state.one_shot = (rest, message)
        return message["reasoning"], rest or None

    # -- streaming -------------------------------------------------------------------------------

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int] = (),
        current_token_ids: Sequence[int] = (),
        delta_token_ids: Sequence[int] = (),
        *args: Any,
        **kwargs: Any,
    ) -> DeltaMessage | None:
        state = self._request
        self._fed = True
        state.transition = False
        if state.phase != "start" and state.phase != "reasoning":  # vLLM asks again after the handoff
            return DeltaMessage(content=delta_text) if delta_text else None
        state.phase = "reasoning"
        step = (state.session or state.stream()).feed(delta_text)
        if step.other_start is None and step.reasoning_end is None:  # the usual delta: reasoning only
            if not step.reasoning:
                return None
            return _new_delta({"reasoning": step.reasoning, "content": None, "tool_calls": []})
        return self._reasoning_delta(step)

    def _reasoning_delta(self, step: Step) -> DeltaMessage | None:
        state = self._request
        boundary = step.other_start if step.other_start is not None else step.reasoning_end
        if boundary is None:
            return _text_delta(step.reasoning, "")
        session = state.stream()
        rest = session.raw.slice(max(boundary, 0))
        session.keep_raw = False
        state.transition, state.phase, state.pending = True, "handoff", step.without_reasoning()
        return _text_delta(step.reasoning, rest)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._request.transition

    def finish_streaming(self) -> DeltaMessage | None:
        """vLLM's call at a transition (nothing more to add) and at the end of a stream that never
        left reasoning (the end decides the held text)."""
        state = self._request
        if state.phase != "reasoning" or state.session is None:
            return None
        return self._reasoning_delta(state.session.finish())


class ChatcodecToolParser(ToolParser):
    """vLLM tool parser ``chatcodec``: tool calls (and the whole message) by the response template.

    Args:
        tokenizer: the model's tokenizer.
        tools: the request's tools (chat or Responses function tools).
        *args, **kwargs: accepted and ignored (interfaces change between vLLM releases).

    Raises:
        ResponseTemplateNotFoundError: the model has no response template chatcodec can find.
    """

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools)
        partner = _Pairing.take(tokenizer)
        if partner is not None:
            state = partner._request
            state.paired = True
            partner.engine_based_streaming = False
        else:
            state = _Request(serving_template(tokenizer), tokenizer)
        state.tools = tool_dicts(tools)
        state.tool_half = weakref.ref(self)
        self._request = state
        bookkeeping.reset(self)

    def adjust_request(self, request: Any) -> Any:
        _adjust(request)
        return super().adjust_request(request)

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        state = self._request
        one_shot, state.one_shot = state.one_shot, None
        if one_shot is not None and one_shot[0] == model_output:
            message = one_shot[1]
            content = message["content"]
        else:  # no reasoning half parsed it: parse it here (the prompt is unknown)
            tools = tool_dicts(getattr(request, "tools", None)) or state.tools
            session = Session(state.serving, state.prompt or "", tools, track_outside=True)
            _, message = whole(session, model_output)
            content = message["content"]
            if message["reasoning"]:  # vLLM has no place for it here: keep its raw text in front
                raw_reasoning = _reasoning_raw(state.serving, state.prompt or "", tools, model_output)
                content = raw_reasoning + (content or "")
        calls = [
            ToolCall(
                id=call["id"],
                type="function",
                function=FunctionCall(
                    id=call["id"],
                    name=call["function"]["name"] or "",
                    arguments=call["function"]["arguments"] or "{}",
                ),
            )
            if call["id"]
            else ToolCall(
                function=FunctionCall(
                    name=call["function"]["name"] or "", arguments=call["function"]["arguments"] or "{}"
                )
            )
            for call in message["tool_calls"]
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(calls), tool_calls=calls, content=content or None
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int] = (),
        current_token_ids: Sequence[int] = (),
        delta_token_ids: Sequence[int] = (),
        request: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> DeltaMessage | None:
        state = self._request
        if request is not state.request:  # vLLM passes the same request object with every delta
            state.request, state.responses = request, type(request).__name__ == "ResponsesRequest"
        if state.phase == "handoff":  # the reasoning half's last delta: the session parsed it already
            step = state.pending or Step()
            state.pending, state.phase = None, "tools"
        else:
            state.phase = "tools"
            step = (state.session or state.stream()).feed(delta_text)
        return state.send(step)

    def finish_streaming(self) -> DeltaMessage | None:
        """The end of the stream: held text and the last region are decided and sent."""
        state = self._request
        if state.phase not in ("reasoning", "tools") or state.session is None:
            return None  # nothing fed, or vLLM's own path ran after the handoff
        # a Chat Completions delta can still lose the calls its engine output started (see send):
        # those its last feed started, in the delta of the engine output vLLM has not sent yet
        unsent = None if state.responses else state.session.calls_before_feed
        return state.send(state.session.finish(unsent_from=unsent), final=True)


_END_IDS: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], list[list[int]]]] = weakref.WeakKeyDictionary()


def _token_ids(tokenizer: Any, literals: tuple[str, ...]) -> list[list[int]]:
    """The token ids of each literal (cached per tokenizer); ``[]`` when one has none."""
    try:
        cache = _END_IDS.setdefault(tokenizer, {})
    except TypeError:
        cache = {}
    ids = cache.get(literals)
    if ids is None:
        ids = [list(tokenizer.encode(text, add_special_tokens=False)) for text in literals]
        ids = cache[literals] = ids if all(ids) else []
    return ids


def _ends_within(token_ids: list[int], end_ids: list[int], new: int) -> bool:
    """Whether ``end_ids`` ends within the last ``new`` ids of ``token_ids``."""
    window = token_ids[max(0, len(token_ids) - new - len(end_ids) + 1) :]
    return any(window[at : at + len(end_ids)] == end_ids for at in range(len(window) - len(end_ids) + 1))


def _reasoning_raw(serving: ServingTemplate, prefix: str, tools: list[dict[str, Any]], output: str) -> str:
    """The raw text of the output's reasoning regions, delimiters included, in order."""
    field = reasoning_field(serving.template)
    parser = new_parser(serving, prefix, tools)
    events = parser.feed(output) + parser.finalize(message=False)[1]
    parts, start = [], 0
    for event in events:
        if event["field"] != field:
            continue
        if event["type"] == "region_open":
            start = max(event["start"], 0)
        elif event["type"] == "region_close":
            parts.append(output[start : event["end"]])
    return "".join(parts)
