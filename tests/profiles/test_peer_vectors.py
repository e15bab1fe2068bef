"""Every vector of every profiled family in ``peer_vectors.json``, parsed by its bundled profile.

Comparison rules (corpus README): arguments exactly, with their JSON types; content and
reasoning_content after stripping surrounding whitespace unless the note says it is exact;
``null`` equals ``""``. Vectors whose note says SCHEMA-TYPED carry their ``tools``, which are
passed to the parser. The prefix is the family's generation prompt that ends with the vector's
``prompt_suffix``. Every parse runs three ways (whole, one character at a time, random splits).

Vectors are parsed as a server that must answer parses them: ``errors="strict"``, and where that
raises (a call that cannot be read), ``errors="keep"``, which keeps the region's text as content.
A vector whose strict parse raises but whose kept text is what the peer returns (a malformed or
cut-off call given back as content) is listed in ``KEPT_AS_CONTENT`` with the strict error. A vector
where chatcodec deliberately differs from the peer is listed in ``KNOWN_DIFFERENCES`` with the
reason and with what chatcodec gives instead (``got``), or the strict error (``raises``) when the
kept text differs from the peer's answer too; its test asserts that, so the lists cannot go stale.
``PARTIAL_FAMILIES`` lists the families below the 95 % threshold (each with the reason); the suite
checks the lists against the results and requires 25 families at >= 95 %.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

import chatcodec
from chatcodec import profiles
from tests.conftest import load_json
from tests.profiles.helpers import matches, parse_three_ways, peer_view, whitespace_is_exact

VECTORS: list[dict[str, Any]] = load_json("peer_vectors.json")["vectors"]
PROFILED = [vector for vector in VECTORS if vector["family"] in profiles.names()]

#: Per-family pass rate every family must reach, unless listed in PARTIAL_FAMILIES.
THRESHOLD = 0.95
#: How many families must reach THRESHOLD.
MIN_FAMILIES = 25


@dataclass(frozen=True)
class Difference:
    """Why chatcodec's parse of a vector differs from the peer's, and what chatcodec gives."""

    reason: str
    got: dict[str, Any] | None = None
    raises: str | None = None


def _call(function: str, **arguments: Any) -> dict[str, Any]:
    return {"name": function, "arguments": arguments}


_NOTHING_LOST = "nothing is lost (SPEC 1.5): chatcodec keeps text the peer drops"
_NEVER_DROPPED = (
    "a malformed tool call, or text in a tool-call section that is not a call, is never dropped: strict "
    "parsing raises (with the partial message and the raw region), errors='keep' records it under "
    "parse_errors; the peer drops it silently"
)
_PROSE_KEPT = (
    "nothing is lost (SPEC 1.5): the tool-call region ends where its JSON value ends "
    "(close_at_value_end), and the prose around the call is content, where the peer drops it "
    "(SGLang keeps it, as chatcodec does); the whitespace right after the call is the calls' layout"
)
_TYPING = (
    "tool-argument typing tries the schema's types in order and, after 'string', only null and "
    "JSON containers are still tried (SPEC 1.6); llama.cpp casts '42' to an integer first"
)

KNOWN_DIFFERENCES: dict[str, Difference] = {
    "glm45-vllm-text-between-calls": Difference(
        _NOTHING_LOST,
        got={
            "content": "I will help you get the weather info.\n\n\n\n"
            "meaningwhile, I will also check the weather in Shanghai.\n\n",
            "reasoning_content": None,
            "tool_calls": [
                _call("get_weather", city="Beijing", date="2025-08-01"),
                _call("get_weather", city="Shanghai", date="2025-08-01"),
            ],
        },
    ),
    "glm45-vllm-typed-values": Difference(
        "GLM writes every argument as text; chatcodec types it only with the called tool's schema (SPEC "
        "1.6: a string parameter keeps its text), and a parameter without a schema stays text, where "
        "vLLM JSON-decodes it",
        got={
            "content": None,
            "reasoning_content": None,
            "tool_calls": [_call("calculate", operation="add", a="42", b="3.14", enabled="true")],
        },
    ),
    "llama3json-vllm-text-around-call": Difference(
        _PROSE_KEPT,
        got={
            "content": "Here is the result: Would you like to know more?",
            "reasoning_content": None,
            "tool_calls": [_call("getOpenIncidentsTool")],
        },
    ),
    "llama3json-vllm-json-fragment-trailing": Difference(
        _PROSE_KEPT,
        got={
            "content": 'The arguments I passed were {"query": "test"}',
            "reasoning_content": None,
            "tool_calls": [_call("searchTool", query="test")],
        },
    ),
    "pythonic-vllm-bytes-sibling": Difference(
        _NEVER_DROPPED, raises="call 'bad', argument 'x': a bytes literal has no JSON equivalent"
    ),
    "pythonic-vllm-nonfinite-sibling": Difference(
        _NEVER_DROPPED, raises="call 'calc', argument 'x': inf is not a finite number"
    ),
    "pythonic-vllm-broken-quote-sibling": Difference(
        "a string's own quote written unescaped inside it is text of the string where what follows it "
        "cannot follow a value (as vLLM's LFM2 parser reads 'sed -n '1,2p' f'), so the second call is "
        "read with its text whole; vLLM's pythonic parser drops it",
        got={
            "content": None,
            "reasoning_content": None,
            "tool_calls": [_call("get_weather", city="San Francisco", metric="celsius"),
                           _call("f", a="x 'y", b="z")],
        },
    ),
    "llama4-vllm-bytes-sibling": Difference(
        _NEVER_DROPPED, raises="call 'bad', argument 'x': a bytes literal has no JSON equivalent"
    ),
    "mistral-vllm-prev11-trailing-data": Difference(
        _PROSE_KEPT + " (vLLM disagrees with itself: its streaming test keeps it as content too)",
        got={
            "content": "extra trailing data",
            "reasoning_content": None,
            "tool_calls": [_call("get_current_weather", city="Dallas", state="TX", unit="fahrenheit")],
        },
    ),
    "mistral-vllm-prev11-junk-before-array": Difference(
        _NEVER_DROPPED, raises="x-named-call: expected the JSON arguments at offset 7"
    ),
    "mistral-vllm-v11-name-without-args": Difference(
        _NEVER_DROPPED, raises="x-named-call: expected the JSON arguments"
    ),
    "dsv3-vllm-malformed-missing-brace": Difference(
        _NEVER_DROPPED, raises="group 'arguments': could not parse region as JSON"
    ),
    "dsv31-vllm-two-calls-suffix": Difference(
        _NOTHING_LOST + " (the text after the tool-call section)",
        got={
            "content": "some prefix text some suffix text",
            "reasoning_content": None,
            "tool_calls": [_call("foo", x=1), _call("bar", y=2)],
        },
    ),
    "kimik2-vllm-bad-id-skipped": Difference(
        _NEVER_DROPPED,
        raises="x-findall: text before the first match at offset 0: '<|tool_call_begin|>functions.invalid.0",
    ),
    "kimik2-vllm-noise-in-section": Difference(
        _NEVER_DROPPED, raises="x-findall: text before the first match at offset 0: ' spurious noise '"
    ),
    "hunyuan-vllm-content-after-stripped": Difference(
        _NOTHING_LOST + " (the text after </tool_calls>; llama.cpp-style parsers keep it too)",
        got={
            "content": "\nThank you!",
            "reasoning_content": None,
            "tool_calls": [_call("get_weather", city="Seattle")],
        },
    ),
    "minimaxm1-vllm-bad-line-skipped": Difference(
        _NEVER_DROPPED, raises="x-json-calls: invalid JSON at offset 59"
    ),
    "minimaxm1-vllm-incomplete-objects-filtered": Difference(
        _NEVER_DROPPED, raises="the JSON value at offset 58 is not a tool call \\(no arguments key\\)"
    ),
    "qwen3coder-vllm-bad-sibling-filtered": Difference(
        "a <tool_call> whose <function=...> header is malformed (no '>') is a call that cannot be read: "
        "strict parsing raises, errors='keep' keeps its text in content; the peer drops it",
        raises="text outside the tags at offset 1: '<function=bad_func_no_gt'",
    ),
    "qwen3coder-lcpp-union-fallback": Difference(
        _TYPING,
        got={
            "content": None,
            "reasoning_content": None,
            "tool_calls": [_call("set_union", value="{not valid json", amount="42")],
        },
    ),
}

#: Families below THRESHOLD, and why.
PARTIAL_FAMILIES: dict[str, str] = {
    "deepseek_v3": "a malformed call raises instead of vanishing (1 of 6 vectors)",
    "deepseek_v31": "nothing-lost content after the tool-call section (1 of 6 vectors)",
    "glm45": "nothing-lost content, truncated calls parsed, values without a schema stay text",
    "hunyuan_a13b": "nothing-lost content after </tool_calls> (1 of 6 vectors)",
    "kimi_k2": "a malformed call and stray text in the tool-call section raise instead of vanishing",
    "llama3_json": "prose around Llama 3 JSON calls is kept as content where vLLM drops it",
    "llama4_pythonic": "a call with a bytes argument raises instead of vanishing (1 of 5 vectors)",
    "minimax_m1": "unparsable lines and incomplete objects raise instead of vanishing",
    "mistral": "junk before the JSON array raises and prose after it is content, where vLLM drops both",
    "mistral_v11": "a call without arguments raises instead of vanishing (1 of 4 vectors)",
    "pythonic": "calls with non-JSON arguments and a broken list raise instead of vanishing",
    "qwen3_coder": "SPEC 1.6 typing of a [string, integer] union; a malformed call raises, never vanishes",
}


#: Vectors whose strict parse raises (the regex of its message) while errors="keep" gives the peer's
#: answer: the call the peer also refuses is kept as content.
KEPT_AS_CONTENT: dict[str, str] = {
    "hermes-vllm-invalid-json": "x-json-calls: invalid JSON at offset 56",
    "gigachat3-sgl-invalid-json": "x-json-calls: invalid JSON at offset 45",
    "llama3json-vllm-invalid-json": "x-json-calls: invalid JSON at offset 39",
    "glm45-vllm-unclosed": "the output ends before this region's close",
    "glm45-vllm-open-tag-only": "the output ends before this region's close",
    "internlm2-vllm-not-json": "x-json-calls: invalid JSON at offset 0",
}


def _prefix(vector: dict[str, Any]) -> str:
    return profiles.load(vector["family"]).generation_prompt_ending(vector["prompt_suffix"])


@pytest.fixture(scope="module")
def templates() -> dict[str, chatcodec.ResponseTemplate]:
    return {
        name: chatcodec.load_response_template(profiles.load(name).response_template)
        for name in profiles.names()
    }


def parse_as_server(template: Any, vector: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The peer view of a vector's parse (three ways): strict, or errors="keep" where strict raises.

    Returns:
        ``(view, error)``: the message in the corpus's form, and the strict error's message (``None``
        when strict parsing succeeded).
    """
    prefix, tools = _prefix(vector), vector["tools"]
    try:
        return peer_view(parse_three_ways(template, vector["output"], prefix=prefix, tools=tools)), None
    except chatcodec.ResponseParseError as error:
        kept = parse_three_ways(template, vector["output"], prefix=prefix, tools=tools, errors="keep")
        return peer_view(kept), str(error)


