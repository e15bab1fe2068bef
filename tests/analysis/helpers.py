"""Corpus chat templates with the variables a model directory would give them."""

from __future__ import annotations

from functools import cache
from typing import Any

from tests.conftest import corpus_template, load_json


@cache
def _manifest() -> dict[str, dict[str, Any]]:
    return {entry["file"]: entry for entry in load_json("chat_templates", "MANIFEST.json")}


def template_variables(name: str) -> dict[str, Any]:
    """The special tokens of a corpus template's model and the variables it requires (MANIFEST.json)."""
    entry = _manifest()[name]
    return {**(entry.get("special_tokens") or {}), **(entry.get("required_kwargs") or {})}


def template_and_variables(name: str) -> tuple[str, dict[str, Any]]:
    """``(chat template text, variables)`` of a corpus template."""
    return corpus_template(name), template_variables(name)
