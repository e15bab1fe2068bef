"""Arguments streamed as they are written: the streams on ``region_value`` events made by hand from
``docs/streaming_values.md`` (``tests/openai_wire/values.py``), independently of any engine.

A call starts once its name is known and its id is known or its arguments begin; each fragment goes
out in the feed whose events carry it; the fragments add up to ``to_chat_message``'s arguments; a
call that started and then failed ends ``incomplete`` and its text follows as content.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatcodec import profiles
from chatcodec.openai import ChatCompletionStream, ResponsesStream, to_chat_message
from tests.openai_wire.helpers import check_chunks, check_events
from tests.openai_wire.test_arguments import JSON
from tests.openai_wire.values import ScriptedParser, spread, value_events

HERMES = profiles.load("hermes").response_template  # content strips, tool_calls repeats
MISTRAL = profiles.load("mistral").response_template  # one region holds a list of calls


def index_ids(name: str, index: int) -> str:
    return f"call_{index}"


def call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return {"id": call_id, **value} if call_id else value


def op(name: str, path: list[Any], **extra: Any) -> dict[str, Any]:
    return {"type": "region_value", "field": "tool_calls", "op": name, "path": path, **extra}


OPEN = {"type": "region_open", "field": "tool_calls"}


def close(value: Any) -> dict[str, Any]:
    return {"type": "region_close", "field": "tool_calls", "value": value}


def chat(
    template: dict[str, Any],
    script: list[list[dict[str, Any]]],
    message: dict[str, Any],
    final: list[dict[str, Any]] | None = None,
) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """The chunks of each feed (and of ``finish`` last), and the finish chunks' deltas folded."""
    stream = ChatCompletionStream(ScriptedParser(template, script, message, final), ids=index_ids)
    per_feed = [stream.feed("") for _ in script]
    per_feed.append(stream.finish())
    return per_feed, [chunk for chunks in per_feed for chunk in chunks]


def deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [chunk["choices"][0]["delta"] for chunk in chunks]


def test_the_contract_example_streams_fragment_by_fragment() -> None:
    script = [
        [
            OPEN,
            op("begin", [], kind="object"),
            op("set", ["type"], value="function"),
            op("begin", ["function"], kind="object"),
            op("set", ["function", "name"], value="get_weather"),
        ],
        [
            op("begin", ["function", "arguments"], kind="object"),
            op("begin", ["function", "arguments", "city"], kind="string"),
            op("text", ["function", "arguments", "city"], text="Par"),
        ],
        [op("text", ["function", "arguments", "city"], text="is")],
        [
            op("end", ["function", "arguments", "city"]),
            op("set", ["function", "arguments", "days"], value=3),
            op("end", ["function", "arguments"]),
            op("end", ["function"]),
            op("end", []),
        ],
        [close(call("get_weather", {"city": "Paris", "days": 3}))],
    ]
    message = {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris", "days": 3})]}
    per_feed, chunks = chat(HERMES, script, message)
    assert [deltas(chunks) for chunks in per_feed] == [
        [{"role": "assistant"}],  # the name alone does not start the call: an id may follow
        [
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ]
            },
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Par'}}]},
        ],
        [{"tool_calls": [{"index": 0, "function": {"arguments": "is"}}]}],
        [{"tool_calls": [{"index": 0, "function": {"arguments": '", "days": 3}'}}]}],
        [],
        [{}],
    ]
    assert check_chunks(chunks) == to_chat_message(message, ids=index_ids)


