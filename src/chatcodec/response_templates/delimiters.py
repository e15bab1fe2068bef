"""Delimiters: one field's open or close, as literals or a regex, and what is known about it.

A :class:`Delimiter` is compiled once, when the template loads. Besides its pattern, this module
works out the facts that the matchers (:mod:`~chatcodec.response_templates.matcher`) use to skip
work on every chunk: which characters can start a match (:func:`first_chars`), which whitespace a
pending match keeps absorbing (:func:`absorbed_whitespace`), and whether a match at the buffer
edge waits for one more character (``can_extend``).

Rule kept here (SPEC §1.2): every pattern is compiled with ``DOTALL`` and without ``MULTILINE``,
and ``$`` means the end of the input. It is rewritten to ``\\Z`` unless the pattern turns
MULTILINE on, because Python's ``$`` also matches before a final newline, and a chunk boundary
moves where that is (transformers 5.23 closed a ``$`` region early when a chunk ended with a
newline; 5.24 waits for the next chunk, but still ends the region before the output's final newline).
"""

from __future__ import annotations

from functools import lru_cache

import regex

from chatcodec.response_templates.backtracking import judge
from chatcodec.response_templates.lazy_pattern import LazyPattern
from chatcodec.response_templates.lookbehind import _measure
from chatcodec.response_templates.pattern_size import check_size
from chatcodec.response_templates.pattern_tokens import tokens, top_level_alternatives

__all__ = [
    "RUN_WHITESPACE",
    "WHITESPACE",
    "Delimiter",
    "absorbed_whitespace",
    "after_whitespace",
    "after_whitespace_then",
    "alphabet",
    "compile_pattern",
    "context_dependent",
    "empty_match_problem",
    "first_chars",
    "literal_delimiter",
    "regex_delimiter",
    "rewrite_dollar",
    "unsupported_construct",
]

#: The characters of a whitespace run that a ``\\s*``-style delimiter can keep absorbing.
WHITESPACE = " \t\n\r"
#: Every ASCII whitespace character: what a whitespace run in the text may be made of.
RUN_WHITESPACE = " \t\n\r\f\v"

_WS_CONTEXTS = ("", "x", " ", "\n", ">")
# Constructs that make what can start a match depend on the text before it. A ``\b`` right after a
# literal word character (``analysis\b``) does not: the match has read that character itself, so
# the boundary only looks at the match and what follows it.
_CONTEXT_DEPENDENT = LazyPattern(r"\(\?<[=!]|\\[BAGmMK]|(?<!(?<!\\)[A-Za-z0-9_])\\b|(?<![\[\\])\^|\(\?\(",
                                 standard=True)
# The same constructs but look-behinds: a look-behind that only reads what the match has already
# read (:func:`_reads_only_the_match`) leaves what can start a match alone.
_CONTEXT_DEPENDENT_BUT_LOOKBEHIND = LazyPattern(
    r"\\[BAGmMK]|(?<!(?<!\\)[A-Za-z0-9_])\\b|(?<![\[\\])\^|\(\?\(", standard=True)
# The tokens of a literal prefix: a character that stands for itself, or an escaped one.
_LITERAL_TOKEN = LazyPattern(r"[^\\.^$|?*\+()\[\]{}]|\\[^A-Za-z0-9]|\\[ntrfv]", standard=True)
_MULTILINE_FLAG = LazyPattern(r"\(\?[a-zA-Z]*m[a-zA-Z]*[):]", standard=True)
# Escapes and constructs after which nearly any character may appear in a match.
_ANY_CHAR = LazyPattern(r"(?<!\\)\.|\\[SWDpPXNxuUhHVR0-7]|\[\^|\(\?[a-zA-Z]*i|\\[xuUN]", standard=True)
_ESCAPED = {
    "s": WHITESPACE + "\f\v", "d": "0123456789", "n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v",
    "w": "".join(chr(c) for c in range(128) if chr(c).isalnum()) + "_",
}


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


_KEEP_OUT = "\\K (keep out) cannot be used in a delimiter: it moves where the match starts, so the " \
    "delimiter would never match as written. Match the whole delimiter instead"
_REVERSE = "the reverse flag (?r) cannot be used in a delimiter: delimiters are searched forwards, so " \
    "it would never match. Remove the flag"


