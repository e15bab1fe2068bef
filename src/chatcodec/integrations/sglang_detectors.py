"""SGLang's reasoning and tool-call detectors, backed by chatcodec sessions.

SGLang's chat serving (``serving_chat.py``, 0.5.23) runs two stages per choice: a reasoning parser
splits each delta into reasoning text and "normal" text, and a tool-call parser reads the normal
text. The stages never see each other, and SGLang builds them lazily in its own order:

* :class:`ChatcodecReasoningDetector` parses the whole output (from a prompt inferred from
  SGLang's ``force_reasoning``: SGLang shows reasoning parsers nothing else of the prompt), returns
  the reasoning, and hands on the raw text outside reasoning regions, delimiters included, as soon
  as the parser has decided it;
* :class:`ChatcodecToolDetector` returns content and tool calls: a call's first item has its name,
  later items argument fragments; ``tool_index`` counts calls in output order; SGLang's records of
  what was streamed are kept in step (:mod:`.bookkeeping`), so its end-of-stream check sends
  nothing twice. When the reasoning detector of the same request parsed the text it is given, it
  reads that parse (:mod:`.sglang_handoff`); otherwise (no reasoning stage, or the stages not
  chained as expected) it parses the text with a session of its own.

``tool_choice="required"`` / a named function use SGLang's own path (a JSON-schema constraint and
its JSON-array parser), as for its other detectors without structural tags; a malformed call
stays content; ``detect_and_parse`` gives the message streaming gives.
"""

from __future__ import annotations

import inspect
import logging
import os
from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult as ToolResult
from sglang.srt.function_call.core_types import StructureInfo, ToolCallItem
from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

from chatcodec.errors import ResponseTemplateNotFoundError
from chatcodec.integrations import bookkeeping
from chatcodec.integrations.compat import example_match, model_builder, tool_dicts
from chatcodec.integrations.discovery import ENV_VAR, ServingTemplate, serving_template, template_from_setting
from chatcodec.integrations.session import Session, Step, reasoning_field, whole
from chatcodec.integrations.sglang_handoff import Handoff, offer, take
from chatcodec.object_cache import ObjectCache

__all__ = ["ChatcodecReasoningDetector", "ChatcodecToolDetector", "inferred_prefix"]

logger = logging.getLogger("chatcodec")


def _template_for(tokenizer: Any) -> ServingTemplate:
    if tokenizer is None:  # SGLang passes the tokenizer when the signature asks for it
        setting = os.environ.get(ENV_VAR, "").strip()
        if not setting:
            raise ResponseTemplateNotFoundError(
                f"chatcodec: SGLang gave the parser no tokenizer; name the response template with {ENV_VAR}"
            )
        return ServingTemplate(template_from_setting(setting), f"{ENV_VAR}={setting}", "?")
    return serving_template(tokenizer)


#: (a loaded template, in_reasoning) -> its inferred prefix: working a prefix out reads the
#: anchor's regex, which costs more than a short stream's parse
_PREFIXES: ObjectCache[str] = ObjectCache()


def inferred_prefix(serving: ServingTemplate, in_reasoning: bool) -> str:
    """The end of a prompt that SGLang does not show: the start anchor, plus the reasoning opener
    when SGLang says the prompt opened reasoning (``force_reasoning``). Worked out once per loaded
    template (SGLang builds a reasoning detector per request).

    Returns:
        The prefix; ``""`` (parse from outside every region) when the anchor has no literal form.
    """
    known = _PREFIXES.get(serving.template, key=in_reasoning)
    if known is None:
        known = _PREFIXES.put(serving.template, _inferred_prefix(serving, in_reasoning), key=in_reasoning)
    return known


def _inferred_prefix(serving: ServingTemplate, in_reasoning: bool) -> str:
    source = serving.template.source
    anchor = source.get("start_anchor")
    anchor = anchor[0] if isinstance(anchor, list) else anchor
    if not isinstance(anchor, str):
        anchor = example_match(str(source.get("start_anchor_pattern", ""))) or ""
    if not in_reasoning:
        return anchor
    field = reasoning_field(serving.template)
    spec = serving.template.fields.get(field) if field else None
    opener = None
    if spec is not None and spec.open is not None:
        opener = spec.open.literals[0] if spec.open.literals else example_match(spec.open.pattern.pattern)
    if not anchor or opener is None:
        logger.warning(
            "chatcodec: cannot write a prompt that opens reasoning for %s; the output is parsed "
            "as if the prompt opened none",
            serving.model,
        )
        return anchor
    return anchor + opener


#: (a loaded template) -> the reasoning open and close literals SGLang's base class is given
_REASONING_TOKENS: ObjectCache[tuple[str, str]] = ObjectCache()


