"""The value scanners of ``x-findall`` and ``xml-inline``: regex matches, read as they complete.

Both parsers read every match of a regex over the region's text (``finditer``): ``x-findall``
makes each match a dict of its parsed named groups (``into: "list"``) or a ``key -> value`` entry
(``into: "dict"``), ``xml-inline`` a ``key -> value`` entry. :class:`RegexItemsScanner` follows the
matches with the engine's own delimiter matchers (:mod:`..matcher`), so a match is taken only once
no later text can change it:

* when the pattern splits around the group that holds the value worth streaming
  (:mod:`.pattern_split`: ``arguments``, or ``xml-inline``'s ``value``), the match begins as soon as
  its head is certain: the head's groups are ``set`` (a call's name before its arguments), the
  group's text streams through the scanner of its value parser (``json`` for arguments) while it
  is written, and the groups after it are ``set`` when the match ends;
* when the group stands in an alternation instead (:func:`~.pattern_split.split_branches`), the
  head is matched first, the text after it tells which branch the regex takes, and that branch's
  group streams as above; while two branches are still possible (or the branch has no streamed
  group) the match is searched whole, from its start;
* otherwise each match is ``set`` whole when it completes.

Every match is checked against the real pattern when it ends, and its value is computed by the
same parsers the content parser uses (:func:`~..content.run_parser`); a value the group's scanner
left open is finished from it (:class:`.nested.Part`). Matches that the content parser would
refuse (a repeated key, a group its value parser rejects) stop the scanner; text between matches
is the content parser's to check. With ``merge_duplicates`` (``xml-inline``) there is no scanner:
a key's value becomes a list only when the key comes again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import regex

from chatcodec.object_cache import ObjectCache
from chatcodec.response_templates.content import (
    check_xml_gaps,
    compile_user_pattern,
    get_parser,
    prepare_parser,
)
from chatcodec.response_templates.delimiters import (
    RUN_WHITESPACE,
    first_chars,
    literal_delimiter,
    regex_delimiter,
)
from chatcodec.response_templates.ext_findall import findall_gap_check
from chatcodec.response_templates.lookbehind import LOOKBEHIND_CONTEXT
from chatcodec.response_templates.matcher import Commit, build_matcher
from chatcodec.response_templates.scanners.nested import Part
from chatcodec.response_templates.scanners.pattern_split import (
    Branched,
    Split,
    literal_tail,
    literal_text,
    punctuation,
    python_dollar,
    required_literal,
    split_branches,
    split_pattern,
)
from chatcodec.response_templates.scanners.protocol import Delta, Path, ValueScanner
from chatcodec.response_templates.scanners.text_run import TextRun

__all__ = ["RegexItemsScanner", "findall_scanner", "streamed_groups", "xml_inline_scanner"]

#: ``(group name, its text) -> its value``; raises ``ValueError``.
GroupParser = Callable[[str, str], Any]
#: ``group name -> a scanner for its text``, or ``None`` when it cannot stream.
GroupScanner = Callable[[str], "ValueScanner | None"]
#: ``(region text, the (start, end) of each match) -> None``: the content parser's own check of the
#: text outside the matches; raises ``ValueError`` where it refuses it.
GapCheck = Callable[[str, Sequence[tuple[int, int]]], None]

_SEARCH, _GROUP, _DEAD, _BRANCH = range(4)
_REFUTED, _PENDING, _OPENED = range(3)  # a branch's opening against the text after the head
_GUARD = "chatcodec_guard"
#: How many characters after the pattern's punctuation a match set whole is searched on every feed.
_AFTER_TRIGGER = 16
#: The decided text kept before the scanner drops the oldest (all but :data:`LOOKBEHIND_CONTEXT`).
_TRIM_AT = 5 * LOOKBEHIND_CONTEXT
#: How much of the text between matches is checked against ``between`` (kept in the window).
_GAP_CHECKED = LOOKBEHIND_CONTEXT // 2


@lru_cache(maxsize=256)
def _matchers(source: str) -> _Matchers:
    """The matchers of ``source``, built once (a matcher keeps no state between scans)."""
    return _Matchers(source)


class _Matchers:
    """A regex searched as a delimiter: ``$`` cannot match before the text ends (``final``)."""

    __slots__ = ("_pattern", "_plain", "_required", "_starts", "_wide", "dollar", "final", "open",
                 "plain_ascii", "quiet", "tail", "triggers", "watch")

    def __init__(self, source: str) -> None:
        self.triggers = punctuation(source)
        #: the literal every match ends with, when nothing past a match decides it (``""``: none)
        self.tail = literal_tail(source)
        #: a literal every match holds (``""``: none known): without it, no match is complete
        self._required = required_literal(source)
        literal = literal_text(source)
        if literal:  # a literal commits as soon as it is complete (a regex waits for one more character)
            self.open = self.final = build_matcher([literal_delimiter("value", False, [literal])])
        else:
            self.open = build_matcher([regex_delimiter("value", False, python_dollar(source, final=False))])
            self.final = build_matcher([regex_delimiter("value", False, python_dollar(source))])
        self.dollar = python_dollar(source) != source
        delimiter = self.open.delimiters[0]
        starts = first_chars(delimiter)
        # the standard ``re`` module: a character class over a short chunk in about half the time
        self._starts = None if starts is None else re.compile(f"[{re.escape(starts)}]")
        #: the search of :meth:`may_start` for ASCII text (``None``: a match may start anywhere), for
        #: callers that answer that usual case themselves
        self.plain_ascii = None if self._starts is None else self._starts.search
        self._pattern = delimiter.pattern
        #: the characters no match starts with: the ASCII ones, and the non-ASCII ones met so far
        self._plain = set(map(chr, range(128))) - set(starts or "")
        self._wide: set[str] = set()  # the non-ASCII characters met that a match may start with
        #: the matcher's own test of whether a match could start in a text (``None``: nearly anywhere);
        #: finer than the first characters: ``\\s*```\\s*<｜tool▁call▁end｜>`` only counts a
        #: whitespace run followed by a backtick or by the end of the text
        self.quiet = self.open.quiet
        #: what a streamed group's short path watches (``scanners.text_run``): the quiet search's
        #: source, and a newline at the end where ``$`` could match before it (``None``: no quiet
        #: search, no short path)
        self.watch: tuple[str, ...] | None = None
        if self.quiet is not None:
            self.watch = (self.quiet.pattern, r"\n\Z") if self.dollar else (self.quiet.pattern,)

    def may_start(self, text: str) -> bool:
        """Whether a match could start anywhere in ``text`` (``False``: all of it is plain text)."""
        if self._starts is None:
            return True
        if text.isascii():
            return self._starts.search(text) is not None
        # non-ASCII text (``中文``, ``é``): one set test in C for characters met before, each
        # new character tried once against the pattern
        if self._plain.issuperset(text):
            return False
        for char in set(text).difference(self._plain):
            if char < "\x80" or char in self._wide:
                return True
            if self._pattern.match(char, partial=True) is not None:
                self._wide.add(char)
                return True
            self._plain.add(char)
        return False

    def decided(self, text: str) -> int | None:
        """Where the undecided ``text`` (no match started before it, more text will follow) stops
        being plain text: what :meth:`scan` answers when no match can start in it, or ``None``
        when one may (then only :meth:`scan` can tell)."""
        quiet = self.quiet
        if quiet is None:
            return None
        found = quiet.search(text)
        if found is None:
            if self.dollar and text.endswith("\n"):
                return len(text) - 1  # "$" also matches before a final newline
            return len(text)
        # only a whitespace run at the end, which the terminator keeps absorbing while it waits
        # (``\s*```...``): the search holds the run back from its first character
        start, absorbed = found.start(), self.open.absorbed
        run_start = start == 0 or text[start - 1] not in RUN_WHITESPACE
        if absorbed and run_start and not text[start:].strip(absorbed):
            return start
        return None

    def holds(self, text: str, pos: int, complete: bool = True) -> bool:
        """Whether :meth:`scan` (more text to come) would answer ``pos`` again: a match cut off by
        the end of ``text`` starts there and none is complete (``False``: only a scan can tell;
        ``complete`` false: the caller knows none is)."""
        if complete and self._required and text.find(self._required, pos) < 0:
            complete = False  # a complete match would hold the literal
        return self.open.holds(text, pos, complete)

    def scan(self, text: str, pos: int, eos: bool) -> Commit | int:
        if eos:
            return self.final.scan(text, pos, True, {})
        result = self.open.scan(text, pos, False, {})
        if self.dollar and type(result) is int and result == len(text) and text.endswith("\n") \
                and result > pos:
            return result - 1  # "$" also matches before a final newline
        return result


class RegexItemsScanner:
    """Matches of ``pattern`` as a list of items or a ``key -> value`` object (module docstring).

    Args:
        pattern: the regex as written in the template.
        into: ``"list"`` (one dict of groups per match) or ``"dict"`` (``key -> value``).
        group: the group whose text streams (``None``: every match is set whole, unless
            ``branches`` says otherwise).
        parse: parses one group's text into its value.
        scan: makes the scanner of the streamed group's text.
        value_of: with ``"dict"``, the entry's value from the match's parsed groups (``None``:
            the match cannot be an entry).
        between: the text allowed between matches (``x-findall``), checked while it is read.
        branches: the groups that may stream when ``pattern`` does not split around ``group``
            (:func:`~.pattern_split.split_branches`: a group inside an alternation).
        gaps: the content parser's check of the text outside the matches (``None``: the scanner
            cannot vouch for its value, :meth:`settled` always says no).
    """

    def __init__(self, pattern: str, into: str, group: str | None, parse: GroupParser, scan: GroupScanner,
                 value_of: Callable[[dict[str, Any]], Any] | None = None,
                 between: regex.Pattern[str] | None = None, branches: tuple[str, ...] = (),
                 gaps: GapCheck | None = None) -> None:
        self._pattern = compile_user_pattern(pattern)
        self._between = between
        self._gap = 0  # region offset where the text between matches began
        self._gap_done = False  # its first _GAP_CHECKED characters were checked
        self._gap_seen = -1  # a partial check of the gap up to this offset passed (a held head asks again)
        self.refuted = False
        self._into = into
        self._parse = parse
        self._scan = scan
        self._value_of = value_of
        self._split = _split(pattern, group, into)
        self._group = group if self._split is not None else None
        self._branched = _branched(pattern, branches, into) if self._split is None and branches else None
        head = self._split.head if self._split is not None else \
            self._branched.head if self._branched is not None else pattern
        self._head = _matchers(head)
        self._full = _matchers(pattern)
        self._search = self._head  # the matcher searched for the next match: its head, or all of it
        self._whole_search = self._split is None and self._branched is None  # the search takes matches whole
        self._text = ""  # the text from _base on (the matchers' buffer)
        self._base = 0  # region offset of _text[0]
        self._pos = 0  # region offset up to which the text is decided
        self._state = _SEARCH
        self._items = 0
        self._keys: set[str] = set()
        #: the content parser's value of the matches placed so far, and their spans (region offsets)
        self._found: list[Any] | dict[str, Any] = [] if into == "list" else {}
        self._spans: list[tuple[int, int]] = []
        self._gaps = gaps
        self._match: tuple[int, int, dict[str, str]] | None = None  # start, head end, head groups
        # the match being streamed: its group, where the group's text starts (region offset), the
        # group's closing literal, its terminator (regex, back-references, guard), whether it runs
        # to the end of the text
        self._mgroup: str | None = None
        self._group_at = 0
        self._close = ""
        self._terminator: tuple[str, tuple[str, ...], str | None] = ("", (), None)
        self._to_end = False
        self._part: Part | None = None
        self._under: Path = ()
        self._inner: ValueScanner | None = None
        self._key: str | None = None
        self._verify: list[str] = []  # the streamed match's text (with context before it)
        self._verify_base = 0
        self._current: _Matchers | None = None  # the terminator of the match being streamed
        # a match set whole: the region offset its search waits for, when the text holds none of
        # the pattern's punctuation (``_Matchers.triggers``), and where the last such text ended
        self._rescan_at = 0
        self._trigger = 0
        self._started = False
        self.complete: int | None = None
        #: feeds inside a streamed group that the terminator's quiet test settled without a search
        self.quiet_feeds = 0
        #: feeds between matches that the head's quiet test settled without a search
        self.quiet_searches = 0
        #: feeds that left a cut-off head or terminator held where it was, without a search
        self.held_feeds = 0
        # the last hold :meth:`_still_held` told: its matchers, where, and up to where it read
        self._held: tuple[_Matchers, int, int] | None = None
        #: the streamed group's scanner's ``text_run`` (``None``: it has none), and the path of the
        #: text of the last run this scanner told (``None``: the run emits nothing)
        self._inner_run: Callable[[], TextRun | None] | None = None
        self._run_path: Path | None = None

    def streamed_groups(self) -> tuple[str, ...]:
        """The groups whose text streams (see :func:`streamed_groups`)."""
        if self._group is not None:
            return (self._group,)
        if self._branched is None:
            return ()
        return tuple(dict.fromkeys(b.group for b in self._branched.branches if b.group is not None))

    # -- reading ------------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if not self._started:
            self._started = True
            out.append(("begin", (), "array" if self._into == "list" else "object"))
        if self._state == _DEAD:
            return out
        term = self._current
        if self._state == _GROUP and self._pos == self._base + len(self._text) and (self._to_end or (
                term is not None and not (term.dollar and text.endswith("\n"))  # "$" may match before it
                and (term.plain_ascii(text) is None if term.plain_ascii is not None
                     and text.isascii() else not term.may_start(text)))):  # the group's
            self._text += text
            self._pos += len(text)
            self._verify.append(text)
            part = self._part
            if self._inner is not None and part is not None and part.ok:
                deltas = self._inner.feed(text)
                if deltas:
                    part.emit(deltas, out, self._under)
            if self._pos - self._base > 8 * LOOKBEHIND_CONTEXT:
                self._trim()
            return out
        if self._state == _GROUP and term is not None and not self._to_end:
            held = self._text[self._pos - self._base :] + text
            decided = term.decided(held)
            if decided is not None:  # no match can start in it: what the terminator's search would say
                self.quiet_feeds += 1
                self._text += text
                piece = held[:decided]
                if piece:  # _group_text and _inner_feed, inlined (a space in DeepSeek's arguments)
                    self._verify.append(piece)
                    inner, part = self._inner, self._part
                    if inner is not None and part is not None and part.ok:
                        deltas = inner.feed(piece)
                        if deltas:
                            part.emit(deltas, out, self._under)
                self._pos += decided
                if self._pos - self._base > 8 * LOOKBEHIND_CONTEXT:
                    self._trim()
                return out
        if self._state == _SEARCH and not self._whole_search and self._search_settles(text):
            return out
        if self._state == _GROUP and term is not None and not self._to_end and self._still_held(term, text):
            self.held_feeds += 1  # the terminator cut off where it was, still: nothing decided
            self._text += text
            self._trim()
            return out
        if self._whole_search and self._state == _SEARCH and self._waits(text):
            self._text += text
            return out
        self._text += text
        self._advance(out, eos=False)
        if self._whole_search and self._state == _SEARCH:
            end = self._base + len(self._text)
            self._rescan_at = end + (end - self._pos)  # the undecided text doubles before a search
        self._trim()
        return out

    def text_run(self) -> TextRun | None:
        """The short path (``scanners.text_run``) while a match's group streams with nothing held:
        what its terminator's quiet search watches (nothing, for a group that runs to the end),
        with the run of the group's scanner; its text goes to the match's path."""
        if self._state != _GROUP or self._pos != self._base + len(self._text):
            return None
        part, inner_run = self._part, self._inner_run
        if inner_run is None or part is None or not part.ok:
            return None
        if self._to_end:
            own: tuple[str, ...] | None = ()
        else:
            term = self._current
            own = term.watch if term is not None else None
            if own is None:
                return None
        run = inner_run()
        if run is None:
            return None
        watch, path = run
        self._run_path = path
        if path is not None:
            path = (*part.base, *self._under, *path)
        return (own + watch if own else watch), path

    def skip(self, text: str) -> None:
        """Take ``text``, plain chunks of the last :meth:`text_run`, as :meth:`feed`'s plain group
        text would: the group's scanner and the match's part record it (its deltas were emitted)."""
        self._text += text
        self._pos += len(text)
        self._verify.append(text)
        inner, part = self._inner, self._part
        assert inner is not None and part is not None
        inner.skip(text)  # type: ignore[attr-defined]
        path = self._run_path
        if path is not None:
            part.emit([("text", path, text)], [], self._under)
        if self._pos - self._base > 8 * LOOKBEHIND_CONTEXT:
            self._trim()

    def _search_settles(self, text: str) -> bool:
        """Feed ``text`` while the next match's head is searched, without the search, when the
        head's own tests tell what it would answer (``False``: nothing was fed). Either no head
        can start in the undecided text (:meth:`_Matchers.decided`: ``\n`` between two calls), or
        the head cut off at ``_pos`` still is, and none is complete (:meth:`_Matchers.holds`:
        ``<｜tool▁call▁begin｜>get_weather`` before its ``<｜tool▁sep｜>``); the text before
        ``_pos`` is then checked against ``between`` as the search's answer would have it."""
        rel = self._pos - self._base
        held = self._text[rel:] + text
        decided = self._search.decided(held)
        if decided is not None:
            self.quiet_searches += 1
            self._text += text
            self._pos += decided
        elif held and self._still_held(self._search, text):
            self.held_feeds += 1
            self._text += text
        else:
            return False
        if not self._gap_done and self._between is not None:  # _check_gap's own first test
            self._check_gap(self._pos, False)
        if self._pos - self._base > _TRIM_AT:  # _trim's own test
            self._trim()
        return True

    def _still_held(self, matchers: _Matchers, text: str) -> bool:
        """Whether ``matchers`` still hold the text at ``_pos`` back with ``text`` added
        (:meth:`_Matchers.holds`). Held there before, a match whose end is a literal
        (:attr:`_Matchers.tail`) can only have become complete if that literal ends in ``text``:
        otherwise only the cut-off match is tested (GLM-4.6's key that never completes is not
        read again whole on every feed to look for its ``<arg_value>``)."""
        rel = self._pos - self._base
        buf = self._text + text
        held, tail, complete = self._held, matchers.tail, True
        if tail and tail in buf[max(rel, len(self._text) - len(tail) + 1) :]:
            self._held = None  # the literal that ends a match came (<｜tool▁sep｜>): let the search tell
            return False
        if held is not None and held[0] is matchers and held[1] == self._pos and tail:
            complete = tail in buf[max(rel, held[2] - len(tail) + 1 - self._base) :]
        if matchers.holds(buf, rel, complete):
            self._held = (matchers, self._pos, self._base + len(buf))
            return True
        self._held = None
        return False

    def _waits(self, text: str) -> bool:
        """Whether a match set whole skips its search for ``text``: a match may be under way (the
        text from ``_pos`` on is undecided) and every search reads all of it again, so without
        this a long match would cost a search per feed over all its text (quadratic). The search
        runs when the text brings a character the pattern writes as punctuation (where matches
        end: ``</param>``, ``]]>``) or when the undecided text has doubled since the last search
        (amortized linear), in the :data:`_AFTER_TRIGGER` characters after such a character (a
        match may need a character or two more to be certain: ``</param><p``), and always at the
        end; a match is then set at most that much later."""
        end = self._base + len(self._text) + len(text)
        triggers = self._search.triggers
        if any(char in triggers for char in text):
            self._trigger = end
        return end < self._rescan_at and end - self._trigger > _AFTER_TRIGGER

    def end(self) -> list[Delta]:
        out: list[Delta] = []
        if not self._started:
            self._started = True
            out.append(("begin", (), "array" if self._into == "list" else "object"))
        if self._state != _DEAD:
            self._advance(out, eos=True)
        return out

    def _trim(self) -> None:
        keep = self._pos - LOOKBEHIND_CONTEXT  # a streamed match's text is kept in _verify
        if keep - self._base > _TRIM_AT - LOOKBEHIND_CONTEXT:
            self._text = self._text[keep - self._base :]
            self._base = keep

    def _advance(self, out: list[Delta], eos: bool) -> None:
        while self._state != _DEAD:
            rel = self._pos - self._base
            if self._state == _SEARCH:
                result = self._search.scan(self._text, rel, eos)
                if type(result) is int:
                    self._pos = self._base + result
                    self._check_gap(self._pos, eos)
                    return
                assert isinstance(result, Commit)
                self._check_gap(self._base + result.start, True)
                if self._state == _DEAD:
                    return
                if self._whole_search:
                    self._whole(result, out)
                else:
                    self._begin(result, out)
            elif self._state == _BRANCH:
                if not self._choose(out, eos):
                    return
            elif self._to_end:
                self._group_text(self._text[rel:], out)
                self._pos = self._base + len(self._text)
                if not eos:
                    return
                self._end(len(self._text), len(self._text), out)
            else:
                term = self._current
                if term is None:
                    self._state = _DEAD
                    return
                result = term.scan(self._text, rel, eos)
                if type(result) is int:
                    self._group_text(self._text[rel:result], out)
                    self._pos = self._base + result
                    if eos:
                        self._state = _DEAD  # the match never ended: finditer does not take it
                    return
                assert isinstance(result, Commit)
                if _GUARD in result.captures:
                    self._state = _DEAD  # the tempered body ends before its terminator: not followed
                    return
                self._group_text(self._text[rel : result.start], out)
                self._end(result.start, result.end, out)

    def _check_gap(self, end: int, final: bool) -> None:
        """``refuted`` when the text since the last match (up to ``end``, where no match starts; all of
        it when ``final``) is not what ``between`` allows. Only its first :data:`_GAP_CHECKED`
        characters are checked, so the answer comes at the same character whatever the chunking."""
        between = self._between
        if between is None or self._gap_done:
            return
        stop = min(end, self._gap + _GAP_CHECKED)
        final = final and stop == end
        if not final and stop == self._gap_seen:
            return  # the same text was checked and may still be continued
        if stop - self._gap >= _GAP_CHECKED or final:
            self._gap_done = True
        gap = between.fullmatch(self._text, self._gap - self._base, stop - self._base, partial=not final)
        if gap is None:
            self.refuted = True
            self._state = _DEAD
        elif not final:
            self._gap_seen = stop

    # -- matches set whole -------------------------------------------------------------------------

    def _whole(self, commit: Commit, out: list[Delta]) -> None:
        try:
            values = {name: self._parse(name, text) for name, text in commit.captures.items()}
        except ValueError:
            self._state = _DEAD
            return
        if not self._place(values, None, out, (self._base + commit.start, self._base + commit.end)):
            return
        self._pos = self._gap = self._base + commit.end
        self._gap_done, self._gap_seen = False, -1
        if commit.end == commit.start:
            self._state = _DEAD  # an empty match: the content parser decides what it means
        if self._branched is not None:  # back to streaming: the next match's head
            self._search, self._whole_search = self._head, False

    def _place(self, values: dict[str, Any], part: Part | None, out: list[Delta],
               span: tuple[int, int]) -> bool:
        """Put a complete match's parsed groups in the value (``part``: the match streamed so far;
        ``span``: where the match is in the region)."""
        if self._into == "list":
            if part is None:
                out.append(("set", (self._items,), values))
            else:
                part.finish(values, out)
            self._items += 1
            self._found.append(values)  # type: ignore[union-attr]
        else:
            key = values.pop("key", None)
            value = self._value_of(values) if self._value_of is not None else None
            if not isinstance(key, str) or value is _NO_ENTRY or (part is None and key in self._keys):
                self._state = _DEAD
                return False
            self._keys.add(key)
            if part is None:
                out.append(("set", (key,), value))
            else:
                part.finish(value, out)
            self._found[key] = value  # type: ignore[call-overload]
        if part is not None and not part.ok:
            self._state = _DEAD
            return False
        self._spans.append(span)
        return True

    def settled(self, text: str) -> tuple[bool, Any]:
        """The content parser's value of ``text``, when this scanner read exactly ``text`` (all of
        the region) and can vouch for it: ``(True, value)``; else ``(False, None)``, and the caller
        parses ``text`` itself.

        It can when no match is under way or was refused, no match can start in the text after the
        last one (:meth:`_Matchers.decided` on it), the pattern that finds where matches start has
        no ``$`` (which the end of the text could satisfy where the search said no match starts),
        and the text outside the matches passes the content parser's own check (``between``, the
        tag filler). Then ``finditer`` over ``text``
        finds the same matches: each began where its head (a prefix of the pattern) first matched,
        was matched against the real pattern when it ended (same end, same streamed group), and its
        groups were parsed by the content parser's own value parsers. The value is shared, not
        copied (the region is closing: the scanner reads nothing more).
        """
        if self.refuted or self._gaps is None or self._base + len(self._text) != len(text) \
                or self._search.dollar or self._head.dollar:
            return False, None  # (a ``$`` where a match starts: the end of the text may add one)
        found, spans, pos = self._found, self._spans, self._pos
        if self._state == _GROUP:  # the match under way, as the end of the text ends it
            last = self._last(text)
            if last is None:
                return False, None
            found, spans, pos = last
        elif self._state != _SEARCH:
            return False, None
        rest = len(text) - pos
        if rest and self._search.decided(text[pos:]) != rest:
            return False, None
        try:
            self._gaps(text, spans)
        except ValueError:
            return False, None  # the parser says why, with its own error
        return True, found

    def _last(self, text: str) -> tuple[list[Any] | dict[str, Any], list[tuple[int, int]], int] | None:
        """The match under way as the content parser reads it in the region's whole ``text``: the
        value and spans with it, and where it ends (``None``: it does not match there, or its groups
        are refused). It began where the pattern's head first matched, so it is the match
        ``finditer`` finds there whatever the scanner's terminator would say. Changes nothing."""
        assert self._match is not None
        start = self._match[0]
        real = self._pattern.match(text, start)
        if real is None:
            return None
        try:
            values = {name: self._parse(name, group) for name, group in real.groupdict().items()
                      if group is not None}
        except ValueError:
            return None
        end = real.end()
        spans = [*self._spans, (start, end)]
        if self._into == "list":
            return [*self._found, values], spans, end
        key = values.pop("key", None)
        value = self._value_of(values) if self._value_of is not None else None
        if not isinstance(key, str) or value is _NO_ENTRY or key in self._found:
            return None
        found = dict(self._found)
        found[key] = value
        return found, spans, end

    # -- streamed matches --------------------------------------------------------------------------

    def _begin(self, commit: Commit, out: list[Delta]) -> None:
        """The head of a match is certain: start the match's value and its group's scanner (a
        branched pattern first reads which branch follows the head: :meth:`_choose`)."""
        self._match = (self._base + commit.start, self._base + commit.end, commit.captures)
        self._pos = self._base + commit.end
        self._verify = [self._text[max(0, commit.start - LOOKBEHIND_CONTEXT) : commit.end]]
        self._verify_base = self._base + max(0, commit.start - LOOKBEHIND_CONTEXT)
        if self._branched is not None:
            self._state = _BRANCH
            return
        split = self._split
        assert split is not None and self._group is not None
        self._stream(self._group, split.lead, self._pos - len(split.lead), split.close,
                     (split.terminator, split.backrefs, split.guard), False, out)

    def _choose(self, out: list[Delta], eos: bool) -> bool:
        """Which branch follows the head (``False``: the text does not tell yet).

        The regex takes the first branch whose opening is there and whose match succeeds. A branch
        streams once it is the first whose opening is there and no later branch can be taken in
        its stead (their openings are refuted, or the branch cannot fail: ``to_end``). Otherwise
        (two branches possible, a branch without a streamed group, none) the match is searched
        whole, from its start."""
        assert self._branched is not None and self._match is not None
        start, head_end, _ = self._match
        rest = self._text[head_end - self._base :]
        status: list[int] = []
        for option in self._branched.branches:
            opening = option.opening
            size = min(len(rest), len(opening))
            if rest[:size] != opening[:size] or (eos and size < len(opening)):
                status.append(_REFUTED)
            else:
                status.append(_OPENED if size == len(opening) else _PENDING)
        live = [index for index, state in enumerate(status) if state != _REFUTED]
        chosen = live[0] if live else None
        if chosen is not None and status[chosen] == _PENDING:
            return False
        if chosen is not None and not self._branched.branches[chosen].to_end:
            later = [status[index] for index in live[1:]]
            if _PENDING in later:
                return False
            if later:
                chosen = None
        branch = None if chosen is None else self._branched.branches[chosen]
        if branch is None or branch.group is None:
            self._search, self._whole_search = self._full, True  # the match is searched whole
            self._pos, self._state, self._match = start, _SEARCH, None
            return True
        self._pos = head_end + len(branch.opening)
        self._verify.append(branch.opening)
        self._stream(branch.group, branch.opening[branch.skip :], head_end + branch.skip, branch.close,
                     (branch.terminator, branch.backrefs, branch.guard), branch.to_end, out)
        return True

    def _stream(self, group: str, lead: str, group_at: int, close: str,
                terminator: tuple[str, tuple[str, ...], str | None], to_end: bool, out: list[Delta]) -> None:
        """Start streaming ``group`` of the match whose head is ``_match``."""
        assert self._match is not None
        captures = self._match[2]
        self._mgroup, self._group_at, self._close = group, group_at, close
        self._terminator, self._to_end = terminator, to_end
        try:
            heads = {name: self._parse(name, text) for name, text in captures.items()}
        except ValueError:
            self._state = _DEAD
            return
        if self._into == "list":
            part = Part((self._items,))
            part.emit([("begin", (), "object")], out)
            part.emit([("set", (name,), value) for name, value in heads.items()], out)
            under: Path = (group,)
        else:
            key = heads.pop("key", None)
            if not isinstance(key, str) or key in self._keys or heads:
                self._state = _DEAD  # no key, a repeated key, or another group beside the value
                return
            self._keys.add(key)
            self._key = key
            part, under = Part((key,)), ()
        self._part, self._under = part, under
        self._inner = self._scan(group)
        self._inner_run = getattr(self._inner, "text_run", None)
        self._state = _GROUP
        self._current = None if to_end else self._term()
        if lead:
            self._inner_feed(lead, out)

    def _term(self) -> _Matchers | None:
        assert self._match is not None
        source, backrefs, guard = self._terminator
        if guard is not None:  # where the tempered body stops: a place the scanner stops too
            source = f"(?:{source})|(?P<{_GUARD}>(?={guard}))"
        for name in backrefs:
            value = self._match[2].get(name)
            if value is None:
                return None
            source = source.replace(f"(?P={name})", regex.escape(value))
        return _matchers(source)

    def _group_text(self, text: str, out: list[Delta]) -> None:
        if text:
            self._verify.append(text)
            self._inner_feed(text, out)

    def _inner_feed(self, text: str, out: list[Delta]) -> None:
        if self._inner is not None and self._part is not None and self._part.ok:
            self._part.emit(self._inner.feed(text), out, self._under)

    def _end(self, start: int, stop: int, out: list[Delta]) -> None:
        """The terminator committed at ``_text[start:stop]``: check the whole match against the
        pattern, finish its value."""
        match, part, group = self._match, self._part, self._mgroup
        assert match is not None and part is not None and group is not None
        if self._close:
            self._inner_feed(self._close, out)
        if self._inner is not None and part.ok:
            part.emit(self._inner.end(), out, self._under)
        verify = "".join(self._verify) + self._text[start:]
        origin = self._verify_base
        end = self._base + stop
        group_end = self._base + start + len(self._close)
        group_span = (self._group_at - origin, group_end - origin)
        real = self._pattern.match(verify, match[0] - origin)
        if real is None or real.end() != end - origin or real.span(group) != group_span:
            self._state = _DEAD
            return
        try:
            values = {name: self._parse(name, text) for name, text in real.groupdict().items()
                      if text is not None}
        except ValueError:
            self._state = _DEAD
            return
        if self._into == "dict" and values.get("key") != self._key:
            self._state = _DEAD
            return
        if not self._place(values, part, out, (match[0], end)):
            return
        self._match = self._part = self._inner = self._current = None
        self._mgroup, self._to_end = None, False
        self._pos = self._gap = end
        self._gap_done, self._gap_seen = False, -1
        self._state = _SEARCH


