"""Where a part of the content value lands in the region's value: paths mapped through a transform.

A field's transform (SPEC §1.4) places variables in a JSON-shaped template. :func:`plan_paths`
reads it once per field and says, for the partial-value protocol (``docs/streaming_values.md``):

* the *skeleton*: the containers and literals the transform itself writes (``"type": "function"``),
  emitted when the region (or, with ``transform_each``, each list item) begins;
* the *routes*: each whole-string placeholder whose variable is the content (``{content.a.b}``) or,
  with ``transform_each``, a key of the current item (``{arguments}``), as ``(source, target)``: the
  content's subtree at ``source`` is the region value's subtree at ``target``;
* open-pattern captures (``{name}``), whose values are known when the region opens;
* everything else is *deferred* to the region's close: close-pattern captures, with
  ``transform_each`` a variable that is also a capture name (an item key of that name would win,
  which only the item's end tells), lists in the transform that hold placeholders (their items
  must come in order), unknown variables (an error at close anyway).

:class:`PathMapper` applies a plan to the content deltas of one region: it emits the skeleton,
re-addresses each delta to every route whose source holds it, resolves a placeholder whose source
an ancestor ``set`` whole (or ended without it: an optional ``{x?}`` key is then left out), and ends
a skeleton container once nothing under it can change before the close.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatcodec.response_templates.message import copy_value
from chatcodec.response_templates.scanners.protocol import Delta, Path
from chatcodec.response_templates.transform import PLACEHOLDER

__all__ = ["PathMapper", "PathPlan", "Route", "plan_paths"]


@dataclass(frozen=True, slots=True)
class Route:
    """One placeholder fed from the content (or, with ``transform_each``, from the item).

    Attributes:
        source: the path in the content (item) value the placeholder names.
        target: where the value lands (relative to the item with ``transform_each``).
        optional: ``{x?}``: the key is left out when the last key of ``source`` is missing.
        containers: the skeleton containers above ``target``, deepest first.
    """

    source: Path
    target: Path
    optional: bool
    containers: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class _Capture:
    name: str
    keys: tuple[str, ...]
    target: Path
    optional: bool
    containers: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class PathPlan:
    """A field's transform read for path mapping (see the module docstring).

    Attributes:
        each: ``transform_each``: the region's value is a list, one transformed item per content item.
        skeleton: ``(path, kind_or_None, value)`` in document order: ``kind`` begins a container
            (``"end"`` ends one that holds only literals), ``None`` sets ``value`` (a literal).
        routes: the placeholders fed from the content.
        captures: the placeholders fed from open-pattern captures.
        pending: how many placeholders each skeleton container waits for (deferred ones included).
    """

    each: bool
    skeleton: tuple[tuple[Path, str | None, Any], ...]
    routes: tuple[Route, ...]
    captures: tuple[_Capture, ...]
    pending: Mapping[Path, int]


def plan_paths(transform: Any, each: bool, open_groups: frozenset[str],
               close_groups: frozenset[str]) -> PathPlan:
    """Read ``transform`` for path mapping.

    Args:
        transform: the field's transform (validated at load), or ``None`` (the value is the content).
        each: the field's ``transform_each``.
        open_groups, close_groups: the named groups of the field's open and close patterns.

    Returns:
        The plan.
    """
    if transform is None:
        return PathPlan(False, (), (Route((), (), False, ()),), (), {})
    skeleton: list[tuple[Path, str | None, Any]] = []
    routes: list[Route] = []
    captures: list[_Capture] = []
    pending: dict[Path, int] = {}
    captured = open_groups | close_groups

    def walk(node: Any, path: Path, containers: tuple[Path, ...]) -> None:
        if isinstance(node, dict):
            skeleton.append((path, "object", None))
            pending.setdefault(path, 0)
            for key, child in node.items():
                walk(child, (*path, key), (path, *containers))
            if not pending[path]:
                skeleton.append((path, "end", None))  # only literals inside: complete already
            return
        whole = PLACEHOLDER.fullmatch(node) if isinstance(node, str) else None
        if isinstance(node, list) and not _has_placeholder(node):
            skeleton.append((path, None, node))
            return
        if whole is None and not isinstance(node, list):
            skeleton.append((path, None, node))
            return
        for container in containers:  # a placeholder, or a list holding some: waits for its value
            pending[container] = pending.get(container, 0) + 1
        if whole is None:
            return  # a list with placeholders: deferred to the close
        root, *keys = whole.group(1).split(".")
        optional = whole.group(2) is not None
        if each and root not in captured:
            routes.append(Route((root, *keys), path, optional, containers))
        elif not each and root == "content" and "content" not in captured:
            routes.append(Route(tuple(keys), path, optional, containers))
        elif not each and root in open_groups and root not in close_groups:
            captures.append(_Capture(root, tuple(keys), path, optional, containers))
        # anything else is deferred: completed from the value at close

    walk(transform, (), ())
    return PathPlan(each, tuple(skeleton), tuple(routes), tuple(captures), pending)


def _has_placeholder(node: Any) -> bool:
    if isinstance(node, str):
        return PLACEHOLDER.fullmatch(node) is not None
    if isinstance(node, list):
        return any(_has_placeholder(item) for item in node)
    if isinstance(node, dict):
        return any(_has_placeholder(item) for item in node.values())
    return False


_MISSING = object()


def _extract(value: Any, keys: Path) -> Any:
    """``value`` at ``keys`` as a transform's dotted path reads it; ``_MISSING`` when the last key is
    absent from an object; ``None``-like failure (an error at close) as ``_BROKEN``."""
    for index, key in enumerate(keys):
        if not isinstance(value, dict):
            return _BROKEN
        if key not in value:
            return _MISSING if index == len(keys) - 1 else _BROKEN
        value = value[key]
    return value


_BROKEN = object()


class _Item:
    """The routes of one transformed value (the region's, or one item's with ``transform_each``)."""

    __slots__ = ("base", "pending", "started")

    def __init__(self, base: Path, pending: Mapping[Path, int]) -> None:
        self.base = base
        self.pending = dict(pending)
        self.started: set[int] = set()  # routes that are resolved or in progress


class PathMapper:
    """Maps one region's content deltas to region-value deltas (see the module docstring).

    Args:
        plan: the field's :class:`PathPlan`.
        captures: the open pattern's named groups of this region.
    """

    def __init__(self, plan: PathPlan, captures: Mapping[str, str]) -> None:
        self._plan = plan
        self._captures = captures
        self._items: dict[int, _Item] = {}
        self._whole: _Item | None = None

    def start(self) -> list[Delta]:
        """The deltas known when the region opens: the skeleton and open-pattern captures."""
        if self._plan.each:
            return [("begin", (), "array")]
        self._whole = _Item((), self._plan.pending)
        return self._skeleton(self._whole)

    def _skeleton(self, item: _Item) -> list[Delta]:
        base = item.base
        out: list[Delta] = []
        for path, kind, value in self._plan.skeleton:
            if kind is None:
                out.append(("set", (*base, *path), copy_value(value)))
            elif kind == "end":
                out.append(("end", (*base, *path), None))
            else:
                out.append(("begin", (*base, *path), kind))
        for capture in self._plan.captures:
            value = _extract(self._captures.get(capture.name, _MISSING), capture.keys) \
                if capture.name in self._captures else _MISSING
            if value is _BROKEN or (value is _MISSING and not capture.optional):
                continue
            if value is not _MISSING:
                out.append(("set", (*base, *capture.target), value))
            self._resolve(item, capture.containers, out)
        return out

    def map(self, delta: Delta) -> list[Delta]:
        """The region-value deltas of one content delta."""
        if not self._plan.each:
            assert self._whole is not None
            return self._route(self._whole, delta, delta[1])
        op, path, payload = delta
        if not path:
            return []  # the content list itself: the region's list began at start()
        index = path[0]
        if type(index) is not int:
            return []
        item = self._items.get(index)
        if item is None:
            if len(path) != 1 or (op == "begin" and payload != "object") or op not in ("begin", "set") \
                    or (op == "set" and not isinstance(payload, dict)):
                return []  # not an object: transform_each fails at close
            item = self._items[index] = _Item((index,), self._plan.pending)
            out = self._skeleton(item)
            if op == "begin":
                return out
            return out + self._route(item, delta, ())
        return self._route(item, delta, path[1:])

    def _route(self, item: _Item, delta: Delta, path: Path) -> list[Delta]:
        op, _, payload = delta
        out: list[Delta] = []
        depth = len(path)
        for number, route in enumerate(self._plan.routes):
            source = route.source
            size = len(source)
            if depth >= size and path[:size] == source:
                out.append((op, (*item.base, *route.target, *path[size:]), payload))
                if depth == size:
                    item.started.add(number)
                    if op in ("set", "end"):
                        self._resolve(item, route.containers, out)
            elif number not in item.started and source[:depth] == path and op in ("set", "end"):
                value = _extract(payload, source[depth:]) if op == "set" else _MISSING
                if op == "end" and depth + 1 < size:
                    value = _BROKEN  # an ancestor two or more levels up ended without the source
                if value is _BROKEN or (value is _MISSING and not route.optional):
                    continue
                item.started.add(number)
                if value is not _MISSING:
                    out.append(("set", (*item.base, *route.target), value))
                self._resolve(item, route.containers, out)
        return out

    def _resolve(self, item: _Item, containers: tuple[Path, ...], out: list[Delta]) -> None:
        """One placeholder under ``containers`` is final: end each container nothing else awaits."""
        for container in containers:
            left = item.pending[container] - 1
            item.pending[container] = left
            if not left:
                out.append(("end", (*item.base, *container), None))
