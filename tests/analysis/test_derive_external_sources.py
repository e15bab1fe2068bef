"""The checks ``bench/derive_external.py`` runs on an external set before measuring it.

The independent sets are only independent if no template is in two of them or in the corpus, and a
measurement is only repeatable on the listed bytes; these checks run without deriving anything
(``--check``), so a set can be verified without being measured.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import derive_external  # noqa: E402

TEMPLATE = ("{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def _write_set(path: Path, file: str, text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    entry = {"file": file, "repo": "example/repo", "path": file, "commit": "0" * 40,
             "special_tokens": {"eos_token": "<|end|>"}, "sha256": digest}
    path.write_text(json.dumps({"about": "test set", "sources": [entry]}), encoding="utf-8")
    return digest


def test_every_committed_set_file_is_checked_by_the_glob() -> None:
    names = {path.name for path in derive_external.sources_files()}
    assert {"derive_external_sources.json", "derive_external2_sources.json", "derive_external3_sources.json",
            "derive_external4_sources.json", "derive_external5_sources.json"} <= names


def test_the_explicit_list_names_all_five_sets() -> None:
    assert [path.name for path in derive_external.ALL_SOURCES] == [
        "derive_external_sources.json", "derive_external2_sources.json", "derive_external3_sources.json",
        "derive_external4_sources.json", "derive_external5_sources.json"]


def test_no_template_is_listed_in_two_committed_sets() -> None:
    owners: dict[str, list[str]] = {}
    for path in derive_external.sources_files():
        for entry in json.loads(path.read_text(encoding="utf-8"))["sources"]:
            owners.setdefault(entry["sha256"], []).append(path.name)
    assert {digest: files for digest, files in owners.items() if len(files) > 1} == {}


def test_the_fourth_set_records_source_digest_tokens_and_a_distant_nearest() -> None:
    entries: list[dict[str, Any]] = json.loads(
        (ROOT / "bench" / "derive_external4_sources.json").read_text(encoding="utf-8"))["sources"]
    assert len(entries) == 21
    assert len({entry["file"] for entry in entries}) == 21
    for entry in entries:
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]), entry["file"]
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry["file"]
        assert entry["special_tokens"]["eos_token"], entry["file"]
        assert entry["nearest"]["similarity"] < 0.9, entry["file"]


def test_the_fifth_set_records_source_digest_tokens_and_a_distant_nearest() -> None:
    entries: list[dict[str, Any]] = json.loads(
        (ROOT / "bench" / "derive_external5_sources.json").read_text(encoding="utf-8"))["sources"]
    assert len(entries) == 24
    assert len({entry["file"] for entry in entries}) == 24
    assert len({entry["sha256"] for entry in entries}) == 24
    for entry in entries:
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]), entry["file"]
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry["file"]
        assert entry["special_tokens"]["eos_token"], entry["file"]
        assert entry["nearest"]["similarity"] < 0.9, entry["file"]
    assert [entry["file"] for entry in entries if "json_field" in entry] == [
        "BigBIueWhale-qwen_38_agent_setup-tokenizer_config.jinja"]


def test_a_listed_template_with_its_digest_loads(tmp_path: Path) -> None:
    (tmp_path / "t.jinja").write_text(TEMPLATE, encoding="utf-8")
    _write_set(tmp_path / "mine.json", "t.jinja", TEMPLATE)
    loaded = derive_external.load_sources(tmp_path, tmp_path / "mine.json")
    assert [(entry["file"], text) for entry, text in loaded] == [("t.jinja", TEMPLATE)]


def test_a_changed_file_is_refused_with_both_digests(tmp_path: Path) -> None:
    listed = _write_set(tmp_path / "mine.json", "t.jinja", TEMPLATE)
    (tmp_path / "t.jinja").write_text(TEMPLATE + "\n", encoding="utf-8")
    actual = hashlib.sha256((TEMPLATE + "\n").encode("utf-8")).hexdigest()
    with pytest.raises(SystemExit) as raised:
        derive_external.load_sources(tmp_path, tmp_path / "mine.json")
    assert str(raised.value) == f"{tmp_path / 't.jinja'}: sha256 {actual}, the sources list {listed}"


def test_a_template_another_set_lists_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.jinja").write_text(TEMPLATE, encoding="utf-8")
    _write_set(tmp_path / "mine.json", "t.jinja", TEMPLATE)
    _write_set(tmp_path / "other.json", "same.jinja", TEMPLATE)
    other = (*derive_external.ALL_SOURCES, tmp_path / "other.json")
    monkeypatch.setattr(derive_external, "ALL_SOURCES", other)
    with pytest.raises(SystemExit) as raised:
        derive_external.load_sources(tmp_path, tmp_path / "mine.json")
    assert str(raised.value) == (f"{tmp_path / 't.jinja'}: also listed in other.json; "
                                 "the sets must not overlap")


def test_a_missing_file_names_where_to_fetch_it(tmp_path: Path) -> None:
    _write_set(tmp_path / "mine.json", "t.jinja", TEMPLATE)
    with pytest.raises(SystemExit) as raised:
        derive_external.load_sources(tmp_path, tmp_path / "mine.json")
    assert str(raised.value) == f"{tmp_path / 't.jinja'}: missing; fetch example/repo {'0' * 40}:t.jinja"
