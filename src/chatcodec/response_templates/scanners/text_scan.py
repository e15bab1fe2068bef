"""The value scanner of the ``text`` content parser (used where ``text`` parses a nested value).

A ``text`` *field* streams verbatim ``region_chunk`` events and needs no scanner; this one reads
the ``text`` values inside structured regions (an ``xml-inline`` tag's value, an ``x-findall``
group). The value is one string, begun at once. With ``strip`` (the default) leading whitespace is
dropped and a whitespace run is held until text follows it (at the end it is dropped); with
``"strip": "blank"`` the text is held until its first non-whitespace character (a value of only
whitespace is ``""``); with ``"strip": false`` everything streams as it comes. Whitespace is what
:meth:`str.strip` strips.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.text_run import NOTHING, TextRun

__all__ = ["TextScanner", "text_scanner"]

_BLANK = "blank"
#: The short path's runs (``scanners.text_run``): the text is emitted as it comes (nothing watched),
#: or, while ``strip`` may hold a whitespace run back, anything but printable ASCII other than the
#: space is watched (every character ``str.strip`` strips is among them).
_VERBATIM_RUN = ((NOTHING,), ())
_STRIPPED_RUN = (("[^!-~]",), ())


class TextScanner:
    """One string value (see the module docstring)."""

    def __init__(self, strip: Any = True) -> None:
        self._strip = strip
        self._started = False  # the begin delta went out
        self._seen = False  # a non-whitespace character arrived
        self._held: list[str] = []  # whitespace (or, for "blank", everything) not emitted yet
        self.complete: int | None = None

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if not self._started:
            self._started = True
            out.append(("begin", (), "string"))
        if not text:
            return out
        strip = self._strip
        if strip is False:
            out.append(("text", (), text))
            return out
        core = text.strip()
        if strip == _BLANK:
            if self._seen or core:
                out.append(("text", (), "".join(self._held) + text))
                self._held, self._seen = [], True
            else:
                self._held.append(text)
            return out
        if not core:
            if self._seen:
                self._held.append(text)
            return out
        if not self._seen:
            self._seen = True
            text = text.lstrip()
        cut = len(text.rstrip())
        out.append(("text", (), "".join(self._held) + text[:cut]))
        self._held = [text[cut:]] if cut < len(text) else []
        return out

    def text_run(self) -> TextRun | None:
        """The short path (``scanners.text_run``) once the string is begun and nothing is held:
        every chunk streams as it comes (``strip`` false, or ``"blank"`` after its first
        non-whitespace character), or, with ``strip``, a chunk without whitespace."""
        if not self._started or self._held:
            return None
        strip = self._strip
        if strip is False:
            return _VERBATIM_RUN
        if strip == _BLANK:
            return _VERBATIM_RUN if self._seen else None
        return _STRIPPED_RUN if self._seen else None

    def skip(self, text: str) -> None:
        """Take ``text``, plain chunks of the last :meth:`text_run`: nothing to keep (their text
        was emitted by the caller)."""

    def end(self) -> list[Delta]:
        out: list[Delta] = [] if self._started else [("begin", (), "string")]
        self._started = True
        out.append(("end", (), None))
        return out


def text_scanner(args: Mapping[str, Any]) -> TextScanner:
    """The scanner of a ``text`` value with these ``content_args``."""
    return TextScanner(args.get("strip", True))