def _reasoning_tokens(serving: ServingTemplate) -> tuple[str, str]:
    """The reasoning field's open literal and close literal (a regex close: its literal alternative,
    ``</think>``), ``""`` where there is none; worked out once per loaded template (SGLang builds a
    reasoning detector per request)."""
    known = _REASONING_TOKENS.get(serving.template)
    if known is None:
        field = reasoning_field(serving.template)
        spec = serving.template.fields.get(field) if field else None
        start = spec.open.literals[0] if spec and spec.open and spec.open.literals else ""
        ends = (spec.close.literals or tuple(sorted(spec.close.final))) if spec and spec.close else ()
        known = _REASONING_TOKENS.put(serving.template, (start, ends[0] if ends else ""))
    return known


#: the result of a delta with nothing decided yet (text held as a possible delimiter's start):
#: SGLang reads its two fields and never changes them
_NO_TEXT = ReasoningResult()


class ChatcodecReasoningDetector(BaseReasoningFormatDetector):
    """SGLang reasoning parser ``chatcodec``.

    Args:
        stream_reasoning: send reasoning as it comes (else each reasoning region whole, at its end).
        force_reasoning: the prompt opened reasoning (SGLang decides from the chat template).
        tokenizer: the model's tokenizer (the response template is found from it).
        **kwargs: whatever else SGLang passes (accepted, unused).
    """

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        tokenizer: Any = None,
        **kwargs: Any,
    ) -> None:
        self._serving = _template_for(tokenizer)
        start, end = _reasoning_tokens(self._serving)
        super().__init__(start, end, force_reasoning=bool(force_reasoning), stream_reasoning=stream_reasoning)
        self._prefix = inferred_prefix(self._serving, bool(force_reasoning))
        #: the request's parse, which the tool detector built next may read instead of parsing again
        self._handoff = Handoff(self._serving, self._prefix)
        offer(self._handoff)
        self._held: list[str] = []  # reasoning kept back while stream_reasoning is off

    def _result(self, step: Step, session: Session) -> ReasoningResult:
        reasoning = step.reasoning
        if not self.stream_reasoning:
            self._held.append(reasoning)
            reasoning = ""
            if not session.in_reasoning or session.finished:
                reasoning, self._held = "".join(self._held), []
        return ReasoningResult(normal_text=step.outside, reasoning_text=reasoning)

    def parse_streaming_increment(self, new_text: str) -> ReasoningResult:
        step = self._handoff.feed(new_text)
        if self.stream_reasoning:  # the usual case: the step's text as it is
            if step.outside or step.reasoning:
                return ReasoningResult(step.outside, step.reasoning)
            return _NO_TEXT
        return self._result(step, self._handoff.session)

    def finish(self) -> ReasoningResult:
        step = self._handoff.finish()
        return self._result(step, self._handoff.session)

    def detect_and_parse(self, text: str) -> ReasoningResult:
        session = Session(self._serving, self._prefix, None, track_outside=True, stream_values=False)
        steps = [session.feed(text), session.finish()]
        return ReasoningResult(
            normal_text="".join(step.outside for step in steps),
            reasoning_text="".join(step.reasoning for step in steps),
        )


#: the result of a step with nothing for SGLang's tool stage (most deltas inside reasoning or
#: inside a call's held text): SGLang reads its two fields and never changes them, and building a
#: result (a pydantic model) costs more than the rest of such a delta's plumbing
_NOTHING = ToolResult(normal_text="", calls=[])
#: ``ToolResult(**data)``, its call items built from their data without a Python call each
_new_result = model_builder(ToolResult)


