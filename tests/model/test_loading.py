"""``ChatCodec.from_pretrained``: deciding between a model directory and a bundled profile, and
the errors when a name is neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatcodec.errors import ModelStorageError, UnknownProfileError
from chatcodec.model.codec import ChatCodec
from chatcodec.model.loading import find_response_template
from tests.conftest import ROOT, corpus_template
from tests.model.helpers import QWEN3_TEMPLATE, make_model_dir


def profile_template(name: str) -> Any:
    path = ROOT / "src" / "chatcodec" / "profiles" / name / "response_template.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_only_a_directory_shadows_a_profile_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mistral").write_text("notes", encoding="utf-8")
    codec = ChatCodec.from_pretrained("mistral")
    assert codec.response_template_source == "profile:mistral"
    assert codec.name_or_path == "mistral"
    (tmp_path / "mistral").unlink()
    (tmp_path / "mistral").mkdir()
    assert ChatCodec.from_pretrained("mistral").response_template_source is None  # the (empty) directory


def test_a_file_that_is_no_profile_name(tmp_path: Path) -> None:
    (tmp_path / "file.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelStorageError) as caught:
        ChatCodec.from_pretrained(tmp_path / "file.json")
    assert str(caught.value) == (
        f"{tmp_path / 'file.json'}: not a directory; from_pretrained takes a model directory or the name of "
        "a bundled profile")


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_name_is_an_error_not_the_current_directory(name: str) -> None:
    with pytest.raises(UnknownProfileError) as caught:
        ChatCodec.from_pretrained(name)
    assert str(caught.value) == (
        "from_pretrained: empty name; pass a model directory (use '.' for the current one) or the name of "
        "a bundled profile (`chatcodec profiles` lists them)")


def test_neither_a_directory_nor_a_profile_is_a_short_message(tmp_path: Path) -> None:
    with pytest.raises(UnknownProfileError) as caught:
        ChatCodec.from_pretrained(tmp_path / "nonexistent")
    assert str(caught.value) == (
        f"from_pretrained: {str(tmp_path / 'nonexistent')!r} is neither a model directory nor a bundled "
        "profile, nor a Hub model id ('org/name'; `chatcodec profiles` lists the bundled profiles)")
    assert "qwen3" in caught.value.available


def test_a_close_profile_name_is_suggested() -> None:
    with pytest.raises(UnknownProfileError) as caught:
        ChatCodec.from_pretrained("qwen-3")
    assert str(caught.value).endswith("lists the bundled profiles). Did you mean 'qwen3'?")


class TestTheResponseTemplateOfADirectory:
    """``chatcodec parse DIR`` finds the same response template as ``ChatCodec.from_pretrained(DIR)``."""

    def test_a_detected_profile(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        from chatcodec.cli import main

        directory = make_model_dir(tmp_path / "model", chat_template=corpus_template(QWEN3_TEMPLATE))
        assert find_response_template(directory) == (profile_template("qwen3"), "profile:qwen3")
        assert ChatCodec.from_pretrained(directory).response_template_source == "profile:qwen3"
        output = tmp_path / "output.txt"
        output.write_text("<think>\nok\n</think>\n\nIt is sunny.<|im_end|>", encoding="utf-8")
        assert main(["parse", str(directory), str(output), "--no-prefix"]) == 0
        assert json.loads(capsys.readouterr().out) == {  # the qwen3 profile keeps whitespace
            "role": "assistant", "reasoning_content": "\nok\n", "content": "\n\nIt is sunny."}

    def test_the_stored_one_wins(self, tmp_path: Path) -> None:
        template = {"start_anchor": "A:", "fields": {"content": {}}}
        directory = make_model_dir(tmp_path / "model", chat_template=corpus_template(QWEN3_TEMPLATE),
                                   response_template=template)
        assert find_response_template(directory) == (template, "tokenizer_config.json")

    def test_none(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        from chatcodec.cli import main

        directory = make_model_dir(tmp_path / "model", chat_template="{{ messages }}")
        assert find_response_template(directory) == (None, None)
        (tmp_path / "output.txt").write_text("x", encoding="utf-8")
        assert main(["parse", str(directory), str(tmp_path / "output.txt"), "--no-prefix"]) != 0
        assert capsys.readouterr().err == (
            f"chatcodec: ValueError: {directory}: no response template (no 'response_template' key in "
            "tokenizer_config.json, and no bundled profile matches its chat template). Add one, or pass "
            "a response template JSON file or a bundled profile name instead\n")
