"""Named special tokens as attributes of ``ChatCodec`` (``codec.eos_token``, ``codec.pad_token_id``).

As in transformers 5.24 (``PreTrainedTokenizerBase.__setattr__ / __getattr__``), the attributes
read and write ``special_tokens_map``, so everything that uses the special tokens (padding, the
template variables, the end of generation, saving) sees an assignment. The tokenizer is the small
byte-level BPE of ``helpers.chatml_tokenizer`` (``<|endoftext|>`` = 0, ``<|im_end|>`` = 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcodec.errors import TokenizerUnavailableError
from chatcodec.model.codec import ChatCodec
from tests.model.helpers import chatml_tokenizer, make_model_dir

CHAT = [{"role": "user", "content": "Hello there"}]
LONGER = [{"role": "user", "content": "Hello there, how are you today?"}]


@pytest.fixture
def codec(tmp_path: Path) -> ChatCodec:
    directory = make_model_dir(tmp_path, chat_template="{{ messages[0].content }}{{ eos_token }}",
                               special_tokens={"eos_token": "<|im_end|>"}, tokenizer=chatml_tokenizer())
    return ChatCodec.from_pretrained(directory)


def test_assigning_a_token_updates_the_special_tokens_map(codec: ChatCodec) -> None:
    assert codec.pad_token is None
    codec.pad_token = codec.eos_token
    assert codec.special_tokens_map == {"eos_token": "<|im_end|>", "pad_token": "<|im_end|>"}
    assert codec.pad_token == "<|im_end|>"
    assert "pad_token" not in vars(codec)
    batch = codec.apply_chat_template([CHAT, LONGER], padding=True)
    short, long = batch["input_ids"]
    assert len(short) == len(long) > len(codec.encode("Hello there<|im_end|>"))
    assert short[-1] == 2
    assert batch["attention_mask"][0][-1] == 0


def test_the_template_and_the_end_of_generation_see_the_new_token(codec: ChatCodec) -> None:
    codec.eos_token = "<|endoftext|>"
    assert codec.apply_chat_template(CHAT, tokenize=False) == "Hello there<|endoftext|>"
    assert codec.eos_token_ids == [0]


def test_none_removes_a_token(codec: ChatCodec) -> None:
    codec.eos_token = None
    assert codec.special_tokens_map == {}
    assert codec.eos_token is None
    assert codec.eos_token_ids == []


def test_token_ids(codec: ChatCodec) -> None:
    assert codec.eos_token_id == 2
    assert codec.pad_token_id is None
    codec.pad_token_id = 0
    assert codec.special_tokens_map["pad_token"] == "<|endoftext|>"
    assert codec.pad_token_id == 0
    codec.pad_token_id = None
    assert "pad_token" not in codec.special_tokens_map
    with pytest.raises(ValueError, match=r"^pad_token_id: 999 is not a token id of this tokenizer"):
        codec.pad_token_id = 999
    with pytest.raises(ValueError, match=r"^pad_token_id: expected a token id, got list$"):
        codec.pad_token_id = [1, 2]


def test_a_token_must_be_a_string(codec: ChatCodec) -> None:
    # transformers 5.24 raises ValueError("Cannot set a non-string value as the pad_token").
    with pytest.raises(ValueError) as caught:
        codec.pad_token = 5
    assert str(caught.value) == (
        "pad_token: cannot set a non-string value (got int); pass the token's text, or set pad_token_id "
        "to an id")
    assert "pad_token" not in codec.special_tokens_map


def test_ids_need_a_tokenizer() -> None:
    codec = ChatCodec("x", special_tokens={"eos_token": "</s>"})
    assert codec.eos_token == "</s>"
    with pytest.raises(TokenizerUnavailableError):
        _ = codec.eos_token_id
    with pytest.raises(TokenizerUnavailableError):
        codec.eos_token_id = 3
    codec.bos_token = "<s>"
    assert codec.special_tokens_map == {"eos_token": "</s>", "bos_token": "<s>"}


def test_other_attributes_are_ordinary(codec: ChatCodec) -> None:
    codec.name_or_path = "elsewhere"
    assert codec.name_or_path == "elsewhere"
    with pytest.raises(AttributeError):
        _ = codec.no_such_attribute
