"""The optional ``tokenizers`` wrapper, with and without the package, and incremental decoding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.errors import ModelStorageError, TokenizerUnavailableError
from chatcodec.model.incremental import IncrementalDecoder
from chatcodec.model.tokenizer import Tokenizer, load_tokenizer
from tests.model.helpers import byte_fallback_tokenizer, chatml_tokenizer, sentencepiece_tokenizer


@pytest.fixture(scope="module")
def chatml() -> Tokenizer:
    return Tokenizer(chatml_tokenizer())


@pytest.fixture(scope="module")
def spm() -> Tokenizer:
    return Tokenizer(sentencepiece_tokenizer())


@pytest.fixture
def without_tokenizers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import tokenizers`` fail, as on a machine without the optional extra."""
    monkeypatch.setitem(sys.modules, "tokenizers", None)


class TestLoading:
    def test_loads_tokenizer_json(self, tmp_path: Path) -> None:
        chatml_tokenizer().save(str(tmp_path / "tokenizer.json"))
        tokenizer, reason = load_tokenizer(tmp_path)
        assert reason is None
        assert tokenizer is not None
        assert tokenizer.path == tmp_path / "tokenizer.json"
        assert tokenizer.token_to_id("<|im_end|>") == 2

    def test_no_tokenizer_json(self, tmp_path: Path) -> None:
        # The package is installed here: the message names the missing file, not the package.
        assert load_tokenizer(tmp_path) == (None, (
            f"token ids: no tokenizer is available ({tmp_path / 'tokenizer.json'} does not exist). Add the "
            "model's tokenizer.json to the directory (chatcodec reads no other tokenizer format); for the "
            "prompt text alone pass tokenize=False."))

    def test_a_tokenizer_json_link_to_nothing_is_no_missing_file(self, tmp_path: Path) -> None:
        (tmp_path / "tokenizer.json").symlink_to("../blobs/5d6e")
        with pytest.raises(ModelStorageError) as caught:
            load_tokenizer(tmp_path)
        assert str(caught.value) == (f"{tmp_path / 'tokenizer.json'}: a symbolic link to ../blobs/5d6e, "
                                     "which does not exist")

    def test_a_tokenizer_that_loads_but_cannot_encode_names_its_file(self, tmp_path: Path) -> None:
        """A WordLevel model whose unk_token is not in its vocabulary: tokenizers raises a bare
        Exception on the first unknown word (a traceback, or the command line's 'internal error')."""
        from tokenizers import Tokenizer as Backend
        from tokenizers import models

        Backend(models.WordLevel({"a": 0}, unk_token="[UNK]")).save(str(tmp_path / "tokenizer.json"))
        tokenizer, _ = load_tokenizer(tmp_path)
        assert tokenizer is not None
        assert tokenizer.encode("a") == [0]
        message = (f"{tmp_path / 'tokenizer.json'}: the tokenizer cannot encode the text: WordLevel error: "
                   "Missing [UNK] token from the vocabulary")
        for encode in (tokenizer.encode, tokenizer.encode_with_offsets, tokenizer.encode_plain):
            with pytest.raises(ModelStorageError) as caught:
                encode("b")
            assert str(caught.value) == message

    def test_a_lone_surrogate_is_named(self, tmp_path: Path) -> None:
        """tokenizers reads UTF-8 only, and said 'TextInputSequence must be str' of a str."""
        chatml_tokenizer().save(str(tmp_path / "tokenizer.json"))
        tokenizer, _ = load_tokenizer(tmp_path)
        assert tokenizer is not None
        for encode in (tokenizer.encode, tokenizer.encode_with_offsets, tokenizer.encode_plain):
            with pytest.raises(ValueError) as caught:
                encode("ok \ud800 x")
            assert str(caught.value) == (
                "the text to encode holds a lone surrogate (U+D800 at character 3), which UTF-8 cannot "
                "encode, so no tokenizer can read it (a JSON \\ud800-style escape without its pair?)")

    def test_without_the_package(self, tmp_path: Path, without_tokenizers: None) -> None:
        (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
        assert load_tokenizer(tmp_path) == (None, (
            "token ids: no tokenizer is available (the tokenizers package is not installed). Install it with "
            "`pip install 'chatcodec[tokenizers]'`; for the prompt text alone pass tokenize=False."))

    def test_from_file_without_the_package_names_the_fix(self, tmp_path: Path,
                                                         without_tokenizers: None) -> None:
        with pytest.raises(TokenizerUnavailableError) as caught:
            Tokenizer.from_file(tmp_path / "tokenizer.json")
        assert str(caught.value) == (
            "token ids: no tokenizer is available (the tokenizers package is not installed). Install it with "
            "`pip install 'chatcodec[tokenizers]'`; for the prompt text alone pass tokenize=False."
        )
        assert isinstance(caught.value, ImportError)

    def test_malformed_tokenizer_json(self, tmp_path: Path) -> None:
        (tmp_path / "tokenizer.json").write_text('{"model": 3}', encoding="utf-8")
        with pytest.raises(ModelStorageError, match=r"tokenizer.json: tokenizers cannot load it: "):
            load_tokenizer(tmp_path)

    def test_a_tokenizer_json_larger_than_the_bound_is_not_read(self, tmp_path: Path) -> None:
        """QA: tokenizers reads the whole file first: a sparse 6 GB tokenizer.json (nothing on disk)
        took 6 GB of memory before failing to parse."""
        from chatcodec.model import tokenizer

        assert tokenizer.MAX_TOKENIZER_BYTES == 256 * 1024 * 1024
        with open(tmp_path / "tokenizer.json", "wb") as handle:
            handle.truncate(6 * 1024**3)
        with pytest.raises(ModelStorageError) as caught:
            load_tokenizer(tmp_path)  # not lazy: read now
        assert str(caught.value) == (
            f"{tmp_path / 'tokenizer.json'}: 6,442,450,944 bytes, more than MAX_TOKENIZER_BYTES "
            "(268,435,456) allows; real tokenizer.json files are a few dozen megabytes (raise "
            "chatcodec.model.tokenizer.MAX_TOKENIZER_BYTES for a trusted one)")
        assert caught.value.path == str(tmp_path / "tokenizer.json")

    def test_a_model_directory_reads_its_tokenizer_on_first_use(self, tmp_path: Path) -> None:
        from chatcodec.model.codec import ChatCodec

        (tmp_path / "tokenizer.json").write_text('{"model": 3}', encoding="utf-8")
        (tmp_path / "tokenizer_config.json").write_text(
            '{"eos_token": "</s>", "pad_token": "<pad>", "chat_template": "{{ messages[0].content }}!"}',
            encoding="utf-8")
        codec = ChatCodec.from_pretrained(tmp_path)  # not read yet: text needs no tokenizer
        assert codec.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False) == "Hi!"
        template = {"start_anchor": "A", "fields": {"content": {}}}
        assert codec.parse_response("Hello</s>", prefix="", schema=template) == {"content": "Hello"}
        with pytest.raises(ModelStorageError, match=r"tokenizer.json: tokenizers cannot load it: "):
            codec.apply_chat_template([{"role": "user", "content": "Hi"}])

    def test_importing_the_module_does_not_import_tokenizers(self) -> None:
        code = "import sys, chatcodec.model.tokenizer; print('tokenizers' in sys.modules)"
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert result.stdout == "False\n"


