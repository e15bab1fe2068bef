"""Command-line input: files or stdin, JSON with errors that name the file and position, and the
places a response template can come from (a JSON file, a model directory, a bundled profile)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["bundled_response_template", "read_json", "read_response_template", "read_text"]


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


def read_response_template(source: str) -> dict[str, Any]:
    """Find the response template that ``source`` names.

    Args:
        source: a JSON file holding a response template (or a whole ``tokenizer_config.json`` with a
            ``response_template`` key), a model directory whose ``tokenizer_config.json`` has one,
            or the name of a bundled profile (see :func:`bundled_response_template`).

    Returns:
        The template as a JSON object (not yet validated: ``load_response_template`` does that).

    Raises:
        OSError: nothing by that name exists.
        ValueError: the file is not JSON, or the model directory has no response template.
    """
    path = Path(source)
    if path.is_dir():
        config_path = path / "tokenizer_config.json"
        if not config_path.is_file():
            raise OSError(f"{source}: not a model directory (no tokenizer_config.json)")
        config = read_json(str(config_path), "tokenizer_config.json")
        template = config.get("response_template") if isinstance(config, dict) else None
        if template is None:
            raise ValueError(f"{config_path}: no 'response_template' key. Add one, or pass a response "
                             "template JSON file instead of the model directory")
        return _expect_object(template, str(config_path))
    if path.is_file():
        data = read_json(source, "response template")
        if isinstance(data, dict) and "response_template" in data and "fields" not in data:
            data = data["response_template"]  # a tokenizer_config.json
        return _expect_object(data, source)
    bundled = bundled_response_template(source)
    if bundled is not None:
        return bundled
    raise OSError(f"{source}: no such file or directory (expected a response template JSON file or a model "
                  "directory)")


def bundled_response_template(name: str) -> dict[str, Any] | None:
    """The response template of the bundled profile called ``name``, or ``None``.

    The one place where command-line template lookup reaches the bundled profiles; until the
    profiles are wired in, no name is bundled.
    """
    return None


def _expect_object(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a response template must be a JSON object, got {type(data).__name__}")
    return data