def test_an_id_before_the_arguments_starts_the_call_at_once() -> None:
    """Mistral's list of calls, each with the model's id before its arguments."""
    calls = [call("f", {"a": "x"}, "abc123XYZ"), call("g", {}, "def456UVW")]
    events = [
        OPEN,
        op("begin", [], kind="array"),
        op("begin", [0], kind="object"),
        op("set", [0, "function", "name"], value="f"),
        op("set", [0, "id"], value="abc123XYZ"),
    ]
    rest = [
        op("begin", [0, "function", "arguments"], kind="object"),
        op("begin", [0, "function", "arguments", "a"], kind="string"),
        op("text", [0, "function", "arguments", "a"], text="x"),
        op("end", [0, "function", "arguments", "a"]),
        op("end", [0, "function", "arguments"]),
        op("end", [0]),
        op("begin", [1], kind="object"),
        op("set", [1, "function", "name"], value="g"),
        op("begin", [1, "id"], kind="string"),
        op("text", [1, "id"], text="def456"),
        op("text", [1, "id"], text="UVW"),
        op("end", [1, "id"]),
    ]
    last = [
        op("begin", [1, "function", "arguments"], kind="object"),
        op("end", [1, "function", "arguments"]),
        op("end", [1]),
        op("end", []),
        close(calls),
    ]
    message = {"role": "assistant", "tool_calls": calls}
    per_feed, chunks = chat(MISTRAL, [events, rest, last], message)
    assert deltas(per_feed[0]) == [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "abc123XYZ",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            ],
        }
    ]
    assert deltas(per_feed[1]) == [
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": "x"}'}}]},
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "def456UVW",
                    "type": "function",
                    "function": {"name": "g", "arguments": ""},
                }
            ]
        },
    ]
    assert deltas(per_feed[2]) == [{"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}]
    assert check_chunks(chunks) == to_chat_message(message)


def test_arguments_before_the_name_wait_for_it() -> None:
    value = call("f", {"a": 1})
    script = [
        [
            OPEN,
            op("begin", [], kind="object"),
            op("begin", ["function"], kind="object"),
            op("begin", ["function", "arguments"], kind="object"),
            op("set", ["function", "arguments", "a"], value=1),
        ],
        [op("end", ["function", "arguments"]), op("set", ["function", "name"], value="f")],
        [op("end", ["function"]), op("end", []), close(value)],
    ]
    per_feed, chunks = chat(HERMES, script, {"role": "assistant", "tool_calls": [value]})
    assert [deltas(chunks) for chunks in per_feed[:2]] == [
        [{"role": "assistant"}],
        [
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    }
                ]
            },
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]},
        ],
    ]
    assert check_chunks(chunks)["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'


def test_an_id_after_the_arguments_comes_too_late() -> None:
    """Mistral-Nemo writes ``"id"`` after ``"arguments"``: the call started with a generated id."""
    value = call("f", {}, "abc123XYZ")
    script = [
        [
            OPEN,
            op("begin", [], kind="array"),
            op("begin", [0], kind="object"),
            op("set", [0, "function", "name"], value="f"),
            op("set", [0, "function", "arguments"], value={}),
            op("set", [0, "id"], value="abc123XYZ"),
            op("end", [0]),
            op("end", []),
            close([value]),
        ]
    ]
    message = {"role": "assistant", "tool_calls": [value]}
    _, chunks = chat(MISTRAL, script, message)
    folded = check_chunks(chunks)
    assert folded["tool_calls"][0]["id"] == "call_0"
    assert to_chat_message(message)["tool_calls"][0]["id"] == "abc123XYZ"
    assert {**folded, "tool_calls": [{**folded["tool_calls"][0], "id": "abc123XYZ"}]} == to_chat_message(
        message
    )


def test_a_call_that_fails_after_it_started_ends_incomplete_and_its_text_follows() -> None:
    raw = '<tool_call>{"name": "f", "arguments": {"a": "x", oops}}</tool_call>'
    started = [
        OPEN,
        op("begin", [], kind="object"),
        op("set", ["function", "name"], value="f"),
        op("begin", ["function", "arguments"], kind="object"),
        op("begin", ["function", "arguments", "a"], kind="string"),
        op("text", ["function", "arguments", "a"], text="x"),
        op("end", ["function", "arguments", "a"]),
    ]
    failed = [
        {"type": "region_close", "field": "tool_calls", "value": None, "error": {"raw": raw}},
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": raw, "dirty": False},
        {"type": "region_close", "field": "content", "value": raw},
    ]
    message = {"role": "assistant", "content": raw, "parse_errors": [{"raw": raw}]}
    _, chunks = chat(HERMES, [started, failed], message)
    folded = check_chunks(chunks)
    assert folded == {
        "role": "assistant",
        "content": raw,
        "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": '{"a": "x"'}}
        ],
    }
    assert to_chat_message(message) == {"role": "assistant", "content": raw}
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    stream = ResponsesStream(ScriptedParser(HERMES, [started, failed], message), id="resp_1", ids=index_ids)
    events = stream.feed("") + stream.feed("") + stream.finish()
    assert [(item["type"], item["status"]) for item in events[-1]["response"]["output"]] == [
        ("function_call", "incomplete"),
        ("message", "completed"),
    ]
    check_events(events)


