"""Format variants real models write that the bundled profiles once missed, checked event by event.

Each case is a realistic output of the family (the sources are named per test: the peers' parsers
and tests, the chat templates) parsed with a bundled profile and compared exactly: the message of
``parse_response`` and every event, streamed whole and one character at a time (chunks merged,
since their boundaries depend on the split). ``tests/profiles/variants/`` holds the same variants
as vectors, parsed at random splits too.
"""

from __future__ import annotations

from typing import Any

import pytest

import chatcodec
from chatcodec import profiles
from chatcodec.events import merge_chunks


def events_both_ways(family: str, output: str, *, prefix: str, tools: Any = None,
                     errors: str = "strict") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The message and the merged events of ``output``, fed whole and one character at a time
    (asserted equal to each other and to ``parse_response``)."""
    template = profiles.load(family).response_template
    expected = chatcodec.parse_response(output, template, prefix=prefix, tools=tools, errors=errors)
    runs = []
    for chunks in ([output], list(output)):
        parser = chatcodec.ResponseParser(template, prefix=prefix, tools=tools, errors=errors)
        events = list(parser.initial_events)
        for chunk in chunks:
            events.extend(parser.feed(chunk))
        message, final = parser.finalize()
        assert message == expected
        runs.append(merge_chunks([*events, *final]))
    assert runs[0] == runs[1], "one character at a time gives other events than the whole output"
    return expected, runs[0]


def _opened(field: str, text: str, value: Any = None, *, dirty: bool = False) -> list[dict[str, Any]]:
    """A region of ``field`` holding ``text``, closed with ``value`` (``text`` when not given)."""
    return [{"type": "region_open", "field": field},
            {"type": "region_chunk", "field": field, "text": text, "dirty": dirty},
            {"type": "region_close", "field": field, "value": text if value is None else value}]


# --- 2. a thinking-off prompt that ends with </think> and no <think> --------------------------------

_EMPTY_REASONING = [{"type": "region_open", "field": "reasoning_content"},
                    {"type": "region_close", "field": "reasoning_content", "value": ""}]


@pytest.mark.parametrize(("family", "prompt"), [
    ("deepseek_v31", "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>"),
    ("deepseek_v32", "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>"),
    ("glm47", "[gMASK]<sop><|user|>Hi<|assistant|></think>"),
])
def test_a_prompt_that_closes_reasoning_without_opening_it_counts_as_closed(family: str, prompt: str) -> None:
    """DeepSeek V3.1/V3.2 and GLM-4.7 templates write ``</think>`` alone after the assistant header
    when thinking is off. The prompt's ``</think>`` is the reasoning's (empty) region, so the
    ``opens_once`` reasoning field has closed: a ``<think>`` the answer writes is text, as vLLM
    reads a thinking-off answer (its reasoning parser is then the identity). The start anchor used
    to swallow the ``</think>``, and the answer's ``<think>x</think>`` became reasoning."""
    output = "Tags look like <think>this</think>; write <think> to open one."
    message, events = events_both_ways(family, output, prefix=prompt)
    assert message == {"role": "assistant", "content": output}
    assert events == [*_EMPTY_REASONING, *_opened("content", output)]


@pytest.mark.parametrize("family", ["deepseek_v31", "deepseek_v32", "glm47"])
def test_thinking_on_and_a_bare_header_still_read_reasoning(family: str) -> None:
    """The other generation prompts are unchanged: a pre-opened ``<think>`` continues into the
    output, and after a bare header the model's own ``<think>`` opens reasoning."""
    header = "<｜Assistant｜>" if family.startswith("deepseek") else "<|assistant|>"
    message, events = events_both_ways(family, "Plan.</think>Answer.", prefix=f"{header}<think>")
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": "Answer."}
    assert events == [{"type": "region_open", "field": "reasoning_content"},
                      {"type": "region_chunk", "field": "reasoning_content", "text": "Plan.", "dirty": False},
                      {"type": "region_close", "field": "reasoning_content", "value": "Plan."},
                      *_opened("content", "Answer.")]
    message, events = events_both_ways(family, "<think>Plan.</think>Answer.", prefix=header)
    assert message == {"role": "assistant", "reasoning_content": "Plan.", "content": "Answer."}
    assert events[3:] == _opened("content", "Answer.")
