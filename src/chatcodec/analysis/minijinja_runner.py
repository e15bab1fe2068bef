"""Render a chat template with MiniJinja in a child process, within a memory and a CPU-time limit.

MiniJinja has none of the sandbox limits chatcodec's renderer has, and it runs native code: a
template that doubles a string in a loop made it ask for 4 GiB and abort the whole process (Rust
aborts when an allocation fails; nothing can catch it), and ``'hi' * 100000000`` in a loop ran for
minutes. ``chatcodec doctor`` therefore runs it here, as a script of its own (it imports nothing of
chatcodec, so it runs whatever ``sys.path`` the parent had), under ``RLIMIT_AS`` and
``RLIMIT_CPU`` where the platform has them; :mod:`chatcodec.analysis.cross_engine` adds a wall-clock
timeout and turns a failure into an ``info`` finding.

Protocol: stdin holds ``{"template", "contexts", "now", "memory", "seconds"}`` (``now``: what
``strftime_now`` formats, as ``[year, month, day, hour, minute, second]``); stdout gets one
``{"text"}`` or ``{"error", "line"}`` per context, as a JSON list. The engine is configured as
``../shared/research/portability.md`` measured it: ``trim_blocks``, ``lstrip_blocks``, lenient
undefined, ``pycompat``, a ``json.dumps`` ``tojson`` and ``raise_exception``.
"""

from __future__ import annotations

import datetime
import json
import sys
from typing import Any


class _Raised(Exception):
    """``raise_exception(message)`` called by the template."""


def _tojson(value: Any, indent: int | None = None, separators: Any = None, sort_keys: bool = False,
            ensure_ascii: bool = False) -> str:
    """The reference's ``tojson``: ``json.dumps`` without HTML escaping."""
    return json.dumps(value, indent=indent, separators=tuple(separators) if separators else None,
                      sort_keys=sort_keys, ensure_ascii=ensure_ascii)


def _raise(message: str) -> None:
    raise _Raised(message)


def _limit(memory: int, seconds: int) -> None:
    """Cap the process's address space at ``memory`` bytes and its CPU time at ``seconds``
    (nothing where :mod:`resource` is missing: the parent's wall-clock timeout still holds)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return
    for kind, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, seconds)):
        hard = resource.getrlimit(kind)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, hard))


def render(template: str, contexts: list[dict[str, Any]], now: datetime.datetime) -> list[dict[str, Any]]:
    """Render ``template`` with MiniJinja once per context.

    Args:
        template: the chat template text.
        contexts: the template variables of each render (plain JSON data).
        now: what ``strftime_now`` formats.

    Returns:
        Per context ``{"text": prompt}``, or ``{"error": message, "line": line or None}`` when the
        engine (or ``raise_exception``, as ``"TemplateError: message"``) raised.
    """
    import minijinja

    env = minijinja.Environment()
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.keep_trailing_newline = False
    env.undefined_behavior = "lenient"
    env.pycompat = True
    env.add_filter("tojson", _tojson)
    env.add_global("raise_exception", _raise)
    env.add_global("strftime_now", now.strftime)
    outcomes: list[dict[str, Any]] = []
    for context in contexts:
        try:
            outcomes.append({"text": env.render_str(template, **context)})
        except _Raised as error:
            outcomes.append({"error": f"TemplateError: {error}", "line": None})
        except Exception as error:  # the engine's own errors, Python errors of the filters, MemoryError
            text = str(error) or type(error).__name__
            outcomes.append({"error": text.splitlines()[0], "line": getattr(error, "line", None)})
    return outcomes


def main() -> int:
    """Read the request on stdin, render, write the outcomes on stdout; exit 0."""
    request = json.load(sys.stdin)
    _limit(int(request["memory"]), int(request["seconds"]))
    now = datetime.datetime(*request["now"])
    json.dump(render(request["template"], request["contexts"], now), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