def test_a_long_string_argument_arrives_in_many_deltas() -> None:
    content = "".join(random.Random(0).choice('abc \n"é') for _ in range(2000))
    arguments = {"path": "notes.txt", "content": content}
    value = call("write_file", arguments)
    pieces = [content[start : start + 7] for start in range(0, len(content), 7)]
    head = [
        OPEN,
        op("begin", [], kind="object"),
        op("set", ["function", "name"], value="write_file"),
        op("begin", ["function", "arguments"], kind="object"),
        op("set", ["function", "arguments", "path"], value="notes.txt"),
        op("begin", ["function", "arguments", "content"], kind="string"),
    ]
    body = [[op("text", ["function", "arguments", "content"], text=piece)] for piece in pieces]
    tail = [
        op("end", ["function", "arguments", "content"]),
        op("end", ["function", "arguments"]),
        op("end", []),
        close(value),
    ]
    message = {"role": "assistant", "tool_calls": [value]}
    per_feed, chunks = chat(HERMES, [head, *body, tail], message)
    assert all(len(feed) == 1 for feed in per_feed[1:-2]), "every piece goes out in the feed that brings it"
    fragments = [
        call["function"]["arguments"] for delta in deltas(chunks) for call in delta.get("tool_calls", [])
    ]
    assert len(fragments) == len(pieces) + 3  # header "", head, one per piece, the closing '"}'
    assert "".join(fragments) == json.dumps(arguments, ensure_ascii=False)


@given(
    arguments=st.lists(st.dictionaries(st.text(max_size=5), JSON, max_size=4), min_size=1, max_size=3),
    seed=st.integers(0, 2**32),
    listed=st.booleans(),
)
def test_any_calls_in_any_feeds_fold_back_to_the_message(
    arguments: list[dict[str, Any]], seed: int, listed: bool
) -> None:
    """Random calls, their value events cut into random feeds: both streams fold back exactly."""
    rng = random.Random(seed)
    calls = [
        call(f"f{index}", value, f"id{index}" if rng.random() < 0.5 else None)
        for index, value in enumerate(arguments)
    ]
    if listed:  # one region holding the list of calls
        events = [OPEN, *value_events("tool_calls", calls, [], rng), close(copy.deepcopy(calls))]
        template = MISTRAL
    else:  # one region per call
        events = [
            event
            for value in calls
            for event in [OPEN, *value_events("tool_calls", value, [], rng), close(copy.deepcopy(value))]
        ]
        template = HERMES
    message = {"role": "assistant", "tool_calls": calls}
    script = spread(events, rng)
    stream = ChatCompletionStream(ScriptedParser(template, script, message), ids=index_ids)
    chunks = [chunk for _ in script for chunk in stream.feed("")] + stream.finish()
    expected = to_chat_message(message, ids=index_ids)  # a model id comes first: it is used
    assert check_chunks(chunks) == expected
    responses = ResponsesStream(ScriptedParser(template, script, message), id="resp_1", ids=index_ids)
    events_out = [event for _ in script for event in responses.feed("")] + responses.finish()
    assert check_events(events_out) == expected
