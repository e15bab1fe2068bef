"""``chatcodec parse --openai chat|responses``: the parse as OpenAI's wire formats.

* ``--openai chat``: the Chat Completions assistant message (``to_chat_message``), indented JSON;
  with ``--stream`` / ``--chunk-size N``: one ``chat.completion.chunk`` per line (JSON Lines).
* ``--openai responses``: the Responses API ``response`` object of the whole output; streamed, one
  Responses event per line, ``response.created`` to ``response.completed``.

Tool calls without the model's own id get ids in the form the model's chat template accepts when
``TEMPLATE`` is a bundled profile or a model directory whose profile is known
(``ToolCallIds.for_profile``). Output that cannot be parsed ends the command as ``chatcodec parse``
does (exit 1, one line on stderr), after the lines already written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

__all__ = ["FORMATS", "tool_call_ids", "write_openai"]

#: The values of ``--openai``.
FORMATS = ("chat", "responses")


def write_openai(kind: str, parser: Any, pieces: Iterable[str], out: TextIO, *, stream: bool,
                 ids: Any, delay: float = 0.0) -> None:
    """Feed ``pieces`` to ``parser`` through the ``kind`` stream and write the result to ``out``.

    Args:
        kind: ``"chat"`` or ``"responses"``.
        parser: a fresh response parser.
        pieces: the output, in the pieces to feed.
        out: where the JSON goes.
        stream: one chunk / event per line, written as it is produced; else the whole message (or
            response) once.
        ids: ``(function name, call index) -> id`` for calls without the model's own id.
        delay: seconds to wait after each piece (streamed only).

    Raises:
        ResponseParseError: (``errors="strict"``) the output cannot be parsed.
    """
    import time

    from chatcodec.cli.view import format_message, is_terminal, terminal_json, to_json
    from chatcodec.openai import ChatCompletionStream, ResponsesStream, to_chat_message

    terminal = is_terminal(out)
    openai_stream: ChatCompletionStream | ResponsesStream = (
        ChatCompletionStream(parser, ids=ids) if kind == "chat" else ResponsesStream(parser, ids=ids))

    def line(value: Any) -> None:
        text = to_json(value)
        out.write((terminal_json(text) if terminal else text) + "\n")

    for piece in pieces:
        for item in openai_stream.feed(piece):
            if stream:
                line(item)
        if stream:
            out.flush()
            if delay:
                time.sleep(delay)
    last = openai_stream.finish()
    if stream:
        for item in last:
            line(item)
        return
    assert openai_stream.message is not None
    whole = to_chat_message(openai_stream.message, ids=ids) if kind == "chat" else last[-1]["response"]
    text = format_message(whole)
    out.write(terminal_json(text) if terminal else text)


def tool_call_ids(codec: Any) -> Any:
    """The id form of ``codec``'s bundled profile (loaded by name, or detected from a model
    directory's chat template); the default form without a model or a profile."""
    from chatcodec.openai import ToolCallIds

    return ToolCallIds.for_profile(getattr(codec, "profile", None))
