"""A structured region cut off right after its open is a parse problem, never silently dropped.

``hello<tool_call>`` (generation stopped right after the call marker) gave ``content: "hello"``:
``x-json-calls`` reads an empty text as no calls, so the marker vanished with no record, in strict
and keep mode alike (docs/profiles.md, "Cut-off calls": a call cut off inside is a parse problem).
"""

from __future__ import annotations

import pytest

from chatcodec import ChatCodec, ResponseParseError

OUTPUT = "hello<tool_call>"
RECORD = {"field": "tool_calls", "parser": "x-switch", "offset": 16,
          "error": "field 'tool_calls' (content parser 'x-switch'): the output ends right after "
                   "this region's open (nothing of its value was written)",
          "text": "", "raw": "<tool_call>", "span": [5, 16]}


@pytest.mark.parametrize("chunk", [len(OUTPUT), 1, 3])
def test_keep_records_the_open_and_keeps_it_as_content(chunk: int) -> None:
    parser = ChatCodec.from_pretrained("hermes").get_response_parser(prefix="", errors="keep")
    for start in range(0, len(OUTPUT), chunk):
        parser.feed(OUTPUT[start:start + chunk])
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "content": "hello<tool_call>", "parse_errors": [RECORD]}


def test_strict_raises() -> None:
    parser = ChatCodec.from_pretrained("hermes").get_response_parser(prefix="")
    parser.feed(OUTPUT)
    with pytest.raises(ResponseParseError, match="ends right after this region's open"):
        parser.finalize()


def test_a_closed_empty_region_and_an_empty_text_region_are_unchanged() -> None:
    codec = ChatCodec.from_pretrained("qwen3")
    parser = codec.get_response_parser(prefix="")
    parser.feed("hello<tool_call></tool_call><|im_end|>")
    assert parser.finalize()[0] == {"role": "assistant", "content": "hello"}
    parser = codec.get_response_parser(prefix="<|im_start|>assistant\n")
    parser.feed("<think>")
    assert parser.finalize()[0] == {"role": "assistant"}  # an empty reasoning is no reasoning
