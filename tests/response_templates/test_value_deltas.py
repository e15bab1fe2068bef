"""``value_deltas=True``: every corpus vector and every profile peer vector, replayed three ways.

For each output, ``check_values`` (``value_helpers.py``) asserts that the replayed ``region_value``
events of every region that closes without an error equal its ``region_close`` value, that the
merged events do not depend on the chunking, and that nothing else changes. The profile vectors
also say how each profile streams its tool calls' arguments (``granularity``).
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import ResponseParser, load_response_template, profiles
from chatcodec.response_templates.scanners import granularity
from tests.conftest import load_json
from tests.response_templates.helpers import IGNORE_NO_ANCHOR
from tests.response_templates.value_helpers import check_values

pytestmark = IGNORE_NO_ANCHOR

RESPONSE_VECTORS = [v for v in load_json("response_vectors.json")["vectors"]
                    if v["kind"] in ("parse", "stream", "parse_error") and v.get("output") is not None]
PEER_VECTORS = [v for v in load_json("peer_vectors.json")["vectors"] if v["family"] in profiles.names()]


def _loads(template: Any) -> bool:
    try:
        load_response_template(template)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("vector", [pytest.param(v, id=v["id"]) for v in RESPONSE_VECTORS
                                    if _loads(v["template"])])
def test_corpus_vector_values(vector: dict[str, Any]) -> None:
    for errors in ("strict", "keep"):
        check_values(vector["template"], vector["output"], prefix=vector.get("prefix") or "",
                     tools=vector.get("tools"), errors=errors, splits=4)


@pytest.mark.parametrize("vector", [pytest.param(v, id=v["id"]) for v in PEER_VECTORS])
def test_peer_vector_values(vector: dict[str, Any]) -> None:
    profile = profiles.load(vector["family"])
    prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
    for errors in ("strict", "keep"):
        check_values(profile.response_template, vector["output"], prefix=prefix, tools=vector["tools"],
                     errors=errors, splits=6)


def _granularity(name: str) -> str | None:
    field = profiles.load(name).response_template["fields"].get("tool_calls")
    return None if field is None else granularity(field.get("content", "text"), field.get("content_args", {}))


def test_how_each_profile_streams_its_arguments() -> None:
    how = {name: _granularity(name) for name in profiles.names()}
    assert {name: way for name, way in how.items() if way != "as written"} == {
        "kimi_vl": None,  # no tool calls
        # x-first: JSON calls or DSML parameters (string="true" / "false": branches told apart by
        # their opening)
        "deepseek_v32": "as its parsers agree",
        "longcat": "as its parsers agree",  # x-json-calls, tagged calls that run to the region's end
        # x-first: what the parsers still possible read alike, then the one left
        "lfm2": "as its parsers agree",  # python-call-list, x-json-calls, x-pythonic
        "llama4_pythonic": "as its parsers agree",  # x-json-calls, x-pythonic
        "pythonic": "as its parsers agree",  # python-call-list, x-pythonic
        # x-switch: JSON calls stream as written; a <function=NAME> call's arguments are JSON or
        # <parameter=KEY> tags (x-first: json, xml-inline)
        "hermes": "as its parsers agree",
        "qwen3": "as its parsers agree",
        "qwq": "as its parsers agree",
    }


#: Qwen 2.5 / Hermes JSON calls, one per <tool_call> region.
JSON_CALLS = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"},
    },
}


def test_a_long_string_argument_streams_as_it_is_written() -> None:
    template = JSON_CALLS
    head = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "'
    body = "".join(f"line {n} of the file\\n" for n in range(100))
    output = head + body + '"}}\n</tool_call>'
    parser = ResponseParser(template, prefix="", value_deltas=True)
    pieces: list[str] = []
    for start in range(0, len(output), 7):
        chunk = output[start : start + 7]
        texts = [e["text"] for e in parser.feed(chunk) if e["type"] == "region_value"
                 and e["path"] == ["function", "arguments", "content"] and e["op"] == "text"]
        if start + 7 > len(head) and not pieces:
            assert texts, "the first characters of the argument arrive in the feed that delivers them"
            assert texts[0] == output[len(head) : start + 7]
        pieces += texts
    parser.finalize()
    assert len(pieces) >= 250
    assert "".join(pieces) == "".join(f"line {n} of the file\n" for n in range(100))
