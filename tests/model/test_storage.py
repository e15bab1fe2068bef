"""Chat templates on disk: every storage layout, load precedence, saving, migration, unsafe names.

Every directory is built by the test in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatcodec import load_chat_templates, save_chat_templates
from chatcodec.errors import ChatTemplateNotFoundError, ModelStorageError
from chatcodec.model.storage import (
    StorageChange,
    check_template_name,
    migrate_chat_templates,
    plan_chat_template_save,
)
from tests.conftest import corpus_path

DEFAULT = "{% for m in messages %}{{ m.content }}{% endfor %}"
TOOL_USE = "{{ tools | tojson }}{% for m in messages %}{{ m.content }}{% endfor %}"
RAG = "{{ documents | tojson }}"


def write(directory: Path, files: dict[str, Any]) -> Path:
    """Create files: str values are written as text, other values as JSON."""
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", newline="")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
    return directory


def listing(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): path.read_text(encoding="utf-8")
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


class TestLoadLayouts:
    def test_modern_single_template(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.jinja": DEFAULT})
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_modern_named_templates(self, tmp_path: Path) -> None:
        write(
            tmp_path,
            {
                "chat_template.jinja": DEFAULT,
                "additional_chat_templates/tool_use.jinja": TOOL_USE,
                "additional_chat_templates/rag.jinja": RAG,
            },
        )
        assert load_chat_templates(tmp_path) == {"default": DEFAULT, "tool_use": TOOL_USE, "rag": RAG}

    def test_named_templates_without_default(self, tmp_path: Path) -> None:
        write(tmp_path, {"additional_chat_templates/tool_use.jinja": TOOL_USE})
        assert load_chat_templates(tmp_path) == {"tool_use": TOOL_USE}

    def test_legacy_tokenizer_config_string(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": DEFAULT, "eos_token": "</s>"}})
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_legacy_tokenizer_config_named_list(self, tmp_path: Path) -> None:
        config = {
            "chat_template": [
                {"name": "default", "template": DEFAULT},
                {"name": "tool_use", "template": TOOL_USE},
            ]
        }
        write(tmp_path, {"tokenizer_config.json": config})
        assert load_chat_templates(tmp_path) == {"default": DEFAULT, "tool_use": TOOL_USE}

    def test_legacy_processor_file(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.json": {"chat_template": DEFAULT}, "processor_config.json": {}})
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_processor_config_key(self, tmp_path: Path) -> None:
        # the oldest processor layout (the reference's ProcessorMixin still reads it)
        write(tmp_path, {"processor_config.json": {"chat_template": DEFAULT, "processor_class": "X"}})
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_processor_config_key_is_the_last_resort(self, tmp_path: Path) -> None:
        write(tmp_path, {"processor_config.json": {"chat_template": RAG},
                         "tokenizer_config.json": {"chat_template": TOOL_USE}})
        assert load_chat_templates(tmp_path) == TOOL_USE
        write(tmp_path, {"chat_template.json": {"chat_template": DEFAULT}})
        assert load_chat_templates(tmp_path) == DEFAULT
        (tmp_path / "chat_template.json").unlink()
        (tmp_path / "tokenizer_config.json").unlink()
        write(tmp_path, {"chat_template.jinja": DEFAULT})
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_processor_config_key_of_the_wrong_shape(self, tmp_path: Path) -> None:
        write(tmp_path, {"processor_config.json": {"chat_template": 3}})
        with pytest.raises(ModelStorageError, match=r"processor_config.json: 'chat_template' must be a str"):
            load_chat_templates(tmp_path)

    def test_real_corpus_template_keeps_its_bytes(self, tmp_path: Path) -> None:
        text = corpus_path("chat_templates", "Qwen--Qwen3-0.6B.jinja").read_text(encoding="utf-8")
        write(tmp_path, {"chat_template.jinja": text})
        assert load_chat_templates(tmp_path) == text

    def test_jinja_files_are_read_with_universal_newlines(self, tmp_path: Path) -> None:
        # as the reference reads them (open(..., encoding="utf-8"))
        write(tmp_path, {"chat_template.jinja": "{{ a }}\r\n{{ b }}\r"})
        assert load_chat_templates(tmp_path) == "{{ a }}\n{{ b }}\n"

    def test_non_jinja_files_and_folders_in_the_named_folder_are_ignored(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.jinja": DEFAULT, "additional_chat_templates/README.md": "notes"})
        (tmp_path / "additional_chat_templates" / "folder.jinja").mkdir()
        assert load_chat_templates(tmp_path) == DEFAULT


class TestPrecedence:
    def test_jinja_file_overrides_the_config_default(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": "old"}, "chat_template.jinja": DEFAULT})
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_named_files_merge_with_the_config_string(self, tmp_path: Path) -> None:
        # reference: the config's template is dropped as soon as any .jinja file exists
        write(
            tmp_path,
            {
                "tokenizer_config.json": {"chat_template": DEFAULT},
                "additional_chat_templates/tool_use.jinja": TOOL_USE,
            },
        )
        assert load_chat_templates(tmp_path) == {"default": DEFAULT, "tool_use": TOOL_USE}

    def test_named_files_override_config_names_and_keep_the_others(self, tmp_path: Path) -> None:
        config = {"chat_template": [{"name": "default", "template": "old"}, {"name": "rag", "template": RAG}]}
        write(
            tmp_path,
            {
                "tokenizer_config.json": config,
                "chat_template.jinja": DEFAULT,
                "additional_chat_templates/rag.jinja": "new rag",
            },
        )
        assert load_chat_templates(tmp_path) == {"default": DEFAULT, "rag": "new rag"}

    def test_processor_file_replaces_the_tokenizer_config(self, tmp_path: Path) -> None:
        write(
            tmp_path,
            {
                "tokenizer_config.json": {"chat_template": "tokenizer's"},
                "chat_template.json": {"chat_template": "processor's"},
            },
        )
        assert load_chat_templates(tmp_path) == "processor's"

    @pytest.mark.parametrize(
        "extra",
        [{"chat_template.jinja": DEFAULT}, {"additional_chat_templates/tool_use.jinja": TOOL_USE}],
        ids=["default-jinja", "named-jinja"],
    )
    def test_processor_file_with_jinja_files_is_a_conflict(
        self, tmp_path: Path, extra: dict[str, str]
    ) -> None:
        write(tmp_path, {"chat_template.json": {"chat_template": DEFAULT}, **extra})
        with pytest.raises(ModelStorageError, match="conflicting files") as caught:
            load_chat_templates(tmp_path)
        assert caught.value.path == str(tmp_path / "chat_template.json")


class TestLoadErrors:
    def test_no_template(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"eos_token": "</s>"}})
        with pytest.raises(ChatTemplateNotFoundError, match="no chat template found"):
            load_chat_templates(tmp_path)

    def test_null_chat_template_is_no_template(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": None}})
        with pytest.raises(ChatTemplateNotFoundError):
            load_chat_templates(tmp_path)

    def test_missing_directory(self, tmp_path: Path) -> None:
        with pytest.raises(ModelStorageError, match="not a model directory"):
            load_chat_templates(tmp_path / "nope")

    def test_a_file_is_not_a_directory(self, tmp_path: Path) -> None:
        file = write(tmp_path, {"chat_template.jinja": DEFAULT}) / "chat_template.jinja"
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(file)
        assert str(caught.value) == (
            f"{file}: not a model directory (it is a file; pass the directory holding it)"
        )

    def test_invalid_json(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": '{"chat_template": '})
        with pytest.raises(ModelStorageError, match=r"tokenizer_config.json: invalid JSON \(line 1, column"):
            load_chat_templates(tmp_path)

    @pytest.mark.parametrize("name", ["tokenizer_config.json", "chat_template.json"])
    def test_a_json_file_that_is_not_an_object(self, tmp_path: Path, name: str) -> None:
        """Once ignored: a list here made the directory look as if it had no chat template."""
        write(tmp_path, {name: '[{"name": "default", "template": "hi"}]'})
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == f"{tmp_path / name}: expected a JSON object, got a list"

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            (3, "must be a string or a list"),
            ([{"name": "default"}], r"chat_template\[0\] must be an object"),
            (["x"], r"chat_template\[0\] must be an object"),
        ],
        ids=["number", "entry-without-template", "entry-not-an-object"],
    )
    def test_malformed_chat_template_value(self, tmp_path: Path, value: Any, message: str) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": value}})
        with pytest.raises(ModelStorageError, match=message):
            load_chat_templates(tmp_path)

    def test_template_that_is_not_utf8(self, tmp_path: Path) -> None:
        (tmp_path / "chat_template.jinja").write_bytes(b"\xff\xfe{{ x }}")
        with pytest.raises(ModelStorageError, match="not UTF-8 text"):
            load_chat_templates(tmp_path)

    def test_a_template_link_to_a_deleted_blob_is_no_missing_file(self, tmp_path: Path) -> None:
        """A Hub cache whose blob was deleted: the legacy template of the config rendered instead."""
        write(tmp_path, {"tokenizer_config.json": {"chat_template": "LEGACY"}})
        (tmp_path / "chat_template.jinja").symlink_to("../../blobs/9f8e7d")
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'chat_template.jinja'}: a symbolic link to "
                                     "../../blobs/9f8e7d, which does not exist")

    def test_templates_larger_than_the_total_bound(self, tmp_path: Path) -> None:
        """QA: 3,000 sparse additional_chat_templates/*.jinja files just under MAX_TEMPLATE_BYTES each
        (12 GB to read, nothing on disk) made from_pretrained die with a bare MemoryError after 30 s."""
        from chatcodec.model import storage

        assert storage.MAX_TEMPLATES_TOTAL_BYTES == 16 * 1024 * 1024
        write(tmp_path, {"chat_template.jinja": "{{ messages }}"})  # 14 bytes
        (tmp_path / "additional_chat_templates").mkdir()
        for index in range(4):
            with open(tmp_path / "additional_chat_templates" / f"t{index}.jinja", "wb") as handle:
                handle.truncate(4 * 1024 * 1024)  # sparse: nothing is written
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path}: 5 chat template files of 16,777,230 bytes in all, more than "
            "MAX_TEMPLATES_TOTAL_BYTES (16,777,216) allows; real models hold a few templates of a few dozen "
            "kilobytes (raise "
            "chatcodec.model.storage.MAX_TEMPLATES_TOTAL_BYTES for a trusted directory)")
        assert caught.value.path == str(tmp_path)
        (tmp_path / "chat_template.jinja").unlink()  # 16 MiB exactly: read
        assert sorted(load_chat_templates(tmp_path)) == ["t0", "t1", "t2", "t3"]

    def test_a_template_larger_than_the_bound(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """QA: a 55 MB chat_template.jinja took two minutes and 1.9 GB in from_pretrained."""
        from chatcodec.model import storage

        assert storage.MAX_TEMPLATE_BYTES == 4 * 1024 * 1024
        monkeypatch.setattr(storage, "MAX_TEMPLATE_BYTES", 10)
        hint = ("more than MAX_TEMPLATE_BYTES (10) allows; real templates are a few dozen kilobytes (raise "
                "chatcodec.model.storage.MAX_TEMPLATE_BYTES for a trusted one)")
        write(tmp_path, {"chat_template.jinja": "{{ 'é' }}xxxx"})  # 14 bytes, 13 characters
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == f"{tmp_path / 'chat_template.jinja'}: a chat template of 14 bytes, {hint}"
        (tmp_path / "chat_template.jinja").unlink()
        write(tmp_path, {"tokenizer_config.json": {"chat_template": [{"name": "rag", "template": "x" * 11}]}})
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'tokenizer_config.json'}: chat_template[0]: a chat "
                                     f"template of 11 characters, {hint}")
        write(tmp_path, {"tokenizer_config.json": {"chat_template": "x" * 10}})
        assert load_chat_templates(tmp_path) == "x" * 10

    def test_a_template_path_that_is_a_directory(self, tmp_path: Path) -> None:
        (tmp_path / "chat_template.jinja").mkdir()  # was: "no chat template found (looked for ..."
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == f"{tmp_path / 'chat_template.jinja'}: expected a file, found a directory"

    def test_a_named_template_in_a_link_loop(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.jinja": DEFAULT})
        (tmp_path / "additional_chat_templates").mkdir()
        (tmp_path / "additional_chat_templates" / "rag.jinja").symlink_to("rag.jinja")
        with pytest.raises(ModelStorageError) as caught:
            load_chat_templates(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'additional_chat_templates' / 'rag.jinja'}: cannot be "
                                     "read: Too many levels of symbolic links")


class TestSave:
    def test_single_template(self, tmp_path: Path) -> None:
        changes = save_chat_templates(DEFAULT, tmp_path)
        assert listing(tmp_path) == {"chat_template.jinja": DEFAULT}
        assert [(c.action, c.path) for c in changes] == [("write", "chat_template.jinja")]

    def test_named_templates(self, tmp_path: Path) -> None:
        save_chat_templates({"default": DEFAULT, "tool_use": TOOL_USE}, tmp_path)
        assert listing(tmp_path) == {
            "chat_template.jinja": DEFAULT,
            "additional_chat_templates/tool_use.jinja": TOOL_USE,
        }

    def test_bytes_are_written_exactly(self, tmp_path: Path) -> None:
        save_chat_templates("a\r\nb ✓", tmp_path)
        assert (tmp_path / "chat_template.jinja").read_bytes() == "a\r\nb ✓".encode()

    def test_round_trip(self, tmp_path: Path) -> None:
        templates = {"default": DEFAULT, "tool_use": TOOL_USE, "rag": RAG}
        save_chat_templates(templates, tmp_path)
        assert load_chat_templates(tmp_path) == templates

    def test_saving_again_changes_nothing(self, tmp_path: Path) -> None:
        save_chat_templates({"default": DEFAULT, "tool_use": TOOL_USE}, tmp_path)
        assert save_chat_templates({"default": DEFAULT, "tool_use": TOOL_USE}, tmp_path) == []

    def test_removes_the_key_from_tokenizer_config_and_keeps_other_keys(self, tmp_path: Path) -> None:
        write(
            tmp_path,
            {
                "tokenizer_config.json": {
                    "eos_token": "</s>",
                    "chat_template": "old",
                    "response_template": {"x": 1},
                }
            },
        )
        save_chat_templates(DEFAULT, tmp_path)
        config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert config == {"eos_token": "</s>", "response_template": {"x": 1}}
        assert list(config) == ["eos_token", "response_template"]

    def test_templates_no_longer_given_are_removed(self, tmp_path: Path) -> None:
        save_chat_templates({"default": DEFAULT, "tool_use": TOOL_USE, "rag": RAG}, tmp_path)
        changes = save_chat_templates({"tool_use": TOOL_USE}, tmp_path)
        assert listing(tmp_path) == {"additional_chat_templates/tool_use.jinja": TOOL_USE}
        assert sorted((c.action, c.path) for c in changes) == [
            ("delete", "additional_chat_templates/rag.jinja"),
            ("delete", "chat_template.jinja"),
        ]
        assert load_chat_templates(tmp_path) == {"tool_use": TOOL_USE}

    def test_empty_named_folder_is_removed(self, tmp_path: Path) -> None:
        save_chat_templates({"default": DEFAULT, "rag": RAG}, tmp_path)
        save_chat_templates(DEFAULT, tmp_path)
        assert not (tmp_path / "additional_chat_templates").exists()

    def test_creates_the_directory(self, tmp_path: Path) -> None:
        save_chat_templates(DEFAULT, tmp_path / "new" / "model")
        assert load_chat_templates(tmp_path / "new" / "model") == DEFAULT

    def test_change_descriptions(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": "old"}})
        changes = plan_chat_template_save("new", tmp_path)
        assert [str(change) for change in changes] == [
            "write chat_template.jinja: new chat template (3 characters)",
            "update tokenizer_config.json: removed key 'chat_template' (now in .jinja files)",
        ]
        assert listing(tmp_path) == {"tokenizer_config.json": json.dumps({"chat_template": "old"}, indent=2)}


class TestUnsafeNames:
    @pytest.mark.parametrize(
        "name",
        ["../evil", "a/b", "..", ".", "", "x\\y", "nul\0", "a\nb", "tab\tx", "del\x7f", "line\u2028sep",
         "a" * 300],
        ids=["dotdot-slash", "slash", "dotdot", "dot", "empty", "backslash", "nul", "newline", "tab", "del",
             "line-separator", "too-long"],
    )
    def test_rejected_before_anything_is_written(self, tmp_path: Path, name: str) -> None:
        model = tmp_path / "model"
        with pytest.raises(ModelStorageError, match="chat template name"):
            save_chat_templates({"default": DEFAULT, name: "x"}, model)
        assert not model.exists()
        assert listing(tmp_path) == {}

    def test_non_string_name_and_template(self, tmp_path: Path) -> None:
        with pytest.raises(ModelStorageError, match="invalid"):
            save_chat_templates({3: "x"}, tmp_path)  # type: ignore[dict-item]
        with pytest.raises(ModelStorageError, match="expected the template text"):
            save_chat_templates({"default": 3}, tmp_path)  # type: ignore[dict-item]

    def test_check_template_name_accepts_ordinary_names(self, tmp_path: Path) -> None:
        assert check_template_name("tool_use", tmp_path) == "tool_use"
        assert check_template_name("rag-v2.1", tmp_path) == "rag-v2.1"
        assert check_template_name("résumé outil", tmp_path) == "résumé outil"
        assert check_template_name("a" * 249, tmp_path) == "a" * 249  # 255 bytes with ".jinja"

    def test_names_with_control_characters_say_so(self) -> None:
        with pytest.raises(ModelStorageError) as caught:
            check_template_name("a\nb")
        assert str(caught.value) == (
            "chat template name 'a\\nb': invalid; a name becomes the file name additional_chat_templates/"
            "<name>.jinja and must not be empty, contain path separators or control characters, or be "
            "longer than 249 bytes"
        )

    def test_a_legacy_name_with_a_newline_cannot_be_migrated(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": [{"name": "a\nb", "template": "t"}]}})
        before = listing(tmp_path)
        with pytest.raises(ModelStorageError, match=r"chat template name 'a\\nb'"):
            migrate_chat_templates(tmp_path, dry_run=True)
        assert listing(tmp_path) == before

    def test_legacy_list_with_an_escaping_name_cannot_be_migrated(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": [{"name": "../x", "template": "t"}]}})
        with pytest.raises(ModelStorageError, match=r"chat template name '\.\./x'"):
            migrate_chat_templates(tmp_path)
        assert not (tmp_path.parent / "x.jinja").exists()


class TestWritesAreAllOrNothing:
    def test_a_file_in_the_way_of_the_named_folder(self, tmp_path: Path) -> None:
        config = {"chat_template": [{"name": "default", "template": DEFAULT},
                                    {"name": "rag", "template": RAG}]}
        write(tmp_path, {"tokenizer_config.json": config, "additional_chat_templates": "not a folder"})
        before = listing(tmp_path)
        with pytest.raises(ModelStorageError) as caught:
            migrate_chat_templates(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / 'additional_chat_templates'}: is not a directory, so the named chat templates "
            "cannot be written in it. Move it away and try again; nothing was written."
        )
        assert caught.value.path == str(tmp_path / "additional_chat_templates")
        assert listing(tmp_path) == before

    def test_a_directory_in_the_way_of_the_default_file(self, tmp_path: Path) -> None:
        (tmp_path / "chat_template.jinja").mkdir()
        write(tmp_path, {"tokenizer_config.json": {"chat_template": DEFAULT, "eos_token": "x"}})
        before = listing(tmp_path)
        with pytest.raises(ModelStorageError) as caught:
            migrate_chat_templates(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / 'chat_template.jinja'}: is a directory, so the chat template cannot be written "
            "there. Move it away and try again; nothing was written."
        )
        assert listing(tmp_path) == before

    def test_an_os_error_while_writing_names_the_file_and_leaves_the_directory_as_it_was(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": DEFAULT, "eos_token": "x"}})
        before = listing(tmp_path)
        real_open = open

        def failing_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if "w" in mode and "tokenizer_config" in str(file):
                raise OSError(28, "No space left on device")
            return real_open(file, mode, *args, **kwargs)

        monkeypatch.setattr("builtins.open", failing_open)
        with pytest.raises(ModelStorageError) as caught:
            migrate_chat_templates(tmp_path)
        monkeypatch.undo()
        assert str(caught.value).startswith(f"{tmp_path / 'tokenizer_config.json'}: cannot write: ")
        assert str(caught.value).endswith("No space left on device; nothing was written.")
        assert listing(tmp_path) == before


class TestMigrate:
    def test_named_legacy_list(self, tmp_path: Path) -> None:
        config = {
            "eos_token": "</s>",
            "chat_template": [
                {"name": "default", "template": DEFAULT},
                {"name": "tool_use", "template": TOOL_USE},
            ],
        }
        write(tmp_path, {"tokenizer_config.json": config})
        changes = migrate_chat_templates(tmp_path)
        assert [(c.action, c.path) for c in changes] == [
            ("write", "chat_template.jinja"),
            ("write", "additional_chat_templates/tool_use.jinja"),
            ("update", "tokenizer_config.json"),
        ]
        assert listing(tmp_path) == {
            "additional_chat_templates/tool_use.jinja": TOOL_USE,
            "chat_template.jinja": DEFAULT,
            "tokenizer_config.json": '{\n  "eos_token": "</s>"\n}',
        }
        assert load_chat_templates(tmp_path) == {"default": DEFAULT, "tool_use": TOOL_USE}

    def test_processor_directory(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.json": {"chat_template": DEFAULT}, "processor_config.json": {"x": 1}})
        changes = migrate_chat_templates(tmp_path)
        assert [(c.action, c.path) for c in changes] == [
            ("write", "chat_template.jinja"),
            ("delete", "chat_template.json"),
        ]
        assert listing(tmp_path) == {
            "chat_template.jinja": DEFAULT,
            "processor_config.json": '{\n  "x": 1\n}',
        }

    def test_processor_config_key_is_moved_to_the_modern_file(self, tmp_path: Path) -> None:
        write(tmp_path, {"processor_config.json": {"chat_template": DEFAULT, "x": 1}})
        changes = migrate_chat_templates(tmp_path)
        assert [(c.action, c.path) for c in changes] == [
            ("write", "chat_template.jinja"),
            ("update", "processor_config.json"),
        ]
        assert listing(tmp_path) == {
            "chat_template.jinja": DEFAULT,
            "processor_config.json": '{\n  "x": 1\n}',
        }

    def test_processor_file_with_other_keys_is_kept_without_the_template(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.json": {"chat_template": DEFAULT, "note": "kept"}})
        migrate_chat_templates(tmp_path)
        assert json.loads((tmp_path / "chat_template.json").read_text(encoding="utf-8")) == {"note": "kept"}
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_dry_run_changes_nothing(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": DEFAULT}})
        before = listing(tmp_path)
        changes = migrate_chat_templates(tmp_path, dry_run=True)
        assert [(c.action, c.path) for c in changes] == [
            ("write", "chat_template.jinja"),
            ("update", "tokenizer_config.json"),
        ]
        assert listing(tmp_path) == before

    def test_modern_directory_needs_nothing(self, tmp_path: Path) -> None:
        write(tmp_path, {"chat_template.jinja": DEFAULT, "additional_chat_templates/rag.jinja": RAG})
        assert migrate_chat_templates(tmp_path) == []

    def test_mixed_directory_with_the_same_default_drops_the_copy(self, tmp_path: Path) -> None:
        write(tmp_path, {"tokenizer_config.json": {"chat_template": DEFAULT}, "chat_template.jinja": DEFAULT})
        changes = migrate_chat_templates(tmp_path)
        assert changes == [
            StorageChange(
                "update",
                "tokenizer_config.json",
                "removed key 'chat_template' (now in .jinja files)",
                "{}",
            )
        ]
        assert load_chat_templates(tmp_path) == DEFAULT

    def test_a_legacy_template_that_differs_from_its_jinja_file_is_never_lost(self, tmp_path: Path) -> None:
        config = {"chat_template": "B {{ messages[0].content }}", "eos_token": "x"}
        write(tmp_path, {"tokenizer_config.json": config,
                         "chat_template.jinja": "A {{ messages[0].content }}"})
        before = listing(tmp_path)
        with pytest.raises(ModelStorageError) as caught:
            migrate_chat_templates(tmp_path, dry_run=True)
        assert str(caught.value) == (
            f"{tmp_path}: the 'default' chat template of tokenizer_config.json differs from "
            "chat_template.jinja, so migrating would lose one of them. Keep the one you want (delete the "
            "other, or save it under another name in additional_chat_templates/) and migrate again."
        )
        with pytest.raises(ModelStorageError):
            migrate_chat_templates(tmp_path)
        assert listing(tmp_path) == before

    def test_a_differing_named_template_is_never_lost(self, tmp_path: Path) -> None:
        config = {"chat_template": [{"name": "default", "template": DEFAULT},
                                    {"name": "rag", "template": "old"}]}
        write(tmp_path, {"tokenizer_config.json": config, "additional_chat_templates/rag.jinja": RAG})
        with pytest.raises(ModelStorageError, match=r"the 'rag' chat template of tokenizer_config.json "
                                                    r"differs from additional_chat_templates/rag.jinja"):
            migrate_chat_templates(tmp_path)

    def test_unchanged_keys_keep_their_exact_text(self, tmp_path: Path) -> None:
        text = '{"big": 1e400, "chat_template": "B",\r\n "eos_token": "x", "n": 1.50}'
        write(tmp_path, {"tokenizer_config.json": text})
        migrate_chat_templates(tmp_path)
        assert (tmp_path / "tokenizer_config.json").read_bytes() == (
            b'{"big": 1e400,\r\n "eos_token": "x", "n": 1.50}'
        )

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ('{\n  "chat_template": "B",\n  "eos_token": "x"\n}\n', '{\n  "eos_token": "x"\n}\n'),
            ('{\n  "eos_token": "x",\n  "chat_template": "B"\n}\n', '{\n  "eos_token": "x"\n}\n'),
            ('{ "chat_template" : "B" }\n', "{}\n"),
            (
                '{"chat_template": "A", "a": [1, {"chat_template": 2}], "chat_template": "B"}',
                '{"a": [1, {"chat_template": 2}]}',
            ),
        ],
        ids=["first", "last", "only", "duplicate-and-nested"],
    )
    def test_only_the_chat_template_member_is_removed(self, tmp_path: Path, text: str, expected: str) -> None:
        write(tmp_path, {"tokenizer_config.json": text})
        migrate_chat_templates(tmp_path)
        assert (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8") == expected
