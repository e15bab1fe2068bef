"""The end of the prompt: what a delimiter the prompt ends with decides before any output.

The prompt (``prefix``) is final text. A delimiter match that ends where the prompt ends is held
by the matcher like any match at the edge of the buffer (more text could still extend or replace
it: SPEC §1.2), but what the output can change there is narrower than what a next chunk of the
same text could: the match found at the start of the prompt's undecided tail can only grow (a
longer literal of its set, a greedy or optional part of its regex), lose to another delimiter that
the output completes there, or disappear when it leans on an end assertion. So the tail may
already decide:

* **final**: nothing the output adds can change the match (no delimiter partly matches there, no
  longer literal and no higher-priority regex path is pending, and the match reads no end
  assertion): it is committed before the first output, as if the output had begun. A ``^`` or a
  look-ahead alternative of the pattern (``<think>|^(?=</think>)``) does not stop this.
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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatcodec.response_templates import backtracking
from chatcodec.response_templates.matcher import Commit, _longer_pending, _unsettled

if TYPE_CHECKING:
    from chatcodec.response_templates.delimiters import Delimiter
    from chatcodec.response_templates.matcher import Matcher

__all__ = ["PromptEnd", "decide"]


@dataclass(frozen=True, slots=True)
class PromptEnd:
    """What the prompt's undecided tail decides.

    Attributes:
        commit: the delimiter at the start of the tail, as it matches now.
        final: ``True``: no output can change it, commit it now; ``False``: only its field's region
            opens now (an open delimiter whose end the output decides).
    """

    commit: Commit
    final: bool


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
    timeout = backtracking.REGEX_TIMEOUT
    for delimiter in delimiters:
        match = delimiter.pattern.match(buf, pos, None, None, True, timeout)
        if match is None:
            continue
        grows = bool(match.partial) or _grows(delimiter, buf, pos, timeout)
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


def _grows(delimiter: Delimiter, buf: str, pos: int, timeout: float) -> bool:
    """Whether more text could give ``delimiter`` another match at ``pos``: a longer literal of its
    set of which the tail is the start, or a higher-priority regex path cut off by the end."""
    if delimiter.literals is not None:
        return _longer_pending(delimiter, buf, pos)
    return _unsettled(delimiter, buf, pos, timeout)
