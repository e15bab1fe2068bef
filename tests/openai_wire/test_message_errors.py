"""``to_chat_message`` names what is wrong and where (QA findings: a bare AttributeError for a
message that is not a mapping; a bare ``json`` TypeError for arguments JSON cannot write)."""

from __future__ import annotations

import pytest

from chatcodec.openai import to_chat_message


@pytest.mark.parametrize(("message", "kind"), [(None, "NoneType"), ("x", "str")])
def test_a_message_that_is_not_a_mapping(message: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^message: expected a parsed message \(a mapping\), got {kind}$"):
        to_chat_message(message)  # type: ignore[arg-type]


def test_arguments_json_cannot_write_name_the_call() -> None:
    message = {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
        {"type": "function", "function": {"name": "g", "arguments": {1, 2}}}]}
    expected = r"^tool_calls\[1\]\.function\.arguments: Object of type set is not JSON serializable$"
    with pytest.raises(TypeError, match=expected):
        to_chat_message(message)
