"""Model-specific named special tokens (``image_token``, ...) are template variables, as in the reference.

transformers 5.24 (``PreTrainedTokenizerBase._from_pretrained``) adds to the named special tokens
every top-level ``*_token`` string of ``tokenizer_config.json`` and every entry of an
``extra_special_tokens`` object; ``special_tokens_map`` (the template's variables) lists them after
the standard ones. Expected values are the reference's, from a directory like the one built here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec import ChatCodec
from chatcodec.cli import main
from chatcodec.model.config import read_tokenizer_config

TEMPLATE = "{{ image_token }}|{{ audio_token }}|{{ video_token }}|{{ messages[0].content }}"


def model_dir(tmp_path: Path) -> Path:
    config = {
        "bos_token": "<s>", "eos_token": "<|im_end|>", "pad_token": "<pad>", "unk_token": "<unk>",
        "extra_special_tokens": {"image_token": "<image>"},
        "audio_token": "<audio>",
        "video_token": {"content": "<video>", "special": True},  # an object: the reference skips it
        "add_bos_token": False,
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "chat_template.jinja").write_text(TEMPLATE, encoding="utf-8")
    return tmp_path


def test_named_tokens_follow_the_standard_ones(tmp_path: Path) -> None:
    config = read_tokenizer_config(model_dir(tmp_path))
    assert list(config.special_tokens.items()) == [
        ("bos_token", "<s>"), ("eos_token", "<|im_end|>"), ("unk_token", "<unk>"), ("pad_token", "<pad>"),
        ("audio_token", "<audio>"), ("image_token", "<image>"),
    ]


def test_templates_see_them(tmp_path: Path) -> None:
    codec = ChatCodec.from_pretrained(model_dir(tmp_path))
    out = codec.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert out == "<image>|<audio>||hi"  # the reference's output


def test_the_render_command_passes_them(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    assert main(["render", str(model_dir(tmp_path)), str(conversation)]) == 0
    assert capsysbinary.readouterr().out == b"<image>|<audio>||hi"
