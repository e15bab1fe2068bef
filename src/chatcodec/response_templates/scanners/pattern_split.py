"""Splitting a content regex around the group whose value streams: head, lazy body, terminator.

``x-findall`` and ``xml-inline`` read every match of a regex (``<invoke name="(?P<name>[^"]+)">
(?P<arguments>.*?)</invoke>``). To stream the ``arguments`` group while it is written, the scanner
must know where the group starts before the match is complete, and which characters are surely
inside it. That holds for the common shape :func:`split_pattern` recognises: the group stands at
the top level of the pattern (no ``|`` there, no quantifier on it) and its body is a literal, a
lazy ``.*?`` (or a tempered ``(?:(?!X).)*?``), and a literal (``\\{.*?\\}`` for a JSON object, or
just ``.*?``). Then

* the *head* (everything before the ``.*?``) is matched first, as a delimiter: its match is final
  once the matcher commits it (:mod:`..matcher`), and its named groups are known;
* the group's text then runs up to the first place where the *terminator* (the body's closing
  literal and everything after the group) matches, exactly as the lazy ``.*?`` decides, so the
  text before the terminator's earliest possible start is surely the group's.

When the group stands in an alternation instead (DeepSeek V3.2's ``string="(?:true">(?P<text>.*?)|
false">(?P<json>.*?))``, MiniCPM5's CDATA-or-text parameters) or its body is an optional literal
and everything after it (LongCat's ``(?P<arguments>(?:<longcat_arg_key>.*)?)`` at the pattern's end),
:func:`split_branches` splits the pattern into a head and *branches*, one per alternative: the
scanner matches the head, reads which branch the text that follows opens (each branch opens with
a literal) and streams that branch's group as above once no other branch can still be the one
the regex takes; while that is undecided the match is searched whole.

A pattern of another shape (a greedy body elsewhere, inline flags, a numbered back-reference, a
conditional) gets no split; its scanner then emits each match whole when it completes. A named
back-reference in the terminator to a group of the head (``</(?P=key)>``) is filled with that
group's text for each match. ``$`` keeps the meaning it has in these patterns (the end of the text
or before a final newline).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from chatcodec.response_templates.pattern_tokens import tokens, top_level_alternatives

__all__ = ["Branch", "Branched", "Split", "literal_tail", "literal_tail_allowed", "literal_text",
           "punctuation", "python_dollar", "required_literal", "split_branches", "split_pattern"]

_GROUP = regex.compile(r"\(\?P?<(\w+)>")
_FLAGS = regex.compile(r"\(\?[a-zA-Z-]+\)")
_QUANTIFIERS = ("*", "+", "?")
_SPECIAL = frozenset(".^$*+?{}[]()|\\")
_ESCAPED = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\f": "\f", "\\v": "\v"}
_BACKREF = regex.compile(r"\(\?P=(\w+)\)")


@dataclass(frozen=True, slots=True)
class Split:
    """A pattern split around its streamed group (see the module docstring).

    Attributes:
        head: the regex up to the group's ``.*?`` (the group's leading literal included), with
            ``$`` as written (see :func:`python_dollar`).
        lead: the group's leading literal (its text starts with it).
        close: the group's closing literal (its text ends with it).
        terminator: the regex from the closing literal on (``close`` and what follows the group).
        backrefs: the head groups the terminator refers to (``(?P=key)``), filled per match.
        guard: for a tempered body ``(?:(?!X).)*?``, ``X``: the group cannot run over a place where
            it matches (the scanner stops if it comes before the terminator).
    """

    head: str
    lead: str
    close: str
    terminator: str
    backrefs: tuple[str, ...]
    guard: str | None = None


def python_dollar(source: str, final: bool = True) -> str:
    """``source`` with each ``$`` written out as Python's: the end, or before a final newline.

    With ``final=False`` (more text may follow) ``$`` never matches: the text is not at its end.
    """
    dollar = r"(?=\n?\Z)" if final else "(?!)"
    return "".join(dollar if token == "$" else token for token in tokens(source))


def _literal(token: str) -> str | None:
    if len(token) == 1 and token not in _SPECIAL:
        return token
    if token in _ESCAPED:
        return _ESCAPED[token]
    if len(token) == 2 and token[0] == "\\" and not token[1].isalnum():
        return token[1]
    return None


def _literal_run(body: list[str]) -> tuple[str, int] | None:
    """The literal text at the start of ``body`` and how many tokens it takes (``None``: a
    literal followed by a quantifier, which is not literal)."""
    text: list[str] = []
    for index, token in enumerate(body):
        char = _literal(token)
        if char is None:
            if token in _QUANTIFIERS or token.startswith("{"):
                return None
            return "".join(text), index
        text.append(char)
    return "".join(text), len(body)


def punctuation(source: str) -> frozenset[str]:
    """The characters ``source`` writes as literals that are neither letters, digits nor whitespace
    (``<``, ``/``, ``>`` of ``</param>``); characters inside classes and escapes such as ``\\s`` are
    not literals."""
    literals = (_literal(token) for token in tokens(source))
    return frozenset(char for char in literals
                     if char is not None and not char.isalnum() and not char.isspace())


def literal_text(source: str) -> str | None:
    """The text ``source`` matches when it is a plain literal (``</invoke>``, ``\\}``), else ``None``."""
    toks = tokens(source)
    run = _literal_run(toks)
    return run[0] if run is not None and run[1] == len(toks) and run[0] else None


#: Tokens that read past the end of their match or that make a literal match other text.
_PEEKS = frozenset(("$", "\\Z", "\\z", "\\b", "\\B", "\\G"))


def literal_tail_allowed(toks: list[str]) -> bool:
    """Whether a pattern's tokens have none of what :func:`literal_tail` refuses."""
    depth = 0
    for token in toks:
        if token in _PEEKS or (token.startswith("\\") and token[1:2].isdigit() and token[1:2] != "0") \
                or token.startswith(("\\g", "(?P=", "(?P>")) \
                or (token.startswith("(?") and token[2:3] not in ("P", "<", ":", "#")) \
                or (token.startswith("(?<") and token[3:4] not in ("=", "!") and not token.endswith(">")):
            return False
        if token.startswith("("):
            depth += 1
        elif token == ")":
            depth -= 1
        elif token == "|" and depth == 0:
            return False
    return True


