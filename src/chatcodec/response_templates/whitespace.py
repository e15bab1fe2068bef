"""Whitespace runs: where inside one a regex delimiter can start (the linear-time rule).

A regex search tries every start position. Inside a long whitespace run, a delimiter that begins
with whitespace (``\\s*<tool_call>``, ``\\n+</think>``, gpt-oss's ``\\s*to=functions``) only fails
after reading the rest of the run, so one search over a run of n characters costs n², and the
``regex`` module's own shortcut (searching a required literal first) is lost in a combined
alternation and in partial matching.

Rule kept here: when prepending a whitespace character ``c`` to anything the delimiter matches
and that starts with whitespace still gives a match (``\\s*X``: any ``c``; ``\\n\\s*X``: ``c`` =
newline), a match starting at ``p`` inside a run implies one at ``p - 1`` whenever the character
there is such a ``c``. The leftmost match therefore never starts at such a ``p``, and the search
may skip it in O(1): :func:`run_guard` is a look-behind put in front of the pattern in every
search (never in the anchored matches that decide between delimiters). Which characters qualify
is found by trying the delimiter on whitespace runs of every length up to 12 (more for a pattern
with many whitespace atoms) and of mixed shapes, followed by each character that can come after
its whitespace (a guardable delimiter looks at nothing before where its match starts, so the
text before a try cannot change its answer and is not varied); a delimiter whose tries never get
past the whitespace gets no guard.

Tries cannot prove the rule for everything, so a delimiter gets no guard at all (searching it
may then be slow on long runs, never wrong) when it uses (:func:`unguardable`):

* a counted repetition (``\\n{1,4}``, `` {0,9}``: one whitespace character more than the count
  is no match, at any count the tries do not reach) or any other unescaped ``{``;
* what the text before the match decides: a look-behind, ``^``, ``\\A``, ``\\G``, MULTILINE, a
  ``\\b``/``\\B``/``\\m``/``\\M`` that does not follow a literal character (``assistant\\b``
  looks only at the match's own text);
* back-references, group calls, recursion, conditionals and branch resets.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from chatcodec.response_templates.delimiters import RUN_WHITESPACE, Delimiter, after_whitespace
from chatcodec.response_templates.lazy_pattern import LazyPattern
from chatcodec.response_templates.pattern_tokens import tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["prepend_closed", "run_guard", "unguardable"]

#: Run lengths always tried (a pattern with more whitespace atoms is tried on longer runs).
_MIN_RUN = 12
#: Mixed whitespace runs tried besides the runs of one character.
_MIXED = (" \n", "\n ", " \t", "\t ", "\r\n", "\n\t", "\t\n", " \n ", "\n \n", "  \n", "\n  ", "\r\n\r\n")
#: Group openings and escapes that make the guard unsound (see the module docstring).
_UNGUARDABLE = LazyPattern(
    r"\(\?<[=!]|\(\?\(|\(\?\||\(\?P[=>]|\(\?&|\(\?R|\(\?[-+]?[0-9]|\(\?[a-zA-Z]*[mV]|"
    r"\\[AGK1-9]|\\g|^\{|^\^$", standard=True)


def unguardable(source: str) -> bool:
    """Whether a regex delimiter uses a construct for which no run guard is sound.

    Args:
        source: the compiled pattern's source.

    Returns:
        ``True`` for counted repetitions (any unescaped ``{``), look-behinds, ``^``, ``\\A``, ``\\G``,
        MULTILINE, a word boundary not right after a literal character, back-references,
        group calls, recursion, conditionals and branch resets.
    """
    previous = ""
    for token in tokens(source):
        if _UNGUARDABLE.search(token):
            return True
        if token in ("\\b", "\\B", "\\m", "\\M") and not _literal_character(previous):
            return True
        previous = token
    return False


def _literal_character(token: str) -> bool:
    """Whether ``token`` is one literal character (so an assertion right after it is evaluated
    after the match has consumed something)."""
    if len(token) == 2 and token[0] == "\\":
        return not token[1].isalnum()
    return len(token) == 1 and token not in "|()*+?.^$[]{}"


def _whitespace_atoms(source: str) -> int:
    """How many tokens of ``source`` can match a whitespace character (an over-estimate)."""
    return sum(_matches_whitespace(token) for token in tokens(source))


@lru_cache(maxsize=512)
def _matches_whitespace(token: str) -> bool:
    """Whether the pattern token ``token`` on its own matches a whitespace character (cached: the
    same few tokens, ``\\s``, ``<``, ``|``, recur across every delimiter of every template)."""
    try:
        atom = regex.compile(token, regex.DOTALL)
    except regex.error:  # a group opening or a quantifier: consumes nothing itself
        return False
    return any(atom.fullmatch(char) for char in RUN_WHITESPACE)


#: A delimiter after whose whitespace more characters than this may come gets no guard: probing
#: every one of them would cost about a second at load (a ``[^<]*X`` open). Such a delimiter is
#: searched without skipping: never a different result, only slower on very long whitespace runs.
MAX_TAILS = 16


@lru_cache(maxsize=1024)
def prepend_closed(delimiter: Delimiter) -> str:
    """The whitespace characters that can be put in front of any whitespace-led match of
    ``delimiter`` without losing the match (see the module docstring).

    For each character ``c`` and each try ``s`` (a whitespace run, then nothing or one character
    that may follow the delimiter's whitespace): when the delimiter matches, or partially matches,
    ``s``, it must also match ``c + s`` (completely, if the first did).

    Args:
        delimiter: a compiled delimiter.

    Returns:
        The characters; ``""`` for literals (their searches are never slow), for delimiters that
        :func:`unguardable` or :data:`MAX_TAILS` rule out, and when no try got past the whitespace
        (nothing is known about the rest of the delimiter).
    """
    if delimiter.literals is not None or unguardable(delimiter.pattern.pattern):
        return ""
    match = delimiter.pattern.match
    after = after_whitespace(delimiter)
    if after is None:  # depends on the text before: the characters that follow some run here
        after = "".join(char for code in range(33, 127) if any(
            match(run + (char := chr(code)), partial=True) is not None for run in (" ", "\n", "  \n")))
    if len(after) > MAX_TAILS:
        return ""  # almost anything may follow the whitespace ([^<]*X): too many tries to load fast
    tails = ["", *after]
    longest = max(_MIN_RUN, 2 * _whitespace_atoms(delimiter.pattern.pattern) + 2)
    runs = [*(char * count for char in RUN_WHITESPACE for count in range(1, longest + 1)), *_MIXED]
    tries = [run + tail for run in runs for tail in tails]
    # A guardable delimiter looks at nothing before where its match starts (no look-behind, ``^``,
    # ``\b`` at its start: :func:`unguardable`), so each try's own match is the same whatever comes
    # before it: computed once, not once per prepended character and text before.
    found = [(try_, later) for try_ in tries if (later := match(try_, partial=True)) is not None]
    if not any(not later.partial or not try_.isspace() for try_, later in found):
        return ""  # no try got past the whitespace: nothing is known about the rest
    return "".join(char for char in RUN_WHITESPACE if _closed_under(match, char, found))


def _closed_under(match: Any, char: str, found: list[tuple[str, Any]]) -> bool:
    """Whether every try that matches on its own (``found``: the try and its match) still matches
    with ``char`` in front of it (completely, if the try alone did)."""
    for try_, later in found:
        earlier = match(char + try_, partial=True)
        if earlier is None or (earlier.partial and not later.partial):
            return False
    return True


def run_guard(delimiter: Delimiter) -> str:
    """A regex prefix that skips the start positions :func:`prepend_closed` rules out.

    A position is skipped when it holds whitespace, the character before it is one that may be
    prepended, and it is not where the search started (``\\G``).

    Args:
        delimiter: a compiled delimiter.

    Returns:
        The prefix, or ``""`` when no position can be skipped.
    """
    closed = prepend_closed(delimiter)
    if not closed:
        return ""
    return f"(?:\\G|(?![{regex.escape(RUN_WHITESPACE)}])|(?<![{regex.escape(closed)}]))"
