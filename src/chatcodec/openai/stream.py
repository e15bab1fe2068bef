"""What both OpenAI streams share: the wrapped parser, its template, the final message.

A stream wraps one parser: a :class:`~chatcodec.ResponseParser`, or the parser of
``ChatCodec.get_response_parser`` (fed text or token ids). It replays the parser's
``initial_events`` (regions the prompt opened, such as a pre-opened ``<think>``) with the first
feed, and hands every event to one :class:`~chatcodec.openai.steps.StepWriter`.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from chatcodec.openai.ids import IdFactory, ToolCallIds
from chatcodec.openai.steps import StepWriter

__all__ = ["FINISH_REASONS", "StreamBase", "finish_reason_for"]

#: The ``finish_reason`` values a caller may pass to ``finish`` (Chat Completions' own).
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")


def finish_reason_for(requested: str | None, calls_completed: int) -> str:
    """The finish reason to report: ``tool_calls`` when calls were made and the generation stopped
    by itself, the caller's ``length`` / ``content_filter`` as they are, else ``stop`` (vLLM's rule).

    Raises:
        ValueError: ``requested`` is not a Chat Completions finish reason.
    """
    if requested is not None and requested not in FINISH_REASONS:
        raise ValueError(f"finish_reason: expected one of {list(FINISH_REASONS)} or None, got {requested!r}")
    if requested in (None, "stop", "tool_calls"):
        return "tool_calls" if calls_completed else "stop"
    return requested


class StreamBase:
    """The parser, the step writer and the lifecycle one stream needs.

    The parser's ``initial_events`` (regions the prompt opened) go out with the first ``feed``. A
    stream that finished refuses more: its parser raises :class:`~chatcodec.errors.ParserStateError`.

    Args:
        parser: a fresh :class:`~chatcodec.ResponseParser` or ``ChatCodec.get_response_parser()``
            parser (create it with ``value_deltas=True`` to stream arguments as they are written).
        ids: ``(function name, call index) -> id`` for calls without the model's own id.
        created: Unix time in seconds (default: now).

    Raises:
        TypeError: ``parser`` is not a response parser.
        ValueError: the response template's reasoning or content field is not plain text.
    """

    def __init__(self, parser: Any, *, ids: IdFactory | None, created: int | None) -> None:
        engine = getattr(parser, "parser", parser)  # ChatCodec's parser wraps the engine
        template = getattr(engine, "template", None)
        if template is None or not callable(getattr(parser, "feed", None)):
            raise TypeError(f"expected a ResponseParser or ChatCodec.get_response_parser()'s parser, got "
                            f"{type(parser).__name__}")
        self.parser = parser
        self.created = int(time.time()) if created is None else created
        self._steps = StepWriter(template, ids or ToolCallIds())
        self._feed = parser.feed
        self._events = self._steps.events
        #: the prompt's events, replayed with the first feed
        self._initial: list[dict[str, Any]] = self._steps.prompt(list(parser.initial_events))
        #: The parsed message, once :meth:`finish` ran (``to_chat_message`` turns it into the wire form).
        self.message: dict[str, Any] | None = None

    def _finish_steps(self, unsent_from: int | None = None) -> list[tuple[Any, ...]]:
        """Finalize the parser; the steps of the end of generation (the parsed message is kept).
        ``unsent_from``: as :meth:`~chatcodec.openai.steps.StepWriter.finish`."""
        message, events = self.parser.finalize()
        steps = self._steps.finish([*self._initial, *events], unsent_from)
        self._initial = []
        self.message = message
        return steps


def new_id(prefix: str) -> str:
    """A random id: ``prefix`` and 32 hexadecimal digits."""
    return f"{prefix}{secrets.token_hex(16)}"