def unsupported_construct(pattern: regex.Pattern[str]) -> str | None:
    """Why a compiled template regex cannot delimit anything, or ``None`` when it can.

    ``\\K`` and the reverse flag ``(?r)`` compile, but the matcher searches forwards and takes the
    match from where it starts, so such a delimiter would load and then never match.

    Args:
        pattern: the compiled pattern.

    Returns:
        The problem, worded for a load error, or ``None``.
    """
    if pattern.flags & regex.REVERSE:
        return _REVERSE
    source, i = pattern.pattern, 0
    while i < len(source):
        if source[i] == "\\":
            if source[i + 1 : i + 2] == "K":
                return _KEEP_OUT
            i += 2
        elif source[i] == "[":  # \\K is not valid inside a class: skip it whole
            i = _class_end(source, i)
        else:
            i += 1
    return None


def _class_end(source: str, start: int) -> int:
    i = start + 1
    if source[i : i + 1] == "^":
        i += 1
    if source[i : i + 1] == "]":
        i += 1
    while i < len(source) and source[i] != "]":
        i += 2 if source[i] == "\\" else 1
    return i + 1


#: Text before and after the empty-match probes of :func:`empty_match_problem`: after a letter, a
#: space and a newline, every printable ASCII character, tab, newline and a few non-ASCII ones.
_EMPTY_BEFORE = ("x", " ", "\n")
_EMPTY_AFTER = (*(chr(code) for code in range(32, 127)), "\t", "\n", "é", "中", "😀")


def empty_match_problem(pattern: regex.Pattern[str]) -> str | None:
    """Why a delimiter (or start anchor) pattern cannot be used: it matches the empty string between
    ordinary characters, or ``None``.

    A pattern such as ``a*``, ``x?``, ``""``, ``(?=.)`` or ``\b`` matches nothing at most places of
    any text, so it would open or close regions everywhere: the output would be shredded into empty
    regions and text would land where nobody expects it. Refused: matching the empty string
    between two characters for more than half of the probes (after a letter, a space or a newline,
    before each printable ASCII character, tab, newline and a few non-ASCII ones). Zero-width
    patterns that wait for specific text stay allowed: ``(?=<tool_call>)``, ``(?=<)``, ``^``,
    ``\\Z``, ``(?<=\\)\\])``.

    Args:
        pattern: the compiled pattern.

    Returns:
        The problem, worded for a load error, or ``None``.
    """
    empty = [before + after for before in _EMPTY_BEFORE for after in _EMPTY_AFTER
             if (found := pattern.match(before + after, len(before))) is not None
             and found.end() == len(before)]
    if 2 * len(empty) <= len(_EMPTY_BEFORE) * len(_EMPTY_AFTER):
        return None
    return (f"this pattern matches the empty string almost everywhere (e.g. between {empty[0][:-1]!r} "
            f"and {empty[0][-1]!r}), so it would open or close a region between any two characters and "
            "shred the output. A delimiter must match text (a look-ahead must wait for specific text, "
            "such as (?=<tool_call>))")


def compile_pattern(source: str) -> regex.Pattern[str]:
    """Compile a template regex: ``DOTALL``, no ``MULTILINE``, ``$`` as the end of the input.

    Args:
        source: the regex as written in the template.

    Returns:
        The compiled pattern.

    Raises:
        regex.error: the pattern is invalid, or too big to compile
            (:func:`~chatcodec.response_templates.pattern_size.check_size`).
    """
    check_size(source)
    return regex.compile(rewrite_dollar(source), regex.DOTALL)


