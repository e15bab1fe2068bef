"""The value scanner of ``x-first``: stream a parser's value once it is the only one left.

``x-first`` returns the value of the first of its parsers that accepts the whole text. While
several could still accept it, no delta is certain: the one that wins may read the text
differently. So every parser's scanner reads the text, their deltas are kept, and once all but
one of them are *refuted* (their scanner knows the text can never be valid for them: ``json``
and ``x-json-calls`` know it, scanners that merely stopped following do not), the remaining one's
kept deltas go out and it streams from then on. Until then nothing is emitted, and if that never
happens the value arrives whole at close. Llama 4's JSON-or-Python calls stream as soon as the
text shows Python calls (``[get_weather(`` is not JSON); DeepSeek V3.2's parameters stream once
they show DSML tags rather than JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.scanners.protocol import Delta, ValueScanner

__all__ = ["FirstScanner", "first_scanner"]


class FirstScanner:
    """See the module docstring."""

    def __init__(self, scanners: list[ValueScanner | None]) -> None:
        self._scanners = scanners
        self._kept: list[list[Delta]] = [[] for _ in scanners]
        self._chosen: int | None = None
        self.complete: int | None = None

    def _live(self) -> list[int]:
        return [index for index, scanner in enumerate(self._scanners)
                if scanner is None or not getattr(scanner, "refuted", False)]

    def feed(self, text: str) -> list[Delta]:
        chosen = self._chosen
        if chosen is not None:
            scanner = self._scanners[chosen]
            assert scanner is not None
            out = scanner.feed(text)
            self.complete = scanner.complete
            return out
        for index, scanner in enumerate(self._scanners):
            if scanner is not None and not getattr(scanner, "refuted", False):
                self._kept[index] += scanner.feed(text)
        return self._choose()

    def _choose(self) -> list[Delta]:
        live = self._live()
        if len(live) != 1 or self._scanners[live[0]] is None:
            return []
        self._chosen = live[0]
        out, self._kept = self._kept[live[0]], []
        self.complete = self._scanners[live[0]].complete  # type: ignore[union-attr]
        return out

    def end(self) -> list[Delta]:
        if self._chosen is None:
            return []
        scanner = self._scanners[self._chosen]
        assert scanner is not None
        return scanner.end()


def first_scanner(args: Mapping[str, Any]) -> FirstScanner | None:
    """The scanner of an ``x-first`` region (``None`` when none of its parsers has a scanner)."""
    from chatcodec.response_templates.scanners import scanner_for

    scanners = [scanner_for(spec.get("name", "text"), spec.get("args", {})) for spec in args["parsers"]]
    if all(scanner is None for scanner in scanners):
        return None
    return FirstScanner(scanners)
