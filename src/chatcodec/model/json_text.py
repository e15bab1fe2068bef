"""Removing a key from a JSON object's text without re-serialising the rest.

``chatcodec migrate`` and ``save_chat_templates`` take the ``chat_template`` key out of
``tokenizer_config.json`` and ``chat_template.json``. Parsing the file and dumping it again would
rewrite every other key too: ``1e400`` would become ``Infinity`` (not JSON), ``1.50`` would lose a
digit, the indentation and line endings would change. Rule kept here: only the removed members'
text changes; every other byte of the file stays as it was.

Pure functions on text; nothing here reads or writes files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["remove_member"]

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class _Member:
    key: object  # a str: the member's key
    start: int  # the key's opening quote
    end: int  # just after the value


def _members(text: str) -> tuple[int, list[_Member], int]:
    """The top-level object's ``{`` position, its members and its ``}`` position.

    Raises:
        ValueError: the text is not a JSON object (``json.JSONDecodeError`` included).
    """
    position = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    if text[position: position + 1] != "{":
        raise ValueError("not a JSON object")
    opening = position
    position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
    members: list[_Member] = []
    while text[position: position + 1] == '"':
        start = position
        key, position = _DECODER.raw_decode(text, position)
        position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        if text[position: position + 1] != ":":
            raise ValueError(f"expected ':' at character {position}")
        position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
        _, position = _DECODER.raw_decode(text, position)
        members.append(_Member(key, start, position))
        position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        if text[position: position + 1] == ",":
            position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
    if text[position: position + 1] != "}":
        raise ValueError(f"expected '}}' at character {position}")
    return opening, members, position


def remove_member(text: str, key: str) -> str:
    """Remove every top-level member named ``key`` from a JSON object's text.

    The comma and spacing that separated the member from its neighbour go with it, so a file laid
    out one member per line stays laid out that way; an object left empty becomes ``{}``.

    Args:
        text: the text of a JSON object (as read from the file, line endings kept).
        key: the member to remove.

    Returns:
        The new text; ``text`` itself when there is no such member.

    Raises:
        ValueError: ``text`` is not a JSON object.
    """
    while True:
        opening, members, closing = _members(text)
        index = next((i for i, member in enumerate(members) if member.key == key), None)
        if index is None:
            return text
        if len(members) == 1:
            text = text[: opening + 1] + text[closing:]
        elif index == 0:
            text = text[: members[0].start] + text[members[1].start:]
        else:
            text = text[: members[index - 1].end] + text[members[index].end:]
