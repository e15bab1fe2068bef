"""Checks for the OpenAI streams: every dict against the ``openai`` SDK's own types, and the stream
folded back into one message.

* ``check_chunks`` validates each ``chat.completion.chunk`` as ``ChatCompletionChunk`` (no key the
  type does not declare, besides the reasoning key and the message's own extra keys), checks the
  canonical sequence (role first, a call's first delta carries id/type/name and ``arguments: ""``,
  later ones only fragments, indexes from 0 in order, ``finish_reason`` only last) and accumulates
  the deltas with the SDK's own ``accumulate_delta``.
* ``check_events`` validates each Responses event as the member of the SDK's
  ``ResponseStreamEvent`` union its ``type`` names, runs the SDK's ``ResponseStreamState`` over
  them (it checks item identities), checks sequence numbers, item order and that deltas add up
  to every ``.done`` and to ``response.completed``'s output, and folds the items into a Chat
  Completions message.
"""

from __future__ import annotations

import copy
import itertools
import random
import typing
from collections.abc import Callable, Iterable
from typing import Any

from openai import omit
from openai.lib.streaming._deltas import accumulate_delta
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessage
from openai.types.responses import ResponseStreamEvent
from pydantic import BaseModel

from chatcodec.openai import ChatCompletionStream, ResponsesStream

#: Each member of the SDK's ``ResponseStreamEvent`` union by its ``type`` (validating against the
#: member the ``type`` names is what the union's discriminator does, at a fraction of the cost).
EVENT_TYPES: dict[str, type[BaseModel]] = {
    typing.get_args(member.model_fields["type"].annotation)[0]: member
    for member in typing.get_args(typing.get_args(ResponseStreamEvent)[0])
}


def declared_only(model: BaseModel, allowed: Iterable[str] = (), where: str = "") -> None:
    """Fail on a key the SDK type does not declare (pydantic keeps unknown keys as extras), at any
    depth, apart from the ``allowed`` keys."""
    allowed = frozenset(allowed)
    extra = set(model.model_extra or {}) - allowed
    assert not extra, f"{where or type(model).__name__}: keys the SDK type does not declare: {sorted(extra)}"
    for name in type(model).model_fields:
        value = getattr(model, name)
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, BaseModel):
                declared_only(child, allowed, f"{where}.{name}")


def check_message(message: dict[str, Any], allowed: Iterable[str] = ()) -> None:
    """A ``to_chat_message`` result validates as ``ChatCompletionMessage``."""
    model = ChatCompletionMessage.model_validate(message)
    declared_only(model, allowed, "message")


def check_chunks(chunks: list[dict[str, Any]], *, reasoning_key: str | None = "reasoning_content",
                 extra: Iterable[str] = ()) -> dict[str, Any]:
    """Validate a whole chunk stream (see the module docstring); returns the accumulated message in
    ``to_chat_message``'s form."""
    assert chunks, "a stream gives at least the role chunk and the finish chunk"
    allowed = {reasoning_key, *extra} - {None}
    first = chunks[0]
    message: dict[str, Any] = {}
    started: list[int] = []
    for position, chunk in enumerate(chunks):
        model = ChatCompletionChunk.model_validate(chunk)
        same = ("id", "created", "model")
        assert [chunk[key] for key in same] == [first[key] for key in same]
        assert len(model.choices) == 1
        declared_only(model, allowed, f"chunk {position}")
        delta = chunk["choices"][0]["delta"]
        assert ("role" in delta) == (position == 0), f"chunk {position}: the role goes on the first chunk"
        last = position == len(chunks) - 1
        assert (chunk["choices"][0]["finish_reason"] is not None) == last
        for call in delta.get("tool_calls", []):
            _check_call_delta(call, started)
        accumulate_delta(message, copy.deepcopy(delta))
    calls = message.get("tool_calls")
    folded: dict[str, Any] = {"role": message.pop("role"), "content": message.pop("content", None)}
    if reasoning_key is not None and reasoning_key in message:
        folded[reasoning_key] = message.pop(reasoning_key)
    if calls:
        message.pop("tool_calls")
        folded["tool_calls"] = [{key: call[key] for key in ("id", "type", "function")} for call in calls]
    folded.update(message)
    return folded


