"""The short path of a value scanner: chunks that only add text, taken without reading them.

Most chunks inside a tool call's arguments change nothing a scanner decides on: more characters of
a JSON string, of a key, of a number, a whitespace run between JSON tokens, an XML parameter's
value. A scanner whose current state is such a run says so with ``text_run()``: a
:data:`TextRun` ``(watch, path)``, where ``watch`` is the ``re`` sources of what the state watches
(a chunk in which none of them finds anything is plain in this state: the JSON reader's quote,
backslash and control characters inside a string, a terminator's first characters) and ``path``
is where the chunk's text is emitted (the content path of the open string the text goes to), or
``None`` when a plain chunk emits nothing (a key, a number, whitespace). ``None`` instead of a run:
the state has no short path, every chunk is fed.

A caller that finds nothing in a chunk with :func:`watch_search` of the run's sources may then
skip the scanner's ``feed`` and emit the text delta itself, provided it later hands the scanner
the skipped text with ``skip(text)`` (the chunks joined, before any other call on the scanner):
``skip`` leaves the scanner exactly as feeding those chunks would have, and their deltas are the
ones the caller emitted (``feed`` would have returned ``[("text", path, chunk)]``, or nothing). A
run is valid until the scanner's next ``feed`` or ``end`` (``skip`` leaves the state, and so the
run, as it was). The value stream (``value_stream.RegionValues``) asks for a run only after text
went to a string: asking after every chunk costs more on short arguments than it saves.

Sources combine: a scanner whose inner scanner reads a group (``x-findall``'s arguments) watches
its own terminator's sources and the inner scanner's; the caller compiles the union once per
combination (:func:`watch_search`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from chatcodec.response_templates.scanners.protocol import Path

__all__ = ["NOTHING", "SEARCHES", "ShortPathScanner", "TextRun", "watch_search"]

#: ``(watch, path)``: the ``re`` sources of what the state watches, and where plain text is emitted
#: (``None``: nowhere); see the module docstring.
TextRun = tuple[tuple[str, ...], "Path | None"]

#: The source of a watch that finds nothing anywhere: every chunk is plain in the state.
NOTHING = "(?!)"

#: The searches compiled so far, by their sources (read directly by callers on the per-chunk path).
SEARCHES: dict[tuple[str, ...], Callable[[str], re.Match[str] | None]] = {}
#: How many combinations are kept (a template has a handful; the cache starts over past this).
_KEPT = 512


class ShortPathScanner(Protocol):
    """A value scanner with a short path (see the module docstring)."""

    def text_run(self) -> TextRun | None:
        """The current state's run, or ``None`` (no short path now)."""
        ...

    def skip(self, text: str) -> None:
        """Take ``text``, plain chunks of the last :meth:`text_run`, as ``feed`` would have."""
        ...


def watch_search(watch: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """The ``search`` of the union of ``watch`` (compiled once per combination of sources).

    Args:
        watch: ``re`` pattern sources (each valid alone; none uses inline flags or numbered
            back-references, so their alternation finds something exactly where one of them does).

    Returns:
        The bound ``search`` of the compiled alternation.
    """
    search = SEARCHES.get(watch)
    if search is None:
        if len(SEARCHES) >= _KEPT:
            SEARCHES.clear()
        sources = [source for source in dict.fromkeys(watch) if source != NOTHING] or [NOTHING]
        search = SEARCHES[watch] = re.compile("|".join(f"(?:{source})" for source in sources)).search
    return search
