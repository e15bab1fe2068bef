"""Model output never drives the terminal: control characters are shown, not obeyed, on a tty.

``chatcodec parse --stream`` (rich or plain view) and ``chatcodec demo`` write model text to a
terminal; an ESC sequence in that text would set the window title or clear the screen. On a
terminal, C0/C1 controls (but ``\\n`` and ``\\t``) and DEL are written as ``\\xNN`` in text and as
JSON ``\\u00NN`` escapes in JSON (the same value); a pipe or a file gets every byte exactly.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chatcodec.cli import main
from chatcodec.cli.view import EventLines, PlainView, RichView, terminal_json, terminal_text
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN

HOSTILE = "Hi\x1b]0;PWNED\x07there\x1b[2J"
SHOWN = "Hi\\x1b]0;PWNED\\x07there\\x1b[2J"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _events(text: str) -> list[dict[str, object]]:
    return [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": text, "dirty": False},
        {"type": "region_close", "field": "content", "value": text},
    ]


def test_terminal_text_shows_every_control_but_newline_and_tab() -> None:
    text = "a\x00b\x08\x0b\x0c\r\x1b\x7f\x80\x9b\x9f\n\tc\u00a0é\ud800"
    assert terminal_text(text) == "a\\x00b\\x08\\x0b\\x0c\\x0d\\x1b\\x7f\\x80\\x9b\\x9f\n\tc\u00a0é\\ud800"


def test_terminal_text_shows_bidi_controls_and_line_separators() -> None:
    """QA: U+202E reorders what follows on screen and U+2028 breaks a line: shown, not obeyed."""
    text = "a\u202a\u202b\u202c\u202d\u202eb\u2066\u2067\u2068\u2069\u2028\u2029\u200f\u2027\u202f"
    assert terminal_text(text) == (
        "a\\u202a\\u202b\\u202c\\u202d\\u202eb\\u2066\\u2067\\u2068\\u2069\\u2028\\u2029"
        "\u200f\u2027\u202f")


def test_terminal_json_escapes_bidi_controls_and_line_separators() -> None:
    raw = json.dumps({"c": "x\u202e\u2066\u2028\u2029y\u202f"}, ensure_ascii=False)
    shown = terminal_json(raw)
    assert shown == '{"c": "x\\u202e\\u2066\\u2028\\u2029y\u202f"}'
    assert json.loads(shown) == {"c": "x\u202e\u2066\u2028\u2029y\u202f"}


def test_terminal_json_escapes_what_json_dumps_leaves_raw() -> None:
    raw = json.dumps({"c": "a\x1b\x7f\x9bé"}, ensure_ascii=False)
    assert raw == '{"c": "a\\u001b\x7f\x9bé"}'  # json.dumps keeps DEL and C1 as they are
    shown = terminal_json(raw)
    assert shown == '{"c": "a\\u001b\\u007f\\u009bé"}'
    assert json.loads(shown) == {"c": "a\x1b\x7f\x9bé"}  # still valid JSON with the same value


def test_the_plain_view_on_a_terminal_shows_controls() -> None:
    out = _Terminal()
    view = PlainView(out)
    for event in [*_events(HOSTILE + "\x9b"),
                  {"type": "region_open", "field": "tool_calls"},
                  {"type": "region_chunk", "field": "tool_calls", "text": "{\x1b", "dirty": True},
                  {"type": "region_close", "field": "tool_calls", "value": {"n": "\x1b\x9b"}},
                  {"type": "region_open", "field": "tool_calls"},
                  {"type": "region_close", "field": "tool_calls", "value": None,
                   "error": {"error": "bad \x1b[2J"}}]:
        view.on_event(event)
    view.close({"content": HOSTILE + "\x9b"})
    assert out.getvalue() == (
        f"[content]\n{SHOWN}\\x9b\n[tool_calls]\n"
        '=> {"n": "\\u001b\\u009b"}\n[tool_calls]\n!! bad \\x1b[2J\n'
        '\n{\n  "content": "Hi\\u001b]0;PWNED\\u0007there\\u001b[2J\\u009b"\n}\n'
    )


def test_the_plain_view_on_a_pipe_writes_the_text_exactly() -> None:
    out = io.StringIO()
    view = PlainView(out)
    for event in _events(HOSTILE + "\x9b"):
        view.on_event(event)
    view.close({"content": "\x9b"})
    assert out.getvalue() == f"[content]\n{HOSTILE}\x9b\n\n{{\n  \"content\": \"\x9b\"\n}}\n"


def test_the_plain_view_can_be_told_where_it_writes() -> None:
    out = io.StringIO()
    view = PlainView(out, terminal=True)
    for event in _events("\x1b"):
        view.on_event(event)
    assert out.getvalue() == "[content]\n\\x1b"


def test_the_rich_view_shows_controls() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    view = RichView(console)
    for event in [*_events(HOSTILE),
                  {"type": "region_open", "field": "tool_calls"},
                  {"type": "region_chunk", "field": "tool_calls", "text": "{\x9b", "dirty": True},
                  {"type": "region_close", "field": "tool_calls", "value": None,
                   "error": {"error": "bad \x1b]0;X\x07"}}]:
        view.on_event(event)
    view.close({"content": HOSTILE + "\x9b"})
    drawn = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b]" not in drawn and "\x07" not in drawn and "\x1b[2J" not in drawn and "\x9b" not in drawn
    assert SHOWN in drawn and "{\\x9b" in drawn and "!! bad \\x1b]0;X\\x07" in drawn
    assert drawn.rstrip().endswith('{\n  "content": "Hi\\u001b]0;PWNED\\u0007there\\u001b[2J\\u009b"\n}')


def test_the_rich_view_prints_a_lone_surrogate_as_its_escape() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    view = RichView(console)
    view.close({"content": "a\ud800"})
    drawn = console.file.getvalue()  # type: ignore[attr-defined]
    assert drawn.endswith('{\n  "content": "a\\ud800"\n}\n')


def test_event_lines_on_a_terminal_escape_c1_controls() -> None:
    out = _Terminal()
    view = EventLines(out)
    view.on_event({"type": "region_chunk", "field": "content", "text": "\x1b\x9b", "dirty": False})
    assert out.getvalue() == (
        '{"type": "region_chunk", "field": "content", "text": "\\u001b\\u009b", "dirty": false}\n')


@pytest.fixture
def hostile_output(tmp_path: Path) -> tuple[str, str]:
    template = tmp_path / "t.json"
    template.write_text(json.dumps(QWEN), encoding="utf-8")
    output = tmp_path / "ctrl.txt"
    output.write_text(HOSTILE + "\x9b<think>x</think>", encoding="utf-8")
    return str(template), str(output)


@pytest.mark.parametrize("extra", [["--stream"], []])
def test_parse_on_a_terminal_shows_controls(monkeypatch: pytest.MonkeyPatch, hostile_output: tuple[str, str],
                                            extra: list[str]) -> None:
    out = _Terminal()
    monkeypatch.setattr("sys.stdout", out)
    assert main(["parse", *hostile_output, "--no-prefix", *extra]) == 0
    shown = out.getvalue()
    assert "\x1b]" not in shown and "\x07" not in shown and "\x1b[2J" not in shown and "\x9b" not in shown
    assert '"Hi\\u001b]0;PWNED\\u0007there\\u001b[2J\\u009b"' in shown
    if extra:
        assert SHOWN + "\\x9b" in shown


def test_parse_to_a_pipe_writes_every_byte(hostile_output: tuple[str, str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", *hostile_output, "--no-prefix", "--stream"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"[content]\n{HOSTILE}\x9b\n[reasoning_content]\nx\n")
    assert '"content": "Hi\\u001b]0;PWNED\\u0007there\\u001b[2J\x9b",\n' in out  # JSON escapes C0 itself


def test_demo_on_a_terminal_uses_the_escaping_views(monkeypatch: pytest.MonkeyPatch) -> None:
    from chatcodec.cli import demo

    out = _Terminal()
    monkeypatch.setattr("sys.stdout", out)
    plain = demo._view(True)  # demo --plain on a terminal
    assert isinstance(plain, PlainView)
    for event in _events("a\x1b"):
        plain.on_event(event)
    assert out.getvalue() == "[content]\na\\x1b"
    rich = demo._view(False)
    assert isinstance(rich, RichView)
    rich.abort()
