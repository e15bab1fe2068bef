"""The tokens of a delimiter regex, for the analyses that read a pattern's text.

:mod:`whitespace` (which delimiters may skip starts inside a whitespace run) and
:mod:`lookbehind` (how far back a delimiter can look) both walk a pattern token by token; this is
the one tokenizer they share. A token is a comment ``(?#...)``, an escape (``\\p{L}``, ``\\g<1>``,
``\\n``), a character class, a group opening (``(``, ``(?:``, ``(?P<name>``, ``(?<=``,
``(?(1)``, ``(?1)``, ``(?&name)``, ``(?R)``, inline flags), a counted repetition (``{1,4}``), or
one character.
"""

from __future__ import annotations

import regex

from chatcodec.response_templates.lazy_pattern import LazyPattern

__all__ = ["TOKEN", "tokens"]

#: One token of a pattern (see the module docstring).
TOKEN = LazyPattern(
    r"\(\?#[^)]*\)"  # a comment
    r"|\\[pPNxuUgL]\{[^}]*\}|\\[gL]<[^>]*>|\\."  # an escape
    r"|\[\^?\]?(?:\\.|\[:\^?\w+:\]|[^\]\\])*\]"  # a character class
    r"|\(\?\([^)]*\)|\(\?(?:P?<\w+>|<[=!]|P[=>]|[-+]?[0-9]+\)|&\w+\)|R\)|[a-zA-Z-]*[:)]|.)|\("  # a group
    r"|\{[0-9]*(?:,[0-9]*)?\}|\{[^}]*\}|.",
    regex.DOTALL,
)


def tokens(source: str) -> list[str]:
    """The tokens of ``source``, in order.

    Args:
        source: a regex pattern's text.

    Returns:
        Its tokens; joined, they give ``source`` back.
    """
    found: list[str] = TOKEN.findall(source)
    return found
