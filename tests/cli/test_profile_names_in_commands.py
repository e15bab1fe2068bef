"""``chatcodec render`` and ``parse`` take a bundled profile name where they take a model directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec.chat_templates.render import render_chat_template
from chatcodec.cli import main
from tests.conftest import corpus_path

MESSAGES = [{"role": "user", "content": "Hello there"}]


def test_render_with_a_profile_name_uses_its_bundled_template(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "deepseek-v3.1", str(conversation), "--generation-prompt"]) == 0
    template = corpus_path("chat_templates", "deepseek-ai--DeepSeek-V3.1.jinja").read_text(encoding="utf-8")
    expected = render_chat_template(
        template,
        MESSAGES,
        add_generation_prompt=True,
        bos_token="<｜begin▁of▁sentence｜>",
        eos_token="<｜end▁of▁sentence｜>",
    )
    assert capsysbinary.readouterr().out == expected.encode("utf-8")
    assert expected == "<｜begin▁of▁sentence｜><｜User｜>Hello there<｜Assistant｜></think>"


def test_render_with_a_profile_that_bundles_no_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "llama3_json", str(conversation)]) == 1
    assert capsys.readouterr().err == (
        "chatcodec: ValueError: llama3_json: profile 'llama3_json' bundles no chat template "
        "(Llama 3.1 Community License); pass a model directory or a template file\n"
    )


def test_a_file_named_like_a_profile_does_not_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """As ``ChatCodec.from_pretrained``: a directory, else a profile name, else a file."""
    monkeypatch.chdir(tmp_path)
    Path("qwen3").write_text("{{ messages[0]['content'] }}!", encoding="utf-8")
    Path("conversation.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "qwen3", "conversation.json"]) == 0
    assert capsysbinary.readouterr().out == b"<|im_start|>user\nHello there<|im_end|>\n"
    assert main(["render", "./qwen3", "conversation.json"]) == 0
    assert capsysbinary.readouterr().out == b"Hello there!"
    Path("out.txt").write_text("Hi<|im_end|>", encoding="utf-8")
    assert main(["parse", "qwen3", "out.txt", "--no-prefix"]) == 0
    assert capsysbinary.readouterr().out == b'{\n  "role": "assistant",\n  "content": "Hi"\n}\n'
    assert main(["parse", "./qwen3", "out.txt", "--no-prefix"]) == 1
    assert capsysbinary.readouterr().err == (
        b"chatcodec: ValueError: ./qwen3: invalid response template (line 1, column 2): Expecting property "
        b"name enclosed in double quotes\n")


def test_a_directory_named_like_a_profile_hides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("qwen3").mkdir()
    Path("qwen3", "chat_template.jinja").write_text("{{ messages[0]['content'] }}?", encoding="utf-8")
    Path("conversation.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "qwen3", "conversation.json"]) == 0
    assert capsysbinary.readouterr().out == b"Hello there?"


def test_parse_with_a_profile_name_uses_its_response_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "output.txt"
    output.write_text("I'm\nthinking</think>Hello, world!", encoding="utf-8")
    prefix = tmp_path / "prompt.txt"
    prefix.write_text("<｜User｜>Hi<｜Assistant｜><think>", encoding="utf-8")
    assert main(["parse", "DeepSeek-V3.1", str(output), "--prefix", str(prefix)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "role": "assistant",
        "reasoning_content": "I'm\nthinking",
        "content": "Hello, world!",
    }


def test_parse_with_an_unknown_name_says_what_was_expected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "no-such-profile", "-", "--no-prefix"]) == 1
    assert capsys.readouterr().err.startswith(
        "chatcodec: OSError: no-such-profile: no such file or directory"
    )