def literal_tail(source: str) -> str:
    """The literal text that ends every match of ``source`` (``<arg_value>`` of GLM-4.5's key),
    when whether a text matches depends only on the text up to the match's end; else ``""``.

    ``""`` also for an alternation at the top, flags (``(?i)``), look-aheads, ``$``, ``\\Z``,
    ``\\b``, back-references and recursion (look-behinds are kept: they read the text before).
    So a match that was not there in a text and is in the same text made longer must end with
    this tail inside what was added, or right across its start.
    """
    toks = tokens(source)
    if not literal_tail_allowed(toks):
        return ""
    tail: list[str] = []
    for token in reversed(toks):
        char = _literal(token)
        if char is None:
            break
        tail.append(char)
    return "".join(reversed(tail))


def required_literal(source: str) -> str:
    """The last literal run that every match of ``source`` contains, written at its top level (no
    group, quantifier or class in it): the newline and three backticks of DeepSeek V3's call head,
    which ends with ``(?:json)?\\s*``. A text without it holds no match. ``""`` when there is none,
    and for what :func:`literal_tail` refuses (an alternation at the top, flags, look-arounds, ...)."""
    toks = tokens(source)
    if not literal_tail_allowed(toks):
        return ""
    depth, run, last = 0, [], ""
    for index, token in enumerate(toks):
        if depth == 0:
            char = _literal(token)
            following = toks[index + 1] if index + 1 < len(toks) else ""
            if char is not None and following not in _QUANTIFIERS and not following.startswith("{"):
                run.append(char)
                continue
        if run:
            last, run = "".join(run), []
        if token.startswith("("):
            depth += 1
        elif token == ")":
            depth -= 1
    return "".join(run) if run else last


