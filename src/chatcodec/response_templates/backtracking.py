"""How long a template regex may take on model output: proved at load, bounded at run time.

A backtracking engine (``regex``, like ``re``) can take exponential time on a few dozen characters
(``(a|aa)+b`` on 34 ``a``: 48 s), and a template comes from a stranger. Every regex of a response
template that runs on model output (``open_pattern``, ``close_pattern``, ``start_anchor_pattern``,
``tag_pattern``, ``x-findall``'s ``pattern`` and ``between``) is therefore judged when the
template loads (:func:`judge`), by reading its structure:

* **linear**: every repetition repeats one character class or a fixed run of them, and what may
  follow it can never start another round (``\\s*</think>``, ``<function=(?P<name>[^>]+)>``):
  one match attempt reads each character a bounded number of times. Nothing else (no
  back-references, conditionals, case-insensitivity, verbose mode, ...) is used.
* **catastrophic**: a repetition of something that itself repeats or chooses between
  alternatives that can match the same text (``(a|aa)+``, ``(a+)+``, ``(\\w+\\s?)+``), *and* a
  pumped input built from the pattern (``a`` repeated, then a character that ends every match)
  makes one search run past :data:`PROOF_SECONDS`: the template is refused, naming the field and
  the key (:func:`catastrophe`). The proof is a measured search, so no working pattern is refused
  on a guess.
* **unknown**: everything else.

At run time every search or match of a pattern that is not linear, and of any pattern over more
than :data:`UNTIMED_SPAN` characters, runs with the ``regex`` module's ``timeout`` of
:data:`REGEX_TIMEOUT` seconds (CPU time of the process); a linear pattern over a short span runs
without it, so the common per-chunk path pays nothing (reading the clock costs more than such a
search). A search that runs out of time raises :class:`RegexTimeout`, which the engine turns into
a ``ResponseParseError`` (``errors="strict"``) or a ``parse_errors`` record (``errors="keep"``)
naming the field and the key.
"""

from __future__ import annotations

import array
import sys
from functools import lru_cache

import regex

from chatcodec.response_templates.lazy_pattern import LazyPattern
from chatcodec.response_templates.pattern_tokens import tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PROOF_SECONDS",
    "REGEX_TIMEOUT",
    "UNTIMED_SPAN",
    "RegexTimeout",
    "Verdict",
    "catastrophe",
    "describe_timeout",
    "judge",
]

#: Longest time, in seconds of the process's CPU time (the ``regex`` module's clock), that one
#: search or match of a template regex may run on model output before it is abandoned.
REGEX_TIMEOUT = 1.0
#: A search of a pattern proved linear over at most this many characters runs without the clock:
#: it reads at most about this number squared characters (a few milliseconds).
UNTIMED_SPAN = 2048
#: How long one search of a pumped input (at most :data:`_PUMPS` rounds) may take before the
#: pattern is proved catastrophic at load.
PROOF_SECONDS = 0.1

_PUMPS = (12, 20, 28, 40, 56)
_BREAKERS = ("\x00", "\x01", "!", "~", "\uffff", "\U0010fffd")


class RegexTimeout(Exception):
    """A template regex ran out of :data:`REGEX_TIMEOUT` on model output.

    Attributes:
        where: the JSON paths of the patterns that were being searched (the suspects first).
    """

    def __init__(self, where: tuple[str, ...]) -> None:
        self.where = where
        super().__init__(describe_timeout(where))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.where,))


def describe_timeout(where: tuple[str, ...]) -> str:
    """The problem reported when searching the patterns at ``where`` ran out of time."""
    what = " or ".join(where) if where else "a template regex"
    return (f"searching {what} took longer than REGEX_TIMEOUT ({REGEX_TIMEOUT:g} s of CPU time in "
            "chatcodec.response_templates.backtracking); the pattern backtracks too much on this text. "
            "Nothing after this point was matched against the template's delimiters")


# -- the structure of a pattern --------------------------------------------------------------------

class _Node:
    __slots__ = ("atom", "group", "high", "items", "kind", "low", "possessive", "source")

    def __init__(self, kind: str, items: list[_Node] | None = None, atom: str = "", group: str = "",
                 low: int = 0, high: int | None = None, possessive: bool = False, source: str = "") -> None:
        self.kind = kind  # atom, zero, seq, alt, group, repeat, opaque
        self.items: list[_Node] = [] if items is None else items
        self.atom = atom  # an atom's token
        self.group = group  # plain, atomic, ahead, behind
        self.low = low
        self.high = high
        self.possessive = possessive
        self.source = source  # the pattern text of this node


