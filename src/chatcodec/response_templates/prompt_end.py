"""The end of the prompt: what a delimiter the prompt ends with decides before any output.

The prompt (``prefix``) is final text. A delimiter match that ends where the prompt ends is held
by the matcher like any match at the edge of the buffer (more text could still extend or replace
it: SPEC §1.2), but what the output can change there is narrower than what a next chunk of the
same text could: the match found at the start of the prompt's undecided tail can only grow (a
longer literal of its set, a greedy or optional part of its regex), lose to another delimiter that
the output completes there, or disappear when it leans on an end assertion. So the tail may
already decide:

* **final**: nothing the output adds can change the match (no delimiter partly matches there, no
  longer literal is pending, the match reads no end assertion, and a regex match that reaches the
  end of the prompt is a literal the regex cannot outgrow: one of its ``final`` literals, or the
  literal of a top-level alternative that the alternatives before it cannot take): it is committed
  before the first output, as if the output had begun. A ``^`` or a look-ahead alternative after
  it (``<think>|^(?=</think>)``) does not stop this.
* **opens**: every delimiter that matches there, completely or in part, opens the same field, and
  the complete match cannot disappear: whatever the output adds, that field's region opens there.
  The region opens before the first output (``initial_events``); where its delimiter ends (and
  what it captures) waits for the output (``(?:<think>)+`` on a prompt ending with ``<think>``).
* otherwise the output decides: a delimiter only partly written (``<thi``, ``>>>``), another
  field's delimiter the output could still complete there, a match leaning on an end assertion.

``<think>`` never becomes ``<thinking>``: ``>`` is not ``i``, so a longer literal of the set is only
pending when the tail is its start. The reference (transformers 5.24) holds every regex match
that ends at the end of the prefix until the first output: its ``initial_events`` then lack the
open, which comes with the first ``feed`` (``docs/compatibility.md``).
"""

from __future__ import annotations

from functools import lru_cache

from chatcodec.response_templates import backtracking
from chatcodec.response_templates.backtracking import UNTIMED_SPAN
from chatcodec.response_templates.delimiters import _literal_text
from chatcodec.response_templates.matcher import Commit, _longer_pending, _unsettled
from chatcodec.response_templates.pattern_tokens import tokens, top_level_alternatives

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from chatcodec.response_templates.delimiters import Delimiter
    from chatcodec.response_templates.matcher import Matcher

__all__ = ["PromptEnd", "decide"]


class PromptEnd:
    """What the prompt's undecided tail decides.

    Attributes:
        commit: the delimiter at the start of the tail, as it matches now.
        final: ``True``: no output can change it, commit it now; ``False``: only its field's region
            opens now (an open delimiter whose end the output decides).
    """

    __slots__ = ("commit", "final")

    def __init__(self, commit: Commit, final: bool) -> None:
        self.commit = commit
        self.final = final

    def __repr__(self) -> str:
        return f"PromptEnd(commit={self.commit!r}, final={self.final!r})"


def decide(matcher: Matcher, buf: str, pos: int) -> PromptEnd | None:
    """What the prompt's undecided tail ``buf[pos:]`` decides before any output.

    Args:
        matcher: the matcher of the parser's current state.
        buf: the buffer after the prompt was fed (the prompt's tail after the start anchor).
        pos: the first undecided index: the matcher held the text from there (nothing before it
            is pending).

    Returns:
        A :class:`PromptEnd`, or ``None`` when the output decides (a search that runs out of
        ``REGEX_TIMEOUT`` also leaves it to the output).
    """
    try:
        return _decide(matcher.delimiters, buf, pos)
    except TimeoutError:
        return None


def _decide(delimiters: tuple[Delimiter, ...], buf: str, pos: int) -> PromptEnd | None:
    best: tuple[tuple[int, tuple[int, str]], Delimiter, Any] | None = None
    contenders: list[Delimiter] = []  # every delimiter the output could still make win at ``pos``
    settled = True
    short = len(buf) - pos <= UNTIMED_SPAN
    for delimiter in delimiters:
        # the clock only where the matcher reads it: an unproved pattern or a long tail
        timeout = None if short and delimiter.linear else backtracking.REGEX_TIMEOUT
        match = delimiter.pattern.match(buf, pos, None, None, True, timeout)
        if match is None:
            continue
        grows = bool(match.partial) or _grows(delimiter, buf, pos, match, timeout)
        if match.partial or match.end() == pos:  # only a longer match of it could beat one here
            if grows:
                contenders.append(delimiter)
                settled = False
            continue
        if delimiter.reads_end:  # the output may move or remove the match (``\\Z``, ``(?!x)``)
            return None
        contenders.append(delimiter)
        settled = settled and not grows
        key = (pos - match.end(), delimiter.rank)  # longest first, then opens before closes
        if best is None or key < best[0]:
            best = (key, delimiter, match)
    if best is None:
        return None
    _, winner, match = best
    if any(d.field != winner.field or d.is_open != winner.is_open for d in contenders):
        return None
    if not settled and not winner.is_open:
        return None
    captures = {} if winner.literals is not None else {
        k: v for k, v in match.groupdict().items() if v is not None}
    return PromptEnd(Commit(winner, pos, match.end(), captures), settled)


def _grows(delimiter: Delimiter, buf: str, pos: int, match: Any, timeout: float | None) -> bool:
    """Whether more text could give ``delimiter`` another match at ``pos`` than ``match``.

    A literal set: a longer literal of which the tail is the start. A regex whose match ends before
    the end of ``buf``: a higher-priority path cut off by the end (the matcher's ``settled`` probe).
    A regex whose match reaches the end: unless the match is one of its ``final`` literals, or the
    literal of a top-level alternative that the alternatives before it cannot take from it
    (:func:`_first_literal`), it may grow; the ``settled`` probe is not asked there, since the
    ``regex`` module's partial matching misses a repeat cut off between two iterations
    (``(?:<think>)+`` on ``<think><think>``).
    """
    if delimiter.literals is not None:
        return _longer_pending(delimiter, buf, pos)
    if match.end() < len(buf):
        return _unsettled(delimiter, buf, pos, timeout)
    text = match.group()
    return text not in delimiter.final and not _first_literal(delimiter, text, buf[pos:])


def _first_literal(delimiter: Delimiter, text: str, rest: str) -> bool:
    """Whether ``text``, matched at the start of ``rest``, is the literal of a top-level alternative
    of ``delimiter`` before which every alternative is a literal that ``rest`` has already ruled out
    (neither ``text`` nor a literal that ``rest`` begins). The regex then takes that alternative
    whatever follows, and never tries the ones after it: ``<think>|^(?=</think>)`` on ``<think>``."""
    for literal in _alternative_literals(delimiter.pattern.pattern):
        if not literal or literal.startswith(rest):  # not a literal, or the output may complete it
            return literal == text
        if literal == text:
            return True
    return False


@lru_cache(maxsize=256)
def _alternative_literals(source: str) -> tuple[str | None, ...]:
    """The text of each top-level alternative of the regex ``source`` that is a plain literal
    (``None`` for any other), in order; read once per pattern."""
    alternatives = top_level_alternatives(tokens(source))
    return tuple(_literal_text(parts) for parts in alternatives)