def split_pattern(source: str, group: str, anchored: bool = False) -> Split | None:
    """Split ``source`` around the named ``group`` (see the module docstring), or ``None``.

    Args:
        source: the regex as written in the template.
        group: the name of the group whose value streams.
        anchored: the pattern is a branch read right after a head (:func:`split_branches`): its
            own head may be empty.

    Returns:
        The split, or ``None`` when the pattern does not have the shape that makes it sound.
    """
    toks = tokens(source)
    depth = 0
    start = end = -1
    for index, token in enumerate(toks):
        if (token == "|" and depth == 0) or _FLAGS.fullmatch(token) or token.startswith("(?(") \
                or (token.startswith("\\") and token[1:2].isdigit() and token[1:2] != "0") \
                or token.startswith(("\\g", "(?R", "(?&")) or token[:3] in ("(?1", "(?2", "(?3"):
            return None
        if token.startswith("(") and not token.endswith(")"):
            if depth == 0 and start < 0:
                found = _GROUP.fullmatch(token)
                if found is not None and found.group(1) == group:
                    start = index
            depth += 1
        elif token == ")":
            depth -= 1
            if depth == 0 and start >= 0 and end < 0:
                end = index
    if start < 0 or end < 0:
        return None
    after = toks[end + 1 : end + 2]
    if after and (after[0] in _QUANTIFIERS or after[0].startswith("{")):
        return None
    body = toks[start + 1 : end]
    lead = _literal_run(body)
    if lead is None:
        return None
    lazy = _lazy_any(body, lead[1])
    if lazy is None:
        return None
    guard, after_lazy = lazy
    rest = body[after_lazy:]
    close = _literal_run(rest)
    if close is None or close[1] != len(rest):
        return None
    head = "".join(toks[:start]) + regex.escape(lead[0])
    terminator = regex.escape(close[0]) + "".join(toks[end + 1 :])
    empty = not head or regex.compile(python_dollar(head), regex.DOTALL).fullmatch("") is not None
    if empty and not anchored:
        return None  # a head that matches nothing would start a match anywhere
    backrefs = tuple(_BACKREF.findall(terminator))
    if guard is not None and _BACKREF.search(guard):
        return None
    return Split(head, lead[0], close[0], terminator, backrefs, guard)


def _lazy_any(body: list[str], at: int) -> tuple[str | None, int] | None:
    """At ``body[at]``, ``.*?`` or the tempered ``(?:(?!X).)*?``: ``(X or None, index after it)``."""
    if body[at : at + 3] == [".", "*", "?"]:
        return None, at + 3
    if body[at : at + 2] != ["(?:", "(?!"]:
        return None
    depth = 1
    index = at + 2
    while index < len(body) and depth:
        token = body[index]
        if token.startswith("(") and not token.endswith(")"):
            depth += 1
        elif token == ")":
            depth -= 1
        index += 1
    if depth or body[index : index + 4] != [".", ")", "*", "?"]:
        return None
    return "".join(body[at + 2 : index - 1]), index + 4


@dataclass(frozen=True, slots=True)
class Branch:
    """One alternative of a :class:`Branched` pattern, after the head.

    Attributes:
        opening: the literal text the branch starts with (possibly empty): the text after the head
            tells which branches are still possible.
        group: the streamed group the branch holds, or ``None`` (the branch's match is set whole).
        skip: how much of ``opening`` comes before the group (the rest is the group's leading literal).
        close: the group's closing literal.
        terminator: the regex from the closing literal on (the rest of the branch, then what follows
            the alternation); ``""`` with ``to_end``.
        backrefs: the head groups the terminator refers to (``(?P=key)``).
        guard: as :attr:`Split.guard`.
        to_end: the group runs to the end of the text (a greedy ``.*`` with nothing after it): the
            branch cannot fail once its opening is there.
    """

    opening: str
    group: str | None
    skip: int = 0
    close: str = ""
    terminator: str = ""
    backrefs: tuple[str, ...] = ()
    guard: str | None = None
    to_end: bool = False


@dataclass(frozen=True, slots=True)
class Branched:
    """A pattern split into a head and the alternatives that follow it (:func:`split_branches`)."""

    head: str
    branches: tuple[Branch, ...]


