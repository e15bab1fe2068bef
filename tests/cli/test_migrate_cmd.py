"""``chatcodec migrate``: rewrites legacy directories and says on stderr what it changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec import load_chat_templates
from chatcodec.cli import main

DEFAULT = "{% for m in messages %}{{ m.content }}{% endfor %}"
TOOL_USE = "{{ tools|tojson }}"


def legacy_dir(tmp_path: Path) -> Path:
    config = {
        "eos_token": "</s>",
        "chat_template": [
            {"name": "default", "template": DEFAULT},
            {"name": "tool_use", "template": TOOL_USE},
        ],
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def test_migrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = legacy_dir(tmp_path)
    assert main(["migrate", str(directory)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"did write chat_template.jinja: new chat template ({len(DEFAULT)} characters)\n"
        "did write additional_chat_templates/tool_use.jinja: "
        f"new chat template ({len(TOOL_USE)} characters)\n"
        "did update tokenizer_config.json: removed key 'chat_template' (now in .jinja files)\n"
    )
    assert (directory / "chat_template.jinja").read_text(encoding="utf-8") == DEFAULT
    assert json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8")) == {
        "eos_token": "</s>"
    }
    assert load_chat_templates(directory) == {"default": DEFAULT, "tool_use": TOOL_USE}


def test_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = legacy_dir(tmp_path)
    before = (directory / "tokenizer_config.json").read_bytes()
    assert main(["migrate", str(directory), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert (
        err.splitlines()[0]
        == f"would write chat_template.jinja: new chat template ({len(DEFAULT)} characters)"
    )
    assert err.splitlines()[-1] == f"{directory}: dry run, nothing written (3 changes)"
    assert sorted(path.name for path in directory.iterdir()) == ["tokenizer_config.json"]
    assert (directory / "tokenizer_config.json").read_bytes() == before


def test_modern_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chat_template.jinja").write_text(DEFAULT, encoding="utf-8")
    assert main(["migrate", str(tmp_path)]) == 0
    assert capsys.readouterr().err == (
        f"{tmp_path}: chat templates are already in the modern format; nothing to change\n"
    )


def test_a_processor_file_identical_to_the_jinja_file_is_dropped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As with tokenizer_config.json: an identical legacy copy migrates; only a difference refuses."""
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": DEFAULT}), encoding="utf-8")
    (tmp_path / "chat_template.jinja").write_text(DEFAULT, encoding="utf-8")
    assert main(["migrate", str(tmp_path)]) == 0
    assert capsys.readouterr().err == (
        "did delete chat_template.json: legacy processor chat template (now in .jinja files)\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["chat_template.jinja"]
    assert (tmp_path / "chat_template.jinja").read_text(encoding="utf-8") == DEFAULT


def test_a_processor_file_differing_from_the_jinja_file_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": "B"}), encoding="utf-8")
    (tmp_path / "chat_template.jinja").write_text(DEFAULT, encoding="utf-8")
    assert main(["migrate", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"chatcodec: ModelStorageError: {tmp_path}: the 'default' chat template of chat_template.json "
        "differs from chat_template.jinja, so migrating would lose one of them. Keep the one you want "
        "(delete the other, or save it under another name in additional_chat_templates/) and migrate "
        "again.\n")
    assert (tmp_path / "chat_template.json").is_file()


def test_directory_without_templates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(tmp_path)]) == 1
    assert "ChatTemplateNotFoundError" in capsys.readouterr().err


def test_a_legacy_template_differing_from_the_jinja_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = '{"chat_template": "B {{ messages[0].content }}", "eos_token": "x"}'
    (tmp_path / "tokenizer_config.json").write_text(config, encoding="utf-8")
    (tmp_path / "chat_template.jinja").write_text("A {{ messages[0].content }}", encoding="utf-8")
    assert main(["migrate", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"chatcodec: ModelStorageError: {tmp_path}: the 'default' chat template of tokenizer_config.json "
        "differs from chat_template.jinja, so migrating would lose one of them. Keep the one you want "
        "(delete the other, or save it under another name in additional_chat_templates/) and migrate again.\n"
    )
    assert (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8") == config


def test_a_file_is_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "chat_template.jinja"
    file.write_text(DEFAULT, encoding="utf-8")
    assert main(["migrate", str(file)]) == 1
    assert capsys.readouterr().err == (
        f"chatcodec: ModelStorageError: {file}: not a model directory (it is a file; pass the directory "
        "holding it)\n"
    )
