"""How big a value would be as text, found without building the text.

A template can build a list holding the same big list many times (``[[0] * 1000000] * 1000``,
or ``{% set ns.x = [ns.x, ns.x] %}`` in a loop): cheap to build, since only references are
copied, but printing it, ``|tojson``, ``|pprint`` or ``|join`` would write every copy out. The
functions here estimate the length of a value's ``repr`` / JSON text by walking it once per
distinct object (a shared object is measured once and counted as often as it appears), and stop
as soon as the estimate passes the budget, so the walk itself stays cheap.

The estimate counts every character of every string and number plus the punctuation between
them; it leaves out escapes, so it is a lower bound of the real text (which is checked again
after building wherever it can grow further). Rule kept: a value is refused when its estimate
is over :data:`~chatcodec.chat_templates.limits.MAX_STRING_LENGTH`, never when it is under.
"""

from __future__ import annotations

from typing import Any

import jinja2.utils

from chatcodec.chat_templates import limits

__all__ = ["CONTAINERS", "check_compared", "check_text_size", "compared_items", "estimate_text_size"]

#: Types whose text is the text of their items (what the walk descends into).
CONTAINERS = frozenset({list, tuple, dict, set, frozenset})

_SCALAR_TEXT: dict[type, int] = {bool: 5, type(None): 4, float: 20}


def estimate_text_size(value: Any, budget: int, indent: int = 0) -> int:
    """The length of ``value``'s text (its ``repr``, or its JSON), estimated without building it.

    Args:
        value: any template value.
        budget: stop walking once the estimate passes this (the result is then ``budget + 1``
            or more).
        indent: the width of one indentation level, when the text will be indented per item
            (``tojson(indent=...)``): each item then costs a line break and its depth's indent.

    Returns:
        The estimated number of characters.
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def measure(item: Any, depth: int) -> int:
        kind = type(item)
        if kind is str:
            return len(item) + 2
        if kind is int:
            return int(item.bit_length()) * 3 // 10 + 1
        scalar = _SCALAR_TEXT.get(kind)
        if scalar is not None:
            return scalar
        attrs = _namespace_attributes(item)
        if kind not in CONTAINERS and attrs is None:
            return len(item) if isinstance(item, str) else 20
        key = id(item)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in in_progress:
            return 5  # a cycle: repr prints "[...]"
        in_progress.add(key)
        size = 2
        line = indent * (depth + 1) + 1 if indent else 0
        children = attrs.items() if attrs is not None else item.items() if kind is dict else None
        if children is not None:
            for name, child in children:
                size += measure(name, depth + 1) + measure(child, depth + 1) + 4 + line
                if size > budget:
                    break
        else:
            for child in item:
                size += measure(child, depth + 1) + 2 + line
                if size > budget:
                    break
        in_progress.discard(key)
        sizes[key] = size
        return size

    try:
        return measure(value, 0)
    except RecursionError:
        raise limits.recursion_error() from None


def _namespace_attributes(item: Any) -> dict[str, Any] | None:
    """The attributes of a ``namespace()`` (its repr shows them), or ``None`` for anything else."""
    if isinstance(item, jinja2.utils.Namespace):
        attrs: dict[str, Any] = object.__getattribute__(item, "_Namespace__attrs")
        return attrs
    return None


def check_text_size(value: Any, what: str, indent: int = 0) -> None:
    """Refuse a value whose text would be longer than ``MAX_STRING_LENGTH``.

    Cheap for strings and numbers; containers are walked (see :func:`estimate_text_size`).

    Args:
        value: the value about to be turned into text.
        what: what the text is for, for the message (``"printed value"``, ``"tojson text"``).
        indent: per-level indentation of the text, if any.

    Raises:
        ChatTemplateLimitError: the text would be over the limit.
    """
    kind = type(value)
    if kind is str or (kind not in CONTAINERS and not isinstance(value, jinja2.utils.Namespace)):
        return
    limit = limits.MAX_STRING_LENGTH
    size = estimate_text_size(value, limit, indent)
    if size > limit:
        raise limits.limit_error(f"{'an' if what[:1] in 'aeiou' else 'a'} {what} of more than {limit:,} "
                                 "characters", "MAX_STRING_LENGTH", limit)


def compared_items(value: Any, budget: int, known: dict[int, tuple[Any, int]]) -> int:
    """How many items comparing or hashing ``value`` goes through, a shared item counted as often as
    it appears (``(t, t)`` doubled 60 times: 2**61), found by walking each distinct object once.

    Args:
        value: a template value.
        budget: stop walking once the count passes this.
        known: counts already found in this render, by ``id`` (each with its object, kept alive so
            its id is not reused); filled in.

    Returns:
        The count (``budget + 1`` or more when over the budget).
    """
    in_progress: set[int] = set()

    def measure(item: Any) -> int:
        kind = type(item)
        if kind not in CONTAINERS:
            return 1
        key = id(item)
        hit = known.get(key)
        if hit is not None:
            return hit[1]
        if key in in_progress:
            return 1
        in_progress.add(key)
        total = 1
        for child in (item.items() if kind is dict else item):
            total += measure(child)
            if total > budget:
                break
        in_progress.discard(key)
        known[key] = (item, total)
        return total

    try:
        return measure(value)
    except RecursionError:
        raise limits.recursion_error() from None


def check_compared(value: Any, what: str) -> None:
    """Refuse comparing or hashing a list, tuple or dict that would go through more than
    ``MAX_COMPARED_ITEMS`` items (shared items counted each time they appear).

    Args:
        value: the operand.
        what: what is done with it, for the message.

    Raises:
        ChatTemplateLimitError: over the limit.
    """
    if type(value) not in CONTAINERS:
        return
    limit = limits.MAX_COMPARED_ITEMS
    count = compared_items(value, limit, limits.current_state().compared)
    if count > limit:
        raise limits.limit_error(f"{what} of a value of more than {limit:,} items (shared items counted "
                                 "each time they appear)", "MAX_COMPARED_ITEMS", limit)
