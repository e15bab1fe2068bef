"""Patterns that the template checks compile on first use, not when their module is imported.

The load-time analyses of regex delimiters (the judge, the whitespace guard, the first-character
probes, the pattern tokenizer) read a delimiter's source with a dozen patterns of their own.
Compiling them with ``regex`` costs ~0.2-2 ms each; a template whose delimiters are all literals
never runs them, and neither does a process that only imports chatcodec. A :class:`LazyPattern`
compiles on its first search and keeps the compiled pattern.
"""

from __future__ import annotations

import regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern:
    """A ``regex`` pattern compiled on first use.

    Args:
        source: the pattern's text.
        flags: ``regex`` flags.

    The methods are the compiled pattern's (``search``, ``match``, ``fullmatch``, ``findall``, ``sub``),
    with the same arguments and results; a pattern that does not compile raises ``regex.error``
    at its first use.
    """

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: regex.Pattern[str] | None = None

    @property
    def compiled(self) -> regex.Pattern[str]:
        """The compiled pattern (compiled now if it is the first use)."""
        if self._compiled is None:
            self._compiled = regex.compile(self._source, self._flags)
        return self._compiled

    def search(self, string: str, *args: Any, **kwargs: Any) -> regex.Match[str] | None:
        """``regex.Pattern.search``."""
        return self.compiled.search(string, *args, **kwargs)

    def match(self, string: str, *args: Any, **kwargs: Any) -> regex.Match[str] | None:
        """``regex.Pattern.match``."""
        return self.compiled.match(string, *args, **kwargs)

    def fullmatch(self, string: str, *args: Any, **kwargs: Any) -> regex.Match[str] | None:
        """``regex.Pattern.fullmatch``."""
        return self.compiled.fullmatch(string, *args, **kwargs)

    def findall(self, string: str, *args: Any, **kwargs: Any) -> list[Any]:
        """``regex.Pattern.findall``."""
        found: list[Any] = self.compiled.findall(string, *args, **kwargs)
        return found

    def sub(self, repl: Any, string: str, *args: Any, **kwargs: Any) -> str:
        """``regex.Pattern.sub``."""
        return str(self.compiled.sub(repl, string, *args, **kwargs))
