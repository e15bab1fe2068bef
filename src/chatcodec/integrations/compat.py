"""What the plugins need to know about the engines, kept apart from the plugins themselves.

* which engine releases the plugins were built and tested against (:data:`SUPPORTED`), and the
  check :func:`engine_version_problem` that registration runs;
* turning the engines' request objects (pydantic tool models, token ids) into plain values;
* a literal text that a delimiter matches (:func:`example_match`), for prompts the engine does not
  show the plugin (SGLang tells a reasoning parser only whether the prompt opened reasoning).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any

__all__ = [
    "SUPPORTED", "decode", "engine_supported", "engine_version_problem", "example_match", "model_builder",
    "tool_dicts",
]

#: engine distribution -> (oldest supported release, first release not yet tested).
SUPPORTED: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "vllm": ((0, 33, 0), (0, 34, 0)),
    "sglang": ((0, 5, 23), (0, 6, 0)),
}


def engine_supported(engine: str, logger: logging.Logger) -> bool:
    """Registration's version gate: whether to register the plugin with ``engine``.

    Logs :func:`engine_version_problem`'s message on ``logger`` at its level, and returns ``False``
    only for an ``"error"`` (an unsupported release).
    """
    problem = engine_version_problem(engine)
    if problem is None:
        return True
    level, message = problem
    if level == "error":
        logger.error(message)
        return False
    logger.warning(message)
    return True


def _release(version: str) -> tuple[int, int, int]:
    numbers = [int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3]]
    padded = [*numbers, 0, 0, 0]
    return padded[0], padded[1], padded[2]


def engine_version_problem(engine: str, version: str | None = None) -> tuple[str, str] | None:
    """Whether the installed engine is one the plugin supports.

    Args:
        engine: ``"vllm"`` or ``"sglang"``.
        version: the version to check (default: the installed distribution's).

    Returns:
        ``None`` when supported; else ``(level, message)``: ``"error"`` for a release older than the
        plugin's interfaces (the plugin is not registered), ``"warning"`` for a newer release than
        the tested ones (it is registered, and may break).
    """
    low, high = SUPPORTED[engine]
    if version is None:
        try:
            version = metadata.version(engine)
        except metadata.PackageNotFoundError:
            return "error", f"chatcodec: {engine} is not installed"
    release = _release(version)
    wanted = f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
    if release < low:
        return "error", (
            f"chatcodec: {engine} {version} is not supported (the plugin needs {engine}{wanted}); "
            f"the parsers named 'chatcodec' are not registered. Upgrade {engine}, or install "
            "the chatcodec release made for it"
        )
    if release >= high:
        return "warning", (
            f"chatcodec: {engine} {version} is newer than the releases this plugin was tested "
            f"with ({engine}{wanted}); registering the 'chatcodec' parsers anyway"
        )
    return None


def tool_dicts(tools: Any) -> list[dict[str, Any]]:
    """Chat-completions tool dicts (``{"type": "function", "function": {...}}``) from an engine's tools.

    Accepts vLLM's ``ChatCompletionToolsParam`` and Responses ``FunctionTool`` models, SGLang's
    ``Tool`` models and plain dicts of either shape; anything else (built-in tools, MCP) is skipped,
    since only functions have argument schemas.
    """
    result: list[dict[str, Any]] = []
    for tool in tools or ():
        function = _function_fields(tool)
        if function is not None:
            result.append({"type": "function", "function": function})
            continue
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else tool
        if not isinstance(data, dict):
            continue
        function = data.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            result.append({"type": "function", "function": function})
        elif data.get("type") == "function" and isinstance(data.get("name"), str):  # Responses shape
            flat = {key: data[key] for key in ("name", "description", "parameters") if key in data}
            result.append({"type": "function", "function": flat})
    return result


def _function_fields(tool: Any) -> dict[str, Any] | None:
    """The function of an engine's chat tool model (vLLM's ``ChatCompletionToolsParam``, SGLang's
    ``Tool``) read from its attributes: its name, description and parameters, the fields a parse
    reads. ``None`` for anything else (a dict, a Responses tool, parameters that are not plain data),
    which :func:`tool_dicts` reads with ``model_dump``: dumping a model costs more than a short
    stream's parse, and the engines hand over the tools with every request."""
    if isinstance(tool, dict) or getattr(tool, "type", None) != "function":
        return None
    function = getattr(tool, "function", None)
    name = getattr(function, "name", None)
    parameters = getattr(function, "parameters", None)
    if isinstance(function, dict) or not isinstance(name, str):
        return None
    if parameters is not None and not isinstance(parameters, dict):
        return None
    fields: dict[str, Any] = {"name": name}
    description = getattr(function, "description", None)
    if description is not None:
        fields["description"] = description
    if parameters is not None:
        fields["parameters"] = parameters
    return fields


def decode(tokenizer: Any, token_ids: Any) -> str:
    """Token ids to text with special tokens kept (delimiters are often special tokens)."""
    ids = list(token_ids)
    try:
        return str(
            tokenizer.decode(
                ids,
                skip_special_tokens=False,
                clean_up_tokenization_spaces=False,
                spaces_between_special_tokens=False,
            )
        )
    except TypeError:
        return str(tokenizer.decode(ids, skip_special_tokens=False))


def example_match(pattern: str) -> str | None:
    """A shortest text that ``pattern`` fully matches, for delimiters written as regexes.

    Walks the pattern's syntax tree (Python's own regex parser): literals are kept, repetitions take
    their minimum, alternations their first branch, character sets their first member, look-arounds
    and anchors nothing. The result is checked against the pattern; ``None`` when the pattern uses
    something else, or the text found does not match.

    Args:
        pattern: the regex (``regex``-module syntax that Python's ``re`` also reads).

    Returns:
        The text, or ``None``.
    """
    import importlib

    import regex

    parser: Any = getattr(re, "_parser", None) or importlib.import_module("sre_parse")  # 3.10: sre_parse
    try:
        text = _example(parser.parse(pattern))
    except Exception:  # unsupported syntax: no example
        return None
    if text is None:
        return None
    return text if regex.fullmatch(pattern, text, flags=regex.DOTALL) else None


def _example(items: Any) -> str | None:
    parts: list[str] = []
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            parts.append(chr(value))
        elif name == "SUBPATTERN":
            part = _example(value[-1])
            if part is None:
                return None
            parts.append(part)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _, body = value
            if low == 0:
                continue
            part = _example(body)
            if part is None:
                return None
            parts.append(part * low)
        elif name == "BRANCH":
            part = _example(value[1][0])
            if part is None:
                return None
            parts.append(part)
        elif name == "IN":
            first = value[0]
            if str(first[0]) != "LITERAL":
                return None
            parts.append(chr(first[1]))
        elif name in ("ASSERT", "ASSERT_NOT", "AT"):
            continue
        else:
            return None
    return "".join(parts)


def model_builder(model: Any) -> Callable[[dict[str, Any]], Any]:
    """``data -> model(**data)`` for an engine's pydantic result model: its validator called straight,
    which builds the same object (the same fields set, nested models from their data) without
    ``__init__``'s Python frame or one per nested model. A model that is not pydantic's is called.

    Args:
        model: the model class (vLLM's ``DeltaMessage``, SGLang's ``StreamingParseResult``).

    Returns:
        A function from the keyword arguments (a dict) to the model object; it raises what the
        model raises (pydantic's ``ValidationError``) on bad data.
    """
    validate = getattr(getattr(model, "__pydantic_validator__", None), "validate_python", None)
    if callable(validate):
        return validate  # type: ignore[no-any-return]
    return lambda data: model(**data)
