"""``chatcodec parse`` names its TEMPLATE and OUTPUT paths without importing pathlib
(:func:`chatcodec.cli.sources.local_path`): the names, the folder of a ``tokenizer_config.json``
and the file tests must be the ones a ``pathlib.Path`` gave."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.cli.parse import _model_source, _parent
from chatcodec.cli.sources import local_path, resolve_source


@pytest.mark.parametrize(("source", "expected"), [
    ("", "."),
    (".", "."),
    ("./", "."),
    ("dir/", "dir"),
    ("./a//b/", "a/b"),
    ("/", "/"),
    ("//a", "//a"),
    ("///a", "/a"),
    ("/a/b/.", "/a/b"),
    ("a/../b", "a/../b"),
    ("..", ".."),
    (".hidden", ".hidden"),
])
def test_local_path_names_what_path_names(source: str, expected: str) -> None:
    assert local_path(source) == expected


@given(st.text(alphabet="ab./", max_size=12))
def test_local_path_is_str_of_path(source: str) -> None:
    assert local_path(source) == str(Path(source))
    assert _parent(source) == str(Path(source).parent)


def test_tokenizer_config_is_read_as_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _model_source("./model//tokenizer_config.json") == "model"
    assert _model_source("tokenizer_config.json") == "."
    assert _model_source("model/") == "model/"  # a directory is passed on as written
    assert resolve_source("model/") == "directory"
    assert resolve_source("model/tokenizer_config.json/") == "file"  # Path drops the trailing slash
    assert resolve_source("") == "directory"  # Path("") is the current folder
    assert os.path.basename(local_path("model/tokenizer_config.json/")) == "tokenizer_config.json"
