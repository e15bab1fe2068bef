"""The content-parser side of the partial-value protocol: what a value scanner is and emits.

A *value scanner* reads a region's text chunk by chunk, as the engine routes it, and says what is
already certain about the value the content parser will return at close (``docs/streaming_values.md``).
It emits *deltas* in *content paths* (keys and list indexes into the content parser's value; ``()``
is the value itself)::

    ("begin", path, "object" | "array" | "string")   a container or a string starts (empty so far)
    ("text",  path, "characters")                    appended to the string begun at path
    ("set",   path, value)                           the complete value at path
    ("end",   path, None)                            what was begun at path is complete

Rules every scanner keeps:

* **Certain, in order.** A delta is emitted only when every text that continues the text fed so far
  and that the content parser accepts gives a value with that delta in it: an unfinished number,
  literal, escape sequence or key is held back. Deltas come in document order (keys as written, list
  items in order), and within one container a new child begins only after the previous one ended.
* **Advisory.** The region's value still comes from the content parser at close; the engine
  completes what the deltas left open from that value (:mod:`.shadow`). So a scanner may stop at
  any point (*dead*: it emits nothing more) when the text is something it does not follow; it must
  never emit a delta that a successful parse contradicts.
* **Linear.** Each character is looked at a bounded number of times (no re-reading from the start
  of the region); held text is bounded by what is undecided.
* ``complete`` is ``None`` while the text fed so far may still be (part of) the value, and otherwise
  the offset in the region's text of the first character that cannot continue it: the value, and
  the layout after it (whitespace, separators), ended there. The engine closes a field that
  declares ``close_at_value_end`` at that offset (``value_end.py``).
* ``end()`` is called when the text is complete (nested scanners: the group or leaf ended); it
  returns what the end of the text decides (a number at the very end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

__all__ = ["Delta", "Path", "ScannerFactory", "ValueScanner"]

#: Keys (``str``) and list indexes (``int``) from a value's root to one of its parts.
Path = tuple[str | int, ...]
#: ``(op, path, payload)``: ``payload`` is the kind (begin), the text (text), the value (set) or
#: ``None`` (end).
Delta = tuple[str, Path, Any]


class ValueScanner(Protocol):
    """An incremental reader of one region's (or one nested part's) text; see the module docstring."""

    complete: int | None

    def feed(self, text: str) -> list[Delta]:
        """Read the next piece of text; return the deltas it makes certain, in order."""
        ...

    def end(self) -> list[Delta]:
        """The text is complete: return the deltas that decides (never raises)."""
        ...


#: ``content_args -> scanner``, or ``None`` when these arguments cannot be followed soundly.
ScannerFactory = Callable[[Mapping[str, Any]], "ValueScanner | None"]