def _check_call_delta(call: dict[str, Any], started: list[int]) -> None:
    index = call["index"]
    if index not in started:
        assert index == len(started), f"call index {index} out of order (next is {len(started)})"
        started.append(index)
        assert set(call) == {"index", "id", "type", "function"}, call
        assert call["type"] == "function" and call["id"]
        assert set(call["function"]) == {"name", "arguments"} and call["function"]["arguments"] == ""
    else:
        assert index == started[-1], "fragments belong to the latest call"
        assert set(call) == {"index", "function"} and set(call["function"]) == {"arguments"}, call
        assert call["function"]["arguments"], "no empty fragments"


def check_events(events: list[dict[str, Any]], *, finish_reason: str | None = None) -> dict[str, Any]:
    """Validate a whole Responses event stream (see the module docstring); returns the folded
    message in ``to_chat_message``'s form (reasoning under ``reasoning_content``)."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for position, event in enumerate(events):
        model = EVENT_TYPES[event["type"]].model_validate(event)
        declared_only(model, (), f"event {position} {event['type']}")
        assert event["sequence_number"] == position
        state.handle_event(model)  # the SDK's own identity and order checks
    assert [event["type"] for event in events[:2]] == ["response.created", "response.in_progress"]
    final = events[-1]
    truncated = finish_reason in ("length", "content_filter")
    assert final["type"] == ("response.incomplete" if truncated else "response.completed")
    items = _items(events[2:-1])
    assert final["response"]["output"] == items
    return _as_chat_message(items)


def _items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replay the item events: one item at a time, deltas adding up to the done events."""
    done: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    text: list[str] = []
    for event in events:
        kind = event["type"]
        if kind == "response.output_item.added":
            assert current is None, "an item is added while another is open"
            assert event["output_index"] == len(done)
            current, text = event["item"], []
            assert current["status"] == "in_progress"
            continue
        assert current is not None, f"{kind} outside an item"
        assert event.get("output_index") == len(done)
        if "item_id" in event:
            assert event["item_id"] == current["id"]
        if kind.endswith(".delta"):
            assert event["delta"]
            text.append(event["delta"])
        elif kind in ("response.output_text.done", "response.reasoning_text.done"):
            assert event["text"] == "".join(text)
        elif kind == "response.function_call_arguments.done":
            assert event["arguments"] == "".join(text)
        elif kind == "response.output_item.done":
            item = event["item"]
            assert item["id"] == current["id"] and item["type"] == current["type"]
            assert item["status"] in ("completed", "incomplete")
            whole = "".join(text)
            if item["type"] == "function_call":
                assert (item["call_id"], item["name"]) == (current["call_id"], current["name"])
                assert item["arguments"] == whole
            else:
                assert [part["text"] for part in item["content"]] == [whole]
            done.append(item)
            current = None
    assert current is None, "an item was left open"
    return done


def _as_chat_message(items: list[dict[str, Any]]) -> dict[str, Any]:
    content = "".join(item["content"][0]["text"] for item in items if item["type"] == "message")
    reasoning = "".join(item["content"][0]["text"] for item in items if item["type"] == "reasoning")
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    calls = [
        {"id": item["call_id"], "type": "function",
         "function": {"name": item["name"], "arguments": item["arguments"]}}
        for item in items
        if item["type"] == "function_call"
    ]
    if calls:
        message["tool_calls"] = calls
    return message


def random_chunks(text: str, rng: random.Random, most: int = 12) -> list[str]:
    """``text`` cut at up to ``most`` random places."""
    if len(text) < 2:
        return [text] if text else []
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, most))))
    return [text[start:end] for start, end in itertools.pairwise([0, *cuts, len(text)])]


def run_chat(make_parser: Callable[[], Any], pieces: Iterable[Any], finish_reason: str | None = None,
             **options: Any) -> tuple[list[dict[str, Any]], ChatCompletionStream]:
    """Stream ``pieces`` through a new ``ChatCompletionStream``; returns every chunk and the stream."""
    stream = ChatCompletionStream(make_parser(), model="m", id="chatcmpl-1", created=1, **options)
    chunks: list[dict[str, Any]] = []
    for piece in pieces:
        chunks += stream.feed(piece)
    chunks += stream.finish(finish_reason)
    return chunks, stream


def run_responses(make_parser: Callable[[], Any], pieces: Iterable[Any], finish_reason: str | None = None,
                  **options: Any) -> tuple[list[dict[str, Any]], ResponsesStream]:
    """Stream ``pieces`` through a new ``ResponsesStream``; returns every event and the stream."""
    stream = ResponsesStream(make_parser(), model="m", id="resp_1", created=1, **options)
    events: list[dict[str, Any]] = []
    for piece in pieces:
        events += stream.feed(piece)
    events += stream.finish(finish_reason)
    return events, stream
