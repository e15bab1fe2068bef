"""Views for ``chatcodec parse --stream``: how streamed events are shown.

Every view has ``on_event(event)``, ``close(message)`` and ``abort()``. :class:`PlainView` writes
plain text to a stream (what a pipe or a file gets); :class:`RichView` draws the regions live on a
terminal. Both show a structured region (tool calls) by its parsed value (``=> ...``), never an
empty block for a whitespace-only region, and write lone surrogates as JSON escapes. On a terminal,
model text never drives the terminal: control characters (C0 but ``\\n`` and ``\\t``, DEL, C1) are
shown as ``\\xNN`` in text and as JSON ``\\u00NN`` escapes in JSON, bidi controls (U+202A-U+202E,
U+2066-U+2069) and U+2028/U+2029 as ``\\uNNNN`` in both (:func:`terminal_text`,
:func:`terminal_json`); a pipe or a file gets every character exactly. :func:`play`
feeds an output to a parser piece by piece and shows every event in a view (``chatcodec parse
--stream`` and ``chatcodec demo`` both run it). This is the only module that imports ``rich``, and
only when it draws (:func:`choose_view`, :class:`RichView`), so ``chatcodec parse`` never pays for
it otherwise (rule R2: the decode path stays light).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
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
    "is_terminal",
    "play",
    "printable",
    "terminal_json",
    "terminal_text",
    "to_json",
]

#: Shown once on stderr when output goes to a terminal but ``rich`` is missing (a pipe or a file
#: gets plain output silently: that is what it wants).
LIVE_VIEW_HINT = "chatcodec: plain output; the live view needs rich (pip install 'chatcodec[rich]')"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (they cannot be encoded as UTF-8).

    A JSON ``"\\ud800"`` escape decodes to a lone surrogate, which no UTF-8 stream can write; inside
    a JSON string the replacement is that same escape, so the output stays valid JSON.
    """
    return _LONE_SURROGATE.sub(_unicode_escape, text)


#: Characters that move or reorder what a terminal shows: bidi embeddings, overrides and isolates
#: (U+202A-U+202E, U+2066-U+2069: text after them is drawn in another order) and the line and
#: paragraph separators (U+2028, U+2029).
_LAYOUT = "\u2028-\u202e\u2066-\u2069"
#: What a terminal would obey rather than show: C0 controls but newline and tab, DEL, C1 controls,
#: and the layout characters above.
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_LAYOUT}]")
#: What ``json.dumps`` leaves raw of those (it escapes C0 itself).
_JSON_CONTROL = re.compile(f"[\x7f-\x9f{_LAYOUT}]")


def terminal_text(text: str) -> str:
    """``text`` as a terminal may show it: control characters written as ``\\xNN``, bidi controls
    and line/paragraph separators as ``\\uNNNN``.

    Model output can hold escape sequences (``ESC ] 0;title BEL`` sets the window title,
    ``ESC [2J`` clears the screen); on a terminal they are shown, never obeyed. Newline and tab
    are kept; lone surrogates become ``\\udXXX`` as in :func:`printable`.
    """
    return _CONTROL.sub(_escape_control, printable(text))


def _escape_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_json(json_text: str) -> str:
    """JSON text as a terminal may show it: DEL, C1 controls, bidi controls and line/paragraph
    separators as ``\\uNNNN`` escapes.

    ``json.dumps`` already escapes C0 controls; the rest can only occur inside JSON strings, so the
    result is valid JSON with the same value.
    """
    return _JSON_CONTROL.sub(_unicode_escape, json_text)


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (``False`` for anything without a working ``isatty``)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


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

    def __init__(self, out: TextIO, *, terminal: bool | None = None) -> None:
        self._out = out
        self._terminal = is_terminal(out) if terminal is None else terminal

    def _json(self, value: Any) -> str:
        text = to_json(value)
        return terminal_json(text) if self._terminal else text

    def on_event(self, event: dict[str, Any]) -> None:
        self._out.write(self._json(event) + "\n")
        self._out.flush()

    def close(self, message: dict[str, Any]) -> None:
        self._out.write(self._json({"type": "message", "message": message}) + "\n")

    def abort(self) -> None:
        self._out.flush()


