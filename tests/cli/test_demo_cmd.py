"""``chatcodec demo``: render the demo conversation, stream a real output, print the final message."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chatcodec import profiles
from chatcodec.cli import main
from chatcodec.cli.demo import CHUNK_CHARS, DEFAULT_PROFILE
from chatcodec.cli.view import chunks

WITH_DEMO = [name for name in profiles.names() if profiles.load(name).demo is not None]


def _final_message(stdout: str) -> dict[str, object]:
    """The message the view prints last, after a blank line."""
    return json.loads(stdout[stdout.rindex("\n\n{") + 2 :])


def test_default_demo_streams_reasoning_content_and_a_tool_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert DEFAULT_PROFILE == "glm45"
    assert main(["demo"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # not a terminal, so plain output, with nothing to say about it
    assert out.startswith("# profile glm45: ")
    assert "# user: What's the weather in Beijing on 2025-08-01?\n# tools: get_weather\n" in out
    assert "\n[reasoning_content]\nI want to get the weather.\n[content]\n" in out
    assert "I will help you get the weather.\n[tool_calls]\n" in out
    assert '\n=> {"type": "function", "function": {"name": "get_weather", ' in out
    assert out.count("\n[") == 3, "one block per region, none of them empty"
    assert _final_message(out) == {
        "role": "assistant",
        "reasoning_content": "I want to get the weather.",
        "content": "\n\nI will help you get the weather.\n",  # as written (docs/profiles.md, whitespace)
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Beijing", "date": "2025-08-01"}},
            }
        ],
    }


@pytest.mark.parametrize("name", WITH_DEMO)
def test_every_demo_runs_and_prints_the_parsed_message(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--profile", name, "--delay", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# profile {name}: ")
    message = _final_message(out)
    assert message["role"] == "assistant" and len(message) > 1


def test_alias_picks_the_profile_and_plain_needs_no_hint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--profile", "qwen2.5", "--plain"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("# profile hermes: ")
    assert _final_message(out)["content"] == "Sure, let me check the weather."


NO_DEMO = "has no bundled demo (no chat template to render its conversation)"


@pytest.mark.parametrize(("name", "problem"), [
    ("lfm2", f"profile 'lfm2' {NO_DEMO}"),
    ("llama3_json", f"profile 'llama3_json' {NO_DEMO}"),
    ("cohere2", f"profile 'cohere2' {NO_DEMO}"),
    ("nope", "profile 'nope': no bundled profile has this name or alias"),
])
def test_a_profile_without_a_demo_is_a_usage_error_listing_the_choices(
        name: str, problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["demo", "--profile", name])
    assert raised.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: chatcodec demo ")
    assert err.splitlines()[-1] == (
        f"chatcodec demo: error: argument --profile: {problem}; choose one of: {', '.join(WITH_DEMO)}")
    assert WITH_DEMO[:2] == ["apertus", "deepseek_r1"]


def test_chunks_split_like_a_token_stream() -> None:
    assert list(chunks("abcdefg", CHUNK_CHARS)) == ["abc", "def", "g"]
    assert list(chunks("", CHUNK_CHARS)) == []


def test_console_entry_point_runs_the_demo() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chatcodec", "demo", "--profile", "gpt_oss"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert _final_message(result.stdout)["reasoning_content"] == "Thinking about edit..."
