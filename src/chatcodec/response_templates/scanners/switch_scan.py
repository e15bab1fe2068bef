"""The value scanner of ``x-switch``: the chosen case's scanner, once the text's lead decides it.

Until the first non-space characters settle which case reads the region
(:func:`~chatcodec.response_templates.ext_switch.choose_case`), the text is kept and nothing is
emitted: no case's value is certain yet. Once a case is chosen, its parser's scanner reads the kept
text and everything after it, and its deltas, ``complete``, ``held`` and ``refuted`` are this
scanner's (the text is the same, so its offsets are the region's). A text that no case can begin
is refuted; a case whose parser has no scanner streams nothing (its value arrives at close), and
its value's end is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.object_cache import ObjectCache
from chatcodec.response_templates.ext_switch import choose_case
from chatcodec.response_templates.scanners.protocol import Delta, ScannerFactory, ValueScanner
from chatcodec.response_templates.scanners.text_run import TextRun

__all__ = ["SwitchScanner", "switch_scanner"]



class SwitchScanner:
    """See the module docstring."""

    __slots__ = ("_cases", "_chosen", "_holds", "_kept", "_refuted", "_stopped", "complete", "held")

    def __init__(self, cases: _Cases) -> None:
        self._cases = cases
        self._kept = ""  # the text read before the case was decided
        self._chosen: ValueScanner | None = None
        self._refuted = False  # no case can begin the text
        self._stopped = False  # decided, but not followed: refuted, or the case has no scanner
        self.complete: int | None = None  # the chosen case's value end (``None`` before the choice)
        self.held = 0  # what the chosen case's scanner has read but not decided on
        self._holds = False  # the chosen case's scanner says what it holds

    @property
    def refuted(self) -> bool:
        """No case begins the text, or the chosen case's scanner says its parser cannot read it."""
        chosen = self._chosen
        if chosen is None:
            return self._refuted
        return bool(getattr(chosen, "refuted", False))

    def feed(self, text: str) -> list[Delta]:
        chosen = self._chosen
        if chosen is not None:
            out = chosen.feed(text)
            self.complete = chosen.complete
            if self._holds:
                self.held = chosen.held  # type: ignore[attr-defined]
            return out
        if self._stopped:
            return []
        self._kept += text
        return self._decide(final=False)

    def text_run(self) -> TextRun | None:
        """The chosen case's scanner's short path (``scanners.text_run``), once there is one."""
        run = getattr(self._chosen, "text_run", None)
        return run() if run is not None else None

    def skip(self, text: str) -> None:
        """Take ``text``, plain chunks of the last :meth:`text_run`: the chosen case's scanner does
        (a run changes neither its value's end nor what it holds)."""
        self._chosen.skip(text)  # type: ignore[union-attr]

    def end(self) -> list[Delta]:
        out = self._decide(final=True) if self._chosen is None and not self._stopped else []
        chosen = self._chosen
        if chosen is None:
            return out
        out += chosen.end()
        self.complete, self.held = chosen.complete, 0
        return out

    def _decide(self, final: bool) -> list[Delta]:
        leads, factories = self._cases
        index = choose_case(leads, self._kept, final)
        if index is None:
            return []
        kept, self._kept = self._kept, ""
        self._stopped = True
        if index < 0:
            self._refuted = True
            return []
        factory, args = factories[index]
        chosen = None if factory is None else factory(args)
        if chosen is None:  # the case streams nothing: followed no further, but not refuted
            return []
        self._chosen, self._holds = chosen, hasattr(chosen, "held")
        out = chosen.feed(kept)
        self.complete = chosen.complete
        if self._holds:
            self.held = chosen.held  # type: ignore[attr-defined]
        return out


#: The cases of one ``x-switch`` field: their leads, and each parser's scanner factory and arguments.
_Cases = tuple[list[str], list[tuple[ScannerFactory | None, Mapping[str, Any]]]]
#: Per ``content_args`` (the compiled field's, by identity): whether any case streams, and the cases,
#: worked out once rather than at every region's open.
_CASES: ObjectCache[tuple[bool, _Cases]] = ObjectCache()


def switch_scanner(args: Mapping[str, Any]) -> SwitchScanner | None:
    """The scanner of an ``x-switch`` region (``None`` when no case's parser has a scanner)."""
    entry = _CASES.get(args)
    if entry is None:
        from chatcodec.response_templates.scanners import factory_for, has_scanner

        specs = [case["parser"] for case in args["cases"]]
        streams = any(has_scanner(spec.get("name", "text"), spec.get("args", {})) for spec in specs)
        factories = [(factory_for(spec.get("name", "text")), spec.get("args", {})) for spec in specs]
        entry = _CASES.put(args, (streams, ([case["lead"] for case in args["cases"]], factories)))
    streams, cases = entry
    return SwitchScanner(cases) if streams else None
