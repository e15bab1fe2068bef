"""Commands take a Hub model id wherever they take a model directory (read from a Hub cache on disk,
offline: ``tests/conftest.py`` sets ``HF_HUB_OFFLINE=1``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec.cli import main
from chatcodec.cli.sources import model_path, resolve_source
from tests.conftest import corpus_template
from tests.hub_cache import make_hub_cache

REPO = "acme/tiny-qwen3"


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Qwen3 corpus template and its special tokens as a cached Hub model; the default cache."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    make_hub_cache(cache, REPO, {"chat_template.jinja": corpus_template("Qwen--Qwen3-0.6B.jinja"),
                                 "tokenizer_config.json": json.dumps({"eos_token": "<|im_end|>"})})
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


def test_resolving_a_hub_id(hub_cache: Path) -> None:
    assert resolve_source(REPO) == "hub"
    assert resolve_source("qwen3") == "profile"
    assert model_path(REPO) == str(hub_cache / "models--acme--tiny-qwen3" / "snapshots" /
                                   "0123456789abcdef0123456789abcdef01234567")
    assert model_path("qwen3") == "qwen3"


def test_parse_with_a_hub_id(hub_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No response template stored: the bundled profile detected from its chat template, and
    generation ends at its eos token, as for the directory."""
    output = tmp_path / "out.txt"
    output.write_text("<think>\nhm\n</think>\n\nHello.<|im_end|>ignored")
    assert main(["parse", REPO, str(output), "--no-prefix"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "role": "assistant", "reasoning_content": "\nhm\n", "content": "\n\nHello."}


def test_lint_with_a_hub_id(hub_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", REPO]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{REPO}[default]:")
    assert {line.split(" ")[1] for line in lines} == {"info"}


def test_an_unknown_hub_id_is_one_clear_line(hub_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "acme/missing"]) == 1
    assert capsys.readouterr().err == (
        f"chatcodec: HubError: acme/missing: not in the Hub cache {hub_cache}, and the Hub may not be "
        "reached (HF_HUB_OFFLINE=1 or local_files_only=True); load it once online, or pass the folder of "
        "a downloaded copy\n")