@pytest.mark.parametrize("vector", PROFILED, ids=lambda vector: vector["id"])
def test_peer_vector(vector: dict[str, Any], templates: dict[str, chatcodec.ResponseTemplate]) -> None:
    got, error = parse_as_server(templates[vector["family"]], vector)
    exact = whitespace_is_exact(vector["note"])
    difference = KNOWN_DIFFERENCES.get(vector["id"])
    if difference is None:
        assert matches(got, vector["expected"], exact_whitespace=exact), f"got {got}"
        if vector["id"] in KEPT_AS_CONTENT:
            assert error is not None and re.search(KEPT_AS_CONTENT[vector["id"]], error), error
        else:
            assert error is None, error
        return
    assert not matches(got, vector["expected"], exact_whitespace=exact), "no longer a difference"
    if difference.raises is not None:
        assert error is not None and re.search(difference.raises, error), error
    else:
        assert error is None, error
        assert difference.got is not None
        assert matches(got, difference.got, exact_whitespace=True), f"got {got}"


def _pass_rates() -> dict[str, tuple[int, int]]:
    totals = Counter(vector["family"] for vector in PROFILED)
    failures = Counter(vector["family"] for vector in PROFILED if vector["id"] in KNOWN_DIFFERENCES)
    return {family: (totals[family] - failures[family], totals[family]) for family in totals}


def test_known_differences_name_profiled_vectors() -> None:
    assert set(KNOWN_DIFFERENCES) <= {vector["id"] for vector in PROFILED}


def test_partial_families_are_exactly_those_below_the_threshold() -> None:
    below = {family for family, (passed, total) in _pass_rates().items() if passed / total < THRESHOLD}
    assert below == set(PARTIAL_FAMILIES)


def test_enough_families_reach_the_threshold() -> None:
    rates = _pass_rates()
    verified = [family for family, (passed, total) in rates.items() if passed / total >= THRESHOLD]
    assert len(verified) >= MIN_FAMILIES
    assert len(rates) == len(profiles.names()), "every bundled profile has peer vectors"


def test_bundled_coverage_matches_the_suite() -> None:
    """``coverage.json`` (written by scripts/gen_profiles_doc.py) agrees with these tests."""
    assert {name: profiles.load(name).coverage for name in profiles.names()} == _pass_rates()