class Delimiter:
    """One field's open or close delimiter.

    Attributes:
        field: the field name.
        is_open: ``True`` for an open, ``False`` for a close.
        pattern: the delimiter alone (literals are escaped and ordered longest first).
        literals: the literal alternatives, longest first; ``None`` for a regex delimiter.
        rank: the tie-break after position and length: opens before closes, then field name.
        settled: for a regex delimiter, matches ``pattern`` and then fails without backtracking into
            it; a *partial* match of ``settled`` at a position means a higher-priority way to
            match there ran into the end of the buffer, so more input could still change the
            match found there (``\\[TOOL_CALLS\\]\\w+(?:\\[ARGS\\])?`` on ``[TOOL_CALLS]read[``).
            Lower-priority paths, such as a lazy ``.*?`` going further, do not count.
        can_extend: one literal is a prefix of another (``["<think>", "<think>\n"]``); a match of
            this delimiter that reaches the buffer edge then waits for one more character, as in
            the reference (a regex delimiter waits too, unless its match is one of ``final``).
        linear: a match attempt is proved to read each character a bounded number of times
            (:func:`~chatcodec.response_templates.backtracking.judge`; literals always are).
        final: for a regex delimiter made only of literal alternatives and look-aheads
            (``</tool_call>|(?=<tool_call>|<\\|im_end\\|>)``), the literal alternatives that no other
            one extends: a match that is one of them cannot change with more input, so it commits
            at the buffer edge at once, as a literal delimiter does. Empty for any other regex.
        reads_end: for a regex delimiter, the pattern holds an assertion that the end of the input
            can satisfy (``\\Z``, a MULTILINE ``$``, a negative look-ahead such as ``(?!.)``, a word
            boundary): a match of it that ends before the buffer edge may still lean on that edge
            (``(?=\\n?\\Z)`` on ``ab\\n``), so the matcher checks it before committing.
    """

    __slots__ = ("can_extend", "field", "final", "is_open", "linear", "literals", "pattern", "rank",
                 "reads_end", "settled")

    def __init__(self, field: str, is_open: bool, pattern: regex.Pattern[str],
                 literals: tuple[str, ...] | None, rank: tuple[int, str], can_extend: bool = True,
                 settled: regex.Pattern[str] | None = None, linear: bool = True,
                 final: frozenset[str] = frozenset(), reads_end: bool = False) -> None:
        self.field = field
        self.is_open = is_open
        self.pattern = pattern
        self.literals = literals
        self.rank = rank
        self.can_extend = can_extend
        self.settled = settled
        self.linear = linear
        self.final = final
        self.reads_end = reads_end

    def _key(self) -> tuple[object, ...]:
        return (self.field, self.is_open, self.pattern, self.literals, self.rank, self.can_extend,
                self.settled, self.linear, self.final, self.reads_end)

    def __eq__(self, other: object) -> bool:
        # equal delimiters of two loads share the analyses cached per delimiter (after_whitespace)
        return isinstance(other, Delimiter) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Delimiter({self.field!r}, is_open={self.is_open}, pattern={self.pattern.pattern!r})"


def literal_delimiter(field: str, is_open: bool, literals: list[str]) -> Delimiter:
    """A delimiter matching any of ``literals`` (non-empty strings; the longest wins at one position).

    Args:
        field: the field it opens or closes.
        is_open: ``True`` for an open, ``False`` for a close.
        literals: the alternatives (duplicates are dropped).

    Returns:
        The compiled delimiter.
    """
    ordered = tuple(sorted(dict.fromkeys(literals), key=len, reverse=True))
    pattern = regex.compile("|".join(regex.escape(s) for s in ordered), regex.DOTALL)
    can_extend = any(a != b and a.startswith(b) for a in ordered for b in ordered)
    return Delimiter(field, is_open, pattern, ordered, (0 if is_open else 1, field), can_extend)


def regex_delimiter(field: str, is_open: bool, source: str) -> Delimiter:
    """A delimiter matching the regex ``source``.

    Args:
        field: the field it opens or closes.
        is_open: ``True`` for an open, ``False`` for a close.
        source: the regex as written in the template.

    Returns:
        The compiled delimiter, with its ``settled`` probe.

    Raises:
        regex.error: the pattern is invalid.
    """
    pattern = compile_pattern(source)
    settled = regex.compile(f"(?:{pattern.pattern})(*PRUNE)(?!)", regex.DOTALL)
    return Delimiter(field, is_open, pattern, None, (0 if is_open else 1, field), True, settled,
                     judge(pattern.pattern).linear, final_literals(source),
                     _READS_END.search(pattern.pattern) is not None)


# Assertions that the end of the input can satisfy (regex's \\Z, $, \\b, \\B, \\m, \\M and
# negative look-aheads); a backslash pair that merely escapes a backslash only makes this err on
# the safe side.
_READS_END = LazyPattern(r"\\[ZbBmM]|\$|\(\?!", standard=True)


#: Characters that mean something in a regex outside a class (a token of one of them is no literal).
_SPECIAL = frozenset(".^$*+?{}[]()|\\")


