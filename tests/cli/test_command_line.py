"""``chatcodec.cli.main``'s overview: top-level help lists every command, whatever follows it, while
a command's own arguments are declared only for the command being run."""

from __future__ import annotations

import sys

import pytest

from chatcodec.cli import main

COMMAND_LINES = [
    "    demo      render a chat and stream a real model output through a bundled profile",
    "    parse     parse a model output into an assistant message (or events)",
    "    render    render a conversation with a chat template",
    "    migrate   rewrite a legacy model directory in the modern template format",
    "    profiles  list the bundled model-family profiles and their coverage",
    "    lint      report portability problems in a chat or response template",
    "    doctor    check a model's chat and response templates: round trip, prefix stability, tool-call "
    "forms, other engines, lint",
    "    derive    derive a response template from a chat template, and verify it",
]


@pytest.mark.parametrize("argv", [["--help"], ["-h", "parse"], ["--debug", "--help", "render"],
                                  ["--he", "lint"]])
def test_top_level_help_lists_every_command(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "usage: chatcodec [-h] [--debug] [--version] COMMAND ..."
    assert [line for line in lines if line.startswith("    ")] == COMMAND_LINES


def test_a_command_help_shows_its_own_usage(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exited:
        main(["--debug", "profiles", "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("usage: chatcodec profiles [-h]")


def test_an_unknown_command_names_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["parsee", "x"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "chatcodec: error: argument COMMAND: invalid choice: 'parsee' (choose from 'demo', 'parse', "
        "'render', 'migrate', 'profiles', 'lint', 'doctor', 'derive')")


@pytest.mark.parametrize(("columns", "expected"), [
    ("60", ["    demo      render a chat and stream a real model output",
            "              through a bundled profile"]),
    ("0", ["    demo      render a chat and stream a real model output through a bundled",  # 80
           "              profile"]),
    ("wide", ["    demo      render a chat and stream a real model output through a bundled",
              "              profile"]),
])
def test_help_is_as_wide_as_columns_says(columns: str, expected: list[str], monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(sys, "__stdout__", None)  # no terminal to measure: 80 unless COLUMNS says
    with pytest.raises(SystemExit):
        main(["--help"])
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("  COMMAND") + 1
    assert lines[start:start + 2] == expected
