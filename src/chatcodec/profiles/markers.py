"""What identifies a family in a chat template: :class:`Markers` and where a marker counts.

Jinja comments (``{# ... #}``) are removed first, so ``{# Gemma 4 would use <|tool_call> #}``
names nothing. Markers in template structure are preferred over markers in prose: an occurrence
that reads as a word in prose (a word and a space before it, and a space and a word, or sentence
punctuation, after it: ``Never write <think> tags.``) is prose; the same marker as output text or
a string constant (``'<think>\\n'``, ``split('</think>')``, ``<tool_call>\\n{"name"``) is
structure. :meth:`Markers.match` counts structure only by default (for ``all``, ``any`` and
``none`` alike); :func:`chatcodec.profiles.detect` falls back to counting prose too only when no
profile matches on structure (Granite 3 names ``<|tool_call|>`` only in its instructions:
``respond with <|tool_call|> followed by a JSON list``).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from chatcodec.response_templates.lazy_pattern import LazyPattern

__all__ = ["Markers", "structural_text"]

# The patterns are compiled on first use (by detection), not when a profile is loaded by name.
#: A Jinja comment, ``{# ... #}``.
_COMMENT = LazyPattern(r"\{#.*?#\}", regex.DOTALL)
#: A word and horizontal space right before an occurrence: the first half of "prose".
_WORD_BEFORE = LazyPattern(r"\w[ \t]+\Z")
#: Horizontal space and a word, or sentence punctuation, right after it: the second half.
_WORD_AFTER = LazyPattern(r"[ \t]+\w|[.,;:!?](?:\s|\Z)")


def structural_text(chat_template: str) -> str:
    """``chat_template`` without its Jinja comments (what :class:`Markers` are matched against).

    Args:
        chat_template: the chat template text.

    Returns:
        The text with every ``{# ... #}`` removed.
    """
    return _COMMENT.sub("", chat_template)


def _counts(marker: str, text: str, prose: bool) -> bool:
    """Whether ``marker`` occurs in ``text`` (with ``prose`` false: other than as a word in prose)."""
    start = text.find(marker)
    if prose:
        return start >= 0
    word_before, word_after = _WORD_BEFORE, _WORD_AFTER
    while start >= 0:
        end = start + len(marker)
        prose = word_before.search(text, max(0, start - 80), start) is not None and (
            word_after.match(text, end) is not None
        )
        if not prose:
            return True
        start = text.find(marker, start + 1)
    return False


@dataclass(frozen=True)
class Markers:
    """Substrings that identify a family's chat template (all of ``all``, one of ``any``, none of ``none``).

    ``priority`` orders the checks in :func:`chatcodec.profiles.detect`: a more specific family is
    checked first.
    """

    all: tuple[str, ...] = ()
    any: tuple[str, ...] = ()
    none: tuple[str, ...] = ()
    priority: int = 0

    def match(self, chat_template: str, *, prose: bool = False) -> bool:
        """Whether ``chat_template`` carries these markers (never true for empty markers).

        Args:
            chat_template: the chat template text, with or without Jinja comments.
            prose: count occurrences in prose too (by default only template structure counts).

        Returns:
            True when every ``all`` marker, one ``any`` marker (if listed) and no ``none`` marker
            counts (see the module docstring).
        """
        if not (self.all or self.any):
            return False
        text = structural_text(chat_template)
        return (
            all(_counts(marker, text, prose) for marker in self.all)
            and (not self.any or any(_counts(marker, text, prose) for marker in self.any))
            and not any(_counts(marker, text, prose) for marker in self.none)
        )