def final_literals(source: str) -> frozenset[str]:
    """The literal alternatives of ``source`` that a match cannot outgrow (``Delimiter.final``).

    Only a pattern whose top-level alternatives are each a plain literal (characters and escaped
    punctuation) or one look-ahead ``(?=...)`` qualifies; a literal that another literal
    alternative extends (``a|ab``) is left out.

    Args:
        source: the regex as written in the template.

    Returns:
        The literals, or an empty set when the pattern does not qualify.
    """
    alternatives = top_level_alternatives(tokens(source))
    literals: list[str] = []
    for parts in alternatives:
        if len(parts) >= 2 and parts[0] == "(?=" and parts[-1] == ")" and _balanced(parts[1:-1]):
            continue  # a look-ahead: zero-width, it never makes a longer match
        text = _literal_text(parts)
        if text is None or not text:
            return frozenset()
        literals.append(text)
    return frozenset(a for a in literals if not any(b != a and b.startswith(a) for b in literals))


def _balanced(parts: list[str]) -> bool:
    depth = 0
    for token in parts:
        if token.startswith("(") and not token.startswith("(?#"):
            depth += 1
        elif token == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _literal_text(parts: list[str]) -> str | None:
    """The text a run of tokens matches when every token is a literal character, else ``None``."""
    out = []
    for token in parts:
        if len(token) == 1 and token not in _SPECIAL:
            out.append(token)
        elif len(token) == 2 and token[0] == "\\" and not token[1].isalnum() and token[1] not in " \t\n":
            out.append(token[1])
        else:
            return None
    return "".join(out)


def absorbed_whitespace(delimiter: Delimiter) -> str:
    """The whitespace characters that a pending match of ``delimiter`` keeps absorbing.

    For ``\\s*</think>`` that is all of :data:`WHITESPACE`: a run of spaces, however long, is still
    a partial match, so the engine need not rescan the run for every new space. Checked in several
    contexts (start of input, after a word, after whitespace, after ``>``); literals absorb nothing.

    Returns:
        A subset of :data:`WHITESPACE` (``""`` when nothing is absorbed).
    """
    if delimiter.literals is not None:
        return ""

    def absorbs(sample: str) -> bool:
        return all(delimiter.pattern.fullmatch(ctx + sample, len(ctx), partial=True) is not None
                   for ctx in _WS_CONTEXTS)

    chars = "".join(c for c in WHITESPACE if absorbs(c * 64))
    return chars if chars and absorbs(chars * 16) else ""


def context_dependent(delimiter: Delimiter) -> bool:
    """Whether what can start a match of a regex ``delimiter`` depends on the text before it
    (look-behinds, ``^``, ``\\b`` but after a literal word character, ``\\B``, ``\\A``, ``\\G``,
    conditionals); literals never do."""
    return delimiter.literals is None and _CONTEXT_DEPENDENT.search(delimiter.pattern.pattern) is not None


def first_chars(delimiter: Delimiter) -> str | None:
    """The ASCII characters that can start a match of ``delimiter`` (non-ASCII ones always may).

    Returns:
        The characters, or ``None`` when nearly any character may start a match or when that
        depends on the text before it (look-behinds, ``^``, ``\\b`` but after a literal word
        character, conditionals).
    """
    if delimiter.literals is not None:
        return "".join(sorted({lit[0] for lit in delimiter.literals}))
    pattern = _start_pattern(delimiter.pattern.pattern)
    if pattern is None:
        return None
    chars = "".join(chr(c) for c in range(128) if pattern.match(chr(c), partial=True) is not None)
    return None if len(chars) > 64 else chars


@lru_cache(maxsize=1024)
def _start_pattern(source: str) -> regex.Pattern[str] | None:
    """The pattern to read what a match of the regex ``source`` starts with: ``source`` itself, or
    ``None`` when that depends on the text before the match (:data:`_CONTEXT_DEPENDENT`). A ``^``
    outside a class is the one exception: it only limits *where* a match starts (the start of the
    text after the start anchor), never what it starts with, so the pattern without it, whose
    matches are a superset, answers (``<think>|^(?=</think>)`` starts with ``<``)."""
    if not _CONTEXT_DEPENDENT.search(source):
        return compile_pattern(source)
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        if source[i] == "\\":
            out.append(source[i : i + 2])
            i += 2
        elif source[i] == "[":
            end = _class_end(source, i)
            out.append(source[i:end])
            i = end
        else:
            if source[i] != "^":
                out.append(source[i])
            i += 1
    stripped = "".join(out)
    if _CONTEXT_DEPENDENT.search(stripped) is None:
        return compile_pattern(stripped)
    if _CONTEXT_DEPENDENT_BUT_LOOKBEHIND.search(stripped) is None and _reads_only_the_match(source, stripped):
        return compile_pattern(stripped)
    return None


