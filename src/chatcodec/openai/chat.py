"""``ChatCompletionStream``: a generation as OpenAI ``chat.completion.chunk`` dicts.

Public API (stable; the vLLM / SGLang plugins build on it)::

    stream = ChatCompletionStream(parser, model="qwen3", reasoning_key="reasoning_content",
                                  ids=ToolCallIds.for_profile("qwen3"))
    for step in generation:
        for chunk in stream.feed(step):        # text, or token ids with ChatCodec's parser
            send(chunk)                        # plain dicts: json.dumps(chunk) is the SSE data
    for chunk in stream.finish("length" if cut else None):
        send(chunk)

The chunks follow the canonical sequence every client reads (``docs/openai.md``):

* the first chunk carries ``"role": "assistant"`` (the first ``feed`` always returns one);
* reasoning goes in ``delta[reasoning_key]``, content in ``delta.content``;
* each tool call's first delta is ``{"index", "id", "type": "function", "function": {"name",
  "arguments": ""}}``, later deltas only ``{"index", "function": {"arguments": fragment}}``; indexes
  count calls in output order from 0;
* the last chunk has an empty delta (plus the message's keys OpenAI has no place for, such as
  gpt-oss's ``builtin_tool_calls``) and the ``finish_reason``: ``tool_calls`` when calls were made,
  ``length`` / ``content_filter`` when the caller says so, else ``stop``.

Accumulating the chunks (as the ``openai`` SDK's ``ChatCompletionStreamState`` does) gives
:func:`~chatcodec.openai.to_chat_message` of the parsed message, for any chunking of the output;
the exceptions (a call whose region failed after it began, an id the model wrote after the
arguments) are in ``docs/openai.md``.
"""

from __future__ import annotations

from typing import Any

from chatcodec.openai.ids import IdFactory
from chatcodec.openai.messages import check_reasoning_key, extra_keys
from chatcodec.openai.steps import ARGUMENTS, CALL, TEXT
from chatcodec.openai.stream import StreamBase, finish_reason_for, new_id

__all__ = ["ChatCompletionStream"]


class ChatCompletionStream(StreamBase):
    """Feed a generation, get ``chat.completion.chunk`` dicts (see the module docstring).

    Args:
        parser: a fresh :class:`~chatcodec.ResponseParser` or ``ChatCodec.get_response_parser()``
            parser; create it with ``value_deltas=True`` so tool-call arguments stream as they are
            written (without, each call's arguments go out whole when its region closes), and
            with ``errors="keep"`` so that malformed output becomes content instead of raising.
        model: the ``model`` of every chunk.
        id: the ``id`` of every chunk (default ``chatcmpl-`` and 32 random hex digits).
        created: the ``created`` Unix time of every chunk (default: now).
        reasoning_key: the delta key for reasoning (``"reasoning_content"``, or ``"reasoning"`` as
            vLLM writes it); ``None`` leaves reasoning out.
        ids: ``(function name, call index) -> id`` for calls without the model's own id (default
            ``ToolCallIds()``; ``ToolCallIds.for_profile(codec.profile)`` gives ids the model's chat
            template accepts back).

    Raises:
        TypeError: ``parser`` is not a response parser, or ``reasoning_key`` is not a string.
        ValueError: the template's reasoning or content field is not plain text, or
            ``reasoning_key`` is a key of the delta itself (``"content"``, ``"role"``).

    Example:
        >>> from chatcodec import ResponseParser
        >>> template = {"start_anchor": "<|im_start|>assistant\\n", "fields": {
        ...     "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True,
        ...                    "content": "json", "transform": {"type": "function", "function": "{content}"}},
        ...     "content": {"close": "<|im_end|>"}}}
        >>> parser = ResponseParser(template, prefix="", value_deltas=True)
        >>> stream = ChatCompletionStream(parser, model="m", ids=lambda name, index: f"call_{index}")
        >>> for chunk in stream.feed('Hi <tool_call>{"name": "f", "arguments": {"a": "x'):
        ...     print(chunk["choices"][0]["delta"].get("tool_calls", chunk["choices"][0]["delta"]))
        {'role': 'assistant', 'content': 'Hi'}
        [{'index': 0, 'id': 'call_0', 'type': 'function', 'function': {'name': 'f', 'arguments': ''}}]
        [{'index': 0, 'function': {'arguments': '{"a": "x'}}]
    """

    def __init__(self, parser: Any, *, model: str = "", id: str | None = None, created: int | None = None,
                 reasoning_key: str | None = "reasoning_content", ids: IdFactory | None = None) -> None:
        check_reasoning_key(reasoning_key)
        super().__init__(parser, ids=ids, created=created)
        self.id = id or new_id("chatcmpl-")
        self.model = model
        self.reasoning_key = reasoning_key
        self._role_sent = False

    def feed(self, step: Any) -> list[dict[str, Any]]:
        """Feed one generation step (text, or token ids with ``ChatCodec``'s parser).

        Returns:
            The chunks this step gives (the first call always gives at least the role chunk).

        Raises:
            ResponseParseError: (``errors="strict"``) the output cannot be parsed.
            ParserStateError: the stream already finished (its parser refuses more).
        """
        events = self._feed(step)
        if self._role_sent:
            steps = self._events(events) if events else events
            return self._chunks(steps) if steps else []
        steps, self._initial = self._events([*self._initial, *events]), []
        return self._chunks(steps)

    def finish(self, finish_reason: str | None = None) -> list[dict[str, Any]]:
        """End the generation: the last chunks, the final one carrying the ``finish_reason``.

        Args:
            finish_reason: ``"length"`` when generation was cut at the token limit,
                ``"content_filter"``, or ``None`` / ``"stop"`` when the model stopped by itself
                (reported as ``"tool_calls"`` when it made calls).

        Returns:
            The remaining chunks; the last has an empty delta (or the message's other keys) and
            the finish reason. The parsed message is then :attr:`message`.

        Raises:
            ValueError: an unknown finish reason.
            ResponseParseError, MissingFieldError: (``errors="strict"``) the output cannot be parsed.
            ParserStateError: the stream already finished.
        """
        finish_reason_for(finish_reason, 0)  # an unknown reason is an error before anything ends
        steps = self._finish_steps()
        chunks = self._chunks(steps)  # the role chunk too, if nothing went out yet
        assert self.message is not None
        delta = dict(extra_keys(self.message, self.reasoning_key))
        reason = finish_reason_for(finish_reason, self._steps.completed)
        chunks.append(self._chunk(delta, reason))
        return chunks

    def _chunks(self, steps: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        chunks: list[dict[str, Any]] = []
        for step in steps:
            kind = step[0]
            if kind == TEXT:
                key = "content" if step[1] == "content" else self.reasoning_key
                if key is None:
                    continue
                delta: dict[str, Any] = {key: step[2]}
            elif kind == CALL:
                delta = {"tool_calls": [{"index": step[1], "id": step[2], "type": "function",
                                         "function": {"name": step[3], "arguments": ""}}]}
            elif kind == ARGUMENTS:
                if not step[2]:
                    continue
                delta = {"tool_calls": [{"index": step[1], "function": {"arguments": step[2]}}]}
            else:  # CALL_DONE: Chat Completions has no end-of-call delta
                continue
            if not self._role_sent:
                delta = {"role": "assistant", **delta}
                self._role_sent = True
            chunks.append({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                           "model": self.model, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                                             "finish_reason": None}]})
        if not self._role_sent:
            self._role_sent = True
            chunks.append(self._chunk({"role": "assistant"}, None))
        return chunks

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
