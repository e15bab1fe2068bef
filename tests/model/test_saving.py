"""``ChatCodec.save_pretrained``: the codec's current state is what gets written.

As in transformers 5.24 (``save_pretrained`` writes the tokenizer's current configuration), edits
made after loading (special tokens, templates, the response template) are saved, also into a
directory that already has a ``tokenizer_config.json``: a codec loaded from a model directory
writes its own configuration; a codec without one (a bundled profile, the constructor) adds its
special tokens and templates to the configuration already there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatcodec.errors import ModelStorageError
from chatcodec.model.codec import ChatCodec
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.model.helpers import chatml_tokenizer, make_model_dir, sentencepiece_tokenizer, write_json

EOS_OBJECT = {"__type": "AddedToken", "content": "<|im_end|>", "special": True}


def config_of(directory: Path) -> Any:
    return json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))


def chatml_dir(path: Path, **config: Any) -> Path:
    return make_model_dir(path, chat_template="{{ messages }}", response_template=QWEN_RESPONSE_TEMPLATE,
                          special_tokens={"eos_token": EOS_OBJECT, "pad_token": "<|endoftext|>"},
                          tokenizer=chatml_tokenizer(), extra_config=config)


class TestSpecialTokenEdits:
    def test_are_saved_in_place(self, tmp_path: Path) -> None:
        directory = chatml_dir(tmp_path / "model", zz=[1])
        codec = ChatCodec.from_pretrained(directory)
        codec.special_tokens_map["eos_token"] = "<|EOT|>"
        codec.bos_token = "<|im_start|>"
        codec.pad_token = None
        written = codec.save_pretrained(directory)
        assert len(written) == len(set(written))
        assert config_of(directory) == {
            "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|EOT|>", "zz": [1],
            "response_template": QWEN_RESPONSE_TEMPLATE, "bos_token": "<|im_start|>"}
        again = ChatCodec.from_pretrained(directory)
        assert again.special_tokens_map == {"bos_token": "<|im_start|>", "eos_token": "<|EOT|>"}

    def test_unchanged_tokens_keep_their_stored_form(self, tmp_path: Path) -> None:
        directory = chatml_dir(tmp_path / "model")
        ChatCodec.from_pretrained(directory).save_pretrained(directory)
        assert config_of(directory)["eos_token"] == EOS_OBJECT

    def test_the_legacy_special_tokens_map_follows(self, tmp_path: Path) -> None:
        # Without added_tokens_decoder in the config, special_tokens_map.json overrides it on load
        # (as in the reference), so it must say the same.
        directory = chatml_dir(tmp_path / "model")
        write_json(directory / "special_tokens_map.json", {"eos_token": "<|im_end|>", "unk_token": "<unk>"})
        codec = ChatCodec.from_pretrained(directory)
        codec.eos_token = "<|endoftext|>"
        codec.unk_token = None
        written = codec.save_pretrained(directory)
        assert str(directory / "special_tokens_map.json") in written
        assert json.loads((directory / "special_tokens_map.json").read_text(encoding="utf-8")) == {
            "eos_token": "<|endoftext|>"}
        assert ChatCodec.from_pretrained(directory).special_tokens_map == {
            "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}


class TestIntoAnotherModelsDirectory:
    def test_this_models_configuration_and_tokenizer_are_written(self, tmp_path: Path) -> None:
        other = make_model_dir(tmp_path / "other", chat_template="other", tokenizer=sentencepiece_tokenizer(),
                               special_tokens={"eos_token": "</s>", "bos_token": "<s>"},
                               extra_config={"model_max_length": 7, "other_key": True})
        codec = ChatCodec.from_pretrained(chatml_dir(tmp_path / "model"))
        codec.save_pretrained(other)
        assert config_of(other) == {
            "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": EOS_OBJECT,
            "pad_token": "<|endoftext|>", "response_template": QWEN_RESPONSE_TEMPLATE}
        copy = ChatCodec.from_pretrained(other)
        assert copy.eos_token == "<|im_end|>"
        assert copy.chat_template == "{{ messages }}"
        assert copy.encode("<|im_end|>") == [2]  # this model's tokenizer.json, not the other one's

    def test_a_profile_keeps_the_directorys_tokenizer(self, tmp_path: Path) -> None:
        other = make_model_dir(tmp_path / "other", tokenizer=chatml_tokenizer(),
                               special_tokens={"eos_token": "<|endoftext|>"}, extra_config={"zz": 1})
        tokenizer_bytes = (other / "tokenizer.json").read_bytes()
        with pytest.warns(UserWarning, match="uses chatcodec extensions, so it needs chatcodec"):
            ChatCodec.from_pretrained("qwen3").save_pretrained(other)
        assert (other / "tokenizer.json").read_bytes() == tokenizer_bytes
        copy = ChatCodec.from_pretrained(other)
        assert (copy.eos_token, copy.response_template_source) == ("<|im_end|>", "tokenizer_config.json")
        assert config_of(other)["zz"] == 1


def test_nothing_is_created_when_a_template_name_is_invalid(tmp_path: Path) -> None:
    codec = ChatCodec({"default": "D", "../evil": "E"})
    with pytest.raises(ModelStorageError):
        codec.save_pretrained(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_unreadable_destination_config_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ModelStorageError, match=r"tokenizer_config.json: invalid JSON"):
        ChatCodec("x").save_pretrained(tmp_path)
    assert (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8") == "{broken"
    assert not (tmp_path / "chat_template.jinja").exists()


def test_saving_a_response_template_that_needs_chatcodec_says_so(tmp_path: Path) -> None:
    template = {"start_anchor": "A", "fields": {
        "tool_calls": {"open": "<c>", "close": "</c>", "content": "x-json-calls"}, "content": {}}}
    codec = ChatCodec("x", response_template=template)
    with pytest.warns(UserWarning, match=r"tokenizer_config.json: the response_template written uses "
                      r"chatcodec extensions.*fields\.tool_calls\.content: content parser 'x-json-calls'"):
        codec.save_pretrained(tmp_path)
    assert config_of(tmp_path)["response_template"] == template


def test_saving_a_standard_response_template_does_not_warn(tmp_path: Path) -> None:
    import warnings

    codec = ChatCodec("x", response_template=QWEN_RESPONSE_TEMPLATE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codec.save_pretrained(tmp_path)