def _reads_only_the_match(source: str, stripped: str) -> bool:
    """Whether every look-behind of ``stripped`` (``source`` without its ``^``) reads only text the
    match itself has already read: ``stripped`` starts with a literal prefix, outside any
    alternative, at least as long as the farthest any look-behind after it reaches back
    (``<arg_key>(?:(?<=<[^<>]{0,7})...)``, a prefix of 9 against a reach of 8). The characters a
    match starts with are then those of the prefix, whatever text comes before the match. A
    look-behind at the start of the pattern, one that reaches further back than the prefix is long
    (or an unbounded one), a top-level alternative, verbose mode (spaces are not literal) or full
    case folding (a literal may match fewer characters) leave them unknown: ``False``. So does
    ``^`` or ``\\A`` inside a look-behind in ``source`` (such a delimiter does not load)."""
    parts = tokens(stripped)
    if len(top_level_alternatives(parts)) > 1:
        return False
    if compile_pattern(stripped).flags & (regex.VERBOSE | regex.FULLCASE):
        return False
    prefix = 0
    while prefix < len(parts) and _LITERAL_TOKEN.fullmatch(parts[prefix]) is not None:
        following = parts[prefix + 1] if prefix + 1 < len(parts) else ""
        if following in ("?", "*", "+") or following.startswith("{"):  # the literal may not be there
            break
        prefix += 1
    if prefix == 0 or _measure(source)[1]:
        return False
    reach, _ = _measure("".join(parts[prefix:]))
    return reach is not None and reach <= prefix


#: A repetition count beyond the sampled runs' lengths (``{9}``, ``{12,}``, ``{3,40}``).
_LARGE_COUNT = LazyPattern(r"\{(?:[0-9]{2,}|9)|,(?:[0-9]{2,}|9)\}", standard=True)
#: Whitespace runs tried before every ASCII character: each whitespace character repeated 1 to 8
#: times, and mixed runs.
_WS_LEADS = (
    *(char * count for char in RUN_WHITESPACE for count in range(1, 9)),
    " \n", "\n ", " \t", "\t ", "\r\n", "\n\t", "\t\n", " \n ", "\n \n", "  \n", "\n  ", "\r\n\r\n",
)


@lru_cache(maxsize=1024)
def after_whitespace(delimiter: Delimiter) -> str | None:
    """The non-whitespace ASCII characters that can follow a leading whitespace run in a match.

    For ``\\s*</think>`` a space only matters when the run it starts is followed by one of them
    or reaches the end of the buffer, which keeps ordinary spaces from looking like the start of a
    delimiter. The answer must not miss a character (a chunk could then end inside a delimiter
    unnoticed): for literals it is exact; for a regex it is every ASCII character that follows one
    of several whitespace runs (each whitespace character repeated 1 to 8 times, and mixed runs),
    and when the pattern counts repetitions beyond what those runs cover (``\\n{12}``), also the
    non-whitespace part of its :func:`alphabet` (a superset; unknown alphabet: ``None``).

    Returns:
        The characters (``""`` when a match never starts with whitespace), or ``None`` when unknown
        (the answer depends on the text before the match).
    """
    if delimiter.literals is not None:
        led = {lit.lstrip(RUN_WHITESPACE)[:1] for lit in delimiter.literals if lit[0] in RUN_WHITESPACE}
        return "".join(sorted(led))
    pattern = _start_pattern(delimiter.pattern.pattern)
    if pattern is None:
        return None
    match = pattern.match
    # a run can only lead a match that may start with whitespace (most delimiters may not): then
    # no sample can match either, and the ~10,000 samples are skipped (template loading time)
    leads = _WS_LEADS if any(match(c, partial=True) is not None for c in RUN_WHITESPACE) else ()
    sampled = {chr(c) for c in range(128) if chr(c) not in RUN_WHITESPACE
               and any(match(lead + chr(c), partial=True) is not None for lead in leads)}
    if _LARGE_COUNT.search(delimiter.pattern.pattern):  # runs longer than the samples may matter
        chars = alphabet(delimiter)
        if chars is None:
            return None
        sampled |= chars.difference(RUN_WHITESPACE)
    return "".join(sorted(sampled))


