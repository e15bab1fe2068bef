"""``ChatCodec.from_pretrained``: deciding between a model directory and a bundled profile, and
the errors when a name is neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcodec.errors import ModelStorageError, UnknownProfileError
from chatcodec.model.codec import ChatCodec


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
        "profile (chatcodec never downloads: pass the folder of a downloaded model; `chatcodec profiles` "
        "lists the bundled profiles)")
    assert "qwen3" in caught.value.available


def test_a_close_profile_name_is_suggested() -> None:
    with pytest.raises(UnknownProfileError) as caught:
        ChatCodec.from_pretrained("qwen-3")
    assert str(caught.value).endswith("lists the bundled profiles). Did you mean 'qwen3'?")
