"""Model directories for the model tests, built in ``tmp_path``.

* :func:`chatml_tokenizer`: a small byte-level BPE (trained here, in well under a second) with the
  special and added tokens of Qwen3 (ChatML);
* :func:`sentencepiece_tokenizer`: a tiny hand-made SentencePiece-style BPE (``▁`` word
  boundaries, byte fallback), the other decoding family;
* :func:`byte_fallback_tokenizer`: a handful of byte tokens, to build invalid byte runs;
* :func:`make_model_dir`: a model directory in one of the storage formats of SPEC §2.5.

Expected values in tests never come from chatcodec: ids are checked through the text they decode
to (the vocabulary of a trained BPE is an implementation detail of ``tokenizers``), and values
compared with the reference were recorded from ``/tmp/refenv/bin/python`` as literals.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

#: Qwen3's special tokens (``special: true`` in its tokenizer.json).
QWEN3_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
#: Qwen3's added tokens that are not special.
QWEN3_ADDED = ["<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>", "</tool_response>"]

CORPUS_TEXT = [
    "Hello there, how are you today? I am fine, thank you.",
    "The weather in Paris is sunny and warm; the weather in Tokyo is rainy.",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    "Let me think about it. I should check the weather first.",
    "user assistant system tool\n\n",
]

QWEN3_TEMPLATE = "Qwen--Qwen3-0.6B.jinja"
SMOLLM3_TEMPLATE = "HuggingFaceTB--SmolLM3-3B.jinja"


@cache
def _chatml_json() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=420, special_tokens=QWEN3_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS_TEXT * 10, trainer)
    from tokenizers import AddedToken

    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in QWEN3_ADDED])
    return str(tokenizer.to_str())


def chatml_tokenizer() -> Any:
    """A fresh ``tokenizers.Tokenizer``: byte-level BPE with Qwen3's special and added tokens."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(_chatml_json())


def sentencepiece_tokenizer() -> Any:
    """A SentencePiece-style BPE: ``▁`` marks word starts, unknown characters fall back to bytes."""
    from tokenizers import Tokenizer, decoders, models, normalizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    words = ["▁Hello", "▁world", "▁the", "▁weather", "▁is", "▁nice"]
    pieces = sorted({char for word in words for char in word})
    merges = []
    for word in words:
        current = word[0]
        for char in word[1:]:
            merges.append((current, char))
            current += char
    for piece in pieces + [word[: i + 1] for word in words for i in range(1, len(word))]:
        vocab.setdefault(piece, len(vocab))
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tokenizer.decoder = decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0),
    ])
    tokenizer.add_special_tokens(["<s>", "</s>"])
    return tokenizer


def byte_fallback_tokenizer() -> Any:
    """Byte tokens for 日 (E6 97 A5) and F0, a lone continuation byte 80, and 'a' (QA finding 7)."""
    from tokenizers import Tokenizer, decoders, models

    vocab = {"<unk>": 0, "<0xE6>": 1, "<0x97>": 2, "<0xA5>": 3, "<0xF0>": 4, "a": 5, "<0x80>": 6}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], byte_fallback=True, unk_token="<unk>"))
    backend.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                         decoders.Fuse()])
    return backend


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def make_model_dir(
    path: Path,
    *,
    layout: str = "jinja",
    chat_template: str | dict[str, str] | None = None,
    response_template: dict[str, Any] | None = None,
    special_tokens: dict[str, Any] | None = None,
    tokenizer: Any | None = None,
    extra_config: dict[str, Any] | None = None,
) -> Path:
    """Write a model directory.

    Args:
        path: the directory (created).
        layout: where the chat template goes (SPEC §2.5): ``"jinja"`` (``chat_template.jinja``,
            plus ``additional_chat_templates/<name>.jinja`` for a dict), ``"config"``
            (``tokenizer_config.json`` ``chat_template``: a string, or the legacy list of
            ``{"name", "template"}`` for a dict), ``"processor"`` (``chat_template.json``).
        chat_template: the template text, or ``{name: text}``.
        response_template: written under ``tokenizer_config.json`` ``response_template``.
        special_tokens: ``tokenizer_config.json`` special-token keys (strings or objects).
        tokenizer: a ``tokenizers.Tokenizer`` saved as ``tokenizer.json``.
        extra_config: more ``tokenizer_config.json`` keys.
    """
    path.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast", **(special_tokens or {})}
    config.update(extra_config or {})
    if chat_template is not None:
        if layout == "jinja":
            templates = chat_template if isinstance(chat_template, dict) else {"default": chat_template}
            for name, text in templates.items():
                target = path / "chat_template.jinja" if name == "default" else (
                    path / "additional_chat_templates" / f"{name}.jinja")
                target.parent.mkdir(exist_ok=True)
                target.write_text(text, encoding="utf-8")
        elif layout == "config":
            config["chat_template"] = (
                [{"name": name, "template": text} for name, text in chat_template.items()]
                if isinstance(chat_template, dict) else chat_template
            )
        elif layout == "processor":
            assert isinstance(chat_template, str)
            write_json(path / "chat_template.json", {"chat_template": chat_template})
        else:
            raise ValueError(layout)
    if response_template is not None:
        config["response_template"] = response_template
    write_json(path / "tokenizer_config.json", config)
    if tokenizer is not None:
        tokenizer.save(str(path / "tokenizer.json"))
    return path