#: The leading runs :func:`after_whitespace_then` samples: each whitespace character once to three
#: times, and the mixed runs of :data:`_WS_LEADS` (a pattern counting longer runs gets no answer).
_WS_LEADS_SHORT = (*(char * count for char in RUN_WHITESPACE for count in range(1, 4)), *_WS_LEADS[48:])


@lru_cache(maxsize=1024)
def after_whitespace_then(delimiter: Delimiter, first: str) -> str | None:
    """The ASCII characters that can come right after ``first`` when ``first`` follows a leading
    whitespace run in a match (``o`` for ``t`` in ``\\s*to=functions``), or ``None`` when the
    answer is not known or nearly any character can (more than 32).

    So a space before ``the`` need not look like the start of ``\\s*to=``: only a run followed
    by ``t`` and then one of these (or by ``t`` at the end of the text) does. Like
    :func:`after_whitespace` the answer must not miss a character: literals are exact; a regex is
    sampled with runs of each whitespace character one to three times and mixed runs, and a
    pattern that counts repetitions (``\\n{3}``, ``{2,}``) or whose start depends on the text before
    it gets ``None``.

    Args:
        delimiter: the delimiter.
        first: a non-whitespace ASCII character of :func:`after_whitespace` (``delimiter``).

    Returns:
        The characters, sorted, as one string, or ``None`` (also when a match may end with
        ``first``: then whatever follows it).
    """
    if delimiter.literals is not None:
        seconds = set()
        for literal in delimiter.literals:
            rest = literal.lstrip(RUN_WHITESPACE)
            if rest != literal and rest[:1] == first:
                if len(rest) == 1:  # the match ends with ``first``: whatever follows
                    return None
                seconds.add(rest[1])
        return "".join(sorted(seconds))
    pattern = delimiter.pattern.pattern
    if _CONTEXT_DEPENDENT.search(pattern) or _COUNTED.search(pattern):
        return None
    match = delimiter.pattern.match
    leads = [lead for lead in _WS_LEADS_SHORT if match(lead + first, partial=True) is not None]
    chars = {c for c in map(chr, range(128)) if any(match(lead + first + c, partial=True) is not None
                                                    for lead in leads)}
    return None if len(chars) > 32 else "".join(sorted(chars))


#: A counted repetition (``{2}``, ``{1,3}``): runs longer than the short samples may matter.
_COUNTED = regex.compile(r"\{[0-9]*,?[0-9]*\}")


def alphabet(delimiter: Delimiter) -> frozenset[str] | None:
    """The ASCII characters that can occur anywhere in a match of ``delimiter`` (an over-estimate).

    A partial match must run to the end of the buffer, so it cannot start before the last ASCII
    character outside this set; the matcher uses that to skip most partial-match searches.

    Returns:
        The characters, or ``None`` when the pattern may match nearly anything (``.``, negated
        classes, ``\\S``/``\\W``/``\\D``, Unicode properties, case-insensitivity, ranges).
    """
    if delimiter.literals is not None:
        return frozenset(c for lit in delimiter.literals for c in lit if c < "\x80")
    source = delimiter.pattern.pattern
    if delimiter.pattern.flags & regex.IGNORECASE or _ANY_CHAR.search(source) or _has_range(source):
        return None
    chars: set[str] = set()
    i = 0
    while i < len(source):
        if source[i] == "\\" and i + 1 < len(source):
            escaped = source[i + 1]
            chars.update(_ESCAPED.get(escaped, "" if escaped.isalnum() else escaped))
            i += 2
        else:
            chars.add(source[i])
            i += 1
    return frozenset(c for c in chars if c < "\x80")


def _has_range(source: str) -> bool:
    """Whether a character class in ``source`` holds a range such as ``a-z``."""
    in_class, i = False, 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if in_class and char == "-" and source[i - 1] != "[" and i + 1 < len(source) and source[i + 1] != "]":
            return True
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        i += 1
    return False
