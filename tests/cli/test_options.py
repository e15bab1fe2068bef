"""The shared argument types of ``chatcodec.cli.options``: values in, argparse errors out."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from chatcodec.cli import main
from chatcodec.cli.options import positive_int, positive_seconds, seconds


@pytest.mark.parametrize(
    ("convert", "text", "expected"),
    [
        (positive_int, "1", 1),
        (positive_int, " 12 ", 12),
        (seconds, "0", 0.0),
        (seconds, "0.25", 0.25),
        (positive_seconds, "0.25", 0.25),
        (positive_seconds, " 120 ", 120.0),
    ],
)
def test_good_values(convert: Any, text: str, expected: Any) -> None:
    assert convert(text) == expected


@pytest.mark.parametrize(
    ("convert", "text", "message"),
    [
        (positive_int, "0", "expected a whole number of at least 1, got '0'"),
        (positive_int, "1.5", "expected a whole number of at least 1, got '1.5'"),
        (seconds, "-0.1", "expected seconds, a finite number of at least 0, got '-0.1'"),
        (seconds, "1e999", "expected seconds, a finite number of at least 0, got '1e999'"),
        (positive_seconds, "0", "expected seconds, a finite number more than 0, got '0'"),
        (positive_seconds, "-1", "expected seconds, a finite number more than 0, got '-1'"),
        (positive_seconds, "nan", "expected seconds, a finite number more than 0, got 'nan'"),
        (positive_seconds, "soon", "expected seconds, a finite number more than 0, got 'soon'"),
    ],
)
def test_bad_values_are_argument_type_errors(convert: Any, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        convert(text)
    assert str(raised.value) == message


@pytest.mark.parametrize("command", [["render", "qwen3", "conversation.json"], ["doctor", "qwen3"],
                                     ["derive", "qwen3"]])
def test_a_timeout_of_zero_is_a_usage_error(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main([*command, "--timeout", "0"])
    assert raised.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"chatcodec {command[0]}: error: argument --timeout: expected seconds, a finite number more than 0, "
        "got '0'")


@pytest.mark.parametrize("command", ["render", "doctor", "derive"])
def test_the_help_documents_timeout(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("--timeout SECONDS stop each render of the chat template after this many seconds (default: "
            "MAX_RENDER_SECONDS, 60); a template that runs out of time is an error") in help_text