_ZERO_TOKENS = frozenset({"^", "$", "\\A", "\\Z", "\\z", "\\b", "\\B", "\\G", "\\m", "\\M"})
_OPAQUE_ESCAPES = frozenset("123456789gLXK")
_PLAIN_GROUP = LazyPattern(r"\((?:\?:|\?P?<\w+>)?")
_HARMLESS_FLAGS = LazyPattern(r"\(\?[sm]*-?[sm]*[:)]", standard=True)
_COUNT = LazyPattern(r"\{([0-9]*)(?:(,)([0-9]*))?\}", standard=True)


class _Reader:
    """Turns the tokens of a pattern into a tree (a small recursive-descent parser)."""

    def __init__(self, source: str) -> None:
        self.tokens = tokens(source)
        self.at = 0

    def read(self) -> _Node:
        node = self._alternation()
        if self.at < len(self.tokens):  # an unbalanced ")": let the regex module have said so
            return _Node("opaque", source="".join(self.tokens))
        return node

    def _alternation(self) -> _Node:
        start = self.at
        branches = [self._sequence()]
        while self.at < len(self.tokens) and self.tokens[self.at] == "|":
            self.at += 1
            branches.append(self._sequence())
        source = "".join(self.tokens[start : self.at])
        return branches[0] if len(branches) == 1 else _Node("alt", branches, source=source)

    def _sequence(self) -> _Node:
        start = self.at
        items: list[_Node] = []
        while self.at < len(self.tokens) and self.tokens[self.at] not in ("|", ")"):
            item = self._quantified(self._primary())
            if item is not None:
                items.append(item)
        return _Node("seq", items, source="".join(self.tokens[start : self.at]))

    def _primary(self) -> _Node | None:
        token = self.tokens[self.at]
        self.at += 1
        if token.startswith("(?#"):
            return None
        if (token.startswith("(") and not token.endswith(")")) or token.startswith("(?("):
            return self._group(token)
        if token.startswith("("):  # inline flags (?s) or a call (?R), (?1), (?&name)
            return _Node("zero" if _HARMLESS_FLAGS.fullmatch(token) else "opaque", source=token)
        if token in _ZERO_TOKENS:
            return _Node("zero", source=token)
        if token.startswith("{") or token in ("*", "+", "?"):
            return _Node("opaque", source=token)  # a quantifier with nothing to repeat, fuzzy constraints
        if token.startswith("\\") and len(token) >= 2 and token[1] in _OPAQUE_ESCAPES:
            return _Node("opaque", source=token)
        return _Node("atom", atom=token, source=token)

    def _group(self, opening: str) -> _Node:
        start = self.at - 1
        body = self._alternation()
        closed = self.at < len(self.tokens) and self.tokens[self.at] == ")"
        self.at += closed
        source = "".join(self.tokens[start : self.at])
        kinds = {"(?>": "atomic", "(?=": "ahead", "(?!": "ahead", "(?<=": "behind", "(?<!": "behind"}
        if opening in kinds:
            return _Node("group", [body], group=kinds[opening], source=source)
        if _PLAIN_GROUP.fullmatch(opening) or _HARMLESS_FLAGS.fullmatch(opening):
            return _Node("group", [body], group="plain", source=source)
        return _Node("opaque", [body], source=source)  # conditionals, branch resets, other flags

    def _quantified(self, node: _Node | None) -> _Node | None:
        if node is None or self.at >= len(self.tokens):
            return node
        token = self.tokens[self.at]
        if token in ("*", "+", "?"):
            low, high = (0, None) if token == "*" else (1, None) if token == "+" else (0, 1)
        elif (count := _COUNT.fullmatch(token)) is not None and token != "{}":
            first, comma, last = count.groups()
            low = int(first or 0)
            high = (int(last) if last else None) if comma else low
        else:
            return node
        self.at += 1
        possessive = False
        if self.at < len(self.tokens) and self.tokens[self.at] in ("?", "+"):
            possessive = self.tokens[self.at] == "+"
            self.at += 1
        return _Node("repeat", [node], low=low, high=high, possessive=possessive,
                     source=node.source + "".join(self.tokens[self.at - 1 - possessive : self.at]))


