"""``chatcodec parse --openai chat|responses``: the message, the response, and the streams as JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec.cli import main
from tests.openai_wire.helpers import check_chunks, check_events

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "qwen3-coder"
TEMPLATE = str(EXAMPLE / "response_template.json")
OUTPUT = str(EXAMPLE / "output.txt")
TOOLS = str(EXAMPLE / "tools.json")
ARGUMENTS = '{"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3}'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["parse", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_chat_prints_the_assistant_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS, "--openai", "chat")
    assert (code, err) == (0, "")
    message = json.loads(out)
    call_id = message["tool_calls"][0]["id"]
    assert message == {
        "role": "assistant",
        "content": "Let me calculate that area for you.",
        "tool_calls": [{"id": call_id, "type": "function",
                        "function": {"name": "calculate_area", "arguments": ARGUMENTS}}],
    }
    assert out == json.dumps(message, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("size", ["1", "7"])
def test_chat_streams_one_chunk_per_line(capsys: pytest.CaptureFixture[str], size: str) -> None:
    code, out, err = run(capsys, TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS, "--openai", "chat",
                         "--chunk-size", size)
    assert (code, err) == (0, "")
    chunks = [json.loads(line) for line in out.splitlines()]
    message = check_chunks(chunks)
    assert message["content"] == "Let me calculate that area for you."
    assert message["tool_calls"][0]["function"] == {"name": "calculate_area", "arguments": ARGUMENTS}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_responses_prints_the_response(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS, "--openai", "responses")
    assert (code, err) == (0, "")
    response = json.loads(out)
    assert response["object"] == "response" and response["status"] == "completed"
    assert [(item["type"], item.get("arguments")) for item in response["output"]] == [
        ("message", None), ("function_call", ARGUMENTS)]


def test_responses_streams_one_event_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS, "--openai", "responses",
                         "--stream")
    assert (code, err) == (0, "")
    events = [json.loads(line) for line in out.splitlines()]
    assert check_events(events)["tool_calls"][0]["function"]["arguments"] == ARGUMENTS


def test_a_profiles_id_form(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    output = tmp_path / "output.txt"
    output.write_text('[TOOL_CALLS]get_time[ARGS]{"zone": "UTC"}', encoding="utf-8")
    code, out, _ = run(capsys, "mistral_v11", str(output), "--no-prefix", "--openai", "chat")
    call_id = json.loads(out)["tool_calls"][0]["id"]
    assert code == 0 and len(call_id) == 9 and call_id.isalnum()


def test_unparsable_output_is_exit_1_after_the_lines_written(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    output = tmp_path / "output.txt"
    output.write_text('Hi <tool_call>{"name": </tool_call>', encoding="utf-8")
    code, out, err = run(capsys, "hermes", str(output), "--no-prefix", "--openai", "chat", "--stream")
    assert code == 1
    assert [json.loads(line)["choices"][0]["delta"] for line in out.splitlines()] == [
        {"role": "assistant", "content": "Hi "}]
    assert err.startswith("chatcodec: ResponseParseError: field 'tool_calls' (content parser 'x-switch')")
    code, out, _ = run(capsys, "hermes", str(output), "--no-prefix", "--openai", "chat", "--errors", "keep")
    assert code == 0 and json.loads(out)["content"] == 'Hi <tool_call>{"name": </tool_call>'


def test_events_and_openai_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["parse", TEMPLATE, OUTPUT, "--no-prefix", "--events", "--openai", "chat"])
    assert caught.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
