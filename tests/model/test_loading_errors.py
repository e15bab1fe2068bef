"""``ChatCodec.from_pretrained`` names a source of the wrong type (QA: a bare ``os.fspath``
TypeError from deep inside the loader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcodec import ChatCodec, load_chat_templates
from chatcodec.errors import ModelStorageError


@pytest.mark.parametrize(("source", "kind"), [(5, "int"), (None, "NoneType")])
def test_a_source_that_is_not_a_string_or_path(source: object, kind: str) -> None:
    expected = (r"^from_pretrained: expected a model directory, a profile name or a Hub id "
                rf"\(a string or a path\), got {kind}$")
    with pytest.raises(TypeError, match=expected):
        ChatCodec.from_pretrained(source)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["loop", "to nothing"])
def test_a_model_directory_link_that_cannot_be_followed(tmp_path: Path, kind: str) -> None:
    """QA: 'neither a model directory nor a bundled profile', for a link that is there."""
    link = tmp_path / "model"
    link.symlink_to("model" if kind == "loop" else "/nonexistent/model")
    reason = ("cannot be read: Too many levels of symbolic links" if kind == "loop"
              else "a symbolic link to /nonexistent/model, which does not exist")
    with pytest.raises(ModelStorageError) as caught:
        ChatCodec.from_pretrained(link)
    assert str(caught.value) == f"{link}: {reason}"
    with pytest.raises(ModelStorageError) as caught:
        load_chat_templates(link)
    assert str(caught.value) == f"{link}: not a model directory ({reason})"
