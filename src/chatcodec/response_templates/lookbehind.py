"""Look-behind reach: how far before a match a delimiter can look (the context rule).

The streaming engine drops consumed text once it is long, keeping :data:`LOOKBEHIND_CONTEXT`
characters before the unconsumed position, so that memory and time stay bounded. ``parse_response``
feeds the whole output at once and never drops anything. A delimiter whose look-behind reaches
further back would therefore see different text depending on the chunking (QA round 4:
``(?<=BEGIN[^#]{300,})#`` matched one-shot and never when streamed).

Rule kept here: a delimiter loads only if every look-behind in it (with the look-behinds nested in
it) reaches at most :data:`LOOKBEHIND_CONTEXT` characters back, and none holds ``^`` or ``\\A``
(the start of the input is not in the kept context). :func:`lookbehind_problem` measures the reach
from the pattern's text: sequences add, alternatives take the longest, quantifiers multiply, and
anything unbounded or unknown (``*``, ``+``, ``{n,}``, back-references, ``\\X``, calls, fuzzy
constraints, conditionals) is unbounded.
"""

from __future__ import annotations

import regex

from chatcodec.response_templates.pattern_tokens import tokens

__all__ = ["LOOKBEHIND_CONTEXT", "lookbehind_problem"]

#: Characters of already-consumed text kept before the unresolved tail, so look-behinds, ``\\b``
#: and ``^`` see the same context as with the whole text.
LOOKBEHIND_CONTEXT = 256

#: A counted repetition, compiled on first use through regex's own cache (most delimiters have none).
_COUNT = r"\{([0-9]*)(?:(,)([0-9]*))?\}"
_ZERO_WIDTH_ESCAPES = frozenset("bBAZGmMK")
_UNKNOWN_ESCAPES = frozenset("123456789gLX")


class _Group:
    """An open group while the pattern is read: its alternatives' widths so far."""

    __slots__ = ("anchored", "anchored_behind", "done", "kind", "last", "reach", "width")

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "group", "ahead", "behind" or "unknown"
        self.done: list[int | None] = []
        self.width: int | None = 0
        self.last: int | None = 0
        #: how far the look-behinds inside reach back from where the group starts (at most)
        self.reach: int | None = 0
        #: ``^`` or ``\\A`` in this group outside a look-behind
        self.anchored = False
        #: ``^`` or ``\\A`` in a look-behind inside this group
        self.anchored_behind = False


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _repeat(width: int | None, token: str) -> int | None:
    if width == 0:
        return 0
    if token in "*+":
        return None
    if token == "?":
        return width
    count = regex.fullmatch(_COUNT, token)
    if count is None:  # a fuzzy constraint: insertions make it unbounded
        return None
    low, comma, high = count.groups()
    most = high if comma else low
    return None if width is None or not most else width * int(most)


def lookbehind_problem(pattern: regex.Pattern[str]) -> str | None:
    """Why a delimiter's look-behinds may see text the streaming engine no longer keeps.

    Args:
        pattern: the compiled delimiter.

    Returns:
        The problem, worded for a load error, or ``None`` when every look-behind reaches at most
        :data:`LOOKBEHIND_CONTEXT` characters back and none holds ``^`` or ``\\A``.
    """
    reach, anchored = _measure(pattern.pattern)
    if anchored:
        return "^ or \\A inside a look-behind cannot be used in a delimiter: streaming keeps only the " \
            f"last {LOOKBEHIND_CONTEXT} characters before the unparsed text, so the start of the output " \
            "is not there. Use the start anchor or a bounded look-behind instead"
    if reach is None or reach > LOOKBEHIND_CONTEXT:
        how_far = "an unbounded number of" if reach is None else f"{reach}"
        return f"a look-behind in a delimiter may look back at most {LOOKBEHIND_CONTEXT} characters " \
            f"(LOOKBEHIND_CONTEXT), this one {how_far} characters: streaming keeps only that much text " \
            "before the unparsed text, so streamed and one-shot parsing would differ. Bound its " \
            f"repetitions so that it spans at most {LOOKBEHIND_CONTEXT} characters"
    return None


def _measure(source: str) -> tuple[int | None, bool]:
    """The longest look-behind reach in ``source`` (``None``: unbounded), and whether a look-behind
    holds ``^`` or ``\\A``."""
    stack = [_Group("group")]
    quantifiable = False
    for token in tokens(source):
        top = stack[-1]
        if quantifiable and (token in ("*", "+", "?") or token.startswith("{")):
            # the last atom, repeated: replace its width by the repeated width
            top.width = _add(_sub(top.width, top.last), _repeat(top.last, token))
            top.last, quantifiable = 0, False
            continue
        if token in ("?", "+") and not quantifiable:  # a lazy or possessive suffix
            continue
        if token == "|":
            top.done.append(top.width)
            top.width, top.last, quantifiable = 0, 0, False
            continue
        if (token.startswith("(") and not token.endswith(")")) or token.startswith("(?("):
            stack.append(_Group(_kind(token)))
            quantifiable = False
            continue
        if token == ")" and len(stack) > 1:
            width = _close(stack)
        else:
            width = _atom_width(token)
            top.anchored = top.anchored or token in ("^", "\\A")
        top = stack[-1]
        top.width = _add(top.width, width)
        top.last, quantifiable = width, True
    return stack[0].reach, stack[0].anchored_behind


def _close(stack: list[_Group]) -> int | None:
    """Pop the innermost group; return its width as an atom of the enclosing group."""
    group = stack.pop()
    parent = stack[-1]
    inner = _longest([*group.done, group.width])
    parent.anchored_behind = parent.anchored_behind or group.anchored_behind
    if group.kind == "behind":
        own = _add(inner, group.reach)
        parent.reach = None if own is None or parent.reach is None else max(parent.reach, own)
        parent.anchored_behind = parent.anchored_behind or group.anchored
        return 0
    parent.reach = None if group.reach is None or parent.reach is None else max(parent.reach, group.reach)
    parent.anchored = parent.anchored or group.anchored
    if group.kind == "ahead":
        return 0
    return None if group.kind == "unknown" else inner


def _atom_width(token: str) -> int | None:
    """The most characters one token (not a group) can match."""
    if token.startswith("(?#") or token in ("^", "$"):
        return 0
    if token.startswith("("):  # inline flags (zero-width), or a call or recursion (unknown)
        return 0 if regex.fullmatch(r"\(\?[a-zA-Z-]*\)", token) else None
    if token.startswith("{"):
        return len(token)  # literal braces
    if token.startswith("\\") and len(token) >= 2:
        return _escape_width(token[1])
    return 1


def _sub(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b


def _longest(widths: list[int | None]) -> int | None:
    return None if any(w is None for w in widths) else max(w for w in widths if w is not None)


def _kind(opening: str) -> str:
    if opening in ("(?=", "(?!"):
        return "ahead"
    if opening in ("(?<=", "(?<!"):
        return "behind"
    if opening == "(" or (opening.endswith((":", ">")) and not opening.startswith(("(?P>", "(?P="))):
        return "group"
    return "unknown"  # conditionals, calls, recursion: unbounded


def _escape_width(char: str) -> int | None:
    if char in _ZERO_WIDTH_ESCAPES:
        return 0
    if char in _UNKNOWN_ESCAPES:
        return None
    return 1
