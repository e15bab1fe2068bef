"""Argument types shared by the commands, for ``add_argument(type=...)``.

Rule kept here: a bad option value is a usage error. Each function converts the text or raises
``argparse.ArgumentTypeError``, so argparse reports it as ``chatcodec CMD: error: argument --x:
...`` and exits 2, before the command runs (a ``ValueError`` from ``run`` would exit 1).
"""

from __future__ import annotations

import argparse
import math

__all__ = ["positive_int", "seconds"]


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


def seconds(text: str) -> float:
    """A finite number of seconds, at least 0 (``--delay``).

    Raises:
        argparse.ArgumentTypeError: a negative number, ``nan``, ``inf`` or not a number.
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds, a finite number of at least 0, got {text!r}")
    return value
