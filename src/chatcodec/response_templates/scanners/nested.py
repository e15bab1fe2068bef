"""A part of a value streamed on its own (one ``x-findall`` match, one ``xml-inline`` value).

Scanners that read their value in parts (a regex match at a time, a JSON call at a time) stream
each part through a :class:`Part`: its deltas are checked against what the part emitted before
(:class:`~.shadow.Shadow`) and placed under the part's path, and when the part is complete its
real value (computed by the content parser's own code for that part) finishes it, so the part
ends exactly as the parser reads it, whatever the part's own scanner managed to follow.
"""

from __future__ import annotations

from typing import Any

from chatcodec.response_templates.scanners.protocol import Delta, Path
from chatcodec.response_templates.scanners.shadow import Shadow

__all__ = ["Part"]


class Part:
    """One part of a value, at ``base``.

    Attributes:
        ok: ``False`` once a delta did not fit or the real value contradicted what was emitted
            (the scanner then stops).
    """

    __slots__ = ("_shadow", "base", "ok")

    def __init__(self, base: Path) -> None:
        self.base = base
        self.ok = True
        self._shadow = Shadow()

    def emit(self, deltas: list[Delta], out: list[Delta], under: Path = ()) -> None:
        """Record ``deltas`` (paths relative to ``base + under``) and append them to ``out``."""
        base = (*self.base, *under)
        for op, path, payload in deltas:
            if not self.ok:
                return
            if not self._shadow.apply((op, (*under, *path), payload)):
                self.ok = False
                return
            out.append((op, (*base, *path), payload))

    def finish(self, value: Any, out: list[Delta]) -> None:
        """The part is complete and its value is ``value``: append what finishes it."""
        if not self.ok:
            return
        consistent, rest = self._shadow.complete(value, self.base)
        if not consistent:
            self.ok = False
            return
        out += rest
