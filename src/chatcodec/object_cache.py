"""Values worked out once per object that is neither hashable nor weakly referenced.

Compiled response templates and their field specs are made once per model and read by every
request; what is derived from them (a field's path plan, a template's text fields, the prompt an
engine does not show) is kept here by the object's identity. The object is kept with its entry,
so a new object at a recycled ``id`` never reads another's value, and the table starts over when
it holds ``kept`` entries (a process loads a few templates, not thousands).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["ObjectCache"]

V = TypeVar("V")


class ObjectCache(Generic[V]):
    """A bounded table of values by an object's identity and, optionally, a further key.

    Args:
        kept: how many entries it holds before it starts over.

    Example:
        >>> plans: ObjectCache[str] = ObjectCache()
        >>> spec = object()
        >>> plans.get(spec, key="a") is None
        True
        >>> plans.put(spec, "plan", key="a")
        'plan'
        >>> plans.get(spec, key="a")
        'plan'
    """

    __slots__ = ("_entries", "_kept")

    def __init__(self, kept: int = 256) -> None:
        self._entries: dict[tuple[int, Hashable], tuple[object, V]] = {}
        self._kept = kept

    def get(self, owner: object, key: Hashable = None) -> V | None:
        """The value kept for ``owner`` (the same object) and ``key``, or ``None``."""
        entry = self._entries.get((id(owner), key))
        return entry[1] if entry is not None and entry[0] is owner else None

    def put(self, owner: object, value: V, key: Hashable = None) -> V:
        """Keep ``value`` for ``owner`` and ``key``; returns ``value``."""
        if len(self._entries) >= self._kept:
            self._entries.clear()
        self._entries[(id(owner), key)] = (owner, value)
        return value
