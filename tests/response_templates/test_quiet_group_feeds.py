"""A streamed group whose terminator starts with whitespace is fed without a search where no
terminator can start.

DeepSeek R1/V3 end a call's arguments with ``\\s*```\\s*<｜tool▁call▁end｜>``: its first
characters include every whitespace character, so each space inside the arguments (and the
character after it, while the space was held back) used to cost a full search of the terminator.
The terminator's matcher knows better (``quiet``): a whitespace run only counts when a backtick or
the end of the text follows it. These tests pin which feeds skip the search and that the events
are the ones the search gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chatcodec import ResponseParser, profiles
from chatcodec.response_templates.scanners.regex_items_scan import findall_scanner

PROFILES = Path(__file__).resolve().parents[2] / "src" / "chatcodec" / "profiles"
CALL = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"a": "b c"}\n```<｜tool▁call▁end｜>'


def findall_args(profile: str) -> dict[str, Any]:
    template = json.loads((PROFILES / profile / "response_template.json").read_text(encoding="utf-8"))
    args: dict[str, Any] = template["fields"]["tool_calls"]["content_args"]
    return args


def test_spaces_inside_deepseek_v3_arguments_skip_the_terminator_search() -> None:
    scanner = findall_scanner(findall_args("deepseek_v3"))
    quiet: list[str] = []
    events: list[tuple[str, Any]] = []
    for char in CALL:
        before = scanner.quiet_feeds
        deltas = scanner.feed(char)
        if scanner.quiet_feeds != before:
            quiet.append(char)
        events.append((char, deltas))
    # the two spaces, the characters after them (the held space is let go with them), and the
    # newline before the closing backticks (held: a backtick may follow); the backtick is searched
    assert quiet == [" ", '"', " ", "c", "\n"]
    assert scanner.quiet_feeds == 5
    assert [(char, deltas) for char, deltas in events if deltas] == [
        ("<", [("begin", (), "array")]),
        ("{", [("begin", (0,), "object"), ("set", (0, "type"), "function"),
               ("set", (0, "name"), "get_weather"), ("begin", (0, "arguments"), "object")]),
        ('"', [("begin", (0, "arguments", "a"), "string")]),
        ("b", [("text", (0, "arguments", "a"), "b")]),
        ("c", [("text", (0, "arguments", "a"), " c")]),
        ('"', [("end", (0, "arguments", "a"), None)]),
        ("}", [("end", (0, "arguments"), None)]),
    ]
    assert scanner.end() == [("end", (0,), None)]


def test_a_space_before_the_closing_backticks_is_still_held() -> None:
    """``}  `` then a backtick: the run may begin the terminator, so it stays out of the arguments."""
    scanner = findall_scanner(findall_args("deepseek_v3"))
    head = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"k": 1}'
    for char in head:
        scanner.feed(char)
    assert scanner.feed("  ") == []
    assert scanner.feed("`") == []
    assert scanner.feed("``<｜tool▁call▁end｜>") == []
    assert scanner.end() == [("end", (0,), None)]
    # the space after the colon, "1" with that held space, and the run "  " held back unsearched
    assert scanner.quiet_feeds == 3


def test_deepseek_v3_output_fed_in_small_pieces_gives_the_arguments() -> None:
    arguments = {"path": "src/a b.py", "text": "def f() -> None:\n    return  None\n", "n": [1, 2]}
    output = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write\n```json\n"
              f"{json.dumps(arguments, indent=1)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    parser = ResponseParser(profiles.load("deepseek_v3").response_template, prefix="", value_deltas=True)
    for start in range(0, len(output), 3):
        parser.feed(output[start : start + 3])
    message, _ = parser.finalize()
    assert message["tool_calls"] == [{"type": "function", "function": {"name": "write", "arguments": {
        "path": "src/a b.py", "text": "def f() -> None:\n    return  None\n", "n": [1, 2]}}}]