# -- character classes ------------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def _class(token: str) -> regex.Pattern[str] | None:
    try:
        return regex.compile(token, regex.DOTALL)
    except regex.error:
        return None


@lru_cache(maxsize=1)
def _every_character() -> str:
    """Every code point once, in order (U+0000 to U+10FFFF, surrogates included), decoded from its
    UTF-32 bytes, laid out a plane at a time by slice assignment: a loop of ``chr`` over 1.1 M code
    points costs ~0.1 s of the first load of a template that asks."""
    low = array.array("H", range(0x10000))  # the low 16 bits of every code point of a plane
    if sys.byteorder == "big":
        low.byteswap()
    low_bytes = low.tobytes()
    plane = bytearray(4 * 0x10000)  # little-endian UTF-32: low byte, next byte, plane number, zero
    plane[0::4] = low_bytes[0::2]
    plane[1::4] = low_bytes[1::2]
    planes = []
    for number in range(0x11):
        plane[2::4] = bytes((number,)) * 0x10000
        planes.append(bytes(plane))
    return b"".join(planes).decode("utf-32-le", "surrogatepass")


#: An atom that names no character past U+00FF and no property but ``\s``, ``\w`` and ``\d``:
#: ``.``, one of those escapes or their negations, or a bracket class of printable ASCII
#: characters, escaped punctuation, control escapes (``\n``), two-digit ``\x`` escapes and those
#: escapes (``[^\s<=]``, ``[\w.\-]``). Past U+00FF such an atom tells characters apart only by
#: whether they are ``\s``, ``\w`` and ``\d``.
_LATIN1_ATOM = LazyPattern(
    r"\.|\\[sSwWdD]|\[\^?(?:\\[sSwWdDnrtfva]|\\x[0-9a-fA-F]{2}|\\[ -/:-@\[-`{-~]|[ -Z^-~])+\]",
    standard=True)
#: One character past U+00FF for each combination of ``\s``, ``\w`` and ``\d`` that characters
#: past U+00FF have in the ``regex`` module's Unicode tables (tested against every code point):
#: a word character, one that is none of the three, a decimal digit, a space.
_BEYOND_LATIN1 = "\u0100\u02c2\u0660\u2000"


@lru_cache(maxsize=1)
def _latin1_and_beyond() -> str:
    """The characters that stand for every code point when two :data:`_LATIN1_ATOM` atoms are
    compared: all of Latin-1, then :data:`_BEYOND_LATIN1`."""
    return "".join(map(chr, range(0x100))) + _BEYOND_LATIN1


@lru_cache(maxsize=4096)
def _overlap(first: str, second: str) -> bool:
    """Whether some character matches both atoms (``.`` and unknown atoms overlap everything)."""
    a, b = _class(first), _class(second)
    if a is None or b is None:
        return True
    for single, other in ((first, b), (second, a)):
        char = _single(single)
        if char is not None:
            return other.fullmatch(char) is not None
    # Some code point where both match: one search over all of them, with the rarer atom (fewer
    # matches in Latin-1) as the lookahead, so most positions fail there at once (~40x faster than
    # the other order for [^\s<=] and \s). Either order finds the same positions. Two atoms
    # that name nothing past Latin-1 but \s, \w and \d need Latin-1 and one character of each
    # kind beyond it, not the 1.1 M code points (whose string costs ~20 ms to build).
    if _LATIN1_ATOM.fullmatch(first) and _LATIN1_ATOM.fullmatch(second):
        everything = _latin1_and_beyond()
    else:
        everything = _every_character()
    if len(a.findall(everything, 0, 0x100)) > len(b.findall(everything, 0, 0x100)):
        first, second = second, first
    both = _class(f"(?={first}){second}")
    return both is None or both.search(everything) is not None


