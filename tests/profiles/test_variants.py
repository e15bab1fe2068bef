"""Each bundled profile on the variants of its family's format: one vector per variant, our own.

``tests/profiles/variants/<family>.json`` lists what the family really emits (read from its chat
template, its generation prompts and the peers' parsers and tests; each entry names its
``source``) as outputs written for this project from the format, never copied from a peer. Each
vector is parsed three ways (whole, one character at a time, random splits) with the family's
generation prompt that ends with its ``prompt_suffix`` and compared exactly: content and reasoning
with their whitespace (the rule of ``docs/profiles.md``: as the model wrote them, whitespace alone
around tool calls is no content), arguments with their JSON types.

A vector either has ``expected`` (``content``, ``reasoning_content``, ``tool_calls`` as
``{"name", "arguments"}``; ``null`` for an absent key), or ``raises`` (a regex of the strict
``ResponseParseError``) and ``keep`` (the message with ``errors="keep"``, whose ``parse_errors``
count is ``keep_errors``). ``warnings`` lists the names of calls flagged as not in ``tools``.

The rules every family keeps are checked here too: each family has vectors; a call cut off by the
end of generation after its arguments is a call (``rule: cutoff-complete``), one cut off inside
them is a parse problem, never a call with what was there (``rule: cutoff-incomplete``).
``scripts/gen_profiles_doc.py`` lists the variants and their sources in ``docs/profiles.md``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import chatcodec
from chatcodec import profiles
from tests.profiles.helpers import parse_three_ways, same_json

VARIANTS_DIR = Path(__file__).resolve().parent / "variants"
#: Keys a vector may have.
_KEYS = frozenset({
    "id", "variant", "source", "prompt_suffix", "output", "tools", "expected", "raises", "keep",
    "keep_errors", "warnings", "rule",
})
#: The cross-family rules a vector may illustrate.
RULES = frozenset({"cutoff-complete", "cutoff-incomplete"})


@cache
def family_variants(family: str) -> list[dict[str, Any]]:
    """The variant vectors of one family (``[]`` when it has no file)."""
    path = VARIANTS_DIR / f"{family}.json"
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["family"] == family, path
    vectors: list[dict[str, Any]] = data["variants"]
    return vectors


def all_variants() -> list[tuple[str, dict[str, Any]]]:
    return [(family, vector) for family in profiles.names() for vector in family_variants(family)]


def has_tool_calls(family: str) -> bool:
    return "tool_calls" in profiles.load(family).response_template["fields"]


def view(message: dict[str, Any]) -> dict[str, Any]:
    """content, reasoning_content and tool_calls as ``{"name", "arguments"}`` (absent keys: ``None``)."""
    return {
        "content": message.get("content"),
        "reasoning_content": message.get("reasoning_content"),
        "tool_calls": [
            {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            for call in message.get("tool_calls", [])
        ],
    }


def _prefix(family: str, vector: dict[str, Any]) -> str:
    return profiles.load(family).generation_prompt_ending(vector.get("prompt_suffix"))


def _assert_view(got: dict[str, Any], expected: dict[str, Any]) -> None:
    want = {"content": None, "reasoning_content": None, "tool_calls": [], **expected}
    assert got["content"] == want["content"], f"content {got['content']!r}"
    assert got["reasoning_content"] == want["reasoning_content"], f"reasoning {got['reasoning_content']!r}"
    assert same_json(got["tool_calls"], want["tool_calls"]), f"tool_calls {got['tool_calls']!r}"


def _id(value: Any) -> str:
    return value if isinstance(value, str) else str(value["id"])


@pytest.mark.parametrize(("family", "vector"), all_variants(), ids=_id)
def test_variant(family: str, vector: dict[str, Any]) -> None:
    assert set(vector) <= _KEYS, sorted(set(vector) - _KEYS)
    template = profiles.load(family).response_template
    prefix, tools = _prefix(family, vector), vector.get("tools")
    if "raises" in vector:
        with pytest.raises(chatcodec.ResponseParseError, match=vector["raises"]):
            parse_three_ways(template, vector["output"], prefix=prefix, tools=tools)
        kept = parse_three_ways(template, vector["output"], prefix=prefix, tools=tools, errors="keep")
        _assert_view(view(kept), vector["keep"])
        assert len(kept["parse_errors"]) == vector.get("keep_errors", 1)
        return
    message = parse_three_ways(template, vector["output"], prefix=prefix, tools=tools)
    _assert_view(view(message), vector["expected"])
    assert [record["name"] for record in message.get("parse_warnings", [])] == vector.get("warnings", [])


def test_every_family_has_variant_vectors() -> None:
    assert [family for family in profiles.names() if not family_variants(family)] == []


def test_variant_ids_are_unique_and_rules_known() -> None:
    ids = [vector["id"] for _, vector in all_variants()]
    assert len(ids) == len(set(ids))
    assert {vector["rule"] for _, vector in all_variants() if "rule" in vector} <= RULES


@pytest.mark.parametrize(
    "family", [name for name in profiles.names() if has_tool_calls(name)])
def test_a_cut_off_call_is_a_call_when_its_arguments_are_complete_else_a_parse_problem(family: str) -> None:
    """The same rule in every family (docs/profiles.md, "Cut-off calls")."""
    rules = {vector.get("rule"): vector for vector in family_variants(family)}
    complete, incomplete = rules.get("cutoff-complete"), rules.get("cutoff-incomplete")
    assert complete is not None and incomplete is not None, f"{family}: both cut-off vectors are required"
    assert complete["expected"]["tool_calls"], complete["id"]
    assert "raises" in incomplete and not incomplete["keep"].get("tool_calls"), incomplete["id"]
