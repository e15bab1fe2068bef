"""Hand-made ``region_value`` events, as ``docs/streaming_values.md`` specifies them, and a scripted
parser that plays them: the OpenAI layer is tested against the contract on its own.

``value_events(field, value, path, rng)`` walks a value in document order (keys in insertion order,
items in order) and writes the contract's ops: ``begin`` + ``end`` around objects, arrays and
strings, a string's text cut at random places into ``text`` ops, ``set`` for numbers, booleans and
``null``. ``ScriptedParser`` returns a prepared list of events per ``feed`` and a prepared message
from ``finalize``, with the template of a real profile, so a stream reads it as it reads the engine.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from chatcodec import load_response_template


def value_events(field: str, value: Any, path: list[Any], rng: random.Random) -> list[dict[str, Any]]:
    """The ops that build ``value`` at ``path``, in document order (see the module docstring)."""

    def op(name: str, at: list[Any], **extra: Any) -> dict[str, Any]:
        return {"type": "region_value", "field": field, "op": name, "path": list(at), **extra}

    if isinstance(value, dict):
        events = [op("begin", path, kind="object")]
        for key, item in value.items():
            events += value_events(field, item, [*path, key], rng)
        return [*events, op("end", path)]
    if isinstance(value, list):
        events = [op("begin", path, kind="array")]
        for index, item in enumerate(value):
            events += value_events(field, item, [*path, index], rng)
        return [*events, op("end", path)]
    if isinstance(value, str):
        events = [op("begin", path, kind="string")]
        cuts = (
            sorted({rng.randint(1, len(value) - 1) for _ in range(rng.randint(0, 4))})
            if len(value) > 1
            else []
        )
        bounds = [0, *cuts, len(value)]
        events += [
            op("text", path, text=value[start:end])
            for start, end in itertools.pairwise(bounds)
            if end > start
        ]
        return [*events, op("end", path)]
    return [op("set", path, value=value)]


class ScriptedParser:
    """Plays prepared events: ``feed`` returns the next list of ``script``, ``finalize`` the message."""

    def __init__(
        self,
        template: dict[str, Any],
        script: list[list[dict[str, Any]]],
        message: dict[str, Any],
        final_events: list[dict[str, Any]] | None = None,
    ) -> None:
        self.template = load_response_template(template)
        self.initial_events: list[dict[str, Any]] = []
        self._script = list(script)
        self._message = message
        self._final = final_events or []

    def feed(self, step: Any) -> list[dict[str, Any]]:
        return self._script.pop(0) if self._script else []

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return self._message, self._final


def spread(events: list[dict[str, Any]], rng: random.Random) -> list[list[dict[str, Any]]]:
    """``events`` cut into consecutive feeds at random places (some feeds empty)."""
    feeds: list[list[dict[str, Any]]] = [[]]
    for event in events:
        if rng.random() < 0.4:
            feeds.append([])
        feeds[-1].append(event)
    return feeds
