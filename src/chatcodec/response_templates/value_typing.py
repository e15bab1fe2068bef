"""Tool-argument typing of streamed values: a string argument is held until its type is decided.

SPEC §1.6 casts a tool call's string arguments with the called tool's parameter schema when the
region closes (:mod:`~chatcodec.response_templates.arguments`). For the partial-value protocol that
means: the deltas of an argument must already carry the typed value. :class:`ArgumentTyping` sits
between the path mapping and the emitted events and applies the same casts to deltas at
``[..., "function", "arguments", key]`` of every tool-call-shaped value (the paths that
:func:`~chatcodec.response_templates.arguments.cast_tool_calls` types):

* while the call's name is not known yet (its string has not ended), every delta of its
  arguments is held, then replayed once the name arrives (or completed from the value at close);
* a ``set`` argument is typed as :func:`~chatcodec.response_templates.arguments.type_argument` types it;
* a string argument whose parameter could turn text into another type is held while the text so
  far could still be cast (``"3"`` may become ``3``; ``"Paris"`` never can), and either released
  as a string once no cast can accept it any more, or ``set`` typed when it ends; a string
  parameter streams at once;
* the elements of a list of repeated keys (``merge_duplicates``) are typed like string arguments.

The casts themselves are those of ``arguments.py``; this module only decides when a string is
decided.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import regex

from chatcodec.response_templates.arguments import ToolParameters, argument_room, schema_types, type_argument
from chatcodec.response_templates.scanners.protocol import Delta, Path
from chatcodec.response_templates.scanners.shadow import Shadow

__all__ = ["ArgumentTyping", "could_cast"]

_FLOAT = r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))"
_SCALARS = {
    "integer": regex.compile(_FLOAT),
    "number": regex.compile(_FLOAT),
    "boolean": regex.compile(r"(?i:true|false|1|0)"),
    "null": regex.compile(r"null|None"),
}
_AFTER_STRING = ("null", "object", "array")


def _candidates(types: tuple[str, ...]) -> tuple[str, ...]:
    """The casts :func:`~chatcodec.response_templates.arguments.coerce_argument` may try, in order."""
    out: list[str] = []
    after_string = False
    for name in types:
        if name == "string":
            after_string = True
        elif not after_string or name in _AFTER_STRING:
            out.append(name)
    return tuple(out)


def could_cast(text: str, casts: tuple[str, ...]) -> bool:
    """Whether some continuation of ``text`` could be cast by one of ``casts`` (else it stays text)."""
    core = text.strip()
    if not core:
        return True
    ended = len(text.lstrip()) != len(core)  # whitespace after the token: it cannot grow
    for name in casts:
        if name in ("object", "array"):
            if core[0] in "{[":
                return True
            continue
        pattern = _SCALARS.get(name)
        if pattern is None:
            continue
        match = pattern.fullmatch(core, partial=not ended)
        if match is not None:
            return True
    return False


class _Held:
    __slots__ = ("casts", "container", "parts", "room", "types")

    def __init__(self, types: tuple[str, ...], casts: tuple[str, ...], room: int) -> None:
        self.types = types
        self.casts = casts
        self.room = room
        self.parts: list[str] = []
        self.container = False  # starts like a JSON object/array: held to its end whatever follows


def _call_arguments(path: Path) -> tuple[Path, Path] | None:
    """``(call path, path below the arguments)`` when ``path`` is inside a call's arguments."""
    for index, key in enumerate(path):
        if type(key) is not int:
            if path[index : index + 2] == ("function", "arguments"):
                return path[:index], path[index + 2 :]
            return None
    return None


def _name_of(path: Path) -> Path | None:
    """The call path when ``path`` is a call's ``function.name``."""
    if len(path) >= 2 and path[-2:] == ("function", "name") and all(type(k) is int for k in path[:-2]):
        return path[:-2]
    return None


Emit = Callable[[Delta], None]


