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


def test_conflicting_processor_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": DEFAULT}), encoding="utf-8")
    (tmp_path / "chat_template.jinja").write_text(DEFAULT, encoding="utf-8")
    assert main(["migrate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("chatcodec: ModelStorageError: ")
    assert "conflicting files" in err


def test_directory_without_templates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(tmp_path)]) == 1
    assert "ChatTemplateNotFoundError" in capsys.readouterr().err
