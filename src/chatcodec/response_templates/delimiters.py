"""Delimiters and matchers: where regions open and close, and which bytes must be held back.

A :class:`Delimiter` is one field's ``open``/``close`` (literals or a regex). A :class:`Matcher`
holds every delimiter watched in one parser state and is compiled once, when the template loads:
all explicit opens plus the implicit field's close while no region is open, or one field's close
while that field's region is open. ``Matcher.scan`` answers one question and never changes parser
state (h11's readers): given the unresolved buffer, is there a delimiter to commit now
(:class:`Commit`), or up to which index is the text certainly not part of a delimiter (an ``int``)?

Rules kept here (SPEC §1.2, §1.5):

* **Earliest, then longest, then opens before closes, then field name.**
* **Nothing is emitted and later retracted.** Text from the leftmost position where a delimiter
  could still match (a partial match, a regex match ending at the buffer edge that more input could
  extend, a literal that a longer literal of the same set could still become) is held back. Unlike
  the reference, a pending match *anywhere* before a complete one blocks it, so a chunk boundary can
  never make a shorter or later delimiter win (``["<t", "<tool>"]`` split after ``<to``).
* **One combined search per scan.** All delimiters of a state are alternatives of one regex; a
  second "probe" regex that can never complete finds the leftmost partial match only when a
  complete match was found (its result is memoised per buffer, so work stays linear).
* ``$`` means the end of the input (rewritten to ``\\Z`` unless the pattern turns on MULTILINE):
  Python's ``$`` also matches before a final newline, which a chunk boundary moves.
* A zero-width match at the very end of the input never commits (it would delimit nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

__all__ = [
    "WHITESPACE",
    "Commit",
    "Delimiter",
    "Matcher",
    "compile_pattern",
    "literal_delimiter",
    "regex_delimiter",
    "rewrite_dollar",
]

#: The characters of a whitespace run that a ``\s*``-style delimiter can keep absorbing.
WHITESPACE = " \t\n\r"

_WS_SAMPLES = (" " * 64, "\n" * 64, "\t" * 64, "\r\n" * 32, " \t\n\r" * 16)
_WS_CONTEXTS = ("", "x", " ", "\n", ">")
# Constructs whose meaning depends on group numbers or on other groups: such patterns are
# searched on their own instead of as alternatives of the combined regex.
_NOT_COMBINABLE = regex.compile(
    r"\\[1-9]|\\g<?[-+]?[0-9]|\(\?P[=>]|\(\?&|\(\?R\)|\(\?[-+]?[0-9]|\(\?\(|\(\?\|"
)
_MULTILINE_FLAG = regex.compile(r"\(\?[a-zA-Z]*m[a-zA-Z]*[):]")


def rewrite_dollar(source: str) -> str:
    """Replace every unescaped ``$`` outside a character class by ``\\Z`` (unless MULTILINE is on).

    Args:
        source: a template regex.

    Returns:
        The pattern with SPEC §1.2's meaning of ``$``: the end of the input, and nothing else.
    """
    if "$" not in source or _MULTILINE_FLAG.search(source):
        return source
    out: list[str] = []
    i, n, in_class = 0, len(source), False
    while i < n:
        char = source[i]
        if char == "\\":
            out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            out.append(char)
            i += 1
            if i < n and source[i] == "^":
                out.append("^")
                i += 1
            if i < n and source[i] == "]":
                out.append("]")
                i += 1
            continue
        elif char == "$":
            char = r"\Z"
        out.append(char)
        i += 1
    return "".join(out)


def compile_pattern(source: str) -> regex.Pattern[str]:
    """Compile a template regex: ``DOTALL``, no ``MULTILINE``, ``$`` as the end of the input.

    Raises:
        regex.error: the pattern is invalid.
    """
    return regex.compile(rewrite_dollar(source), regex.DOTALL)


@dataclass(frozen=True, slots=True)
class Delimiter:
    """One field's open or close delimiter.

    Attributes:
        field: the field name.
        is_open: ``True`` for an open, ``False`` for a close.
        pattern: the delimiter alone (literals are escaped and ordered longest first).
        literals: the literal alternatives, longest first; ``None`` for a regex delimiter.
        rank: the tie-break after position and length: opens before closes, then field name.
        can_extend: one literal is a prefix of another (``["<think>", "<think>\n"]``); a match of
            this delimiter that reaches the buffer edge then waits for one more character, as in
            the reference (a regex delimiter always does).
    """

    field: str
    is_open: bool
    pattern: regex.Pattern[str]
    literals: tuple[str, ...] | None
    rank: tuple[int, str]
    can_extend: bool = True


def literal_delimiter(field: str, is_open: bool, literals: list[str]) -> Delimiter:
    """A delimiter matching any of ``literals`` (non-empty strings; the longest wins at one position)."""
    ordered = tuple(sorted(dict.fromkeys(literals), key=len, reverse=True))
    pattern = regex.compile("|".join(regex.escape(s) for s in ordered), regex.DOTALL)
    can_extend = any(a != b and a.startswith(b) for a in ordered for b in ordered)
    return Delimiter(field, is_open, pattern, ordered, (0 if is_open else 1, field), can_extend)


def regex_delimiter(field: str, is_open: bool, source: str) -> Delimiter:
    """A delimiter matching the regex ``source``.

    Raises:
        regex.error: the pattern is invalid.
    """
    return Delimiter(field, is_open, compile_pattern(source), None, (0 if is_open else 1, field))


@dataclass(frozen=True, slots=True)
class Commit:
    """A delimiter that the engine can act on now: ``buffer[start:end]`` is the delimiter text."""

    delimiter: Delimiter
    start: int
    end: int
    captures: dict[str, str]


_PENDING, _NONE = -1, -2


def _literal_at(literals: tuple[str, ...], buf: str, q: int, eos: bool) -> int:
    """Length of the longest literal at ``q``, ``_PENDING`` if a longer one may still match, or ``_NONE``."""
    pending = False
    rest = len(buf) - q
    for literal in literals:
        if buf.startswith(literal, q):
            return _PENDING if pending else len(literal)
        if not eos and len(literal) > rest and literal.startswith(buf[q:]):
            pending = True
    return _PENDING if pending else _NONE


def _absorbs_whitespace(delimiter: Delimiter) -> bool:
    """Whether any whitespace run, in any context, is a (partial) match of ``delimiter`` at its start."""
    if delimiter.literals is not None:
        return False
    for context in _WS_CONTEXTS:
        for sample in _WS_SAMPLES:
            if delimiter.pattern.fullmatch(context + sample, len(context), partial=True) is None:
                return False
    return True


class Matcher:
    """Every delimiter watched in one parser state, compiled for one combined search.

    Attributes:
        delimiters: the watched delimiters.
        absorbs_whitespace: some delimiter partially matches every whitespace run (``\\s*</think>``),
            so a held whitespace tail stays held while only whitespace arrives (no rescans).
    """

    __slots__ = ("_combined", "_edge_wait", "_extenders", "_literal_owner", "_max_width", "_probe",
                 "_probes", "absorbs_whitespace", "delimiters")

    def __init__(self, delimiters: list[Delimiter]) -> None:
        self.delimiters = tuple(delimiters)
        self.absorbs_whitespace = any(_absorbs_whitespace(d) for d in self.delimiters)
        self._literal_owner: dict[str, Delimiter] | None = None
        self._extenders: dict[str, tuple[str, ...]] = {}
        self._max_width: int | None = None
        self._edge_wait: frozenset[str] = frozenset()
        self._probes: tuple[regex.Pattern[str], ...] = ()
        if all(d.literals is not None for d in self.delimiters):
            self._compile_literals()
        else:
            self._compile_mixed()

    def _compile_literals(self) -> None:
        pairs = sorted(
            ((lit, d) for d in self.delimiters for lit in d.literals or ()),
            key=lambda pair: (-len(pair[0]), pair[1].rank),
        )
        owner: dict[str, Delimiter] = {}
        for literal, delimiter in pairs:
            owner.setdefault(literal, delimiter)
        self._literal_owner = owner
        self._edge_wait = frozenset(lit for lit, d in pairs if d.can_extend)
        self._extenders = {
            lit: tuple(other for other in owner if len(other) > len(lit) and other.startswith(lit))
            for lit in owner
        }
        self._extenders = {lit: ext for lit, ext in self._extenders.items() if ext}
        self._max_width = max(len(lit) for lit in owner)
        alternation = "|".join(regex.escape(lit) for lit in owner)
        self._combined: regex.Pattern[str] | None = regex.compile(alternation, regex.DOTALL)
        self._probe: regex.Pattern[str] | None = regex.compile(f"(?:{alternation})(?!)", regex.DOTALL)

    def _compile_mixed(self) -> None:
        sources = [d.pattern.pattern for d in self.delimiters]
        if any(_NOT_COMBINABLE.search(source) for source in sources):
            # searched one by one (see _search_each); each probe keeps its own group numbers
            self._combined = self._probe = None
            self._probes = tuple(regex.compile(f"(?:{source})(?!)", regex.DOTALL) for source in sources)
            return
        alternation = "|".join(f"(?:{source})" for source in sources)
        self._combined = regex.compile(alternation, regex.DOTALL)
        self._probe = regex.compile(f"(?:{alternation})(?!)", regex.DOTALL)

    def scan(self, buf: str, pos: int, eos: bool, memo: dict[Matcher, int],
             block_empty: int = -1, block_empty_close: int = -1) -> Commit | int:
        """Find the delimiter to commit at or after ``pos``, or how far the text is safe to emit.

        Args:
            buf: the unresolved buffer (already-consumed context may precede ``pos``).
            pos: where unconsumed text starts.
            eos: the input is complete: nothing is partial, nothing can grow.
            memo: the leftmost partial match per matcher for this ``buf`` (owned by the caller).
            block_empty: a position where no zero-width match may commit (progress guard).
            block_empty_close: a position where a zero-width *close* may not commit (it would
                close an implicit region that holds nothing).

        Returns:
            A :class:`Commit`, or the index up to which ``buf`` is plain text (``len(buf)``: all of it).
        """
        n = len(buf)
        start = pos
        while True:
            found = self._search(buf, start, eos)
            if found is None:
                return n
            q, partial, literal = found
            if partial:
                return q
            if not eos:
                pending = self._leftmost_partial(buf, pos, q, memo)
                if pending < q:
                    return pending
            if q >= n:
                return n
            if literal is not None:
                return self._decide_literal(buf, q, literal, eos)
            outcome = self._decide(buf, q, eos, block_empty, block_empty_close)
            if outcome is not None:
                return outcome
            start = q + 1  # only blocked zero-width matches here: look further

    def _search(self, buf: str, start: int, eos: bool) -> tuple[int, bool, str | None] | None:
        if self._combined is None:
            return self._search_each(buf, start, eos)
        m = self._combined.search(buf, start, partial=not eos)
        if m is None:
            return None
        literal = m.group() if self._literal_owner is not None and not m.partial else None
        return m.start(), bool(m.partial), literal

    def _search_each(self, buf: str, start: int, eos: bool) -> tuple[int, bool, str | None] | None:
        complete: int | None = None
        partial: int | None = None
        for delimiter in self.delimiters:
            m = delimiter.pattern.search(buf, start, partial=not eos)
            if m is None:
                continue
            if m.partial:
                partial = m.start() if partial is None else min(partial, m.start())
            else:
                complete = m.start() if complete is None else min(complete, m.start())
        if complete is not None:
            return complete, False, None
        return (partial, True, None) if partial is not None else None

    def _leftmost_partial(self, buf: str, pos: int, q: int, memo: dict[Matcher, int]) -> int:
        """The leftmost start ``>= pos`` of a partial match (``len(buf)`` if none), memoised."""
        cached = memo.get(self)
        if cached is not None and cached >= pos:
            return cached
        n = len(buf)
        low = pos if self._max_width is None else max(pos, n - self._max_width + 1)
        if low > q:
            return n
        found = n
        for probe in (self._probe,) if self._probe is not None else self._probes:
            m = probe.search(buf, low, partial=True)
            if m is not None and m.partial:
                found = min(found, m.start())
        memo[self] = found
        return found

    def _decide_literal(self, buf: str, q: int, literal: str, eos: bool) -> Commit | int:
        if not eos:
            if q + len(literal) == len(buf) and literal in self._edge_wait:
                return q
            rest = buf[q:]
            for longer in self._extenders.get(literal, ()):
                if len(longer) > len(rest) and longer.startswith(rest):
                    return q
        assert self._literal_owner is not None
        return Commit(self._literal_owner[literal], q, q + len(literal), {})

    def _decide(self, buf: str, q: int, eos: bool, block_empty: int,
                block_empty_close: int) -> Commit | int | None:
        """Choose among every delimiter matching at ``q``; hold at ``q`` if any may still change."""
        n = len(buf)
        best: tuple[tuple[int, tuple[int, str]], Delimiter, int, Any] | None = None
        for delimiter in self.delimiters:
            match: Any = None
            if delimiter.literals is not None:
                length = _literal_at(delimiter.literals, buf, q, eos)
                if length == _PENDING:
                    return q
                if length == _NONE:
                    continue
                end = q + length
                if not eos and end == n and delimiter.can_extend:
                    return q
            else:
                match = delimiter.pattern.match(buf, q, partial=not eos)
                if match is None:
                    continue
                if match.partial:
                    return q
                end = match.end()
                if end == q and (q == block_empty or (q == block_empty_close and not delimiter.is_open)):
                    continue
                if not eos and end == n:
                    return q  # a regex match at the buffer edge may still grow
            key = (q - end, delimiter.rank)
            if best is None or key < best[0]:
                best = (key, delimiter, end, match)
        if best is None:
            return None
        _, delimiter, end, match = best
        captures = {} if match is None else {k: v for k, v in match.groupdict().items() if v is not None}
        return Commit(delimiter, q, end, captures)
