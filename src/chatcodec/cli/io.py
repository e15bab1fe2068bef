"""Command-line input: files or stdin, JSON with errors that name the file and position."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["read_json", "read_text"]


def read_text(source: str) -> str:
    """Read a UTF-8 text file, or standard input when ``source`` is ``"-"``.

    Raises:
        OSError: the file cannot be read (the message names it).
        ValueError: the bytes are not UTF-8 (the message names the file and byte offset).
    """
    if source == "-":
        data = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        path = Path(source)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise OSError(f"{source}: cannot read: {error.strerror or error}") from None
        name = source
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{name}: not UTF-8 text (byte {error.start}: {error.reason})") from None


def read_json(source: str, what: str = "JSON") -> Any:
    """Read and parse a JSON file (or stdin with ``"-"``).

    Args:
        source: a path or ``"-"``.
        what: what the file should hold, for messages (``"conversation"``, ``"tools"``, ...).

    Raises:
        ValueError: the file is not valid JSON; the message names the file, line and column.
    """
    text = read_text(source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{source}: invalid {what} (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
