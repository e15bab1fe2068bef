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

    __slots__ = ("_run", "_shadow", "base", "ok")

    def __init__(self, base: Path) -> None:
        self.base = base
        self.ok = True
        self._shadow = Shadow()
        #: after a text delta, and nothing else since: (its path as given, ``under``, the string's
        #: recorded parts, its full path), so more text there is recorded without the shadow's checks
        self._run: tuple[Path, Path, list[str], Path] | None = None

    def emit(self, deltas: list[Delta], out: list[Delta], under: Path = ()) -> None:
        """Record ``deltas`` (paths relative to ``base + under``) and append them to ``out``."""
        if not deltas:  # most chunks inside a key or a held escape: nothing to place
            return
        run = self._run
        if run is not None and len(deltas) == 1:
            op, path, payload = deltas[0]
            if op == "text" and path == run[0] and under == run[1] and type(payload) is str:
                # more text of the string the last delta wrote to: it is still open (only text
                # came since), so the shadow would accept it
                run[2].append(payload)
                out.append((op, run[3], payload))
                return
        self._run = None
        base = (*self.base, *under)
        shadow = self._shadow
        for op, path, payload in deltas:
            if not self.ok:
                return
            inner = (*under, *path)
            if not shadow.apply((op, inner, payload)):
                self.ok = False
                return
            full = (*base, *path)
            out.append((op, full, payload))
            if op == "text":
                parts = shadow.open_string(inner)
                self._run = None if parts is None else (path, under, parts, full)
            else:
                self._run = None

    def finish(self, value: Any, out: list[Delta]) -> None:
        """The part is complete and its value is ``value``: append what finishes it."""
        self._run = None
        if not self.ok:
            return
        consistent, rest = self._shadow.complete(value, self.base)
        if not consistent:
            self.ok = False
            return
        out += rest
