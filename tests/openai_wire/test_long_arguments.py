"""Every bundled profile with tool calls streams a long string argument as ``docs/profiles.md`` says.

The outputs are real ones made long: each real output of the family (``peer_vectors.json`` and its
variant vectors) in which a string or integer argument's text appears once, as written, gets that
text replaced by a 2,000-character string (letters and spaces, which no format escapes); the strict
parse must then give the long string as that argument, so the output is one the model could have
written. Up to two such outputs per profile, fed 4 characters at a time through
``ChatCompletionStream`` (``value_deltas=True``):

* always: each call's fragments concatenate to exactly its ``arguments`` in ``to_chat_message`` of
  the non-streamed parse;
* a profile whose arguments stream ``"as written"`` or ``"as its parsers agree"``
  (``granularity``): the long string's first character goes out in the feed that delivers it (or,
  when the model writes the call's name after its arguments, in the feed where the name completes
  and the call starts: ``docs/openai.md``), and the string takes at least one delta per feed that
  delivers part of it;
* a profile whose arguments come ``"each match whole"``: at least one of its outputs does deliver
  the long string in one fragment (what the docs say is what happens);
* the real outputs in which LFM2 and Llama 4 write a JSON call instead of a Python one stream as
  written too (``x-first``: ``x-json-calls`` and ``x-pythonic`` read them alike).

The long outputs also go through both streams (SDK types, folded back to ``to_chat_message``) at
64-character chunks and at chunkings Hypothesis draws. ``docs/profiles.md``'s list is
``scripts/gen_profiles_doc.py``'s ``streaming()``, word for word.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chatcodec
from chatcodec import profiles
from chatcodec.openai import ChatCompletionStream, ToolCallIds, to_chat_message
from chatcodec.response_templates.scanners import granularity
from tests.conftest import load_json
from tests.openai_wire.test_stream_properties import WITH_CALLS, check_output
from tests.profiles.test_variants import family_variants

ROOT = Path(__file__).resolve().parents[2]
LONG = "".join(itertools.islice(itertools.cycle("Lorem ipsum dolor sit amet consectetur "), 1999)) + "x"
SIZE = 4
#: An argument's text that can be swapped for ``LONG``: a word or words, as any format writes them.
PLAIN = re.compile(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*")


def how(name: str) -> str:
    field = profiles.load(name).response_template["fields"]["tool_calls"]
    return granularity(field.get("content", "text"), field.get("content_args", {}))


Case = tuple[str, Any, str, str, Any]  # vector id, response template, output, prefix, tools


def _arguments(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [call["function"]["arguments"] for call in message.get("tool_calls", [])
            if isinstance(call["function"].get("arguments"), dict)]


@cache
def long_outputs(name: str) -> list[Case]:
    """Up to two real outputs of ``name`` with one argument made ``LONG`` (module docstring)."""
    vectors = [vector for vector in load_json("peer_vectors.json")["vectors"] if vector["family"] == name]
    cases: list[Case] = []
    for vector in [*vectors, *family_variants(name)]:
        case = lengthen(name, vector)
        if case is not None:
            cases.append(case)
        if len(cases) == 2:
            break
    return cases


def lengthen(name: str, vector: dict[str, Any]) -> Case | None:
    """The real output of ``vector`` with its first plain argument made ``LONG``, or ``None``."""
    profile = profiles.load(name)
    template = profile.response_template
    output, tools = vector["output"], vector["tools"]
    prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
    try:
        message = chatcodec.parse_response(output, template, prefix=prefix, tools=tools)
    except chatcodec.ResponseParseError:
        return None
    texts = [str(value) for arguments in _arguments(message) for value in arguments.values()
             if isinstance(value, str | int) and not isinstance(value, bool)]
    for text in [text for text in texts if PLAIN.fullmatch(text) and output.count(text) == 1][:1]:
        longer = output.replace(text, LONG)
        try:
            parsed = chatcodec.parse_response(longer, template, prefix=prefix, tools=tools)
        except chatcodec.ResponseParseError:
            continue
        if any(LONG in arguments.values() for arguments in _arguments(parsed)):
            return (vector["id"], template, longer, prefix, tools)
    return None


def stream_in_feeds(case: Case) -> tuple[list[list[str]], int, dict[str, Any]]:
    """The argument fragments of the call that holds ``LONG``, per feed; the feed where that call
    started; the call in ``to_chat_message``."""
    _, template, output, prefix, tools = case
    expected = to_chat_message(chatcodec.parse_response(output, template, prefix=prefix, tools=tools),
                               ids=ToolCallIds(seed=1))
    parser = chatcodec.ResponseParser(template, prefix=prefix, tools=tools, value_deltas=True)
    stream = ChatCompletionStream(parser, ids=ToolCallIds(seed=1))
    index = next(number for number, call in enumerate(expected["tool_calls"])
                 if LONG in call["function"]["arguments"])
    sent: dict[int, str] = {}
    per_feed: list[list[str]] = []
    started = -1
    feeds = [stream.feed(output[start : start + SIZE]) for start in range(0, len(output), SIZE)]
    for chunks in [*feeds, stream.finish()]:
        fragments = []
        for chunk in chunks:
            for call in chunk["choices"][0]["delta"].get("tool_calls", []):
                fragment = call["function"]["arguments"]
                if call["index"] == index and "id" in call:
                    started = len(per_feed)
                sent[call["index"]] = sent.get(call["index"], "") + fragment
                if call["index"] == index and fragment:
                    fragments.append(fragment)
        per_feed.append(fragments)
    assert [sent.get(number) for number in range(len(expected["tool_calls"]))] == \
        [call["function"]["arguments"] for call in expected["tool_calls"]]
    return per_feed, started, expected["tool_calls"][index]


def test_every_profile_with_tool_calls_has_long_outputs() -> None:
    assert [name for name in WITH_CALLS if not long_outputs(name)] == []


@pytest.mark.parametrize("name", WITH_CALLS)
def test_a_long_string_argument_streams_as_the_docs_say(name: str) -> None:
    way = how(name)
    whole = []
    for case in long_outputs(name):
        whole.append(delivered_whole(case))
        if way not in ("as written", "as its parsers agree"):
            if whole[-1]:
                break
            continue
        check_as_written(case)
    if way == "each match whole":
        assert any(whole), "no output of the profile delivers its long argument whole"


def delivered_whole(case: Case) -> bool:
    per_feed, _, _ = stream_in_feeds(case)
    return any(LONG in fragment for fragments in per_feed for fragment in fragments)


def check_as_written(case: Case) -> None:
    """The long string's first character goes out in the feed that delivers it (or where its call
    starts, when the name comes last), and the string takes at least one delta per feed."""
    per_feed, started, call = stream_in_feeds(case)
    output = case[2]
    delivered = output.index(LONG) // SIZE  # the feed that delivers its first character
    at = call["function"]["arguments"].index(LONG)
    sent, arrived = 0, None
    for number, fragments in enumerate(per_feed):
        sent += sum(map(len, fragments))
        if arrived is None and sent > at:
            arrived = number
    if started > delivered:  # a call starts when its name is known: here the model wrote it last
        assert output.find(call["function"]["name"], output.index(LONG) + len(LONG)) > 0, case[0]
        assert arrived == started, case[0]
        return
    assert arrived == delivered, f"{case[0]}: the long string reaches the client in feed {arrived}, " \
        f"the output delivers it in feed {delivered}"
    assert sum(map(len, per_feed)) >= len(LONG) // SIZE, case[0]


#: Real outputs in which a model of a Python-call family wrote its call as JSON instead: ``x-first``
#: streams them as ``x-json-calls`` and ``x-pythonic`` read them alike (a call written as a dict).
JSON_IN_PYTHON = [("lfm2", "lfm2-sgl-json-object-no-brackets"), ("llama4_pythonic", "llama4-json-call"),
                  ("llama4_pythonic", "llama4-json-call-then-prose")]


@pytest.mark.parametrize(("name", "vector_id"), JSON_IN_PYTHON)
def test_json_calls_of_a_python_call_family_stream_as_written(name: str, vector_id: str) -> None:
    vectors = [*load_json("peer_vectors.json")["vectors"], *family_variants(name)]
    case = lengthen(name, next(vector for vector in vectors if vector["id"] == vector_id))
    assert case is not None
    check_as_written(case)


def test_the_first_long_output_streams_to_the_whole_message() -> None:
    """One long output per profile through both streams at 64-character chunks: valid SDK chunks and
    events that fold back to ``to_chat_message`` (``test_stream_properties.check_output``)."""
    for name in WITH_CALLS:
        _, template, output, prefix, tools = long_outputs(name)[0]
        pieces = [output[start : start + 64] for start in range(0, len(output), 64)]
        check_output(template, output, prefix, tools, [pieces])


@settings(max_examples=30)
@given(data=st.data())
def test_any_chunking_of_a_long_output(data: st.DataObject) -> None:
    """Generated outputs (the long ones) at chunkings Hypothesis draws, every profile with tool calls."""
    name = data.draw(st.sampled_from(WITH_CALLS), label="profile")
    _, template, output, prefix, tools = data.draw(st.sampled_from(long_outputs(name)), label="output")
    cuts = data.draw(st.lists(st.integers(0, len(output)), max_size=40), label="cuts")
    bounds = [0, *sorted(cuts), len(output)]
    pieces = [output[start:end] for start, end in itertools.pairwise(bounds)]
    check_output(template, output, prefix, tools, [pieces])


def _gen_profiles_doc() -> ModuleType:
    path = ROOT / "scripts" / "gen_profiles_doc.py"
    spec = importlib.util.spec_from_file_location("gen_profiles_doc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_list_is_generated() -> None:
    text = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    section = text.split("## Arguments streamed as they are written\n\n", 1)[1].split("\n\n## ", 1)[0]
    assert section.strip() == "\n".join(_gen_profiles_doc().streaming()).strip()