_NO_ENTRY = object()
#: The arguments of a group's scanner when its parser has none (read, never changed).
_NO_ARGS: Mapping[str, Any] = {}
#: A group without a value parser streams as verbatim text.
_VERBATIM: Mapping[str, Any] = {"strip": False}


@lru_cache(maxsize=256)
def _split(pattern: str, group: str | None, into: str) -> Split | None:
    split = split_pattern(pattern, group) if group is not None else None
    if split is not None and into == "dict" \
            and "key" not in regex.compile(split.head, regex.DOTALL).groupindex:
        return None  # the entry's key must be known when its value starts
    return split


@lru_cache(maxsize=256)
def _branched(pattern: str, groups: tuple[str, ...], into: str) -> Branched | None:
    branched = split_branches(pattern, groups)
    if branched is not None and into == "dict" \
            and "key" not in regex.compile(python_dollar(branched.head), regex.DOTALL).groupindex:
        return None  # the entry's key must be known when its value starts
    return branched


def _findall_entry(values: dict[str, Any]) -> Any:
    """``into: "dict"``: the one value group beside ``key`` (``""`` when none took part)."""
    if len(values) > 1:
        return _NO_ENTRY
    return next(iter(values.values()), "")


def streamed_groups(content: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """The groups whose text streams in an ``x-findall`` or ``xml-inline`` region (one, or one per
    branch of a branched pattern), or ``()`` when each match is set whole."""
    if content == "xml-inline":
        scanner: RegexItemsScanner | None = xml_inline_scanner({**args, "merge_duplicates": False})
    else:
        scanner = findall_scanner(args)
    assert scanner is not None
    return scanner.streamed_groups()


#: What :class:`RegexItemsScanner` is made from, worked out once per ``content_args`` (a template's
#: arguments are read by every region of its field): the constructor's arguments.
_Setup = tuple[str, str, "str | None", GroupParser, GroupScanner, "Callable[[dict[str, Any]], Any] | None",
               "regex.Pattern[str] | None", tuple[str, ...], GapCheck]
_SETUPS: ObjectCache[_Setup] = ObjectCache()


def findall_scanner(args: Mapping[str, Any]) -> RegexItemsScanner:
    """The scanner of an ``x-findall`` region (see the module docstring)."""
    setup = _SETUPS.get(args)
    if setup is None:
        setup = _SETUPS.put(args, _findall_setup(args))
    return RegexItemsScanner(*setup)


def _prepared(spec: Mapping[str, Any]) -> Callable[[str], Any]:
    """A nested ``{"name", "args"}`` parser spec with its parser looked up and its arguments bound
    (what :func:`~..content.run_parser` does at every call)."""
    return prepare_parser(get_parser(spec.get("name", "text")), spec.get("args", {}))


def _findall_setup(args: Mapping[str, Any]) -> _Setup:
    from chatcodec.response_templates.scanners import scanner_for

    pattern: str = args["pattern"]
    parsers: Mapping[str, Mapping[str, Any]] = args.get("value_parsers", {})
    groups = list(compile_user_pattern(pattern).groupindex)
    prepared = {name: _prepared(spec) for name, spec in parsers.items()}

    def parse(name: str, text: str) -> Any:
        parser = prepared.get(name)
        return text if parser is None else parser(text)

    def scan(name: str) -> ValueScanner | None:
        spec = parsers.get(name)
        if spec is None:
            return scanner_for("text", _VERBATIM)
        return scanner_for(spec.get("name", "text"), spec.get("args", _NO_ARGS))

    # the arguments group (as text when it has no value parser), else the last group whose parser streams
    into = args.get("into", "list")
    candidates = [g for g in groups if (g in parsers or g == "arguments") and scan(g) is not None]
    streamable = [g for g in candidates if _split(pattern, g, into)]
    group = "arguments" if "arguments" in streamable else (streamable[-1] if streamable else None)
    between = compile_user_pattern(args.get("between", r"\s*"))
    return (pattern, into, group, parse, scan, _findall_entry if into == "dict" else None, between,
            tuple(candidates), findall_gap_check(args))


def xml_inline_scanner(args: Mapping[str, Any]) -> RegexItemsScanner | None:
    """The scanner of an ``xml-inline`` region, or ``None`` with ``merge_duplicates``."""
    if args.get("merge_duplicates"):
        return None
    setup = _SETUPS.get(args)
    if setup is None:
        setup = _SETUPS.put(args, _xml_inline_setup(args))
    return RegexItemsScanner(*setup)


def _xml_inline_setup(args: Mapping[str, Any]) -> _Setup:
    from chatcodec.response_templates.scanners import scanner_for

    spec = args.get("value_parser")
    value_parser = None if spec is None else _prepared(spec)

    def parse(name: str, text: str) -> Any:
        if name != "value" or value_parser is None:
            return text
        return value_parser(text)

    def scan(name: str) -> ValueScanner | None:
        if spec is None:
            return scanner_for("text", _VERBATIM)
        return scanner_for(spec.get("name", "text"), spec.get("args", _NO_ARGS))

    def entry(values: dict[str, Any]) -> Any:
        if "value" in values:
            return values["value"]
        try:
            return parse("value", "")  # the value group did not take part
        except ValueError:
            return _NO_ENTRY

    skip_tags = tuple(args["skip_tags"]) if "skip_tags" in args else None

    def gaps(text: str, spans: Sequence[tuple[int, int]]) -> None:
        check_xml_gaps(text, spans, skip_tags)

    return (args["tag_pattern"], "dict", "value", parse, scan, entry, None, ("value",), gaps)
