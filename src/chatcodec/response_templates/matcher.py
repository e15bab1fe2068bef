"""Matchers: every delimiter watched in one parser state, searched together.

A matcher is compiled once per state when the template loads: all explicit opens plus the
implicit field's close while no region is open (OUTSIDE), or one field's close while its region
is open (INSIDE). ``scan`` answers one question and never changes parser state (h11's readers):
is there a delimiter to commit now (:class:`Commit`), or up to which index is the text certainly
not part of a delimiter (an ``int``; ``len(buf)`` means all of it)?

Rules kept here (SPEC §1.2, §1.5):

* **Earliest, then longest, then opens before closes, then field name.**
* **Nothing is emitted and later retracted.** Text is held back from the leftmost position where a
  delimiter could still match: a partial match, a regex match reaching the buffer edge, a regex
  match that a higher-priority alternative could still replace (an optional tail cut off by the
  chunk boundary: ``[TOOL_CALLS]read`` then ``[ARGS]``), a regex match ending before the buffer
  edge that leans on it (``(?=\\n?\\Z)`` on ``ab\\n``: transformers 5.24's finality rule), a
  literal that a longer literal of the same set could still become. Unlike the reference, a
  pending match *anywhere* before a complete one holds it back, so no chunk boundary can make a
  shorter or later delimiter win (``["<t", "<tool>"]`` split after ``<to``).
* **One combined search per chunk.** :class:`LiteralMatcher` finds complete literals with one
  search, and pending literal prefixes with a second one over the last few characters of the
  buffer. :class:`RegexMatcher` runs one combined search for complete matches; the costly
  partial-match search runs only from the first character that can start a delimiter, and its
  result is memoised per buffer.
* A zero-width match at the very end of the input never commits (it would delimit nothing).
* **Bounded time** (:mod:`~chatcodec.response_templates.backtracking`). A :class:`RegexMatcher`
  whose delimiters are all proved linear searches at most ``UNTIMED_SPAN`` characters without
  the clock; any other search runs with ``REGEX_TIMEOUT`` (read at each search) and raises
  :class:`~chatcodec.response_templates.backtracking.RegexTimeout` naming the delimiters' JSON
  paths. Literal states never backtrack and never read the clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import regex

from chatcodec.response_templates import backtracking
from chatcodec.response_templates.backtracking import UNTIMED_SPAN, RegexTimeout
from chatcodec.response_templates.delimiters import (
    RUN_WHITESPACE,
    Delimiter,
    absorbed_whitespace,
    after_whitespace,
    after_whitespace_then,
    alphabet,
    first_chars,
)
from chatcodec.response_templates.lazy_pattern import LazyPattern
from chatcodec.response_templates.lookbehind import LOOKBEHIND_CONTEXT
from chatcodec.response_templates.whitespace import run_guard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Commit", "LiteralMatcher", "Matcher", "RegexMatcher", "build_matcher", "path"]

# Constructs whose meaning depends on group numbers or on other groups: a pattern using them is
# searched on its own instead of as an alternative of the combined regex.
_NOT_COMBINABLE = LazyPattern(
    r"\\[1-9]|\\g<?[-+]?[0-9]|\(\?P[=>]|\(\?&|\(\?R\)|\(\?[-+]?[0-9]|\(\?\(|\(\?\|", standard=True
)


class Commit:
    """A delimiter the engine can act on now: ``buffer[start:end]`` is the delimiter's text.

    Made once per delimiter found and read once (a plain class: not frozen, as setting each field
    through ``object.__setattr__`` doubles the cost of making one on the per-region path, and no
    dataclass, whose import and generated methods cost every start).
    """

    __slots__ = ("captures", "delimiter", "end", "start")

    def __init__(self, delimiter: Delimiter, start: int, end: int, captures: dict[str, str]) -> None:
        self.delimiter = delimiter
        self.start = start
        self.end = end
        self.captures = captures

    def __repr__(self) -> str:
        return f"Commit({self.delimiter!r}, {self.start}, {self.end}, {self.captures!r})"


class LiteralMatcher:
    """A state whose delimiters are all literals: one search per chunk, no partial matching.

    Attributes:
        delimiters: the watched delimiters.
        absorbed: always ``""`` (literals never absorb a whitespace run).
        quiet: the first characters of the literals: text without any of them, fed when no text is
            held back, is plain text whole (the engine's fast path, no scan). A pattern of the
            standard ``re`` module: for a character class it searches a short chunk in about half
            the time of ``regex``, and this search runs on nearly every chunk.
    """

    __slots__ = ("_complete", "_edge_wait", "_extenders", "_owner", "_prefixes", "_reach", "absorbed",
                 "delimiters", "quiet")

    def __init__(self, delimiters: Iterable[Delimiter]) -> None:
        self.delimiters = tuple(delimiters)
        self.absorbed = ""
        pairs = sorted(((lit, d) for d in self.delimiters for lit in d.literals or ()),
                       key=lambda pair: (-len(pair[0]), pair[1].rank))
        self._owner: dict[str, Delimiter] = {}
        for literal, delimiter in pairs:
            self._owner.setdefault(literal, delimiter)
        #: literals that wait at the buffer edge because a literal of their set extends another
        self._edge_wait = frozenset(lit for lit, d in pairs if d.can_extend)
        self._extenders = {
            lit: longer for lit in self._owner
            if (longer := tuple(o for o in self._owner if len(o) > len(lit) and o.startswith(lit)))
        }
        # longest first: at one position the longest literal wins. The standard ``re`` module: a
        # search for an alternation of literals takes about two thirds of ``regex``'s time.
        self._complete = re.compile("|".join(re.escape(lit) for lit in self._owner))
        self.quiet: re.Pattern[str] | None = re.compile(
            "[" + re.escape("".join(sorted({lit[0] for lit in self._owner}))) + "]")
        #: the starts of literals (a literal cut off by the end of the buffer may be one of them)
        self._prefixes = frozenset(lit[:i] for lit in self._owner for i in range(1, len(lit)))
        self._reach = max(map(len, self._owner)) - 1  # how far from the end such a start can be

    def scan(self, buf: str, pos: int, eos: bool, memo: dict[Any, int],
             zero_width: frozenset[Delimiter] = frozenset(), vacant: bool = False) -> Commit | int:
        """Find the literal to commit at or after ``pos``, or how far the text is plain text.

        Args:
            buf, pos, eos: as for :meth:`RegexMatcher.scan`.
            memo, zero_width, vacant: accepted for the common signature; literals need none of them
                (a literal is never partial-matched by regex and never zero-width).

        Returns:
            A :class:`Commit`, or the index up to which ``buf`` is plain text.
        """
        if eos:
            m = self._complete.search(buf, pos)
            if m is None:
                return len(buf)
            return Commit(self._owner[m.group()], m.start(), m.end(), {})
        m = self._complete.search(buf, pos)
        edge = len(buf) - self._reach  # the first place a cut-off literal can start
        if m is None or m.start() >= edge:
            # a literal cut off by the end of the buffer, before the complete one (if any), holds
            # the text back from where it starts: two searches (one over the last few characters)
            # instead of one that tries every cut-off start at every position of the text
            start = self._cut_off(buf, max(pos, edge), len(buf) if m is None else m.start())
            if start >= 0:
                return start  # a literal may be starting here
            if m is None:
                return len(buf)
        q: int = m.start()
        literal, end = m.group(), m.end()
        if end == len(buf) and literal in self._edge_wait:
            return q
        longer = self._extenders.get(literal)
        if longer is not None:
            rest = buf[q:]
            if any(len(other) > len(rest) and other.startswith(rest) for other in longer):
                return q
        return Commit(self._owner[literal], q, end, {})

    def holds(self, buf: str, pos: int, complete: bool = True) -> bool:
        """Whether :meth:`scan` (``eos`` false) would answer ``pos``, told without its searches:
        ``buf[pos:]`` is a literal cut off by the end of the buffer and no literal of its own.

        ``False`` means only that this test cannot tell (then :meth:`scan` must run). A literal's
        start is never further than the longest literal from the end, where :meth:`scan` looks
        for one, so the cut-off start at ``pos`` is what it answers. ``complete`` is accepted for
        the common signature (a literal's test needs no search).
        """
        rest = buf[pos:]
        return rest in self._prefixes and rest not in self._owner

    def _cut_off(self, buf: str, start: int, stop: int) -> int:
        """The first index in ``[start, stop)`` from which the rest of ``buf`` is the start of a
        literal (cut off by the end of the buffer), or -1."""
        first = self.quiet
        assert first is not None
        prefixes = self._prefixes
        while (m := first.search(buf, start, stop)) is not None:
            k = m.start()
            if buf[k:] in prefixes:
                return k
            start = k + 1
        return -1


class RegexMatcher:
    """A state with at least one regex delimiter.

    Attributes:
        delimiters: the watched delimiters.
        absorbed: the whitespace characters that some delimiter keeps absorbing while pending
            (``\\s*</think>``); a held run of them stays held while only they arrive.
        quiet: whether a delimiter could start somewhere in a text (``None``: nearly anywhere):
            text in which it finds nothing, fed when no text is held back, is plain text whole (the
            engine's fast path). It only answers whether (:func:`_quiet`), not where.
    """

    __slots__ = ("_barrier", "_candidate_group", "_combined", "_prefilter", "_probes", "_quick", "_searchers",
                 "_untimed", "absorbed", "delimiters", "quiet", "suspects")

    def __init__(self, delimiters: Iterable[Delimiter]) -> None:
        self.delimiters = tuple(delimiters)
        regexes = [d for d in self.delimiters if d.literals is None]
        #: searches of at most this many characters run without the clock (-1: none does)
        self._untimed = UNTIMED_SPAN if all(d.linear for d in regexes) else -1
        #: the JSON paths named when a search runs out of time: the unproved patterns first
        self.suspects = tuple(path(d) for d in sorted(regexes, key=lambda d: d.linear))
        self.absorbed = max((absorbed_whitespace(d) for d in self.delimiters), key=len)
        # every search skips the starts inside whitespace runs that cannot be leftmost (whitespace.py)
        sources = [f"{run_guard(d)}(?:{d.pattern.pattern})" for d in self.delimiters]
        self._combined: regex.Pattern[str] | None = None
        self._searchers: tuple[regex.Pattern[str], ...] = ()
        if any(_NOT_COMBINABLE.search(d.pattern.pattern) for d in self.delimiters):
            # searched one by one: each keeps its own group numbers
            self._probes = tuple(regex.compile(f"(?:{s})(?!)", regex.DOTALL) for s in sources)
            self._searchers = tuple(regex.compile(s, regex.DOTALL) for s in sources)
        else:
            alternation = "|".join(f"(?:{s})" for s in sources)
            self._combined = regex.compile(alternation, regex.DOTALL)
            self._probes = (regex.compile(f"(?:{alternation})(?!)", regex.DOTALL),)
        self._prefilter = _candidates(self.delimiters)
        self.quiet = _quiet(self.delimiters) if self._prefilter is not None else None
        self._quick: regex.Pattern[str] | None = None
        self._candidate_group = -1
        if self._prefilter is not None and self._combined is not None:
            # a complete match, or the first place where one could start
            self._quick = regex.compile(f"{self._combined.pattern}|({self._prefilter.pattern})", regex.DOTALL)
            self._candidate_group = self._quick.groups
        # the last ASCII character that no delimiter can contain: no partial match starts before it
        alphabets = [alphabet(d) for d in self.delimiters]
        self._barrier: regex.Pattern[str] | None = None
        if all(a is not None for a in alphabets):
            allowed = "".join(sorted(set().union(*(a for a in alphabets if a is not None))))
            self._barrier = regex.compile(f"(?r)[^{regex.escape(allowed)}\\x80-\\U0010FFFF]")

    def scan(self, buf: str, pos: int, eos: bool, memo: dict[Any, int],
             zero_width: frozenset[Delimiter] = frozenset(), vacant: bool = False) -> Commit | int:
        """Find the delimiter to commit at or after ``pos``, or how far the text is plain text.

        Args:
            buf: the unresolved buffer (already-consumed context may precede ``pos``).
            pos: where unconsumed text starts.
            eos: the input is complete: nothing is partial, nothing can grow.
            memo: the leftmost partial match per matcher for this ``buf`` (owned by the caller).
            zero_width: the delimiters that already committed zero-width at ``pos``: none of them
                may commit zero-width there again (progress guard: a field whose open and close
                are the same look-ahead would otherwise reopen forever); others may, so a
                zero-width close can be followed by another field's zero-width open.
            vacant: the implicit region holds no text yet: a zero-width *close* at ``pos`` would
                close nothing, so it does not count.

        Returns:
            A :class:`Commit`, or the index up to which ``buf`` is plain text.
        """
        block_empty_close = pos if vacant else -1
        n = len(buf)
        start = pos
        timeout = None if n - pos <= self._untimed else backtracking.REGEX_TIMEOUT
        quick = self._quick
        try:
            if quick is not None and not eos:
                m = quick.search(buf, pos) if timeout is None else quick.search(buf, pos, None, None, False,
                                                                                timeout)
                if m is None:
                    return n  # no delimiter can start anywhere in the text
                if m.lastindex != self._candidate_group:
                    # a complete match, and no delimiter could start before it
                    outcome = self._decide(buf, m.start(), eos, pos, zero_width, block_empty_close, timeout)
                    if outcome is not None:
                        return outcome
                start = m.start()
            while True:
                q = self._first_complete(buf, start, timeout)
                if not eos:
                    pending = self._leftmost_partial(buf, pos, q, memo, timeout)
                    if pending < q:
                        return pending
                if q >= n:
                    return n
                outcome = self._decide(buf, q, eos, pos, zero_width, block_empty_close, timeout)
                if outcome is not None:
                    return outcome
                start = q + 1  # only blocked zero-width matches at q: look further
        except TimeoutError:
            raise RegexTimeout(self.suspects) from None

    def holds(self, buf: str, pos: int, complete: bool = True) -> bool:
        """Whether :meth:`scan` (``eos`` false, a fresh memo) would answer ``pos``, told with two
        matches anchored at ``pos`` instead of its searches over all of ``buf[pos:]``.

        Args:
            buf, pos: as for :meth:`scan`.
            complete: whether to look for a complete match at ``pos``; ``False`` when the caller
                knows there is none (it held there before and no match can have ended since).

        That answer comes exactly when no delimiter's complete match starts at ``pos`` and a
        partial one does (what :meth:`_leftmost_partial` finds first: no barrier character after
        ``pos``, the start candidates take ``pos``, and a probe or a held whitespace run starts
        there). A streamed group's scanner asks this on every feed while a cut-off delimiter is
        held (``<｜tool▁call▁begin｜>get_`` waiting for ``<｜tool▁sep｜>``), where each search
        would read all of the held text again from every place a delimiter could start.

        ``False`` means only that this test cannot tell (then :meth:`scan` must run).

        Raises:
            RegexTimeout: as :meth:`scan`, for the same text.
        """
        n = len(buf)
        if pos >= n:
            return False
        timeout = None if n - pos <= self._untimed else backtracking.REGEX_TIMEOUT
        try:  # plain loops: a generator's frame per test costs more than the test on a short text
            if complete:
                for searcher in self._searchers or (self._combined,):
                    if searcher.match(buf, pos, None, None, False, timeout) is not None:
                        return False
            if self._barrier is not None and self._barrier.search(buf, pos) is not None:
                return False
            if self._prefilter is not None:
                if self._prefilter.match(buf, pos) is None:
                    return False
                if self.absorbed and not buf[pos:].strip(self.absorbed):
                    return True
            for probe in self._probes:
                m = probe.match(buf, pos, None, None, True, timeout)
                if m is not None and m.partial:
                    return True
            return False
        except TimeoutError:
            raise RegexTimeout(self.suspects) from None

    def _first_complete(self, buf: str, start: int, timeout: float | None) -> int:
        """Start of the leftmost complete match of any delimiter (``len(buf)`` if none)."""
        if self._combined is not None:
            m = self._combined.search(buf, start, None, None, False, timeout)
            return len(buf) if m is None else m.start()
        found = [m.start() for searcher in self._searchers
                 if (m := searcher.search(buf, start, None, None, False, timeout)) is not None]
        return min(found, default=len(buf))

    def _leftmost_partial(self, buf: str, pos: int, limit: int, memo: dict[Any, int],
                          timeout: float | None) -> int:
        """The leftmost start ``>= pos`` of a partial match if it is ``< limit``, else ``len(buf)``."""
        cached = memo.get(self)
        if cached is not None and cached >= pos:
            return cached
        n = len(buf)
        low = pos
        if self._barrier is not None:
            m = self._barrier.search(buf, pos)
            if m is not None:
                low = m.end()
                if low >= limit:
                    return n
        if self._prefilter is not None:
            m = self._prefilter.search(buf, low, limit)
            if m is None:
                return n
            low = int(m.start())
            if self.absorbed and not buf[low:].strip(self.absorbed):
                memo[self] = low  # a whitespace run that a pending delimiter keeps absorbing
                return low
        found = n
        for probe in self._probes:
            m = probe.search(buf, low, None, None, True, timeout)
            if m is not None and m.partial:
                found = min(found, m.start())
        memo[self] = found
        return found

    def _decide(self, buf: str, q: int, eos: bool, pos: int, zero_width: frozenset[Delimiter],
                block_empty_close: int, timeout: float | None) -> Commit | int | None:
        """Choose among the delimiters matching at ``q``; hold at ``q`` if any may still change."""
        n = len(buf)
        best: tuple[tuple[int, tuple[int, str]], Delimiter, int, Any] | None = None
        for delimiter in self.delimiters:
            match = delimiter.pattern.match(buf, q, None, None, not eos, timeout)
            if match is None:
                continue
            if match.partial:
                return q
            end = match.end()
            if delimiter.literals is not None:
                if not eos and delimiter.literals[0] != match.group() and _longer_pending(delimiter, buf, q):
                    return q
                if not eos and end == n and delimiter.can_extend:
                    return q
            elif end == q and ((q == pos and delimiter in zero_width)
                               or (q == block_empty_close and not delimiter.is_open)):
                continue
            elif not eos and ((end == n and match.group() not in delimiter.final)
                              or _unsettled(delimiter, buf, q, timeout)
                              or (delimiter.reads_end
                                  and _leans_on_the_end(delimiter, buf, q, match, timeout))):
                return q  # more input could still extend or change this regex match
            key = (q - end, delimiter.rank)
            if best is None or key < best[0]:
                best = (key, delimiter, end, match)
        if best is None:
            return None
        _, delimiter, end, match = best
        captures = {} if delimiter.literals is not None else {
            k: v for k, v in match.groupdict().items() if v is not None}
        return Commit(delimiter, q, end, captures)


#: the class range of the characters a start test always lets through (any non-ASCII one may
#: start a delimiter: the probes that build the first-character sets are ASCII)
_NON_ASCII = "\\x80-\\U0010FFFF"


def _start_sets(delimiters: tuple[Delimiter, ...]) -> tuple[set[str], set[str], str] | None:
    """What :func:`_candidates` and :func:`_quiet` build from: the whitespace first characters of
    ``delimiters``, their other first characters, and the characters allowed after a whitespace run
    (sorted, as one string); ``None`` when some delimiter may start nearly anywhere."""
    starts = [first_chars(d) for d in delimiters]
    follows = [after_whitespace(d) for d in delimiters]
    if any(chars is None for chars in starts) or any(chars is None for chars in follows):
        return None
    first = set("".join(c for c in starts if c is not None))
    after = "".join(sorted(set("".join(c for c in follows if c is not None))))
    return first & set(RUN_WHITESPACE), first - set(RUN_WHITESPACE), after


def _candidates(delimiters: tuple[Delimiter, ...]) -> regex.Pattern[str] | None:
    """Where a delimiter could start: one of its first characters, or the start of a whitespace
    run that holds a whitespace first character anywhere and is followed by a character allowed
    after it (or by the end of the buffer). The run may mix any whitespace (a delimiter such as
    ``\\n\\s*</think>`` continues over spaces), so the whole run counts, from its first character.
    Non-ASCII always may.

    Returns:
        The compiled class, or ``None`` when nearly any position may start a delimiter.
    """
    sets = _start_sets(delimiters)
    if sets is None:
        return None
    spaces, others, follows = sets
    anywhere = _NON_ASCII
    alternatives = [f"[{regex.escape(''.join(sorted(others)))}{anywhere}]"]
    if spaces:
        run = regex.escape(RUN_WHITESPACE)
        # ... holding a whitespace character some delimiter starts with (any, for \\s*)
        lead = regex.escape("".join(sorted(spaces)))
        holds = "" if spaces >= set(RUN_WHITESPACE) else f"(?=[{run}]*?[{lead}])"
        after = regex.escape(follows)
        # a run counts from its first character, or from where the search starts (\\G)
        alternatives.append(f"(?:\\G|(?<![{run}])){holds}[{run}]++(?=[{after}{anywhere}]|\\Z)")
    return regex.compile("|".join(alternatives))


def _quiet(delimiters: tuple[Delimiter, ...]) -> re.Pattern[str] | None:
    """Whether some delimiter could start anywhere in a text: :func:`_candidates` finds something
    in it exactly when this does, but this only answers whether, not where, so it needs neither
    ``\\G`` nor a look-behind and runs on the standard ``re`` module (several times faster on the
    short chunks of the engine's fast path, which searches every chunk with it).

    A whitespace run counts when it holds a whitespace first character and is followed by a
    character allowed after it (or ends the text): found from that first character on, since
    the characters allowed after a run are never ASCII whitespace.

    Returns:
        The compiled pattern, or ``None`` when nearly any position may start a delimiter.
    """
    sets = _start_sets(delimiters)
    if sets is None:
        return None
    spaces, others, follows = sets
    seconds = {char: _second_chars(delimiters, char) for char in sorted(others)}
    alone = "".join(char for char, after in seconds.items() if after is None)
    alternatives = [_or_non_ascii(alone)]
    alternatives += [f"{re.escape(char)}(?={_or_non_ascii(after)}|\\Z)"
                     for char, after in seconds.items() if after is not None]
    if spaces:
        run = re.escape(RUN_WHITESPACE)
        lead = re.escape("".join(sorted(spaces)))
        alternatives.append(f"[{lead}][{run}]*(?={_after_run(delimiters, follows)}|\\Z)")
    return re.compile("|".join(alternatives))


def _after_run(delimiters: tuple[Delimiter, ...], follows: str) -> str:
    """What may follow a whitespace run where a delimiter could start: a character of ``follows``
    (or any non-ASCII one), and for a character that only ever comes before a few others in such
    a match (``t`` before ``o`` in ``\\s*to=``), only before one of them or at the end of the text."""
    led = [d for d in delimiters if after_whitespace(d)]
    seconds: dict[str, set[str] | None] = {}
    for char in follows:
        for delimiter in led:
            if char not in (after_whitespace(delimiter) or ""):
                continue
            then = after_whitespace_then(delimiter, char)
            known = seconds.setdefault(char, set())
            seconds[char] = None if then is None or known is None else known | set(then)
    alone = "".join(char for char in follows if seconds.get(char) is None)
    parts = [_or_non_ascii(alone)]
    parts += [f"{re.escape(char)}(?={_or_non_ascii(''.join(then))}|\\Z)"
              for char, then in seconds.items() if then is not None]
    return "(?:" + "|".join(parts) + ")"


def _or_non_ascii(chars: str) -> str:
    """A class of the standard ``re`` module for ``chars`` and every non-ASCII character (the
    class ``[chars\\x80-\\U0010FFFF]``), written as the negation of the ASCII characters it leaves
    out: ``re`` compiles a range that reaches past U+00FF by filling a table of 65,536 entries in
    Python (~5 ms a class at every template load), a negated ASCII class in microseconds.

    Args:
        chars: the characters (non-ASCII ones change nothing: every one of them is in the class).

    Returns:
        The class's pattern text (``(?s:.)`` when it holds every ASCII character too).
    """
    inside = set(chars)
    codes = [code for code in range(128) if chr(code) not in inside]
    if not codes:
        return "(?s:.)"
    ranges: list[list[int]] = []
    for code in codes:  # runs of consecutive codes, as ranges
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "[^" + "".join(f"\\x{low:02x}" + (f"-\\x{high:02x}" if high > low else "")
                          for low, high in ranges) + "]"


def _second_chars(delimiters: tuple[Delimiter, ...], first: str) -> str | None:
    """The ASCII characters that can follow ``first`` in a match of one of ``delimiters`` (or in a
    partial match, so a chunk ending with ``first`` still counts), or ``None`` when nearly any can
    (then ``first`` alone is the test). Non-ASCII characters always may. For regexes the first
    characters' own probe, one character further: 128 partial matches per first character."""
    chars: set[str] = set()
    for delimiter in delimiters:
        if delimiter.literals is not None:
            for literal in delimiter.literals:
                if literal[0] == first:
                    if len(literal) == 1:
                        return None
                    chars.add(literal[1])
        else:
            match = delimiter.pattern.match
            chars.update(c for c in map(chr, range(128)) if match(first + c, partial=True) is not None)
    return None if len(chars) > 32 else "".join(sorted(chars))


def _unsettled(delimiter: Delimiter, buf: str, q: int, timeout: float | None) -> bool:
    """A higher-priority way for the regex ``delimiter`` to match at ``q`` ran into the buffer end."""
    settled = delimiter.settled
    m = settled.match(buf, q, None, None, True, timeout) if settled is not None else None
    return m is not None and bool(m.partial)


def _leans_on_the_end(delimiter: Delimiter, buf: str, q: int, match: Any, timeout: float | None) -> bool:
    """The regex match at ``q`` relies on the buffer ending where it does (transformers 5.24's
    finality rule): with one more character that is neither a newline nor the end (``\\x00``), the
    match at ``q`` disappears, moves or captures otherwise (``(?=\\n?\\Z)`` on ``ab\\n``).

    Look-behinds reach at most ``LOOKBEHIND_CONTEXT`` characters back and hold no ``^``, so the
    text before that window is left out of the copy.
    """
    window = max(0, q - LOOKBEHIND_CONTEXT - 1)
    extended = delimiter.pattern.match(buf[window:] + "\x00", q - window, None, None, False, timeout)
    return (extended is None or extended.end() + window != match.end()
            or extended.groupdict() != match.groupdict())


def _longer_pending(delimiter: Delimiter, buf: str, q: int) -> bool:
    """A longer literal of ``delimiter`` could still match at ``q`` (the buffer ends inside it)."""
    rest = buf[q:]
    return any(len(lit) > len(rest) and lit.startswith(rest) for lit in delimiter.literals or ())


def path(delimiter: Delimiter) -> str:
    """The JSON path of a delimiter's key in its template (``fields.tool_calls.open_pattern``)."""
    key = ("open" if delimiter.is_open else "close") + ("" if delimiter.literals is not None else "_pattern")
    return f"fields.{delimiter.field}.{key}"


#: A compiled matcher for one parser state.
Matcher = LiteralMatcher | RegexMatcher


def build_matcher(delimiters: Iterable[Delimiter]) -> Matcher:
    """The fastest matcher for ``delimiters`` (literal-only states need no partial matching)."""
    delimiters = tuple(delimiters)
    if all(d.literals is not None for d in delimiters):
        return LiteralMatcher(delimiters)
    return RegexMatcher(delimiters)
