"""What has been emitted for one value so far, and how to finish it from the value itself.

A :class:`Shadow` mirrors the deltas emitted for one value (a region's value, or a nested part such
as one tool call's arguments inside an ``x-findall`` match). It checks each delta against what came
before (a delta that does not fit is refused, and the stream stops rather than emit nonsense) and,
once the real value is known (the content parser's result at close), :meth:`Shadow.complete`
returns the deltas that turn what was emitted into exactly that value: the rest of an open
string's text, the keys and items not emitted yet (``set``), and the ``end`` of everything still
open. Replaying the emitted deltas and then the completion therefore always gives the value,
provided what was emitted agrees with it; :meth:`~Shadow.complete` says when it does not (a
scanner that emitted something the parser contradicts), and then returns no deltas.

Rule kept: the completion respects document order: open parts are finished (deepest first, in the
order they were begun) before keys that were never begun are set.
"""

from __future__ import annotations

from typing import Any

from chatcodec.response_templates.scanners.protocol import Delta, Path

__all__ = ["Shadow", "same_value"]

_OBJECT, _ARRAY, _STRING, _VALUE = "object", "array", "string", "value"


class _Node:
    __slots__ = ("children", "closed", "kind", "parts", "value")

    def __init__(self, kind: str, value: Any = None) -> None:
        self.kind = kind
        self.closed = kind == _VALUE
        self.value = value
        self.parts: list[str] | None = [] if kind == _STRING else None
        self.children: Any = {} if kind == _OBJECT else [] if kind == _ARRAY else None


#: Value types compared with ``==`` alone (same type on both sides): no container, no NaN.
_PLAIN = frozenset((str, int, bool, type(None)))


def same_value(left: Any, right: Any) -> bool:
    """JSON equality that keeps ``1``, ``1.0`` and ``True`` apart (NaN equals NaN)."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind in _PLAIN:  # the usual leaf, told without a call
        return bool(left == right)
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float) and left != left:
        return bool(right != right)
    return bool(left == right)


class Shadow:
    """The deltas emitted for one value, as a tree (see the module docstring)."""

    __slots__ = ("_last", "_last_path", "_parent", "_parent_path", "root")

    def __init__(self) -> None:
        self.root: _Node | None = None
        self._last: _Node | None = None  # the node of the last text delta (text comes in runs)
        self._last_path: Path | None = None
        #: the parent of the last child begun or set, and its path (siblings come in runs; a node
        #: never moves, so the pair stays true)
        self._parent: _Node | None = None
        self._parent_path: Path | None = None

    def _node(self, path: Path) -> _Node | None:
        node = self.root
        for key in path:
            if node is None or node.children is None:
                return None
            if node.kind == _OBJECT:
                node = node.children.get(key)
            elif type(key) is int and 0 <= key < len(node.children):
                node = node.children[key]
            else:
                return None
        return node

    def apply(self, delta: Delta) -> bool:
        """Record ``delta``; ``False`` (and nothing recorded) when it does not fit what came before."""
        op, path, payload = delta
        if op == "text":
            node = self._last if path == self._last_path else self._node(path)
            if node is None or node.kind != _STRING or node.closed or type(payload) is not str:
                return False
            node.parts.append(payload)  # type: ignore[union-attr]
            self._last, self._last_path = node, path
            return True
        if op == "end":
            node = self._last if path == self._last_path else self._node(path)
            if node is None or node.closed:
                return False
            node.closed = True
            return True
        if op == "begin":
            if payload not in (_OBJECT, _ARRAY, _STRING):
                return False
            child = _Node(payload)
        elif op == "set":
            child = _Node(_VALUE, payload)
        else:
            return False
        if not path:
            if self.root is not None:
                return False
            self.root = child
            return True
        above = path[:-1]
        if above == self._parent_path:
            parent = self._parent
        else:
            parent = self._node(above)
            if parent is not None:
                self._parent, self._parent_path = parent, above
        if parent is None or parent.closed or parent.children is None:
            return False
        key = path[-1]
        if parent.kind == _OBJECT:
            if type(key) is not str or key in parent.children:
                return False
            parent.children[key] = child
        else:
            if type(key) is not int or key != len(parent.children):
                return False
            parent.children.append(child)
        return True

    def get(self, path: Path) -> tuple[bool, Any]:
        """``(True, value)`` when the part at ``path`` is complete (set, or a string that ended),
        else ``(False, None)``; containers count only when set whole."""
        node = self._node(path)
        if node is None or not node.closed:
            return False, None
        if node.kind == _VALUE:
            return True, node.value
        if node.kind == _STRING:
            return True, "".join(node.parts or ())
        return False, None

    def open_string(self, path: Path) -> list[str] | None:
        """The text parts of the open string at ``path`` (appending to them records text), or ``None``."""
        node = self._node(path)
        if node is None or node.kind != _STRING or node.closed:
            return None
        return node.parts

    def done(self, path: Path) -> bool:
        """Whether the part at ``path`` is complete (set, or begun and ended)."""
        node = self._node(path)
        return node is not None and node.closed

    def has(self, path: Path) -> bool:
        """Whether anything was emitted at ``path``."""
        return self._node(path) is not None

    def paths(self) -> list[Path]:
        """The path of everything emitted so far, in document order: a part before its children,
        and the keys and items of a container in the order they were begun."""
        found: list[Path] = []
        stack: list[tuple[Path, _Node]] = [((), self.root)] if self.root is not None else []
        while stack:
            path, node = stack.pop()
            found.append(path)
            children = node.children
            if children:
                items = children.items() if node.kind == _OBJECT else enumerate(children)
                stack += reversed([((*path, key), child) for key, child in items])
        return found

    def complete(self, value: Any, base: Path = ()) -> tuple[bool, list[Delta]]:
        """The deltas that finish what was emitted into ``value`` (paths prefixed with ``base``).

        Returns:
            ``(True, deltas)``, or ``(False, [])`` when what was emitted contradicts ``value``.
        """
        out: list[Delta] = []
        if not _finish(self.root, value, base, out):
            return False, []
        for op, path, payload in out:  # keep the shadow in step (a value may be completed twice)
            self.apply((op, path[len(base):], payload))
        return True, out


def _finish(node: _Node | None, value: Any, path: Path, out: list[Delta]) -> bool:
    if node is None:
        out.append(("set", path, value))
        return True
    kind = node.kind
    if kind == _VALUE:
        return same_value(node.value, value)
    if kind == _STRING:
        if type(value) is not str:
            return False
        text = "".join(node.parts or ())
        if node.closed:
            return text == value
        if not value.startswith(text):
            return False
        if len(value) > len(text):
            out.append(("text", path, value[len(text):]))
        out.append(("end", path, None))
        return True
    if kind == _OBJECT:
        if type(value) is not dict:
            return False
        children: dict[str, _Node] = node.children
        for key, child in children.items():
            if key not in value or not _finish(child, value[key], (*path, key), out):
                return False
        if len(value) > len(children):  # keys not emitted yet (plain loops: no comprehension frames)
            if node.closed:
                return False
            for key in value:
                if key not in children:
                    out.append(("set", (*path, key), value[key]))
    else:
        if type(value) is not list:
            return False
        items: list[_Node] = node.children
        if len(items) > len(value) or (node.closed and len(items) != len(value)):
            return False
        for index, child in enumerate(items):
            if not _finish(child, value[index], (*path, index), out):
                return False
        for index in range(len(items), len(value)):
            out.append(("set", (*path, index), value[index]))
    if not node.closed:
        out.append(("end", path, None))
    return True