class ArgumentTyping:
    """Types streamed tool-call arguments (see the module docstring).

    Args:
        params: the tools' parameter properties (``arguments.tool_parameters``).
        shadow: what has been emitted for the region (the call's name is read from it).
    """

    def __init__(self, params: ToolParameters, shadow: Shadow) -> None:
        self._params = params
        self._shadow = shadow
        self._blocked: set[Path] = set()  # calls whose name is not known yet
        self._queue: list[Delta] = []  # deltas held (in order) until the name of their call is known
        self._held: dict[Path, _Held] = {}  # string argument path -> its text so far
        self._lists: dict[Path, tuple[tuple[str, ...], int]] = {}  # repeated-key list -> (types, room)

    def retype(self, params: ToolParameters) -> bool:
        """Type with ``params`` from now on, when that is exact: when what was emitted and what is
        held would be the same had they been the parameters from the start.

        That holds while nothing inside a call's arguments was emitted or typed yet: the arguments
        object itself may have begun, after its call's name ended (typing lets that through
        unchanged); a delta held only because its call's name is not known yet is typed when the
        name comes, with ``params``. When ``params`` is empty, nothing may be held at all (without
        typing nothing waits).

        Returns:
            Whether the parameters were replaced (``False`` changes nothing).
        """
        if self._held or self._lists or (not params and (self._queue or self._blocked)):
            return False
        shadow = self._shadow
        named: set[Path] = set()  # calls whose name was begun (document order: before what follows)
        for path in shadow.paths():
            call = _name_of(path)
            if call is not None:
                named.add(call)
                continue
            where = _call_arguments(path)
            if where is None:
                continue
            call, below = where
            if below or call not in named or not shadow.done((*call, "function", "name")) \
                    or shadow.get(path)[0]:
                return False  # an argument, or arguments begun before the name ended, or set whole
        self._params = params
        return True

    def held_text(self, path: Path) -> list[str] | None:
        """The text parts of the string argument at ``path`` when it is held to its end whatever
        text follows (it starts like a JSON object or array): appending to them holds more text,
        as :meth:`filter` does with a ``text`` delta there. ``None`` otherwise."""
        held = self._held.get(path)
        return held.parts if held is not None and held.container else None

    def filter(self, delta: Delta, emit: Emit) -> None:
        """Pass ``delta`` on to ``emit`` typed, now, later or (held to the close) never."""
        op, path, _ = delta
        where = _call_arguments(path)
        if where is None:
            if op == "end" and self._blocked and any(
                    path == (*call, "function", "arguments")[: len(path)] for call in self._blocked):
                self._queue.append(delta)  # an end above held arguments waits for them
                return
            emit(delta)
            call = _name_of(path) if op in ("set", "end") else None
            if call is not None and call in self._blocked:
                self._blocked.discard(call)
                queue, self._queue = self._queue, []
                for held in queue:
                    self.filter(held, emit)
            return
        call, below = where
        if call in self._blocked:
            self._queue.append(delta)
            return
        name_path = (*call, "function", "name")
        if not self._shadow.done(name_path):
            self._blocked.add(call)
            self._queue.append(delta)
            return
        _, name = self._shadow.get(name_path)
        properties = self._params.get(name) if isinstance(name, str) else None
        if not properties:
            emit(delta)
            return
        self._typed(delta, len(call), below, properties, emit)

    def _typed(self, delta: Delta, depth: int, below: Path, properties: dict[str, Any], emit: Emit) -> None:
        op, path, payload = delta
        room = argument_room(depth)
        if not below:  # the arguments object itself
            if op == "set" and isinstance(payload, dict):
                delta = (op, path, {key: type_argument(value, _types(properties, key), room)
                                    for key, value in payload.items()})
            emit(delta)
            return
        held = self._held.get(path)
        if held is not None:
            self._held_delta(held, delta, emit)
            return
        if len(below) == 1:
            types = _types(properties, below[0])
        elif len(below) == 2 and path[:-1] in self._lists:
            types, room = self._lists[path[:-1]]
        else:
            emit(delta)
            return
        if not types:
            emit(delta)
        elif op == "set":
            emit((op, path, type_argument(payload, types, room)))
        elif op == "begin" and payload == "string" and _candidates(types):
            self._held[path] = _Held(types, _candidates(types), room)
        else:
            if op == "begin" and payload == "array" and len(below) == 1 and "array" not in types:
                self._lists[path] = (types, room - 1)
            emit(delta)

    def _held_delta(self, held: _Held, delta: Delta, emit: Emit) -> None:
        op, path, payload = delta
        if op == "text":
            held.parts.append(payload)
            if held.container:
                return
            text = "".join(held.parts)
            held.parts = [text]
            if could_cast(text, held.casts):
                held.container = text.strip()[:1] in ("{", "[")
                return
            del self._held[path]
            emit(("begin", path, "string"))
            emit(("text", path, text))
            return
        del self._held[path]
        if op == "end":
            emit(("set", path, type_argument("".join(held.parts), held.types, held.room)))


def _types(properties: dict[str, Any], key: Any) -> tuple[str, ...]:
    return schema_types(properties.get(key)) if isinstance(key, str) and key in properties else ()