class PlainView:
    """Regions as plain text, as they stream, then the message as JSON.

    A text region shows a ``[field]`` line and its text once it holds more than whitespace (a
    whitespace-only region shows nothing). A structured region (``dirty`` chunks: JSON, XML, tool
    calls) shows its ``[field]`` line when it starts and, when it closes, its parsed value on a
    ``=> ...`` line (or ``!! problem`` with ``errors="keep"``); its raw text is not repeated.
    On a terminal (``terminal``, by default ``out.isatty()``) control characters are shown, not
    obeyed (:func:`terminal_text`, :func:`terminal_json`).
    """

    def __init__(self, out: TextIO, *, terminal: bool | None = None) -> None:
        self._out = out
        self._terminal = is_terminal(out) if terminal is None else terminal
        self._at_line_start = True
        self._field = ""
        self._shown = False  # the [field] line of the current region is out
        self._dirty = False
        self._leading = ""  # whitespace a text region began with, held until text follows

    def _write(self, text: str) -> None:
        if text:
            self._out.write(terminal_text(text) if self._terminal else printable(text))
            self._out.flush()
            self._at_line_start = text.endswith("\n")

    def _write_json(self, json_text: str) -> None:
        """Write JSON text (already printable): on a terminal with DEL and C1 controls escaped."""
        self._out.write(terminal_json(json_text) if self._terminal else json_text)
        self._out.flush()
        self._at_line_start = json_text.endswith("\n")

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _header(self) -> None:
        if not self._shown:
            self._end_line()
            self._write(f"[{self._field}]\n")
            self._shown = True

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "region_open":
            self._field, self._shown, self._dirty, self._leading = event["field"], False, False, ""
        elif kind == "region_chunk":
            self._on_chunk(event["text"], event["dirty"])
        elif "error" in event:
            self._header()
            self._end_line()
            self._write(f"!! {event['error']['error']}\n")
        elif self._dirty or not isinstance(event["value"], str):
            self._header()
            self._end_line()
            self._write("=> ")
            self._write_json(to_json(event["value"]) + "\n")

    def _on_chunk(self, text: str, dirty: bool) -> None:
        self._dirty = self._dirty or dirty
        if self._dirty:
            self._header()  # the raw text of a structured region is not shown, only its value
        elif self._shown:
            self._write(text)
        else:
            self._leading += text
            if self._leading.strip():
                self._header()
                self._write(self._leading.lstrip())

    def close(self, message: dict[str, Any]) -> None:
        self._end_line()
        self._write_json("\n" + format_message(message))

    def abort(self) -> None:
        self._end_line()


@dataclass
class _Panel:
    """One region as :class:`RichView` draws it."""

    name: str
    parts: list[str] = field(default_factory=list)
    dirty: bool = False
    value: str | None = None  # the parsed value as JSON, once a structured region closed
    error: str | None = None


class RichView:
    """Regions drawn live on a terminal with ``rich``: one panel per region, updated per chunk.

    Text regions show their text (none while it is only whitespace); structured regions show their
    raw text dimmed while it streams, then ``=> `` and the parsed value when they close. Control
    characters are shown, not obeyed (:func:`terminal_text`, :func:`terminal_json`): the console is
    a terminal.
    """

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self._console = console if console is not None else Console()
        self._panels: list[_Panel] = []
        self._live = Live(self._render(), console=self._console, auto_refresh=False, transient=False)
        self._live.start()

    def _render(self) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        drawn = []
        for panel in self._panels:
            raw = terminal_text("".join(panel.parts))
            if panel.error is not None:
                body = Text(raw, style="dim") + Text(f"\n!! {terminal_text(panel.error)}", style="bold red")
            elif panel.value is not None:
                body = Text(f"=> {panel.value}", style="bold")
            elif panel.dirty:
                body = Text(raw, style="dim")
            elif raw.strip():
                body = Text(raw.strip("\n"))
            else:
                continue  # nothing but whitespace (yet): no empty block
            drawn.append(Panel(body, title=panel.name, title_align="left",
                               border_style="yellow" if panel.dirty else "cyan"))
        return Group(*drawn) if drawn else Text("waiting for output...", style="dim")

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "region_open":
            self._panels.append(_Panel(event["field"]))
        elif kind == "region_chunk" and self._panels:
            panel = self._panels[-1]
            panel.parts.append(event["text"])
            panel.dirty = panel.dirty or event["dirty"]
        elif kind == "region_close" and self._panels:
            panel = self._panels[-1]
            if "error" in event:
                panel.error = event["error"]["error"]
            elif panel.dirty or not isinstance(event["value"], str):
                panel.dirty, panel.value = True, terminal_json(to_json(event["value"], indent=2))
        self._live.update(self._render(), refresh=True)

    def close(self, message: dict[str, Any]) -> None:
        from rich.highlighter import JSONHighlighter
        from rich.text import Text

        self._live.stop()
        # highlighted as print_json does, but from chatcodec's own JSON text: print_json would
        # decode and re-encode it, turning the escapes back into raw controls and lone surrogates
        text = JSONHighlighter()(Text(terminal_json(to_json(message, indent=2))))
        text.no_wrap, text.overflow = True, None
        self._console.print(text, soft_wrap=True)

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
    if not is_terminal(out):
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
        parser: a fresh parser (its ``initial_events`` are shown first). A model's parser
            (``ChatCodec.get_response_parser``) ends at its end-of-sequence token: the message is
            shown then, without waiting for the rest of ``pieces`` (a live stdin that stays open).
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
            if getattr(parser, "ended", False):
                break  # a model's parser saw its end-of-sequence token: nothing after it counts
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
