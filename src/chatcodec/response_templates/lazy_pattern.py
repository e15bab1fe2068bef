"""Patterns that the template checks compile on first use, not when their module is imported.

The load-time analyses of regex delimiters (the judge, the whitespace guard, the first-character
probes, the pattern tokenizer) read a delimiter's source with a dozen patterns of their own.
Compiling them with ``regex`` costs ~0.2-2 ms each; a template whose delimiters are all literals
never runs them, and neither does a process that only imports chatcodec. A :class:`LazyPattern`
compiles on its first search and keeps the compiled pattern.

Most of those patterns are written in the syntax the standard ``re`` module reads exactly as
``regex`` does (literal characters, escaped punctuation, ASCII ranges, groups, alternation,
counted repetition, fixed-width look-arounds), and ``re`` compiles them in about 60 % of the
time: those are marked ``standard=True``. Their input is a delimiter's source, not model output,
so nothing partial is ever asked of them, and a property test compares both modules' answers.
"""

from __future__ import annotations

import re

import regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LazyPattern"]

#: What ``re`` reads differently from ``regex`` (or not at all): the Unicode classes ``\w`` ``\s``
#: ``\d`` ``\b`` and their negations (``re`` and ``regex`` disagree on thousands of code points),
#: ``regex``-only escapes (``\p{..}``, ``\X``, ``\m``, ...), POSIX classes, inline flags and
#: ``regex``-only groups (atomic groups, possessive quantifiers, branch resets, recursion).
_NOT_SHARED = re.compile(r"(?<!\\)(?:\\\\)*\\[wWsSdDbBpPXNmMGKLhHvVR]|\[\[:|\(\?(?!P[<=])[a-zA-Z]|\(\?[>|]"
                         r"|[*+?}]\+")


class LazyPattern:
    """A pattern compiled on first use: with ``regex``, or with the standard ``re`` when it says
    ``standard=True``.

    Args:
        source: the pattern's text.
        flags: ``regex`` flags (0 for a standard pattern).
        standard: compile with ``re``; only for a pattern that both modules read the same way.

    The methods are the compiled pattern's (``search``, ``match``, ``fullmatch``, ``findall``, ``sub``),
    with the same arguments and results; a pattern that does not compile raises ``regex.error``
    (``re.error``) at its first use, and a ``standard`` pattern with syntax the two modules do
    not share raises ``ValueError`` there, naming it.
    """

    __slots__ = ("_compiled", "_flags", "_source", "standard")

    def __init__(self, source: str, flags: int = 0, *, standard: bool = False) -> None:
        self._source = source
        self._flags = flags
        self.standard = standard
        self._compiled: regex.Pattern[str] | re.Pattern[str] | None = None

    @property
    def source(self) -> str:
        """The pattern's text."""
        return self._source

    @property
    def compiled(self) -> regex.Pattern[str] | re.Pattern[str]:
        """The compiled pattern (compiled now if it is the first use)."""
        if self._compiled is None:
            if not self.standard:
                self._compiled = regex.compile(self._source, self._flags)
            elif self._flags or (found := _NOT_SHARED.search(self._source)) is not None:
                shown = "flags" if self._flags else repr(found.group()) if found else ""
                raise ValueError(f"LazyPattern {self._source!r}: standard=True needs the syntax re and regex "
                                 f"read alike, not {shown}")
            else:
                self._compiled = re.compile(self._source)
        return self._compiled

    def search(self, string: str, *args: Any, **kwargs: Any) -> regex.Match[str] | re.Match[str] | None:
        """``Pattern.search``."""
        return self.compiled.search(string, *args, **kwargs)

    def match(self, string: str, *args: Any, **kwargs: Any) -> regex.Match[str] | re.Match[str] | None:
        """``Pattern.match``."""
        return self.compiled.match(string, *args, **kwargs)

    def fullmatch(self, string: str, *args: Any, **kwargs: Any) -> regex.Match[str] | re.Match[str] | None:
        """``Pattern.fullmatch``."""
        return self.compiled.fullmatch(string, *args, **kwargs)

    def findall(self, string: str, *args: Any, **kwargs: Any) -> list[Any]:
        """``Pattern.findall``."""
        found: list[Any] = self.compiled.findall(string, *args, **kwargs)
        return found

    def sub(self, repl: Any, string: str, *args: Any, **kwargs: Any) -> str:
        """``Pattern.sub``."""
        return str(self.compiled.sub(repl, string, *args, **kwargs))
