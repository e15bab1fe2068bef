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
        (seconds, "3600", 3600.0),
        (positive_seconds, "0.25", 0.25),
        (positive_seconds, " 120 ", 120.0),
        (positive_seconds, "1e308", 1e308),  # a render timeout has no upper bound: the clock only compares
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
        # QA: time.sleep(1e308) escaped as an internal error (OverflowError) after the first chunk
        (seconds, "1e308", "expected seconds, at most MAX_DELAY_SECONDS (3600), got '1e308'"),
        (seconds, "3600.5", "expected seconds, at most MAX_DELAY_SECONDS (3600), got '3600.5'"),
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


@pytest.mark.parametrize("limit", [None, 0.001])
def test_a_render_out_of_time_tells_the_command_line_user_to_pass_timeout(limit: float | None) -> None:
    """QA: the hint named ``limits.MAX_RENDER_SECONDS``, which a command-line user cannot set; within
    a command (with or without ``--timeout``) it names the option, and the library's hint is back after."""
    from chatcodec import ChatTemplateLimitError, render_chat_template
    from chatcodec.chat_templates import limits
    from chatcodec.cli.options import render_timeout

    endless = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with render_timeout(limit):
        limits.MAX_RENDER_SECONDS = 0.001 if limit is None else limits.MAX_RENDER_SECONDS
        with pytest.raises(ChatTemplateLimitError) as caught:
            render_chat_template(endless, [{"role": "user", "content": "Hi"}])
    assert str(caught.value) == (
        "chat template sandbox: the render time exceeds MAX_RENDER_SECONDS (0.001). if the template is "
        "trusted, give each render more time with --timeout SECONDS\n  line 1 of the chat template:\n"
        f"    {endless}")
    assert (limits.MAX_RENDER_SECONDS, limits.RENDER_TIME_HINT) == (60.0, "")
    library_hint = r"raise chatcodec\.chat_templates\.limits\.MAX_RENDER_SECONDS$"
    with pytest.raises(ChatTemplateLimitError, match=library_hint):
        limits.RenderState(deadline=0.0).check_clock()


@pytest.mark.parametrize("command", [["parse", "--no-prefix", "qwen3", "output.txt"], ["demo"]])
def test_a_delay_past_the_hour_is_a_usage_error(command: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main([*command, "--delay", "1e308"])
    assert raised.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"chatcodec {command[0]}: error: argument --delay: expected seconds, at most MAX_DELAY_SECONDS "
        "(3600), got '1e308'")
