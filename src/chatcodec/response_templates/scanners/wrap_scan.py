"""The value scanner of ``x-wrap``: the object begins at once, its one string as the text comes.

Until the text shows its lead (after leading whitespace), nothing but the object's ``begin`` is
certain: the text is kept. Then the key's string begins and every later piece of text is appended
as it arrives. A text that does not begin with the lead stops the scanner (the parser refuses it).
The value runs to the region's end: ``complete`` stays ``None``, and ``end()`` closes the string
and the object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.scanners.protocol import Delta

__all__ = ["WrapScanner", "wrap_scanner"]


class WrapScanner:
    """See the module docstring."""

    __slots__ = ("_dead", "_kept", "_key", "_lead", "_started", "_streaming", "complete")

    def __init__(self, key: str, lead: str) -> None:
        self._key = key
        self._lead = lead
        self._kept = ""  # text before the lead was seen whole
        self._started = False
        self._streaming = False  # the lead was read: text goes out as it comes
        self._dead = False
        self.complete: int | None = None

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if not self._started:
            self._started = True
            out.append(("begin", (), "object"))
        if self._dead:
            return out
        if self._streaming:
            if text:
                out.append(("text", (self._key,), text))
            return out
        kept = self._kept + text
        body = kept.lstrip()
        if not body or len(body) < len(self._lead):  # only whitespace, or the lead may still come
            if not self._lead.startswith(body):
                self._dead = True
            else:
                self._kept = kept
            return out
        self._kept = ""
        if not body.startswith(self._lead):
            self._dead = True
            return out
        self._streaming = True
        out.append(("begin", (self._key,), "string"))
        rest = body[len(self._lead) :]
        if rest:
            out.append(("text", (self._key,), rest))
        return out

    def end(self) -> list[Delta]:
        out: list[Delta] = [] if self._started else [("begin", (), "object")]
        self._started = True
        if self._streaming:
            out += [("end", (self._key,), None), ("end", (), None)]
        return out


def wrap_scanner(args: Mapping[str, Any]) -> WrapScanner:
    """The scanner of an ``x-wrap`` region."""
    return WrapScanner(args["key"], args.get("lead", ""))