class ChatcodecToolDetector(BaseFormatDetector):
    """SGLang tool-call parser ``chatcodec``.

    Args:
        tokenizer: the model's tokenizer (the response template is found from it).
        **kwargs: whatever else SGLang passes (accepted, unused).
    """

    def __init__(self, tokenizer: Any = None, **kwargs: Any) -> None:
        super().__init__()
        self._serving = _template_for(tokenizer)
        self._session: Session | None = None  # the parser of its own, once it parses itself
        #: the reasoning detector's parse of this request, while this detector reads it
        self._handoff: Handoff | None = take(self._serving)
        self._claimed = False
        self._received: list[str] = []  # the text given while reading the hand-off
        bookkeeping.reset(self)

    def _stream(self, tools: Any) -> Session:
        if self._session is None:
            self._session = Session(self._serving, "", tool_dicts(tools), keep_raw=False)
        return self._session

    def _shared(self, new_text: str, tools: Any, *, end: bool = False) -> Step | None:
        """The step read from the hand-off, or ``None`` once this detector parses itself."""
        handoff = self._handoff
        if handoff is None:
            return None
        if not self._claimed:
            if end or not handoff.claim(self, tool_dicts(tools), new_text):
                self._handoff = None
                return None
            self._claimed = True
        step = handoff.finish_for_reader() if end else handoff.read(new_text)
        if step is None:  # the text given is not what the reasoning stage handed on
            logger.warning(
                "chatcodec: SGLang's tool stage was given other text than its reasoning stage "
                "handed on; parsing it separately from here"
            )
            self._handoff = None
            self._stream(tools).feed("".join(self._received))  # its output was sent already
            return None
        self._received.append(new_text)
        return step

    def _result(self, step: Step, *, reasoning: bool = True) -> ToolResult:
        """SGLang's result for a step: its calls, and its text as normal text (its reasoning too
        unless the reasoning stage returned that already)."""
        text = step.reasoning + step.content if reasoning else step.content
        if not step.tool_calls:  # text only (or nothing): no records to keep
            return _new_result({"normal_text": text, "calls": []}) if text else _NOTHING
        bookkeeping.record(self, step.tool_calls)
        calls = []
        for entry in step.tool_calls:
            function = entry.get("function") or {}
            calls.append({"tool_index": entry["index"], "name": function.get("name"),
                          "parameters": function.get("arguments") or ""})
        return _new_result({"normal_text": text, "calls": calls})

    def parse_streaming_increment(self, new_text: str, tools: Any) -> ToolResult:
        handoff = self._handoff
        if handoff is not None and self._claimed:  # the usual call: read the reasoning stage's step
            step = handoff.read(new_text)
            if step is not None:
                self._received += (new_text,)  # (no method call: this runs for every delta)
                entries = step.tool_calls
                if not entries:
                    if not step.content:
                        return _NOTHING
                    return _new_result({"normal_text": step.content, "calls": []})
                if entries[0] is entries[-1] and "id" not in entries[0]:  # one more argument fragment
                    entry = entries[0]
                    fragment = entry["function"]["arguments"]
                    bookkeeping.add_arguments(self, entry["index"], fragment)
                    return _new_result({"normal_text": step.content, "calls": [
                        {"tool_index": entry["index"], "name": None, "parameters": fragment}]})
                started = step.call_start()
                if started is not None:  # a call starts (with its first argument fragment): _result()'s items
                    index, _, name, fragment = started
                    items = [{"tool_index": index, "name": name, "parameters": ""}]
                    if fragment:
                        items += ({"tool_index": index, "name": None, "parameters": fragment},)
                    bookkeeping.start_call(self, index, name, fragment)
                    return _new_result({"normal_text": step.content, "calls": items})
                return self._result(step, reasoning=False)
        step = self._shared(new_text, tools)
        if step is not None:  # read from the reasoning stage, which returned its reasoning
            return self._result(step, reasoning=False)
        return self._result(self._stream(tools).feed(new_text))

    def finish(self, tools: Any) -> ToolResult:
        step = self._shared("", tools, end=True)
        return self._result(step if step is not None else self._stream(tools).finish())

    def detect_and_parse(self, text: str, tools: Any) -> ToolResult:
        session = Session(self._serving, "", tool_dicts(tools), keep_raw=False)
        _, message = whole(session, text)
        calls = [ToolCallItem(tool_index=index, name=call["function"]["name"],
                              parameters=call["function"]["arguments"])
                 for index, call in enumerate(message["tool_calls"])]
        return ToolResult(normal_text=(message["reasoning"] or "") + (message["content"] or ""), calls=calls)

    def has_tool_call(self, text: str) -> bool:
        """Whether the text holds markup this parser reads: a call, or anything that is not content
        as written (SGLang keeps the text unparsed when this says no)."""
        result = self.detect_and_parse(text, None)
        return bool(result.calls) or result.normal_text != text

    def supports_structural_tag(self) -> bool:
        return False  # required / named tool choice: SGLang's JSON-schema path

    def structure_info(self) -> Any:
        def info(name: str) -> StructureInfo:
            raise NotImplementedError("chatcodec: no structural tags (see supports_structural_tag)")

        return info


def _fixed_signature(cls: type) -> None:
    """Keep ``cls``'s constructor signature on the class (``__signature__``), which ``inspect.signature``
    returns as it is: SGLang asks for it on every request it builds a parser for (to see whether the
    class takes ``tokenizer``), and working it out from ``__init__`` costs about as much as a
    short stream's whole parse."""
    cls.__signature__ = inspect.signature(cls)  # type: ignore[attr-defined]


_fixed_signature(ChatcodecReasoningDetector)
_fixed_signature(ChatcodecToolDetector)
