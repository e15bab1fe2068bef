"""Every non-quirk case of the reference's response vectors, compared exactly (types included).

Events (initial, per feed, final) always equal the reference's. The final message equals the
reference's too, except for the cases in ``NOTHING_LOST``: there the reference drops the earlier
regions of a non-repeating text field, while chatcodec keeps the text of all of them (SPEC §1.5).
For stream cases the expected message is then rebuilt from the reference's *own* events: the
field's value is its streamed chunks joined and stripped. The parse cases among them have named
tests with explicit values in ``test_compatibility.py``. Quirk cases are decided there too, and so
are the templates chatcodec refuses at load (``REFUSED_AT_LOAD``).
"""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from chatcodec import ResponseParser, parse_response, parse_response_batch
from chatcodec.events import join_chunks
from tests.conftest import load_json
from tests.response_templates.helpers import IGNORE_NO_ANCHOR, assert_same, decode_expected

pytestmark = IGNORE_NO_ANCHOR

VECTORS: list[dict[str, Any]] = load_json("response_vectors.json")["vectors"]


def _nothing_lost_ids() -> set[str]:
    groups = (
        "x-split-literal-think-at-",
        "x-split-regex-open-at-",
        "x-cross-field-open-prefix--",
        "x-regex-open-lookahead--",
        "x-zero-width-implicit-close--",
        "x-zero-width-open-lookahead--",
    )
    ids = {v["id"] for v in VECTORS if v["id"].startswith(groups)}
    return ids | {"x-non-repeating-last-wins"}


#: Non-quirk vectors whose message differs from the reference's by "nothing is lost" (see module doc).
NOTHING_LOST = _nothing_lost_ids()
#: Of those, the parse cases (no events to rebuild from): tested in test_compatibility.py.
NOTHING_LOST_PARSE = {"x-non-repeating-last-wins"}
#: Non-quirk vectors with a key given twice, which the reference overwrites and chatcodec refuses
#: (nothing is lost): tested in test_compatibility.py.
DUPLICATE_KEYS = {"x-json-duplicate-keys", "x-merge-duplicates-off-last-wins"}
#: Non-quirk vectors whose template chatcodec refuses at load: tested in test_compatibility.py.
REFUSED_AT_LOAD = {"x-same-open-two-fields-alphabetical", "x-zero-width-empty-open-pattern"}


def _cases(*kinds: str) -> list[Any]:
    return [
        pytest.param(v, id=v["id"])
        for v in VECTORS
        if v["kind"] in kinds and not v.get("quirk")
        and v["id"] not in NOTHING_LOST_PARSE | REFUSED_AT_LOAD | DUPLICATE_KEYS
    ]


def _concatenating_fields(template: dict[str, Any]) -> list[str]:
    return [
        name
        for name, spec in template["fields"].items()
        if spec.get("content", "text") == "text" and "transform" not in spec and not spec.get("repeats")
    ]


def _nothing_lost_message(case: dict[str, Any]) -> dict[str, Any]:
    """The reference's message with each plain-text field set to its streamed text, joined and stripped."""
    feeds = [event for feed in case["expected_feed_events"] for event in feed]
    events = case["expected_initial_events"] + feeds + case["expected_final_events"]
    joined = join_chunks(events)
    message = dict(decode_expected(case["expected"]))
    for name in _concatenating_fields(case["template"]):
        strip = case["template"]["fields"][name].get("content_args", {}).get("strip", True)
        value = joined.get(name, "")
        value = value.strip() if strip else value
        if value:
            message[name] = value
    return message


def test_vector_set_is_the_one_documented() -> None:
    assert len(VECTORS) == 336
    assert sum(1 for v in VECTORS if v.get("quirk")) == 44
    assert len(NOTHING_LOST) == 52  # the count docs/compatibility.md states
    assert NOTHING_LOST_PARSE <= NOTHING_LOST
    assert all(not v.get("quirk") for v in VECTORS if v["id"] in NOTHING_LOST)


@pytest.mark.parametrize("case", _cases("parse"))
def test_parse(case: dict[str, Any]) -> None:
    message = parse_response(case["output"], case["template"], prefix=case["prefix"], tools=case["tools"])
    assert_same(message, decode_expected(case["expected"]))


@pytest.mark.parametrize("case", _cases("stream"))
def test_stream(case: dict[str, Any]) -> None:
    parser = ResponseParser(case["template"], prefix=case["prefix"], tools=case["tools"])
    assert_same(parser.initial_events, case["expected_initial_events"])
    assert len(case["chunks"]) == len(case["expected_feed_events"])
    for chunk, expected in zip(case["chunks"], case["expected_feed_events"], strict=True):
        assert_same(parser.feed(chunk), decode_expected(expected))
    message, final = parser.finalize()
    assert_same(final, decode_expected(case["expected_final_events"]))
    expected_message = (
        _nothing_lost_message(case) if case["id"] in NOTHING_LOST else decode_expected(case["expected"])
    )
    assert_same(message, expected_message)
    one_shot = parse_response(case["output"], case["template"], prefix=case["prefix"], tools=case["tools"])
    assert_same(one_shot, message)


@pytest.mark.parametrize("case", _cases("batch"))
def test_batch(case: dict[str, Any]) -> None:
    messages = parse_response_batch(
        case["output"], case["template"], prefix=case["prefix"], tools=case["tools"]
    )
    assert_same(messages, decode_expected(case["expected"]))


@pytest.mark.parametrize("case", _cases("load_error"))
def test_load_error(case: dict[str, Any]) -> None:
    error = getattr(builtins, case["error"])
    with pytest.raises(error) as raised:
        parse_response(case["output"], case["template"], prefix=case["prefix"], tools=case["tools"])
    assert case["error_contains"] in str(raised.value)
    with pytest.raises(error) as raised:
        ResponseParser(case["template"], prefix=case["prefix"], tools=case["tools"])
    assert case["error_contains"] in str(raised.value)


@pytest.mark.parametrize("case", _cases("parse_error"))
def test_parse_error(case: dict[str, Any]) -> None:
    error = getattr(builtins, case["error"])
    with pytest.raises(error) as raised:
        parse_response(case["output"], case["template"], prefix=case["prefix"], tools=case["tools"])
    assert case["error_contains"] in str(raised.value)
    stage = "init"
    with pytest.raises(error) as raised:
        parser = ResponseParser(case["template"], prefix=case["prefix"], tools=case["tools"])
        stage = "feed"
        for chunk in case["chunks"]:
            parser.feed(chunk)
        stage = "finalize"
        parser.finalize()
    assert stage == case["error_stage"]
    assert case["error_contains"] in str(raised.value)
