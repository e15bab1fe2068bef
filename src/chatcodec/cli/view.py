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

import functools
import json
import re
import time
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring as _string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from chatcodec.cli.protocols import StreamingParser, View

__all__ = [
    "EventLines",
    "PlainView",
    "RichView",
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


#: Most redraws of :class:`RichView`'s live panel per second (region boundaries always redraw).
REFRESH_PER_SECOND = 20
#: Characters of the open region :class:`RichView` draws live (the end of it; all of it once closed).
LIVE_TAIL_CHARS = 4000
#: Longest time :func:`play` lets shown text wait in the view's buffer before flushing it.
FLUSH_SECONDS = 0.05


#: Lone surrogates (half of a UTF-16 pair, which UTF-8 cannot encode).
_LONE_SURROGATE = "\ud800-\udfff"


@functools.cache
def _pattern(characters: str) -> re.Pattern[str]:
    """A character class, compiled on first use (most runs print none of these characters)."""
    return re.compile(f"[{characters}]")


def _unicode_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (they cannot be encoded as UTF-8).

    A JSON ``"\\ud800"`` escape decodes to a lone surrogate, which no UTF-8 stream can write; inside
    a JSON string the replacement is that same escape, so the output stays valid JSON.
    """
    try:
        text.encode("utf-8")  # fails exactly on a lone surrogate
    except UnicodeEncodeError:
        return _pattern(_LONE_SURROGATE).sub(_unicode_escape, text)
    return text


#: Characters that move or reorder what a terminal shows: bidi embeddings, overrides and isolates
#: (U+202A-U+202E, U+2066-U+2069: text after them is drawn in another order) and the line and
#: paragraph separators (U+2028, U+2029).
_LAYOUT = "\u2028-\u202e\u2066-\u2069"
#: What a terminal would obey rather than show: C0 controls but newline and tab, DEL, C1 controls,
#: and the layout characters above.
_CONTROL = f"\x00-\x08\x0b-\x1f\x7f-\x9f{_LAYOUT}"
#: What ``json.dumps`` leaves raw of those (it escapes C0 itself).
_JSON_CONTROL = f"\x7f-\x9f{_LAYOUT}"


def terminal_text(text: str) -> str:
    """``text`` as a terminal may show it: control characters written as ``\\xNN``, bidi controls
    and line/paragraph separators as ``\\uNNNN``.

    Model output can hold escape sequences (``ESC ] 0;title BEL`` sets the window title,
    ``ESC [2J`` clears the screen); on a terminal they are shown, never obeyed. Newline and tab
    are kept; lone surrogates become ``\\udXXX`` as in :func:`printable`.
    """
    return _pattern(_CONTROL).sub(_escape_control, printable(text))


def _escape_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_json(json_text: str) -> str:
    """JSON text as a terminal may show it: DEL, C1 controls, bidi controls and line/paragraph
    separators as ``\\uNNNN`` escapes.

    ``json.dumps`` already escapes C0 controls; the rest can only occur inside JSON strings, so the
    result is valid JSON with the same value.
    """
    return _pattern(_JSON_CONTROL).sub(_unicode_escape, json_text)


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


#: The keys of a ``region_chunk`` event, in the engine's order.
_CHUNK_KEYS = ["type", "field", "text", "dirty"]


class EventLines:
    """``--events``: one JSON object per line, then ``{"type": "message", "message": ...}``."""

    def __init__(self, out: TextIO, *, terminal: bool | None = None) -> None:
        self._out = out
        self._terminal = is_terminal(out) if terminal is None else terminal

    def _json(self, value: Any) -> str:
        text = to_json(value)
        return terminal_json(text) if self._terminal else text

    def on_event(self, event: dict[str, Any]) -> None:
        if list(event) == _CHUNK_KEYS and type(event["text"]) is str and type(event["field"]) is str:
            # the commonest event, written as json.dumps writes it, at a fraction of the cost
            text = printable(f'{{"type": "region_chunk", "field": {_string(event["field"])}, "text": '
                             f'{_string(event["text"])}, "dirty": {"true" if event["dirty"] else "false"}}}')
            self._out.write((terminal_json(text) if self._terminal else text) + "\n")
        else:
            self._out.write(self._json(event) + "\n")

    def flush(self) -> None:
        self._out.flush()

    def close(self, message: dict[str, Any]) -> None:
        self._out.write(self._json({"type": "message", "message": message}) + "\n")
        self._out.flush()

    def abort(self) -> None:
        self._out.flush()


class PlainView:
    """Regions as plain text, as they stream, then the message as JSON.

    A text region shows a ``[field]`` line and its text once it holds more than whitespace (a
    whitespace-only region shows nothing). A structured region (``dirty`` chunks: JSON, XML, tool
    calls) shows its ``[field]`` line when it starts and, when it closes, its parsed value on a
    ``=> ...`` line (or ``!! problem`` with ``errors="keep"``); its raw text is not repeated.
    On a terminal (``terminal``, by default ``out.isatty()``) control characters are shown, not
    obeyed (:func:`terminal_text`, :func:`terminal_json`). Text is written as it comes and reaches
    ``out`` at each :meth:`flush` (:func:`play` flushes at least every :data:`FLUSH_SECONDS`); every
    chunk costs the same whatever came before it (a region that starts with a long whitespace run
    too), so a stream of any length is shown in linear time.
    """

    def __init__(self, out: TextIO, *, terminal: bool | None = None) -> None:
        self._out = out
        self._terminal = is_terminal(out) if terminal is None else terminal
        self._at_line_start = True
        self._field = ""
        self._shown = False  # the [field] line of the current region is out
        self._dirty = False
        self._leading: list[str] = []  # whitespace a text region began with, held until text follows

    def _write(self, text: str) -> None:
        if text:
            if self._terminal:
                text = terminal_text(text)
            elif not text.isascii():
                text = printable(text)
            self._out.write(text)
            self._at_line_start = text[-1] == "\n"

    def _write_json(self, json_text: str) -> None:
        """Write JSON text (already printable): on a terminal with DEL and C1 controls escaped."""
        self._out.write(terminal_json(json_text) if self._terminal else json_text)
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
            self._field, self._shown, self._dirty, self._leading = event["field"], False, False, []
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
        elif not text or text.isspace():
            self._leading.append(text)  # no text yet: nothing to show, nothing to search again
        else:
            self._header()
            self._write(("".join(self._leading) + text).lstrip())
            self._leading = []

    def flush(self) -> None:
        """Send what was written to ``out``."""
        self._out.flush()

    def close(self, message: dict[str, Any]) -> None:
        self._end_line()
        self._write_json("\n" + format_message(message))
        self._out.flush()

    def abort(self) -> None:
        self._end_line()
        self._out.flush()


class _Panel:
    """One region as :class:`RichView` draws it: its chunks (never joined whole while it streams)."""

    __slots__ = ("dirty", "error", "name", "parts", "size", "value")

    def __init__(self, name: str, dirty: bool = False) -> None:
        self.name = name
        self.parts: list[str] = []
        self.size = 0  # characters in parts
        self.dirty = dirty
        self.value: str | None = None  # the parsed value as JSON, once a structured region closed
        self.error: str | None = None

    def tail(self, limit: int) -> tuple[str, bool]:
        """The last ``limit`` characters of the region's text (at most), and whether that is all."""
        taken: list[str] = []
        size = 0
        for part in reversed(self.parts):
            taken.append(part)
            size += len(part)
            if size >= limit:
                break
        text = "".join(reversed(taken))
        return text[-limit:], len(text) <= limit and size == self.size


class RichView:
    """Regions drawn live on a terminal with ``rich``.

    The region being written is drawn as a panel, updated at most :data:`REFRESH_PER_SECOND` times
    a second and showing only its last :data:`LIVE_TAIL_CHARS` characters; when it closes it is
    printed once above the live panel, in full (a title rule, then its text), and is never drawn
    again. So each chunk costs the same whatever came before, and a long output streams in linear
    time. Text regions show their text (none while it is only whitespace); structured regions show
    their raw text dimmed while it streams, then ``=> `` and the parsed value when they close.
    Control characters are shown, not obeyed (:func:`terminal_text`, :func:`terminal_json`): the
    console is a terminal.
    """

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self._console = console if console is not None else Console()
        self._current: _Panel | None = None
        self._drawn_at = 0.0
        self._live = Live(self._render(), console=self._console, auto_refresh=False, transient=True)
        self._live.start()

    @staticmethod
    def _body(panel: _Panel, raw: str, whole: bool) -> Any:
        """What a panel shows, or ``None`` for a region that holds only whitespace (yet)."""
        from rich.text import Text

        raw = terminal_text(raw if whole else "..." + raw)
        if panel.error is not None:
            return Text(raw, style="dim") + Text(f"\n!! {terminal_text(panel.error)}", style="bold red")
        if panel.value is not None:
            return Text(f"=> {panel.value}", style="bold")
        if panel.dirty:
            return Text(raw, style="dim")
        return Text(raw.strip("\n")) if raw.strip() else None

    def _render(self) -> Any:
        from rich.panel import Panel
        from rich.text import Text

        panel = self._current
        body = None if panel is None else self._body(panel, *panel.tail(LIVE_TAIL_CHARS))
        if panel is None or body is None:
            return Text("waiting for output...", style="dim")
        return Panel(body, title=panel.name, title_align="left", border_style=_border(panel))

    def _refresh(self, now: bool = False) -> None:
        clock = time.monotonic()
        if now or clock - self._drawn_at >= 1 / REFRESH_PER_SECOND:
            self._drawn_at = clock
            self._live.update(self._render(), refresh=True)

    def _finish(self) -> None:
        """Print the current region once, in full, above the live panel."""
        from rich.rule import Rule

        panel, self._current = self._current, None
        if panel is None:
            return
        body = self._body(panel, "".join(panel.parts), True)
        if body is not None:
            self._live.console.print(Rule(panel.name, align="left", style=_border(panel)))
            self._live.console.print(body, soft_wrap=True)

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "region_open":
            self._finish()
            self._current = _Panel(event["field"])
            self._refresh(now=True)
            return
        panel = self._current
        if panel is None:
            return
        if kind == "region_chunk":
            panel.parts.append(event["text"])
            panel.size += len(event["text"])
            panel.dirty = panel.dirty or event["dirty"]
            self._refresh()
        elif kind == "region_close":
            if "error" in event:
                panel.error = event["error"]["error"]
            elif panel.dirty or not isinstance(event["value"], str):
                panel.dirty, panel.value = True, terminal_json(to_json(event["value"], indent=2))
            self._finish()
            self._refresh(now=True)

    def flush(self) -> None:
        self._refresh(now=True)

    def close(self, message: dict[str, Any]) -> None:
        from rich.highlighter import JSONHighlighter
        from rich.text import Text

        self._finish()
        self._live.stop()
        # highlighted as print_json does, but from chatcodec's own JSON text: print_json would
        # decode and re-encode it, turning the escapes back into raw controls and lone surrogates
        text = JSONHighlighter()(Text(terminal_json(to_json(message, indent=2))))
        text.no_wrap, text.overflow = True, None
        self._console.print(text, soft_wrap=True)

    def abort(self) -> None:
        self._finish()
        self._live.stop()


def _border(panel: _Panel) -> str:
    return "yellow" if panel.dirty else "cyan"


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


def chunks(text: str, size: int) -> Iterator[str]:
    """Split ``text`` into pieces of ``size`` characters, the way a token stream arrives.

    Args:
        text: the whole output.
        size: characters per piece (at least 1).

    Yields:
        The pieces, in order (none for empty text), one at a time: a long output split into small
        pieces is never held as a list of them (about 60 bytes per piece).
    """
    for start in range(0, len(text), size):
        yield text[start : start + size]


def play(parser: StreamingParser, pieces: Iterable[str], view: View, delay: float = 0.0) -> dict[str, Any]:
    """Feed ``pieces`` to a streaming ``parser`` and show every event in ``view``.

    Args:
        parser: a fresh parser (its ``initial_events`` are shown first). A model's parser
            (``ChatCodec.get_response_parser``) ends at its end-of-sequence token: the message is
            shown then, without waiting for the rest of ``pieces`` (a live stdin that stays open).
        pieces: the output, in the pieces it arrives in. An empty piece says that the input may
            pause here (a live stdin before its next read): what was shown so far is flushed.
            Otherwise the view is flushed at least every :data:`FLUSH_SECONDS`, not after every
            piece, so showing a long output costs little more than parsing it.
        view: where the events go; closed with the final message.
        delay: seconds to pause after each piece (to watch a live view); the view is flushed first.

    Returns:
        The parsed message.

    Raises:
        ResponseParseError: the output cannot be parsed (strict mode); the view is aborted first,
            as it is for any other error.
    """
    flushed = time.monotonic()
    try:
        for event in parser.initial_events:
            view.on_event(event)
        for piece in pieces:
            for event in parser.feed(piece):
                view.on_event(event)
            if parser.ended:
                break  # the parser saw its end-of-sequence token: nothing after it counts
            if delay:
                view.flush()
                time.sleep(delay)
            elif not piece or time.monotonic() - flushed >= FLUSH_SECONDS:
                view.flush()
                flushed = time.monotonic()
        message, events = parser.finalize()
        for event in events:
            view.on_event(event)
    except BaseException:
        view.abort()
        raise
    view.close(message)
    return message
