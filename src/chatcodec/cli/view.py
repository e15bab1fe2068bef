"""Views for ``chatcodec parse --stream``: how streamed events are shown.

Every view has ``on_event(event)``, ``close(message)`` and ``abort()``. :class:`PlainView` writes
plain text to a stream (what a pipe or a file gets); :class:`RichView` draws the regions live on a
terminal. :func:`play` feeds an output to a parser piece by piece and shows every event in a view
(``chatcodec parse --stream`` and ``chatcodec demo`` both run it). This is the only module that
imports ``rich``, and only inside :class:`RichView`, so
``chatcodec parse`` never pays for it unless it draws (rule R2: the decode path stays light).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from chatcodec.response_templates.engine import ResponseParser

__all__ = [
    "EventLines",
    "PlainView",
    "RichView",
    "View",
    "choose_view",
    "chunks",
    "format_message",
    "play",
    "printable",
    "to_json",
]

#: Shown once on stderr when output goes to a terminal but ``rich`` is missing (a pipe or a file
#: gets plain output silently: that is what it wants).
LIVE_VIEW_HINT = "chatcodec: plain output; the live view needs rich (pip install 'chatcodec[rich]')"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (they cannot be encoded as UTF-8).

    A JSON ``"\\ud800"`` escape decodes to a lone surrogate, which no UTF-8 stream can write; inside
    a JSON string the replacement is that same escape, so the output stays valid JSON.
    """
    return _LONE_SURROGATE.sub(_escape_surrogate, text)


def to_json(value: Any, **kwargs: Any) -> str:
    """JSON text with non-ASCII kept and lone surrogates escaped (always writable as UTF-8)."""
    return printable(json.dumps(value, ensure_ascii=False, **kwargs))


def format_message(message: dict[str, Any]) -> str:
    """The message as printed by ``chatcodec parse``: indented JSON, non-ASCII kept, one newline."""
    return to_json(message, indent=2) + "\n"


class View(Protocol):
    """What ``chatcodec parse --stream`` drives (every view below implements these three)."""

    def on_event(self, event: dict[str, Any]) -> None:
        """Show one event (``region_open``, ``region_chunk`` or ``region_close``) as it arrives."""

    def close(self, message: dict[str, Any]) -> None:
        """Finish the view and show the final message."""

    def abort(self) -> None:
        """Stop the view after an error, leaving the terminal usable (no message follows)."""


class EventLines:
    """``--events``: one JSON object per line, then ``{"type": "message", "message": ...}``."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def on_event(self, event: dict[str, Any]) -> None:
        self._out.write(to_json(event) + "\n")
        self._out.flush()

    def close(self, message: dict[str, Any]) -> None:
        self._out.write(to_json({"type": "message", "message": message}) + "\n")

    def abort(self) -> None:
        self._out.flush()


class PlainView:
    """Regions as plain text: a ``[field]`` line when a region opens, its text as it streams, the
    parsed value of structured regions (``=> ...``) when they close, then the message as JSON."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._at_line_start = True
        self._dirty = False

    def _write(self, text: str) -> None:
        if text:
            self._out.write(printable(text))
            self._out.flush()
            self._at_line_start = text.endswith("\n")

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "region_open":
            self._end_line()
            self._write(f"[{event['field']}]\n")
            self._dirty = False
        elif kind == "region_chunk":
            self._dirty = event["dirty"]
            self._write(event["text"])
        else:
            self._end_line()
            if "error" in event:
                self._write(f"!! {event['error']['error']}\n")
            elif self._dirty:
                self._write(f"=> {to_json(event['value'])}\n")

    def close(self, message: dict[str, Any]) -> None:
        self._end_line()
        self._write("\n" + format_message(message))

    def abort(self) -> None:
        self._end_line()


class RichView:
    """Regions drawn live on a terminal with ``rich``: one panel per region, updated per chunk."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self._console = console if console is not None else Console()
        self._regions: list[tuple[str, list[str], bool]] = []
        self._live = Live(self._render(), console=self._console, auto_refresh=False, transient=False)
        self._live.start()

    def _render(self) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        panels = [Panel(Text(printable("".join(parts))), title=field, title_align="left",
                        border_style="yellow" if dirty else "cyan") for field, parts, dirty in self._regions]
        return Group(*panels) if panels else Text("waiting for output...", style="dim")

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "region_open":
            self._regions.append((event["field"], [], False))
        elif kind == "region_chunk" and self._regions:
            field, parts, _ = self._regions[-1]
            parts.append(event["text"])
            self._regions[-1] = (field, parts, event["dirty"])
        elif kind == "region_close" and self._regions:
            field, parts, dirty = self._regions[-1]
            if "error" in event:
                parts.append(f"\n!! {event['error']['error']}")
            elif dirty:
                parts[:] = [to_json(event["value"], indent=2)]
        self._live.update(self._render(), refresh=True)

    def close(self, message: dict[str, Any]) -> None:
        self._live.stop()
        self._console.print_json(to_json(message))

    def abort(self) -> None:
        self._live.stop()


def choose_view(out: TextIO, err: TextIO) -> View:
    """:class:`RichView` on a terminal with ``rich`` installed, else :class:`PlainView`.

    Only a terminal without ``rich`` gets a word about it (:data:`LIVE_VIEW_HINT` on ``err``); a
    pipe or a file gets plain output and no message.

    Args:
        out: where the view writes.
        err: where the hint goes.

    Returns:
        The view.
    """
    if not out.isatty():
        return PlainView(out)
    try:
        from rich.console import Console
    except ImportError:
        err.write(LIVE_VIEW_HINT + "\n")
        return PlainView(out)
    return RichView(Console(file=out))


def chunks(text: str, size: int) -> list[str]:
    """Split ``text`` into pieces of ``size`` characters, the way a token stream arrives.

    Args:
        text: the whole output.
        size: characters per piece (at least 1).

    Returns:
        The pieces, in order (none for empty text).
    """
    return [text[start : start + size] for start in range(0, len(text), size)]


def play(parser: ResponseParser, pieces: Iterable[str], view: View, delay: float = 0.0) -> dict[str, Any]:
    """Feed ``pieces`` to a streaming ``parser`` and show every event in ``view``.

    Args:
        parser: a fresh parser (its ``initial_events`` are shown first).
        pieces: the output, in the pieces it arrives in.
        view: where the events go; closed with the final message.
        delay: seconds to pause after each piece (to watch a live view).

    Returns:
        The parsed message.

    Raises:
        ResponseParseError: the output cannot be parsed (strict mode); the view is aborted first,
            as it is for any other error.
    """
    try:
        for event in parser.initial_events:
            view.on_event(event)
        for piece in pieces:
            for event in parser.feed(piece):
                view.on_event(event)
            if delay:
                time.sleep(delay)
        message, events = parser.finalize()
        for event in events:
            view.on_event(event)
    except BaseException:
        view.abort()
        raise
    view.close(message)
    return message
