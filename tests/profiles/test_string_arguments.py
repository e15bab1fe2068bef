"""SPEC 1.6: ``string`` parameters keep the text the model wrote, in formats that write every value as text.

GLM-4.5 / 4.6 / 4.7 and Ling 3 write each argument as ``<arg_value>TEXT</arg_value>``. The profiles
keep that text and leave typing to the tools' schemas: a ``string`` parameter keeps ``true``, ``42``
and ``"quoted"`` exactly, other types are cast. Without a schema for the parameter the value stays
text (decision documented in docs/profiles.md; vLLM JSON-decodes such values).
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import profiles
from tests.profiles.helpers import parse_three_ways

OUTPUT = (
    "<tool_call>lookup\n<arg_key>flag</arg_key>\n<arg_value>true</arg_value>\n"
    '<arg_key>note</arg_key>\n<arg_value>"quoted"</arg_value>\n'
    "<arg_key>zip</arg_key>\n<arg_value>42</arg_value>\n</tool_call>"
)
TEXT = {"flag": "true", "note": '"quoted"', "zip": "42"}


def _tools(**types: Any) -> list[dict[str, Any]]:
    properties = {name: {"type": kind} for name, kind in types.items()}
    parameters = {"type": "object", "properties": properties}
    return [{"type": "function", "function": {"name": "lookup", "parameters": parameters}}]


def _arguments(name: str, tools: list[dict[str, Any]] | None) -> Any:
    profile = profiles.load(name)
    # GLM-4.7 pre-opens <think> by default: use its prompt with thinking off
    prefix = profile.generation_prompt_ending("</think>" if name == "glm47" else None)
    message = parse_three_ways(profile.response_template, OUTPUT, prefix=prefix, tools=tools)
    [call] = message["tool_calls"]
    return call["function"]["arguments"]


@pytest.mark.parametrize("name", ["glm45", "glm47", "ling3"])
def test_string_parameters_keep_the_text(name: str) -> None:
    assert _arguments(name, _tools(flag="string", note="string", zip="string")) == TEXT


@pytest.mark.parametrize("name", ["glm45", "glm47", "ling3"])
def test_other_types_are_cast_by_the_schema(name: str) -> None:
    arguments = _arguments(name, _tools(flag="boolean", note="string", zip="integer"))
    assert arguments == {"flag": True, "note": '"quoted"', "zip": 42}
    assert type(arguments["zip"]) is int


@pytest.mark.parametrize("name", ["glm45", "glm47", "ling3"])
def test_without_a_schema_values_stay_text(name: str) -> None:
    assert _arguments(name, None) == TEXT
