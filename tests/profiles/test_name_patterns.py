"""Issue 13: a call's name pattern stops at the next marker, so repeated unterminated opens are read
once each (linear), not to the end of the output from every open.

Before, ``functionary_v3_1``'s ``<function=(?P<name>[^>]+)>`` and ``gpt_oss``'s
``to=functions\\.(?P<name>[^\\s<]+)`` read on from every repeat to the end of the text: the search
took seconds at 8,000 repeats, hit the regex time bound, and strict parsing raised. A function
name holds neither ``<`` nor ``=``.
"""

from __future__ import annotations

import pytest

from chatcodec import ChatCodec

REPEATS = 8000


@pytest.mark.parametrize(("profile", "unit", "field"), [
    ("functionary_v3_1", "<function=", "content"),
    ("gpt_oss", "to=functions.", "content"),
])
def test_repeated_unterminated_opens_are_text(profile: str, unit: str, field: str) -> None:
    output = unit * REPEATS
    parser = ChatCodec.from_pretrained(profile).get_response_parser(prefix="")
    parser.feed(output)
    message, _ = parser.finalize()
    assert message == {"role": "assistant", field: output}


def test_a_name_is_still_read_up_to_its_marker() -> None:
    parser = ChatCodec.from_pretrained("functionary_v3_1").get_response_parser(prefix="")
    parser.feed('<function=get.weather_v2>{"city": "Paris"}</function>')
    message, _ = parser.finalize()
    assert message["tool_calls"] == [{"type": "function", "function": {
        "name": "get.weather_v2", "arguments": {"city": "Paris"}}}]
