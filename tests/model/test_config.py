"""tokenizer_config.json / special_tokens_map.json / generation_config.json reading and writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chatcodec.errors import ModelStorageError
from chatcodec.model import config as config_module
from chatcodec.model.config import (
    AddedToken,
    read_tokenizer_config,
    token_content,
    write_tokenizer_config,
)
from tests.model.helpers import write_json

DEEPSEEK_EOS = {
    "__type": "AddedToken", "content": "<｜end▁of▁sentence｜>", "lstrip": False,
    "normalized": True, "rstrip": False, "single_word": False,
}


def test_special_tokens_as_strings_objects_and_null(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", {
        "eos_token": DEEPSEEK_EOS,
        "bos_token": {"content": "<｜begin▁of▁sentence｜>"},
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "image_token": "<image>",
    })
    config = read_tokenizer_config(tmp_path)
    assert config.special_tokens == {
        "bos_token": "<｜begin▁of▁sentence｜>",
        "eos_token": "<｜end▁of▁sentence｜>",
        "pad_token": "<|endoftext|>",
        "image_token": "<image>",  # a model-specific named token, as in the reference
    }
    assert list(config.special_tokens) == ["bos_token", "eos_token", "pad_token", "image_token"]
    assert config.files == ["tokenizer_config.json"]


def test_empty_directory_reads_as_empty_config(tmp_path: Path) -> None:
    config = read_tokenizer_config(tmp_path)
    assert (config.data, config.special_tokens, config.added_tokens, config.files) == ({}, {}, {}, [])
    assert config.response_template is None
    assert config.padding_side == "right"
    assert config.truncation_side == "right"
    assert config.model_max_length is None


def test_added_tokens_decoder(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", {"added_tokens_decoder": {
        "151643": {"content": "<|endoftext|>", "special": True, "lstrip": False},
        "151657": {"content": "<tool_call>", "special": False},
    }})
    config = read_tokenizer_config(tmp_path)
    assert config.added_tokens == {
        151643: AddedToken(151643, "<|endoftext|>", True),
        151657: AddedToken(151657, "<tool_call>", False),
    }


def test_added_tokens_decoder_with_a_bad_id_names_it(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", {"added_tokens_decoder": {"x1": {"content": "a"}}})
    with pytest.raises(ModelStorageError, match=r"tokenizer_config.json: added_tokens_decoder: 'x1' is not"):
        read_tokenizer_config(tmp_path)


def test_legacy_special_tokens_map_overrides_the_config(tmp_path: Path) -> None:
    # transformers 5.24 reads special_tokens_map.json only without added_tokens_decoder, and then
    # its values win over tokenizer_config.json's
    write_json(tmp_path / "tokenizer_config.json", {"eos_token": "</s>", "bos_token": "<s>"})
    write_json(tmp_path / "special_tokens_map.json", {
        "eos_token": {"content": "<|im_end|>", "special": True},
        "additional_special_tokens": ["<|im_start|>", {"content": "<|im_end|>"}],
    })
    config = read_tokenizer_config(tmp_path)
    assert config.special_tokens == {"bos_token": "<s>", "eos_token": "<|im_end|>"}
    assert config.extra_special_tokens == ["<|im_start|>", "<|im_end|>"]
    assert config.files == ["tokenizer_config.json", "special_tokens_map.json"]


def test_special_tokens_map_is_ignored_when_the_config_has_added_tokens(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", {"eos_token": "</s>", "added_tokens_decoder": {}})
    write_json(tmp_path / "special_tokens_map.json", {"eos_token": "<|im_end|>"})
    config = read_tokenizer_config(tmp_path)
    assert config.special_tokens == {"eos_token": "</s>"}
    assert config.files == ["tokenizer_config.json"]


def test_additional_special_tokens_is_the_old_name_of_extra_special_tokens(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", {"additional_special_tokens": ["<a>", {"content": "<b>"}]})
    assert read_tokenizer_config(tmp_path).extra_special_tokens == ["<a>", "<b>"]


def test_response_template_and_chat_control_tokens(tmp_path: Path) -> None:
    template = {"start_anchor": "A:", "fields": {"content": {}}}
    write_json(tmp_path / "tokenizer_config.json", {
        "response_template": template, "chat_control_tokens": ["<tool_call>"],
        "padding_side": "left", "model_max_length": 4096,
    })
    config = read_tokenizer_config(tmp_path)
    assert config.response_template == template
    assert config.chat_control_tokens == ["<tool_call>"]
    assert config.padding_side == "left"
    assert config.model_max_length == 4096


@pytest.mark.parametrize(("config", "message"), [
    ({"response_template": "qwen3"},
     "tokenizer_config.json: response_template: expected a JSON object (a response template), got str"),
    ({"eos_token": 2},
     "tokenizer_config.json: eos_token: expected a token string or an object with a 'content' string, got 2"),
    ({"chat_control_tokens": "<a>"},
     "tokenizer_config.json: chat_control_tokens: expected a list of strings"),
    # transformers 5.24 refuses these too: "Padding side should be selected between 'right' and 'left',
    # current value: middle" (and the same for truncation_side).
    ({"padding_side": "middle"},
     "tokenizer_config.json: padding_side: expected 'right' or 'left', got 'middle'"),
    ({"padding_side": None}, "tokenizer_config.json: padding_side: expected 'right' or 'left', got None"),
    ({"truncation_side": "Left"},
     "tokenizer_config.json: truncation_side: expected 'right' or 'left', got 'Left'"),
])
def test_keys_of_the_wrong_shape_name_file_and_key(tmp_path: Path, config: dict[str, object],
                                                   message: str) -> None:
    write_json(tmp_path / "tokenizer_config.json", config)
    with pytest.raises(ModelStorageError) as caught:
        read_tokenizer_config(tmp_path)
    assert str(caught.value) == message


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text('{\n  "eos_token": "</s>",\n}\n', encoding="utf-8")
    with pytest.raises(ModelStorageError) as caught:
        read_tokenizer_config(tmp_path)
    # the text after the position is the json module's (it differs between Python versions)
    assert str(caught.value).startswith(
        f"{tmp_path / 'tokenizer_config.json'}: invalid JSON (line 3, column 1): "
    )
    assert caught.value.path == str(tmp_path / "tokenizer_config.json")


def test_not_an_object(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", ["eos_token"])
    with pytest.raises(ModelStorageError, match="expected a JSON object"):
        read_tokenizer_config(tmp_path)


@pytest.mark.parametrize(("generation_config", "eos_ids", "pad_id"), [
    ({"eos_token_id": 2, "pad_token_id": 0}, [2], 0),
    ({"eos_token_id": [128001, 128008, 128009]}, [128001, 128008, 128009], None),
    ({"bos_token_id": 1}, [], None),
])
def test_generation_config_end_of_sequence_ids(tmp_path: Path, generation_config: dict[str, object],
                                               eos_ids: list[int], pad_id: int | None) -> None:
    write_json(tmp_path / "generation_config.json", generation_config)
    config = read_tokenizer_config(tmp_path)
    assert (config.eos_token_ids, config.pad_token_id) == (eos_ids, pad_id)
    assert config.files == ["generation_config.json"]


def test_token_content_shapes() -> None:
    assert token_content("<s>", "x") == "<s>"
    assert token_content(None, "x") is None
    assert token_content({"content": "<s>", "special": True}, "x") == "<s>"
    with pytest.raises(ModelStorageError, match=r"^f: k: expected a token string"):
        token_content({"text": "<s>"}, "f: k")


def test_write_keeps_key_order_and_unicode(tmp_path: Path) -> None:
    write_tokenizer_config(tmp_path, {"z": 1, "eos_token": "<｜end▁of▁sentence｜>", "a": [1]})
    text = (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8")
    assert text == '{\n  "z": 1,\n  "eos_token": "<｜end▁of▁sentence｜>",\n  "a": [\n    1\n  ]\n}\n'
    assert json.loads(text) == {"z": 1, "eos_token": "<｜end▁of▁sentence｜>", "a": [1]}


EOS_SHAPE = "eos_token_id: expected a token id (an integer) or a list of them"


@pytest.mark.parametrize(("generation_config", "message"), [
    ({"eos_token_id": "</s>"}, f"{EOS_SHAPE}, got '</s>'"),
    ({"eos_token_id": [2, {"id": 3}]}, f"{EOS_SHAPE}, got [2, {{'id': 3}}]"),
    ({"eos_token_id": [2, True]}, f"{EOS_SHAPE}, got [2, True]"),
    ({"eos_token_id": 2, "pad_token_id": 0.5}, "pad_token_id: expected a token id (an integer), got 0.5"),
])
def test_generation_config_ids_of_the_wrong_shape_name_file_and_key(
        tmp_path: Path, generation_config: dict[str, object], message: str) -> None:
    # they were dropped silently: a model whose only end id was unreadable never ended its generation
    write_json(tmp_path / "generation_config.json", generation_config)
    with pytest.raises(ModelStorageError) as caught:
        read_tokenizer_config(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'generation_config.json'}: {message}"


@pytest.mark.parametrize(("generation_config", "eos_ids", "pad_id"), [
    ({"eos_token_id": None, "pad_token_id": None}, [], None),
    ({"eos_token_id": 2, "pad_token_id": -1}, [2], -1),  # old LLaMA configurations: "no padding"
])
def test_generation_config_ids_kept_as_written(tmp_path: Path, generation_config: dict[str, object],
                                               eos_ids: list[int], pad_id: int | None) -> None:
    write_json(tmp_path / "generation_config.json", generation_config)
    config = read_tokenizer_config(tmp_path)
    assert (config.eos_token_ids, config.pad_token_id) == (eos_ids, pad_id)


@pytest.mark.parametrize("name", ["tokenizer_config.json", "special_tokens_map.json",
                                  "generation_config.json"])
def test_json_nested_past_the_recursion_limit_names_the_file(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text('{"eos_token_id": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(ModelStorageError) as caught:
        read_tokenizer_config(tmp_path)
    assert str(caught.value) == f"{tmp_path / name}: invalid JSON: nested too deeply"
    assert caught.value.path == str(tmp_path / name)


class TestOversizedConfigurationFiles:
    """QA: a configuration file had no size limit; a sparse 6 GB ``tokenizer_config.json`` (a few bytes
    on disk) made ``from_pretrained`` read it whole and die with a bare ``MemoryError``."""

    def test_the_limit_is_32_mib(self) -> None:
        assert config_module.MAX_CONFIG_BYTES == 32 * 1024 * 1024

    @pytest.mark.parametrize("name", ["tokenizer_config.json", "special_tokens_map.json",
                                      "generation_config.json"])
    def test_a_file_one_byte_over_is_refused_naming_it(self, tmp_path: Path, name: str) -> None:
        with open(tmp_path / name, "wb") as handle:  # sparse: nothing is written
            handle.truncate(32 * 1024 * 1024 + 1)
        with pytest.raises(ModelStorageError) as caught:
            read_tokenizer_config(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / name}: larger than MAX_CONFIG_BYTES (33,554,432 bytes), more than a configuration "
            "file holds (raise chatcodec.model.config.MAX_CONFIG_BYTES for a trusted one)")
        assert caught.value.path == str(tmp_path / name)

    def test_the_limit_is_read_at_each_call(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp_path / "tokenizer_config.json").write_bytes(b'{"eos_token": "</s>"}')  # 21 bytes
        monkeypatch.setattr(config_module, "MAX_CONFIG_BYTES", 21)
        assert read_tokenizer_config(tmp_path).special_tokens == {"eos_token": "</s>"}
        monkeypatch.setattr(config_module, "MAX_CONFIG_BYTES", 20)
        with pytest.raises(ModelStorageError, match=r"larger than MAX_CONFIG_BYTES \(20 bytes\)"):
            read_tokenizer_config(tmp_path)

    def test_an_integer_too_long_to_convert_names_the_file(self, tmp_path: Path) -> None:
        """Was a bare ``ValueError`` from ``json.loads``."""
        (tmp_path / "tokenizer_config.json").write_text('{"model_max_length": ' + "9" * 5000 + "}",
                                                        encoding="utf-8")
        with pytest.raises(ModelStorageError) as caught:
            read_tokenizer_config(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / 'tokenizer_config.json'}: invalid JSON: Exceeds the limit (4300 digits) for "
            "integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase "
            "the limit")


class TestFilesThatAreThereButCannotBeRead:
    """The reference takes them for absent files (``os.path.isfile``); loading then went on without them."""

    def test_a_link_to_a_deleted_blob(self, tmp_path: Path) -> None:
        (tmp_path / "tokenizer_config.json").symlink_to("../../blobs/0a1b2c")
        with pytest.raises(ModelStorageError) as caught:
            read_tokenizer_config(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'tokenizer_config.json'}: a symbolic link to "
                                     "../../blobs/0a1b2c, which does not exist")

    def test_a_link_loop(self, tmp_path: Path) -> None:
        (tmp_path / "generation_config.json").symlink_to("generation_config.json")
        with pytest.raises(ModelStorageError) as caught:
            read_tokenizer_config(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / 'generation_config.json'}: cannot be read: Too many levels of symbolic links")

    def test_a_directory(self, tmp_path: Path) -> None:
        (tmp_path / "special_tokens_map.json").mkdir()
        with pytest.raises(ModelStorageError) as caught:
            read_tokenizer_config(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'special_tokens_map.json'}: expected a file, "
                                     "found a directory")

    def test_a_fifo_is_refused_without_being_opened(self, tmp_path: Path) -> None:
        os.mkfifo(tmp_path / "tokenizer_config.json")  # opening it would block until a writer came
        with pytest.raises(ModelStorageError) as caught:
            read_tokenizer_config(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'tokenizer_config.json'}: expected a file, found "
                                     "neither a file nor a directory (a FIFO, socket or device)")

    def test_a_link_to_a_file_is_read(self, tmp_path: Path) -> None:
        write_json(tmp_path / "blob", {"eos_token": "</s>"})
        (tmp_path / "tokenizer_config.json").symlink_to("blob")
        assert read_tokenizer_config(tmp_path).data == {"eos_token": "</s>"}