def _single(token: str) -> str | None:
    """The one character an atom token stands for, or ``None`` for a class."""
    if len(token) == 1 and token != ".":
        return token
    if len(token) == 2 and token[0] == "\\" and not token[1].isalnum():
        return token[1]
    return {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\f": "\f", "\\v": "\v", "\\a": "\a"}.get(token)


# -- the verdict ----------------------------------------------------------------------------------

class Verdict:
    """What :func:`judge` found.

    Attributes:
        linear: every repetition is proved to read each character a bounded number of times.
        nested: repetitions of repetitions or of overlapping alternatives, the candidates for
            :func:`catastrophe`: their source text, sample text that leads to each, a sample of
            what it repeats, and sample text that may follow it.
    """

    __slots__ = ("linear", "nested")

    def __init__(self, linear: bool, nested: tuple[tuple[str, str, str, str], ...] = ()) -> None:
        self.linear = linear
        self.nested = nested

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdict) and (self.linear, self.nested) == (other.linear, other.nested)

    def __hash__(self) -> int:
        return hash((self.linear, self.nested))

    def __repr__(self) -> str:
        return f"Verdict(linear={self.linear}, nested={self.nested!r})"


class _First:
    __slots__ = ("atoms", "nullable")

    def __init__(self, atoms: list[str], nullable: bool) -> None:
        self.atoms = atoms
        self.nullable = nullable


class _Judge:
    def __init__(self) -> None:
        self.linear = True
        self.nested: list[tuple[str, str, str, str]] = []

    def first(self, node: _Node) -> _First:
        if node.kind == "atom":
            return _First([node.atom], False)
        if node.kind == "zero" or (node.kind == "group" and node.group in ("ahead", "behind")):
            return _First([], True)
        if node.kind == "opaque":
            return _First(["."], True)
        if node.kind == "seq":
            atoms: list[str] = []
            for item in node.items:
                found = self.first(item)
                atoms += found.atoms
                if not found.nullable:
                    return _First(atoms, False)
            return _First(atoms, True)
        if node.kind == "alt":
            found_all = [self.first(branch) for branch in node.items]
            return _First([a for f in found_all for a in f.atoms], any(f.nullable for f in found_all))
        inner = self.first(node.items[0])
        return _First(inner.atoms, inner.nullable or (node.kind == "repeat" and node.low == 0))

    def walk(self, node: _Node, follow: list[str], lead: str, trail: str) -> None:
        """Check ``node``, after which ``follow``'s atoms may come; ``lead`` is sample text that
        reaches it and ``trail`` sample text that may come after it."""
        if node.kind == "opaque":
            self.linear = False
            for item in node.items:
                self.walk(item, ["."], lead, trail)
        elif node.kind == "seq":
            # what may start the rest after each item, and sample text of that rest: built from the
            # end once (what first() and _sample() give for each rest), not once per item
            rests: list[tuple[_First, str]] = []
            atoms: list[str] = []
            nullable, sample = True, ""
            samples = [_sample(item) for item in node.items]
            for item, item_sample in zip(reversed(node.items), reversed(samples), strict=True):
                rests.append((_First(atoms, nullable), sample))
                found = self.first(item)
                atoms = found.atoms + atoms if found.nullable else list(found.atoms)
                nullable = nullable and found.nullable
                sample = item_sample + sample
            rests.reverse()
            for item, item_sample, (after, rest_sample) in zip(node.items, samples, rests, strict=True):
                self.walk(item, after.atoms + (follow if after.nullable else []), lead, rest_sample + trail)
                lead += item_sample
        elif node.kind == "alt":
            for branch in node.items:
                self.walk(branch, follow, lead, trail)
        elif node.kind == "group":
            inner = [] if node.group in ("ahead", "behind", "atomic") else follow
            self.walk(node.items[0], inner, lead, trail)
            if node.group == "behind" and _unbounded(node.items[0]):
                self.linear = False
        elif node.kind == "repeat":
            self._repeat(node, follow, lead, trail)

    def _repeat(self, node: _Node, follow: list[str], lead: str, trail: str) -> None:
        body = node.items[0]
        if node.high is not None and node.high <= 1:
            self.walk(body, follow, lead, trail)
            return
        if not _simple(body):
            self.linear = False
            units = dict.fromkeys(unit for unit in (_sample(body, least=True), _sample(body)) if unit)
            self.nested.extend((node.source, lead, unit, trail) for unit in units)
            self.walk(body, ["."], lead, trail)
            return
        if node.possessive:
            return
        starts = self.first(body).atoms
        if any(_overlap(a, b) for a in starts for b in follow):
            self.linear = False  # what follows may start another round: polynomial, not proved


