"""SGLang's two stages sharing one parse (``chatcodec.integrations.sglang_handoff``); pure Python:
the stages are played by hand, as ``serving_chat`` calls them (reasoning stage, then tool stage,
per delta)."""

from __future__ import annotations

import contextvars
import itertools

from hypothesis import given
from hypothesis import strategies as st

from chatcodec import load_response_template, profiles
from chatcodec.integrations.discovery import ServingTemplate
from chatcodec.integrations.session import Step, assemble
from chatcodec.integrations.sglang_handoff import Handoff, merge, offer, take

QWEN3 = ServingTemplate(
    load_response_template(profiles.load("qwen3").response_template), "profile:qwen3", "m", "qwen3"
)
PROMPT = "<|im_start|>assistant\n"
OUTPUT = (
    'Hi <think>\nwhy\n</think>\n\nChecking.<tool_call>\n{"name": "f", "arguments": {"a": "1"}}\n'
    "</tool_call>Done."
)
TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": "integer"}}}}}
]


class Reader:
    """Stands for the tool detector (the hand-off holds it weakly)."""


def _pieces(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({cut % (len(text) + 1) for cut in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _chain(pieces: list[str]) -> tuple[str, list[Step], Handoff]:
    """The reasoning stage's reasoning, and the tool stage's steps, read from the hand-off."""
    handoff, reader = Handoff(QWEN3, PROMPT), Reader()
    reasoning, steps = "", []
    for number, piece in enumerate(pieces):
        step = handoff.feed(piece)
        if number == len(pieces) - 1:
            step = merge([step, handoff.finish()])
        reasoning += step.reasoning
        if number == 0:
            assert handoff.claim(reader, TOOLS, step.outside)
        read = handoff.read(step.outside)
        assert read is not None and read.reasoning == step.reasoning  # returned by the reasoning stage
        steps.append(read.without_reasoning())
    end = handoff.finish_for_reader()
    assert end is not None
    return reasoning, [*steps, end], handoff


@given(st.lists(st.integers(0, len(OUTPUT)), max_size=10))
def test_the_tool_stage_reads_the_whole_parse_typed_with_its_tools(cuts: list[int]) -> None:
    reasoning, steps, handoff = _chain(_pieces(OUTPUT, cuts) or [""])
    message = assemble(steps)
    assert message["tool_calls"][0].pop("id").startswith("call_")
    assert (reasoning, message) == (
        "\nwhy\n",
        {
            "reasoning": None,
            "content": "Hi \n\nChecking.Done.",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        },
    )
    assert handoff.state == "shared"


def test_only_the_tool_detector_built_next_in_the_same_context_takes_it() -> None:
    def request() -> tuple[Handoff, Handoff | None, Handoff | None]:
        handoff = Handoff(QWEN3, PROMPT)
        offer(handoff)
        return handoff, take(QWEN3), take(QWEN3)

    handoff, first, second = contextvars.copy_context().run(request)
    assert (first, second) == (handoff, None)
    assert contextvars.copy_context().run(take, QWEN3) is None  # another request's context
    kept = Handoff(QWEN3, PROMPT)
    offer(kept)
    same = ServingTemplate(QWEN3.template, "CHATCODEC_RESPONSE_TEMPLATE=qwen3", "m", "qwen3")
    assert contextvars.copy_context().run(take, same) is kept  # the same template, found anew
    assert take(HERMES) is None  # another model's template


HERMES = ServingTemplate(
    load_response_template(profiles.load("hermes").response_template), "profile:hermes", "m", "hermes"
)


def test_text_other_than_what_was_handed_on_is_not_read() -> None:
    handoff, reader = Handoff(QWEN3, PROMPT), Reader()
    step = handoff.feed("Hi <think>\nwhy")
    assert step.outside == "Hi "
    assert not handoff.claim(reader, TOOLS, "Hi there")
    assert handoff.state == "alone"
    handoff, reader = Handoff(QWEN3, PROMPT), Reader()
    assert handoff.claim(reader, TOOLS, handoff.feed("Hi <think>\nwhy").outside)
    assert handoff.read("Hi ") is not None
    handoff.feed("\n</think>\n\nChecking.")
    assert handoff.read("\n\nChecking!") is None
    read = handoff.read("\n\nChecking.")  # nothing was read by the refused call
    assert read is not None and read.content == "\n\nChecking."


def test_a_tool_stage_that_comes_after_the_first_delta_parses_itself() -> None:
    handoff = Handoff(QWEN3, PROMPT)
    handoff.feed("Hi ")
    handoff.feed("there")
    assert handoff.state == "alone"
    assert not handoff.claim(Reader(), TOOLS, "Hi there")


def test_without_a_living_reader_nothing_is_queued() -> None:
    handoff = Handoff(QWEN3, PROMPT)
    assert handoff.claim(Reader(), TOOLS, handoff.feed("Hi ").outside)  # the reader is gone at once
    handoff.feed("there")
    assert handoff.state == "alone"
    assert handoff.read("there") is None


def test_the_tool_stage_ends_the_output_when_the_reasoning_stage_did_not() -> None:
    handoff, reader = Handoff(QWEN3, PROMPT + "<think>\n"), Reader()
    first = handoff.feed("still thinking</th")  # "</th" may start the close: held back
    assert (first.reasoning, first.outside) == ("still thinking", "")
    assert handoff.claim(reader, TOOLS, "")
    read = handoff.read("")
    assert read is not None and (read.reasoning, read.content, read.tool_calls) == ("still thinking", "", [])
    end = handoff.finish_for_reader()  # the reasoning stage returned nothing of it: it comes here
    assert end is not None and (end.reasoning, end.content) == ("</th", "")
    assert handoff.finish() == Step()  # the reasoning stage's end comes too late: nothing twice


def test_what_the_tool_stage_never_received_is_not_read_at_the_end() -> None:
    handoff, reader = Handoff(QWEN3, PROMPT), Reader()
    assert handoff.claim(reader, TOOLS, handoff.feed("Hi").outside)
    handoff.feed(" there")
    assert handoff.finish_for_reader() is None


def test_the_tool_stage_reads_the_reasoning_stages_own_session_when_no_call_began() -> None:
    handoff = Handoff(QWEN3, PROMPT)
    first = handoff.session
    assert handoff.claim(Reader(), TOOLS, handoff.feed("Hi <think>").outside)
    assert handoff.session is first  # one parse per request


def test_a_call_that_began_before_the_tool_stage_asked_is_parsed_again_with_the_tools() -> None:
    handoff, reader = Handoff(QWEN3, PROMPT), Reader()
    first = handoff.session
    step = handoff.feed('<tool_call>\n{"name": "f", "arguments": {"a": "1')
    assert handoff.claim(reader, TOOLS, step.outside)
    assert handoff.session is not first
    opened = handoff.read(step.outside)
    read = handoff.read(handoff.feed('"}}\n</tool_call>').outside)
    end = handoff.finish_for_reader()
    assert opened is not None and read is not None and end is not None
    message = assemble([opened, read, end])
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}  # typed


def test_a_call_block_opened_by_the_first_token_keeps_one_parse_typed_with_the_tools() -> None:
    """DeepSeek V3 opens its call block with the first token: the session takes the tools as it
    stands (``ResponseParser.set_tools``), so no second session is built."""
    deepseek_v3 = ServingTemplate(load_response_template(profiles.load("deepseek_v3").response_template),
                                  "profile:deepseek_v3", "m", "deepseek_v3")
    handoff, reader = Handoff(deepseek_v3, "<｜Assistant｜>"), Reader()
    first = handoff.session
    step = handoff.feed("<｜tool▁calls▁begin｜>")
    assert handoff.claim(reader, TOOLS, step.outside)
    assert handoff.session is first  # one parse per request
    opened = handoff.read(step.outside)
    text = ('<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": "1"}\n```<｜tool▁call▁end｜>'
            "<｜tool▁calls▁end｜>")
    read = handoff.read(handoff.feed(text).outside)
    end = handoff.finish_for_reader()
    assert opened is not None and read is not None and end is not None
    message = assemble([opened, read, end])
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}  # typed