def split_branches(source: str, groups: tuple[str, ...]) -> Branched | None:
    """Split ``source`` into a head and branches around the streamed ``groups`` (module docstring).

    Two shapes: ``HEAD(?:A|B|...)TAIL`` where each alternative is a literal, then optionally one of
    ``groups`` with the body :func:`split_pattern` accepts, then anything (no ``|`` at the top
    level, no quantifier on the alternation); and ``HEAD(?P<g>(?:LITERAL.*)?)`` at the pattern's end
    (the group is either empty or everything from the literal on).

    Args:
        source: the regex as written in the template.
        groups: the names of the groups whose values may stream.

    Returns:
        The split, or ``None`` when the pattern has neither shape.
    """
    toks = tokens(source)
    if any(_unsupported(token) for token in toks):
        return None
    at = _top_level_group(toks, groups)
    if at is None:
        return None
    start, end = at
    head = "".join(toks[:start])
    if not head or regex.compile(python_dollar(head), regex.DOTALL).fullmatch("") is not None:
        return None
    if toks[start] != "(?:":  # HEAD(?P<g>(?:LITERAL.*)?) at the end
        return _to_end(toks, start, end, head)
    after = toks[end + 1 : end + 2]
    if after and (after[0] in _QUANTIFIERS or after[0].startswith("{")):
        return None
    tail = "".join(toks[end + 1 :])
    branches = []
    for alternative in top_level_alternatives(toks[start + 1 : end]):
        branch = _branch(alternative, groups, tail)
        if branch is None:
            return None
        branches.append(branch)
    if not any(branch.group is not None for branch in branches):
        return None
    backrefs = {name for branch in branches for name in branch.backrefs}
    if backrefs - set(regex.compile(python_dollar(head), regex.DOTALL).groupindex):
        return None
    return Branched(head, tuple(branches))


def _unsupported(token: str) -> bool:
    return bool(_FLAGS.fullmatch(token)) or token.startswith(("(?(", "\\g", "(?R", "(?&")) \
        or (token.startswith("\\") and token[1:2].isdigit() and token[1:2] != "0") \
        or token[:3] in ("(?1", "(?2", "(?3")


def _top_level_group(toks: list[str], groups: tuple[str, ...]) -> tuple[int, int] | None:
    """The span (open, close token) of the top-level group holding one of ``groups``: a ``(?:``
    alternation, or the group itself; ``None`` when there is a top-level ``|`` or no such group."""
    depth = 0
    found: tuple[int, int] | None = None
    opened = -1
    holds = False
    for index, token in enumerate(toks):
        if token == "|" and depth == 0:
            return None
        if token.startswith("(") and not token.endswith(")"):
            if depth == 0:
                opened, holds = index, False
            named = _GROUP.fullmatch(token)
            if named is not None and named.group(1) in groups:
                holds = True
            depth += 1
        elif token == ")":
            depth -= 1
            if depth == 0 and holds and found is None:
                found = (opened, index)
    return found


def _branch(alternative: list[str], groups: tuple[str, ...], tail: str) -> Branch | None:
    """One alternative: ``LITERAL`` or ``LITERAL(?P<g>LEAD.*?CLOSE)REST`` (``None``: another shape)."""
    run = _literal_run(alternative)
    if run is None:
        return None
    skip, at = run
    if at == len(alternative):
        return Branch(skip, None)
    named = _GROUP.fullmatch(alternative[at])
    if named is None or named.group(1) not in groups:
        return None
    depth, end = 0, -1
    for index in range(at, len(alternative)):
        token = alternative[index]
        if token.startswith("(") and not token.endswith(")"):
            depth += 1
        elif token == ")":
            depth -= 1
            if depth == 0:
                end = index
                break
    if end < 0 or any(token == "|" for token in alternative[end + 1 :]):
        return None
    following = alternative[end + 1 : end + 2]
    if following and (following[0] in _QUANTIFIERS or following[0].startswith("{")):
        return None
    source = regex.escape(skip) + "".join(alternative[at:]) + tail
    split = split_pattern(source, named.group(1), anchored=True)
    if split is None:
        return None
    return Branch(skip + split.lead, named.group(1), len(skip), split.close, split.terminator,
                  split.backrefs, split.guard)


def _to_end(toks: list[str], start: int, end: int, head: str) -> Branched | None:
    """``HEAD(?P<g>(?:LITERAL.*)?)`` with nothing after it (see :func:`split_branches`)."""
    named = _GROUP.fullmatch(toks[start])
    assert named is not None
    body = toks[start + 1 : end]
    if end != len(toks) - 1 or len(body) < 5 or body[0] != "(?:" or body[-4:] != [".", "*", ")", "?"]:
        return None
    lead = _literal_run(body[1:-4])
    if lead is None or lead[1] != len(body) - 5 or not lead[0]:
        return None
    return Branched(head, (Branch(lead[0], named.group(1), to_end=True), Branch("", None)))
