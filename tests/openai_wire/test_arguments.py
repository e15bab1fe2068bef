"""``ArgumentWriter``: value events in, ``json.dumps(value, ensure_ascii=False)`` out, piece by piece."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatcodec.openai.arguments import ArgumentWriter, escape
from tests.openai_wire.values import value_events

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def write(writer: ArgumentWriter, events: list[dict[str, Any]]) -> list[str]:
    """Feed ``events`` (paths relative to the arguments) and return every fragment."""
    fragments = []
    for event in events:
        op, path = event["op"], event["path"]
        if op == "begin":
            fragments.append(writer.begin(path, event["kind"]))
        elif op == "text":
            fragments.append(writer.add_text(path, event["text"]))
        elif op == "set":
            fragments.append(writer.set(path, event["value"]))
        else:
            fragments.append(writer.end(path))
    return fragments


def test_the_contracts_example() -> None:
    writer = ArgumentWriter()
    fragments = [
        writer.begin([], "object"),
        writer.begin(["city"], "string"),
        writer.add_text(["city"], "Par"),
        writer.add_text(["city"], 'is "1"'),
        writer.end(["city"]),
        writer.set(["days"], 3),
        writer.end([]),
    ]
    assert fragments == ["{", '"city": "', "Par", 'is \\"1\\"', '"', ', "days": 3', "}"]
    assert writer.text == '{"city": "Paris \\"1\\"", "days": 3}' and writer.complete and not writer.broken


@given(value=st.dictionaries(st.text(max_size=6), JSON, max_size=5), seed=st.integers(0, 2**32))
def test_any_value_in_any_pieces_is_its_json(value: dict[str, Any], seed: int) -> None:
    writer = ArgumentWriter()
    fragments = write(writer, value_events("tool_calls", value, [], random.Random(seed)))
    assert "".join(fragments) == writer.text == json.dumps(value, ensure_ascii=False)
    assert writer.complete and not writer.broken


def test_escaping_piece_by_piece_is_escaping_whole() -> None:
    text = 'a"\\\n\t\x00\x1f\u2028é😀\ud800'
    assert "".join(escape(char) for char in text) == json.dumps(text, ensure_ascii=False)[1:-1]


def test_string_arguments_at_the_top_are_raw() -> None:
    writer = ArgumentWriter()
    fragments = [writer.begin([], "string"), writer.add_text([], 'not "json'), writer.end([])]
    assert fragments == ["", 'not "json', ""] and writer.complete
    whole = ArgumentWriter()
    assert whole.set([], "raw") == "raw" and whole.complete
    assert ArgumentWriter().set([], None) == "{}"


def test_out_of_order_events_stop_the_writer() -> None:
    writer = ArgumentWriter()
    writer.begin([], "object")
    assert writer.set(["a", "b"], 1) == ""  # no container at ["a"]
    assert writer.broken
    assert writer.set(["c"], 2) == "" and writer.text == "{"
    for events in (
        [("begin", [], "array"), ("set", [1], 1)],  # index 1 before 0
        [("begin", [], "array"), ("set", ["k"], 1)],  # a key in an array
        [("begin", [], "object"), ("set", [0], 1)],  # an index in an object
        [("begin", [], "object"), ("text", ["k"], "x")],  # text of a string never begun
        [("begin", [], "object"), ("end", [], None), ("set", [], 1)],  # after the end
        [("begin", [], "nothing")],
    ):
        writer = ArgumentWriter()
        for op, path, arg in events:
            getattr(writer, {"begin": "begin", "set": "set", "text": "add_text", "end": "end"}[op])(
                *([path] if op == "end" else [path, arg])
            )
        assert writer.broken, events
