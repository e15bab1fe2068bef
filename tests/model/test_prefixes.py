"""The prompt given to the model-level ``parse_response`` / ``get_response_parser`` as ``prefix=``:
padded batches of ids, the ``apply_chat_template`` output with its attention mask.

The model directory holds the real Qwen3 chat template, the small byte-level BPE of
``helpers.chatml_tokenizer`` and Qwen3's special tokens (``<|endoftext|>`` is the pad token).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from chatcodec.model.codec import ChatCodec
from tests.conftest import corpus_template
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.model.helpers import QWEN3_TEMPLATE, chatml_tokenizer, make_model_dir

HELLO = {"role": "assistant", "content": "Hello!"}
BATCH = [[{"role": "user", "content": "Hi"}], [{"role": "user", "content": "A longer question"}]]


def qwen3(path: Path, **config: Any) -> ChatCodec:
    directory = make_model_dir(path, chat_template=corpus_template(QWEN3_TEMPLATE),
                               response_template=QWEN_RESPONSE_TEMPLATE, tokenizer=chatml_tokenizer(),
                               special_tokens={"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
                               extra_config=config)
    return ChatCodec.from_pretrained(directory)


class TestPaddedPrompts:
    @pytest.mark.parametrize("side", ["right", "left"])
    def test_pad_ids_are_not_part_of_the_prompt(self, tmp_path: Path, side: str) -> None:
        # transformers 5.24 decodes the pads as prompt text, so a right-padded prompt's pads become
        # content: recorded on the DeepSeek tokenizer with pad_token '<｜▁pad▁｜>':
        # [{'content': '</think><｜▁pad▁｜><｜▁pad▁｜>Hello!'}, {'content': '</think>Hello!'}]
        codec = qwen3(tmp_path, padding_side=side)
        batch = codec.apply_chat_template(BATCH, add_generation_prompt=True, padding=True)
        padded = batch["input_ids"][0]
        assert (padded[-1] if side == "right" else padded[0]) == 0  # the pad id
        output = codec.encode("Hello!<|im_end|>")
        assert codec.parse_response([output, output], prefix=batch["input_ids"]) == [HELLO, HELLO]
        for row in batch["input_ids"]:
            parser = codec.get_response_parser(prefix=row)
            parser.feed(output)
            assert parser.finalize()[0] == HELLO

    def test_the_apply_chat_template_output_as_prefix(self, tmp_path: Path) -> None:
        codec = qwen3(tmp_path)
        batch = codec.apply_chat_template(BATCH, add_generation_prompt=True, padding=True)
        output = codec.encode("Hello!<|im_end|>")
        assert codec.parse_response([output, output], prefix=batch) == [HELLO, HELLO]
        single = codec.apply_chat_template(BATCH[0], add_generation_prompt=True)
        assert codec.parse_response(output, prefix=single) == HELLO
        parser = codec.get_response_parser(prefix=single)
        parser.feed(output)
        assert parser.finalize()[0] == HELLO

    def test_the_attention_mask_decides_what_is_padding(self, tmp_path: Path) -> None:
        codec = qwen3(tmp_path)
        prompt = codec.apply_chat_template(BATCH[0], add_generation_prompt=True)
        ids = prompt["input_ids"] + [0]  # the pad token's id, here written by the prompt itself
        output = codec.encode("Hello!<|im_end|>")
        kept = {"input_ids": ids, "attention_mask": [1] * len(ids)}
        assert codec.parse_response(output, prefix=kept) == {"role": "assistant",
                                                               "content": "<|endoftext|>Hello!"}
        masked = {"input_ids": [0, *ids], "attention_mask": [0] + [1] * len(ids)}
        assert codec.parse_response(output, prefix=masked) == {"role": "assistant",
                                                                 "content": "<|endoftext|>Hello!"}

    def test_a_mask_of_another_shape_is_an_error(self, tmp_path: Path) -> None:
        codec = qwen3(tmp_path)
        with pytest.raises(ValueError) as caught:
            codec.parse_response("Hi", prefix={"input_ids": [[1, 2], [3]], "attention_mask": [[1, 1]]})
        assert str(caught.value) == (
            "prefix: attention_mask has 1 row(s) but input_ids has 2; pass the apply_chat_template output "
            "unchanged")
        with pytest.raises(ValueError) as caught:
            codec.parse_response("Hi", prefix={"input_ids": [1, 2], "attention_mask": [1]})
        assert str(caught.value) == (
            "prefix: attention_mask has 1 value(s) but input_ids has 2; pass the apply_chat_template output "
            "unchanged")
        with pytest.raises(TypeError) as caught:
            codec.parse_response("Hi", prefix={"ids": [1, 2]})
        assert str(caught.value) == (
            "prefix: a dict must hold input_ids (and attention_mask), as apply_chat_template returns; "
            "got keys ['ids']")


class TestMissingStartAnchor:
    """A prompt without the start anchor is parsed whole (SPEC §1.5, as the reference), so at the
    model level that is almost always a prompt built without ``add_generation_prompt=True``."""

    WARNING = (
        "the prefix does not contain the response template's start anchor '<|im_start|>assistant\\n', so "
        "the whole prompt is parsed as the start of the assistant message and ends up in it. Build the "
        "prompt with add_generation_prompt=True (chatcodec render --generation-prompt), or pass prefix='' "
        "(chatcodec parse --no-prefix) when there is no prompt.")

    def test_warns_and_parses_as_the_engine_does(self, tmp_path: Path) -> None:
        codec = qwen3(tmp_path)
        prompt = codec.apply_chat_template(BATCH[0], add_generation_prompt=False, tokenize=False)
        with pytest.warns(UserWarning) as caught:
            message = codec.parse_response("Hello!<|im_end|>", prefix=prompt)
        assert [str(warning.message) for warning in caught] == [self.WARNING]
        assert caught[0].filename == __file__
        # parsed as the engine parses a prompt without the anchor (SPEC §1.5): the prompt is in it
        assert message == {"role": "assistant", "content": "<|im_start|>user\nHi\nHello!"}
        with pytest.warns(UserWarning) as caught:  # one per sequence, at this line (shown once by default)
            codec.parse_response(["Hello!", "Hello!"], prefix=codec.encode(prompt))
        assert [(str(each.message), each.filename) for each in caught] == [(self.WARNING, __file__)] * 2
        with pytest.warns(UserWarning) as caught:
            codec.get_response_parser(prefix=prompt)
        assert str(caught[0].message) == self.WARNING
        assert caught[0].filename == __file__

    def test_no_warning_for_a_generation_prompt_or_no_prompt(self, tmp_path: Path) -> None:
        codec = qwen3(tmp_path)
        prompt = codec.apply_chat_template(BATCH[0], add_generation_prompt=True, tokenize=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for prefix in (prompt, "", [], codec.encode(prompt)):
                assert codec.parse_response("Hello!<|im_end|>", prefix=prefix) == HELLO
                codec.get_response_parser(prefix=prefix)