def _simple(node: _Node) -> bool:
    """One character class, a fixed run of them, or a choice between exclusive characters."""
    if node.kind in ("atom", "zero"):
        return True
    if node.kind == "group" and node.group in ("plain", "atomic"):
        return _simple(node.items[0])
    if node.kind == "seq":
        return all(item.kind in ("atom", "zero") or (item.kind == "group" and (
            item.group in ("ahead", "behind") or (_simple(item.items[0]) and _fixed(item.items[0]))))
            for item in node.items)
    if node.kind == "alt":
        singles = [branch.items[0].atom if branch.kind == "seq" and len(branch.items) == 1
                   and branch.items[0].kind == "atom" else None for branch in node.items]
        if any(s is None for s in singles):
            return False
        atoms = [s for s in singles if s is not None]
        return not any(_overlap(a, b) for i, a in enumerate(atoms) for b in atoms[i + 1 :])
    return False


def _fixed(node: _Node) -> bool:
    if node.kind in ("atom", "zero"):
        return True
    if node.kind in ("seq", "group"):
        return all(_fixed(item) for item in node.items)
    return False


def _unbounded(node: _Node) -> bool:
    if node.kind == "repeat" and node.high is None:
        return True
    return any(_unbounded(item) for item in node.items)


def _sample(node: _Node, least: bool = False) -> str:
    """Some short text that ``node`` matches (best effort: it only feeds :func:`catastrophe`);
    with ``least``, optional parts are left out."""
    if node.kind == "atom":
        char = _single(node.atom)
        if char is not None:
            return char
        pattern = _class(node.atom)
        if pattern is None:
            return ""
        return next((c for c in "a0 _\n<>x.-Z" if pattern.fullmatch(c)), "")
    if node.kind == "seq":
        return "".join(_sample(item, least) for item in node.items)
    if node.kind == "alt":
        return _sample(node.items[0], least)
    if node.kind == "group":
        return "" if node.group in ("ahead", "behind") else _sample(node.items[0], least)
    if node.kind == "repeat":
        return _sample(node.items[0], least) * (node.low if least else max(node.low, 1))
    return ""


@lru_cache(maxsize=1024)
def judge(source: str) -> Verdict:
    """Read the structure of a (compiled, valid) pattern: linear, or the candidates for a catastrophe.

    Args:
        source: the pattern's text as compiled (delimiters after ``$`` is rewritten).

    Returns:
        The verdict.
    """
    tree = _Reader(source).read()
    walker = _Judge()
    walker.walk(tree, [], "", "")
    return Verdict(walker.linear, tuple(walker.nested))


def catastrophe(pattern: regex.Pattern[str]) -> str | None:
    """Prove at load that ``pattern`` backtracks catastrophically, or return ``None``.

    Each repetition :func:`judge` flags is pumped: the text that leads to it, its body repeated
    12 to 56 times, a character nothing in the pattern matches, and (in a second try) the text that
    may follow the repetition (so that a required literal is present). When one search of such an
    input takes longer than :data:`PROOF_SECONDS` of CPU time, the pattern is refused.

    Args:
        pattern: the compiled pattern.

    Returns:
        The problem, worded for a load error, or ``None`` (no proof: the pattern may still be slow,
        and is then searched with :data:`REGEX_TIMEOUT`).
    """
    verdict = judge(pattern.pattern)
    for where, lead, unit, trail in verdict.nested:
        breaker = next((c for c in _BREAKERS if pattern.search(c) is None and c not in unit), "\x00")
        for count in _PUMPS:
            for attack in (lead + unit * count + breaker, lead + unit * count + breaker + trail):
                try:
                    pattern.search(attack, timeout=PROOF_SECONDS)
                except TimeoutError:
                    return (f"this pattern backtracks catastrophically: {where!r} repeats something that "
                            "can match the same text in many ways (a repetition inside a repetition, or "
                            "alternatives that overlap), so the time to fail multiplies with every few "
                            f"more characters: searching {attack[:40]!r}{'...' if len(attack) > 40 else ''} "
                            f"({len(attack)} characters: {unit!r} {count} times) took longer than "
                            f"{PROOF_SECONDS:g} s. Make the alternatives exclusive, or repeat a single "
                            "character class")
    return None
