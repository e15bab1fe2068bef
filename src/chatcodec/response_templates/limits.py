"""Documented limits of decoding, in one place (rule: refuse, never crash).

Model output can be nested arbitrarily deep (``[[[[...]]]]`` a hundred thousand levels). Python's
parsers and every recursive walk of a value (copying it into events, typing it, writing it as
JSON) would then fail with ``RecursionError`` at a depth that depends on the caller's stack. So a
region whose value (after the content parser, the transform and tool-argument typing) is nested
deeper than :data:`MAX_NESTING_DEPTH` is a parse error like any other: ``ResponseParseError`` with
``errors="strict"``, a ``parse_errors`` record with ``errors="keep"``. A template nested that deep
is a load error. Depth counts containers: ``[]`` is 1 deep, ``{"a": [1]}`` is 2 deep.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_DELIMITER_LITERALS",
    "MAX_FIELDS",
    "MAX_GROUP_DEPTH",
    "MAX_NESTING_DEPTH",
    "MAX_PATTERN_SIZE",
    "MAX_TEMPLATE_PATTERN_SIZE",
    "NESTING_ERROR",
    "bracket_bound",
    "exceeds_depth",
    "static_depth",
]

#: The deepest nesting of lists and objects a parsed value (or a response template) may have.
MAX_NESTING_DEPTH = 200

#: The most literals one ``open`` / ``close`` list may hold: loading compares the literals in pairs
#: (which one can extend another), so a stranger's template with thousands of them would take
#: seconds to load (4,000 took over 30 s). Real formats use a dozen at most.
MAX_DELIMITER_LITERALS = 256

#: The most fields one response template may have: loading builds a matcher per field over the
#: other fields' delimiters, so its time grows with the square of their number (6,000 fields took
#: over 20 s). Real formats have a handful.
MAX_FIELDS = 256

#: The deepest a template regex may nest its groups (``((a))`` is 2 deep): the ``regex`` module
#: parses and compiles a pattern recursively, a few Python frames per group, so 500 nested groups
#: raised ``RecursionError`` while the template loaded (about 250 already did, fewer from a deep
#: caller). Checked on the pattern's text before it is compiled; the bundled profiles nest 5 at most.
MAX_GROUP_DEPTH = 50

#: The most elements a template regex may compile into (:mod:`~chatcodec.response_templates.pattern_size`
#: estimates it from the text: a counted repetition ``X{m}`` is compiled as ``m`` copies of ``X``).
#: ``regex`` compiles 10,000 in about 0.01 s; the bundled profiles stay under 250.
MAX_PATTERN_SIZE = 10_000

#: The most elements the regexes of one response template may compile into together (each one
#: within :data:`MAX_PATTERN_SIZE`): a template's delimiters are compiled several times over
#: (each alone, and all of them as one alternation).
MAX_TEMPLATE_PATTERN_SIZE = 100_000

#: The problem reported for a value nested deeper than :data:`MAX_NESTING_DEPTH`.
NESTING_ERROR = (
    f"the value is nested more than {MAX_NESTING_DEPTH} levels deep (MAX_NESTING_DEPTH in "
    "chatcodec.response_templates.limits); refused rather than risking a crash"
)


def exceeds_depth(value: Any, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (no recursion).

    Args:
        value: a JSON-like value.
        limit: the deepest nesting allowed.

    Returns:
        ``True`` when some list or dict sits more than ``limit`` levels deep.
    """
    if not isinstance(value, _CONTAINERS):
        return False
    level, depth = [value], 1  # the containers ``depth`` levels deep, one level at a time
    while level:
        if depth > limit:
            return True
        deeper = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if type(child) not in _ATOMS and isinstance(child, _CONTAINERS):  # (a leaf: no call)
                    deeper.append(child)
        level, depth = deeper, depth + 1
    return False


def bracket_bound(text: str) -> int:
    """An upper bound on the nesting depth of the JSON value decoded from ``text``: every level opens
    with a ``{`` or ``[`` of its own and closes with its own ``}`` or ``]`` (brackets inside strings
    only raise the bound), so the depth is at most half the text's length, and at most its count
    of ``{`` and ``[``. Text too short to nest deeper than :data:`MAX_NESTING_DEPTH` is not
    counted (most tool calls); longer text costs two C counts, where :func:`exceeds_depth` walks
    every container in Python.

    Args:
        text: JSON (or JSON-like) text, whose decoded containers each have their closing bracket
            in it.

    Returns:
        Half the length of ``text`` when that is at most :data:`MAX_NESTING_DEPTH`, else how many
        ``{`` and ``[`` it holds.
    """
    half = len(text) // 2
    if half <= MAX_NESTING_DEPTH:
        return half
    return text.count("{") + text.count("[")


def static_depth(value: Any) -> int:
    """How deep ``value`` nests lists and dicts (recursive: for values a template was loaded from,
    already refused when deeper than :data:`MAX_NESTING_DEPTH`)."""
    if isinstance(value, dict):
        return 1 + max(map(static_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(static_depth, value), default=0)
    return 0


_CONTAINERS = (dict, list)
#: Leaf value types (by exact type): never a container, told without a call.
_ATOMS = frozenset((str, int, float, bool, type(None)))