class TestEncodeDecode:
    def test_special_and_added_tokens_round_trip(self, chatml: Tokenizer) -> None:
        text = "<|im_start|>assistant\n<think>ok</think><tool_call>{}</tool_call><|im_end|>"
        ids = chatml.encode(text)
        assert chatml.decode(ids) == text  # special tokens kept by default, unlike tokenizers' decode
        assert ids[0] == chatml.token_to_id("<|im_start|>")
        assert ids[-1] == chatml.token_to_id("<|im_end|>")
        assert ids.count(chatml.token_to_id("<think>")) == 1
        assert chatml.decode(ids, skip_special_tokens=True) == (
            "assistant\n<think>ok</think><tool_call>{}</tool_call>")

    def test_added_tokens_decoder(self, chatml: Tokenizer) -> None:
        added = chatml.added_tokens_decoder
        assert [(token.content, token.special) for token in added.values()][:4] == [
            ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<tool_call>", False)]

    def test_offsets_cover_every_byte_token_of_a_split_character(self, chatml: Tokenizer) -> None:
        text = "Hi 😀"
        ids, offsets = chatml.encode_with_offsets(text)
        assert chatml.decode(ids) == text
        emoji = [span for span in offsets if span == (3, 4)]
        assert len(emoji) == 4  # four UTF-8 bytes, four byte-level tokens, all covering the emoji

    def test_offsets_keep_the_whitespace_a_trimming_post_processor_removes(self) -> None:
        from tokenizers import processors

        backend = chatml_tokenizer()
        backend.post_processor = processors.ByteLevel(trim_offsets=True)
        assert backend.encode(" Hello", add_special_tokens=False).offsets == [(0, 0), (1, 6)]
        tokenizer = Tokenizer(backend)
        assert tokenizer.encode_with_offsets(" Hello") == (backend.encode(" Hello").ids, [(0, 1), (1, 6)])
        assert backend.post_processor is not None  # the loaded tokenizer itself is unchanged

    def test_encode_plain_never_produces_added_tokens(self, chatml: Tokenizer) -> None:
        text = "<|im_start|>user <tool_call>"
        ids = chatml.encode_plain(text)
        assert not set(ids) & set(chatml.added_tokens_decoder)
        assert chatml.decode(ids) == text
        assert len(chatml.encode(text)) < len(ids)

    def test_encode_plain_inside_adds_no_word_boundary_space(self, spm: Tokenizer) -> None:
        assert spm.decode(spm.encode_plain("Hello")) == "Hello"
        inside = spm.encode_plain_inside("Hello")
        assert spm.decode(spm.encode("x") + inside) == "xHello"
        assert spm.decode(spm.encode("x") + spm.encode_plain("Hello")) == "x Hello"


class TestIncrementalDecoding:
    def test_split_characters_and_word_boundary_spaces(self, spm: Tokenizer) -> None:
        ids = spm.encode("Hello 日本 world", add_special_tokens=False)
        # ▁Hello ▁ <E6> <97> <A5> <E6> <9C> <AC> ▁world
        assert len(ids) == 9
        decoder = spm.incremental_decoder()
        assert [decoder.step(token_id) for token_id in ids] == [
            "Hello", " ", "", "", "日", "", "", "本", " world"]
        assert decoder.flush() == ""

    def test_decoding_ids_one_by_one_is_wrong(self, spm: Tokenizer) -> None:
        ids = spm.encode("Hello 日本 world", add_special_tokens=False)
        assert "".join(spm.decode([token_id]) for token_id in ids) == "Hello" + "\ufffd" * 6 + "world"

    def test_flush_releases_an_incomplete_character(self, spm: Tokenizer) -> None:
        ids = spm.encode("Hello 日", add_special_tokens=False)
        decoder = spm.incremental_decoder()
        assert "".join(decoder.step(token_id) for token_id in ids[:-1]) == "Hello "
        assert decoder.flush() == "\ufffd\ufffd"
        assert decoder.flush() == ""

    def test_several_ids_per_step(self, chatml: Tokenizer) -> None:
        ids = chatml.encode("<think>x</think>Hé 😀!")
        split = ids.index(chatml.token_to_id("</think>"))
        decoder = chatml.incremental_decoder()
        parts = [decoder.step(ids[:split]), decoder.step(ids[split:]), decoder.flush()]
        assert parts == ["<think>x", "</think>Hé 😀!", ""]

    @given(text=st.text(st.sampled_from(list("Helo wrd the 日本😀é\n<|>")), max_size=40),
           use_spm=st.booleans())
    def test_stream_equals_decoding_all_at_once(self, text: str, use_spm: bool) -> None:
        tokenizer = Tokenizer(sentencepiece_tokenizer() if use_spm else chatml_tokenizer())
        ids = tokenizer.encode(text, add_special_tokens=False)
        decoder = tokenizer.incremental_decoder()
        deltas = [decoder.step(token_id) for token_id in ids] + [decoder.flush()]
        assert "".join(deltas) == tokenizer.decode(ids)
        assert not any("\ufffd" in delta for delta in deltas)

    def test_a_character_completed_before_an_invalid_byte_stays(self) -> None:
        # E6 97 A5 is 日; F0 then 'a' makes the byte run invalid. tokenizers' ByteFallback decoder
        # replaces every byte of an invalid run, so decoding all at once gives '����a' (also the
        # reference's one-shot result); '日' was already complete and emitted, so it stays.
        tokenizer = Tokenizer(byte_fallback_tokenizer())
        assert tokenizer.decode([1, 2, 3, 4, 5]) == "\ufffd" * 4 + "a"
        decoder = tokenizer.incremental_decoder()
        assert [decoder.step(token_id) for token_id in [1, 2, 3, 4, 5]] == ["", "", "日", "", "\ufffda"]
        assert decoder.flush() == ""
        whole = tokenizer.incremental_decoder()
        assert whole.step([1, 2, 3, 4, 5]) + whole.flush() == "日\ufffda"  # any grouping, the same text
        assert tokenizer.decode_generated([1, 2, 3, 4, 5]) == "日\ufffda"

    def test_an_invalid_byte_at_the_end(self) -> None:
        tokenizer = Tokenizer(byte_fallback_tokenizer())
        decoder = tokenizer.incremental_decoder()
        assert decoder.step([1, 2, 3, 4]) == "日"
        assert decoder.flush() == "\ufffd"
        assert tokenizer.decode_generated([1, 2, 3, 4]) == "日\ufffd"

    @given(ids=st.lists(st.integers(1, 6), max_size=14), data=st.data())
    def test_generated_text_is_the_streamed_text(self, ids: list[int], data: st.DataObject) -> None:
        tokenizer = Tokenizer(byte_fallback_tokenizer())
        cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=5)))
        decoder = tokenizer.incremental_decoder()
        streamed = "".join(decoder.step(ids[a:b]) for a, b in zip([0, *cuts], [*cuts, len(ids)], strict=True))
        streamed += decoder.flush()
        assert streamed == tokenizer.decode_generated(ids)
        whole = tokenizer.decode(ids)
        if "\ufffd" not in whole:
            assert streamed == whole

    def test_works_with_any_decode_function(self) -> None:
        table: dict[int, bytes] = {1: b"a", 2: "é".encode()[:1], 3: "é".encode()[1:]}

        def decode(ids: list[int]) -> str:
            return b"".join(table[i] for i in ids).decode("utf-8", errors="replace")

        decoder: Any = IncrementalDecoder(decode)
        assert [decoder.step(i) for i in (1, 2, 3, 1)] == ["a", "", "é", "a"]
