"""The value scanner of ``x-first``: stream what every parser still possible agrees on.

``x-first`` returns the value of the first of its parsers that accepts the whole text, so the
value is one of the values of the parsers whose scanners are not *refuted* (``json``,
``x-json-calls`` and ``python-call-list`` know when a text can never be valid for them; scanners
that merely stopped following do not). Each of those scanners' deltas is certain for its own
parser, so the deltas they all agree on (their common prefix, a string's text included up to
where they differ) are certain for ``x-first``: those go out. Once only one parser is left it
streams alone. A parser without a scanner agrees on nothing. So Python calls stream under
``[python-call-list, x-pythonic]`` (both read them alike), and Llama 4's JSON-or-Python calls
once the text shows Python calls (``[get_weather(`` is not JSON).

Once one parser is left and everything it emitted went out, its deltas pass straight through:
the merged copies of its deltas are no longer kept (a long string would otherwise be copied on
every feed, quadratic in its length).

``complete`` (for ``close_at_value_end``) is the ``complete`` of the first parser still possible:
``x-first`` returns that parser's value when it accepts the text, so where its value ends the
region's value ends. While that parser has no scanner, or its scanner merely stopped following,
the value's end is unknown (``None``).
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
        self._merged: list[list[Delta]] = [[] for _ in scanners]  # each parser's deltas, text merged
        self._entries = 0  # entries of the common prefix emitted whole (a text entry keeps what is not)
        self.complete: int | None = None
        self._ended_by: int | None = None  # the parser whose value end is ``complete``
        self._alone: int | None = None  # the one parser left, caught up: its deltas pass through

    def _live(self) -> list[int]:
        return [index for index, scanner in enumerate(self._scanners)
                if scanner is None or index == self._ended_by or not getattr(scanner, "refuted", False)]

    def feed(self, text: str) -> list[Delta]:
        alone = self._alone
        if alone is not None:
            scanner = self._scanners[alone]
            assert scanner is not None
            out = [] if getattr(scanner, "refuted", False) else scanner.feed(text)
            self._value_end()
            return out
        for index, scanner in enumerate(self._scanners):
            if scanner is not None and not getattr(scanner, "refuted", False):
                _merge(self._merged[index], scanner.feed(text))
        self._value_end()
        return self._caught_up(self._common())

    def end(self) -> list[Delta]:
        alone = self._alone
        if alone is not None:
            scanner = self._scanners[alone]
            assert scanner is not None
            out = [] if getattr(scanner, "refuted", False) else scanner.end()
            self._value_end()
            return out
        for index, scanner in enumerate(self._scanners):
            if scanner is not None and not getattr(scanner, "refuted", False):
                _merge(self._merged[index], scanner.end())
        self._value_end()
        return self._common()

    def _caught_up(self, out: list[Delta]) -> list[Delta]:
        """``out``; once one parser is left and all it emitted went out, its deltas pass through."""
        live = self._live()
        if len(live) != 1 or self._scanners[live[0]] is None:
            return out
        merged = self._merged[live[0]]
        k = self._entries
        if k == len(merged) or (k == len(merged) - 1 and merged[k][0] == "text" and not merged[k][2]):
            self._alone = live[0]
            self._merged = [[] for _ in self._scanners]
        return out

    def _value_end(self) -> None:
        """``complete`` is the first still possible parser's (see the module docstring).

        A scanner whose value is complete counts as possible here even when it calls itself
        refuted (``x-json-calls`` does once text follows its value: the whole text is then no
        longer calls, but the region ends at the value's end).
        """
        if self.complete is not None:
            return
        for index, scanner in enumerate(self._scanners):
            if scanner is None:
                return
            if scanner.complete is not None:
                self.complete, self._ended_by = scanner.complete, index
                return
            if not getattr(scanner, "refuted", False):
                return

    def _common(self) -> list[Delta]:
        """The deltas every parser still possible agrees on, beyond those emitted already."""
        live = self._live()
        if not live or any(self._scanners[index] is None for index in live):
            return []
        lists = [self._merged[index] for index in live]
        out: list[Delta] = []
        while True:
            k = self._entries
            if any(len(deltas) <= k for deltas in lists):
                return out
            first = lists[0][k]
            last = any(len(deltas) == k + 1 for deltas in lists)  # a text entry may still grow
            if first[0] == "text" and all(d[k][0] == "text" and d[k][1] == first[1] for d in lists):
                common = _common_prefix([d[k][2] for d in lists])
                if common:  # out it goes, and off the entries (they keep only what is not emitted)
                    out.append(("text", first[1], common))
                    for deltas in lists:
                        deltas[k] = ("text", first[1], deltas[k][2][len(common) :])
                if last or any(d[k][2] for d in lists):
                    return out
            elif all(d[k] == first for d in lists):
                out.append(first)
            else:
                return out
            self._entries = k + 1


def _merge(merged: list[Delta], deltas: list[Delta]) -> None:
    for delta in deltas:
        if delta[0] == "text" and merged and merged[-1][0] == "text" and merged[-1][1] == delta[1]:
            merged[-1] = ("text", delta[1], merged[-1][2] + delta[2])
        else:
            merged.append(delta)


def _common_prefix(texts: list[str]) -> str:
    """The longest prefix of all ``texts`` (linear in it: the entries hold only unemitted text)."""
    first = texts[0]
    size = min(len(text) for text in texts)
    for text in texts[1:]:
        if text.startswith(first[:size]):
            continue
        at = 0
        while at < size and text[at] == first[at]:
            at += 1
        size = at
    return first[:size]


def first_scanner(args: Mapping[str, Any]) -> FirstScanner | None:
    """The scanner of an ``x-first`` region (``None`` when none of its parsers has a scanner)."""
    from chatcodec.response_templates.scanners import scanner_for

    scanners = [scanner_for(spec.get("name", "text"), spec.get("args", {})) for spec in args["parsers"]]
    if all(scanner is None for scanner in scanners):
        return None
    return FirstScanner(scanners)
