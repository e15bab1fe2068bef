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

__all__ = ["TOKEN", "tokens", "top_level_alternatives"]

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


def top_level_alternatives(parts: list[str]) -> list[list[str]]:
    """``parts`` (a pattern's tokens) cut at its top-level ``|``.

    Args:
        parts: tokens as :func:`tokens` gives them.

    Returns:
        The tokens of each top-level alternative, in order (one list when there is no top-level
        ``|``). A token that opens a group raises the depth; a whole-token construct such as a
        comment, inline flags or a recursion (``(?#c)``, ``(?i)``, ``(?1)``) does not.
    """
    out: list[list[str]] = [[]]
    depth = 0
    for token in parts:
        if token == "|" and depth == 0:
            out.append([])
            continue
        if token.startswith("(") and not token.endswith(")"):
            depth += 1
        elif token == ")":
            depth -= 1
        out[-1].append(token)
    return out
