"""A prompt that ends inside a tool-call region whose end the value scanner finds.

While such a region is open the parser's matcher is a ``ValueEndMatcher`` (the close counts only
where the value has ended), which the prompt-end decision (``prompt_end.decide``) does not read:
the output decides, as it did before the decision existed. A prompt ending with part of the close
(a prefilled call, then ``<`` of ``</tool_call>``) raised ``AttributeError`` from the parser's
constructor.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import ResponseParser, profiles

XLAM_HEAD = "<|start_header_id|>assistant<|end_header_id|>\n\n"


def _parse(family: str, prefix: str, output: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parser = ResponseParser(profiles.load(family).response_template, prefix=prefix, errors="keep")
    events = list(parser.initial_events)
    for char in output:
        events += parser.feed(char)
    message, final = parser.finalize()
    return message, events + final


@pytest.mark.parametrize(("family", "prefix", "output", "raw"), [
    ("xlam", XLAM_HEAD + '<tool_call>[{"name": "f", "arguments": {}}]<', "/tool_call>",
     '[{"name": "f", "arguments": {}}]'),
    ("mistral_args", '[/INST][TOOL_CALLS]f[ARGS]{"a": 1}<', "/s>", 'f[ARGS]{"a": 1}'),
    ("granite_20b_fc", '<|assistant|>\n<function_call>{"name": "f", "arguments": {}}<|', "endoftext|>",
     '<function_call>{"name": "f", "arguments": {}}'),
])
def test_a_prompt_ending_with_part_of_a_calls_close_parses_the_call(family: str, prefix: str, output: str,
                                                                     raw: str) -> None:
    message, events = _parse(family, prefix, output)
    arguments: dict[str, Any] = {"a": 1} if family == "mistral_args" else {}
    call = {"type": "function", "function": {"name": "f", "arguments": arguments}}
    assert message == {"role": "assistant", "tool_calls": [call]}
    assert events == [{"type": "region_open", "field": "tool_calls"},
                      {"type": "region_chunk", "field": "tool_calls", "text": raw, "dirty": True},
                      {"type": "region_close", "field": "tool_calls", "value": [call]}]


def test_a_prompt_ending_with_part_of_a_close_inside_an_unreadable_call_keeps_its_text() -> None:
    message, _ = _parse("xlam", XLAM_HEAD + "<tool_call><", "/think>")
    assert message == {"role": "assistant", "content": "<tool_call></think>", "parse_errors": [{
        "field": "tool_calls", "parser": "x-json-calls", "offset": -1,
        "error": "field 'tool_calls' (content parser 'x-json-calls'): x-json-calls: invalid JSON at "
                 "offset 0: Expecting value",
        "text": "</think>", "raw": "<tool_call></think>", "span": [-12, 7]}]}
