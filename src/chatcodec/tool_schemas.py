"""Tools as JSON schemas: ``get_json_schema(func)`` and the normalisation of ``tools=`` arguments.

Shared by both halves: chat templates receive tools as JSON schemas, and response parsing types
tool-call arguments with the called tool's parameter schema. Pure Python (no jinja2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["get_json_schema", "tool_to_schema"]


def get_json_schema(func: Callable[..., Any]) -> dict[str, Any]:
    """Build a tool's JSON schema from a Python function (placeholder until implemented)."""
    raise NotImplementedError("get_json_schema is not implemented yet")


def tool_to_schema(tool: dict[str, Any] | Callable[..., Any]) -> dict[str, Any]:
    """Return ``tool`` as a JSON schema: dicts pass through, functions and methods are converted.

    Raises:
        TypeError: ``tool`` is neither a dict nor a function or method.
    """
    if isinstance(tool, dict):
        return tool
    if callable(tool):
        return get_json_schema(tool)
    raise TypeError(
        f"tools: expected a JSON schema dict or a Python function, got {type(tool).__name__}"
    )
