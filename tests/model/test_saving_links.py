"""Issue 13: saving never touches a path outside the target directory.

A linked ``additional_chat_templates/`` had files outside deleted and written; a
``tokenizer_config.json`` or ``special_tokens_map.json`` that was a link (even a dangling one) was
written through, while the ``.jinja`` files were replaced atomically. Now a link that leads out of
the directory is refused before anything is written (naming it), and every file is written the
same way: a temporary file renamed over the target, so a link inside the directory is replaced,
never written through, and a hard link elsewhere keeps its content.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatcodec.errors import ModelStorageError
from chatcodec.model.codec import ChatCodec
from chatcodec.model.storage import migrate_chat_templates
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.model.helpers import chatml_tokenizer, make_model_dir, write_json

NAMED = {"default": "{{ messages }}", "tool_use": "{{ tools }}"}


def model(path: Path) -> Path:
    return make_model_dir(path, chat_template=NAMED, response_template=QWEN_RESPONSE_TEMPLATE,
                          special_tokens={"eos_token": "<|im_end|>"}, tokenizer=chatml_tokenizer())


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.is_symlink()}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.jinja").write_text("not a template of this model", encoding="utf-8")
    (folder / "config.json").write_text('{"mine": true}', encoding="utf-8")
    return folder


def refused(directory: Path, link: Path, outside: Path, save: object) -> None:
    before, outside_before = snapshot(directory), snapshot(outside)
    with pytest.raises(ModelStorageError) as raised:
        save()  # type: ignore[operator]
    assert raised.value.path == str(link)
    assert str(raised.value).startswith(f"{link}: is a symbolic link to ")
    assert "outside the model directory" in str(raised.value)
    assert str(raised.value).endswith("nothing was written.")
    assert snapshot(directory) == before  # nothing written in the target either
    assert snapshot(outside) == outside_before


def test_a_linked_templates_folder_leading_out_is_refused(tmp_path: Path, outside: Path) -> None:
    source = model(tmp_path / "source")
    target = tmp_path / "target"
    target.mkdir()
    link = target / "additional_chat_templates"
    link.symlink_to(outside, target_is_directory=True)
    codec = ChatCodec.from_pretrained(source)
    refused(target, link, outside, lambda: codec.save_pretrained(target))


@pytest.mark.parametrize(("name", "dangling"), [
    ("tokenizer_config.json", False), ("tokenizer_config.json", True), ("chat_template.jinja", False),
    ("chat_template.jinja", True), ("tokenizer.json", False), ("tokenizer.json", True),
    ("special_tokens_map.json", False),  # a dangling one is not there to update: nothing is written
])
def test_a_file_that_is_a_link_leading_out_is_refused(tmp_path: Path, outside: Path, name: str,
                                                      dangling: bool) -> None:
    codec = ChatCodec.from_pretrained(model(tmp_path / "source"))
    target = model(tmp_path / "target")
    link = target / name
    link.unlink(missing_ok=True)
    link.symlink_to(outside / ("missing.json" if dangling else "config.json"))
    refused(target, link, outside, lambda: codec.save_pretrained(target))
    assert not (outside / "missing.json").exists()


def test_migrate_refuses_a_link_leading_out(tmp_path: Path, outside: Path) -> None:
    directory = make_model_dir(tmp_path / "model", layout="config", chat_template=NAMED)
    link = directory / "additional_chat_templates"
    link.symlink_to(outside, target_is_directory=True)
    refused(directory, link, outside, lambda: migrate_chat_templates(directory))


def test_a_link_inside_the_directory_is_replaced_not_written_through(tmp_path: Path) -> None:
    directory = model(tmp_path / "model")
    (directory / "original.json").write_text('{"untouched": 1}', encoding="utf-8")
    (directory / "tokenizer_config.json").unlink()
    (directory / "tokenizer_config.json").symlink_to("original.json")
    with pytest.warns(UserWarning, match="uses chatcodec extensions, so it needs chatcodec"):
        ChatCodec.from_pretrained("qwen3").save_pretrained(directory)
    assert not (directory / "tokenizer_config.json").is_symlink()
    assert (directory / "original.json").read_text(encoding="utf-8") == '{"untouched": 1}'


@pytest.mark.parametrize("name", ["tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
                                  "tokenizer.json"])
def test_every_file_is_replaced_atomically(tmp_path: Path, name: str) -> None:
    """A file written in place would change a hard link elsewhere; a replaced one does not."""
    directory = model(tmp_path / "model")
    write_json(directory / "special_tokens_map.json", {"eos_token": "<|im_end|>"})
    codec = ChatCodec.from_pretrained(directory)
    codec.chat_template = {"default": "changed", "tool_use": "{{ tools }}"}
    codec.eos_token = "<|endoftext|>"
    elsewhere = tmp_path / f"hard-{name}"
    os.link(directory / name, elsewhere)
    before = elsewhere.read_bytes()
    codec.save_pretrained(tmp_path / "model")
    if name == "tokenizer.json":  # the codec's own tokenizer file: nothing to write
        assert (directory / name).read_bytes() == before
    else:
        assert (directory / name).read_bytes() != before
    assert elsewhere.read_bytes() == before
