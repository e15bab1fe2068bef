"""Argument types shared by the commands, for ``add_argument(type=...)``.

Rule kept here: a bad option value is a usage error. Each function converts the text or raises
``argparse.ArgumentTypeError``, so argparse reports it as ``chatcodec CMD: error: argument --x:
...`` and exits 2, before the command runs (a ``ValueError`` from ``run`` would exit 1).
"""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Iterator

__all__ = ["MAX_DELAY_SECONDS", "add_timeout", "positive_int", "positive_seconds", "render_timeout",
           "seconds"]


def positive_int(text: str) -> int:
    """A whole number of at least 1 (``--chunk-size``).

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


#: Longest ``--delay``, in seconds: a pause after each chunk, to watch a stream (``time.sleep`` fails
#: past about 9.2e9 seconds, which escaped as an internal error).
MAX_DELAY_SECONDS = 3600.0


def _finite_seconds(text: str) -> float:
    """``text`` as a number of seconds, ``nan`` when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def seconds(text: str) -> float:
    """A finite number of seconds from 0 to :data:`MAX_DELAY_SECONDS` (``--delay``).

    Raises:
        argparse.ArgumentTypeError: a negative number, more than an hour, ``nan``, ``inf`` or not a number.
    """
    value = _finite_seconds(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds, a finite number of at least 0, got {text!r}")
    if value > MAX_DELAY_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected seconds, at most MAX_DELAY_SECONDS ({MAX_DELAY_SECONDS:g}), got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds, more than 0 (``--timeout``).

    Raises:
        argparse.ArgumentTypeError: zero, a negative number, ``nan``, ``inf`` or not a number.
    """
    value = _finite_seconds(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected seconds, a finite number more than 0, got {text!r}")
    return value


def add_timeout(parser: argparse.ArgumentParser) -> None:
    """Declare ``--timeout SECONDS`` (the commands that render a chat template: render, doctor, derive)."""
    parser.add_argument("--timeout", metavar="SECONDS", type=positive_seconds, default=None,
                        help="stop each render of the chat template after this many seconds (default: "
                             "MAX_RENDER_SECONDS, 60); a template that runs out of time is an error")


#: What a render that runs out of time tells the command-line user (who cannot set the constant).
TIMEOUT_HINT = "if the template is trusted, give each render more time with --timeout SECONDS"


@contextlib.contextmanager
def render_timeout(limit: float | None) -> Iterator[None]:
    """Within the block, each render may take ``limit`` seconds (``--timeout``): the sandbox's
    :data:`~chatcodec.chat_templates.limits.MAX_RENDER_SECONDS`, restored afterwards. ``None``
    keeps the limit as it is. Either way a render that runs out of time says to pass ``--timeout
    SECONDS`` (:data:`TIMEOUT_HINT`), not to raise the constant."""
    from chatcodec.chat_templates import limits

    before, hint = limits.MAX_RENDER_SECONDS, limits.RENDER_TIME_HINT
    limits.MAX_RENDER_SECONDS = before if limit is None else limit
    limits.RENDER_TIME_HINT = TIMEOUT_HINT
    try:
        yield
    finally:
        limits.MAX_RENDER_SECONDS, limits.RENDER_TIME_HINT = before, hint
