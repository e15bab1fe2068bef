"""Token ids given to ``ChatCodec``: the shapes ``decode``, ``parse_response`` and a parser's ``feed``
accept, and the errors for everything else (wrong types, ids outside the vocabulary).

The model directory holds the small byte-level BPE of ``helpers.chatml_tokenizer``: 392 ids, with
``<|endoftext|>`` = 0, ``<|im_start|>`` = 1 and ``<|im_end|>`` = 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatcodec.model.codec import ChatCodec
from chatcodec.model.tokenizer import Tokenizer
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.model.helpers import byte_fallback_tokenizer, chatml_tokenizer, make_model_dir

VOCABULARY = "(the vocabulary has 392 ids, 0 to 391)"


class Scalar:
    """Stands in for ``numpy.int64``: an integer through ``__index__`` only."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


@pytest.fixture(scope="module")
def codec(tmp_path_factory: pytest.TempPathFactory) -> ChatCodec:
    directory = make_model_dir(tmp_path_factory.mktemp("chatml"), chat_template="{{ messages }}",
                               response_template=QWEN_RESPONSE_TEMPLATE,
                               special_tokens={"eos_token": "<|im_end|>"}, tokenizer=chatml_tokenizer())
    return ChatCodec.from_pretrained(directory)


class TestDecode:
    def test_a_single_id_is_one_token(self, codec: ChatCodec) -> None:
        # transformers 5.24: tokenizer.decode(78) is the text of token 78 alone.
        assert codec.decode(2) == "<|im_end|>"
        assert codec.decode(Scalar(2)) == "<|im_end|>"

    def test_empty_ids_are_empty_text(self, codec: ChatCodec) -> None:
        # transformers 5.24: decode([]) == '' and decode([[]]) == [''].
        assert codec.decode([]) == ""
        assert codec.decode(()) == ""
        assert codec.decode([[]]) == [""]
        assert codec.decode([[2], []]) == ["<|im_end|>", ""]

    @pytest.mark.parametrize(("token_ids", "message"), [
        ("abc", "token_ids: expected a token id, a sequence of token ids or a batch of them "
                "(lists, tuples, 1-D/2-D arrays), got str"),
        (None, "token_ids: expected a token id, a sequence of token ids or a batch of them "
               "(lists, tuples, 1-D/2-D arrays), got NoneType"),
        (["a"], "token_ids[0]: expected a sequence of token ids, got str"),
        ([1.0], "token_ids[0]: expected a sequence of token ids, got float"),
        ([[1], 2], "token_ids[1]: expected a sequence of token ids, got int"),
        ([[1], ["a"]], "token_ids[1]: expected a sequence of token ids, got list"),
    ])
    def test_what_is_not_token_ids_is_a_type_error(self, codec: ChatCodec, token_ids: Any,
                                                    message: str) -> None:
        with pytest.raises(TypeError) as caught:
            codec.decode(token_ids)
        assert str(caught.value) == message

    @pytest.mark.parametrize(("token_ids", "message"), [
        ([5, -1], f"token_ids[1]: -1 is not a token id of this tokenizer {VOCABULARY}"),
        ([392], f"token_ids[0]: 392 is not a token id of this tokenizer {VOCABULARY}"),
        (-3, f"token_ids: -3 is not a token id of this tokenizer {VOCABULARY}"),
        ([[1], [7, 10**9]], f"token_ids[1][1]: 1000000000 is not a token id of this tokenizer {VOCABULARY}"),
    ])
    def test_ids_outside_the_vocabulary_are_value_errors(self, codec: ChatCodec, token_ids: Any,
                                                          message: str) -> None:
        # The reference raises a bare OverflowError for negative ids and drops too large ones silently.
        with pytest.raises(ValueError) as caught:
            codec.decode(token_ids)
        assert str(caught.value) == message


class TestParseResponse:
    def test_a_batch_may_mix_text_and_ids(self, codec: ChatCodec) -> None:
        hi = {"role": "assistant", "content": "Hi"}
        prompt = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
        response = ["Hi<|im_end|>", codec.encode("Hi<|im_end|>")]
        assert codec.parse_response(response, prefix=prompt) == [hi, hi]
        assert codec.parse_response(response, prefix=[codec.encode(prompt), prompt]) == [hi, hi]
        assert codec.parse_response(["Hi", "Hi"], prefix=["", []]) == [hi, hi]

    @pytest.mark.parametrize(("response", "prefix", "message"), [
        (["a", 5], "", "response[1]: expected text or a sequence of token ids, got int"),
        (["a", "b"], ["p", {"a": 1}], "prefix[1]: expected text or a sequence of token ids, got dict"),
        ([[1], [2.0]], "", "response[1]: expected text or a sequence of token ids, got list"),
    ])
    def test_batch_items_of_other_types(self, codec: ChatCodec, response: Any, prefix: Any,
                                        message: str) -> None:
        with pytest.raises(TypeError) as caught:
            codec.parse_response(response, prefix=prefix)
        assert str(caught.value) == message

    def test_ids_outside_the_vocabulary(self, codec: ChatCodec) -> None:
        with pytest.raises(ValueError) as caught:
            codec.parse_response([-1], prefix="")
        assert str(caught.value) == f"response[0]: -1 is not a token id of this tokenizer {VOCABULARY}"
        with pytest.raises(ValueError) as caught:
            codec.parse_response([[5], [6, 99999]], prefix="")
        assert str(caught.value) == f"response[1][1]: 99999 is not a token id of this tokenizer {VOCABULARY}"
        with pytest.raises(ValueError) as caught:
            codec.parse_response([5], prefix=[1, 400])
        assert str(caught.value) == f"prefix[1]: 400 is not a token id of this tokenizer {VOCABULARY}"


class TestFeed:
    @pytest.mark.parametrize(("step", "message"), [
        ({"a": 1}, "feed: expected text, a token id or a sequence of token ids (a list, tuple or 1-D array), "
                   "got dict"),
        (b"abc", "feed: expected text, a token id or a sequence of token ids (a list, tuple or 1-D array), "
                 "got bytes"),
        (None, "feed: expected text, a token id or a sequence of token ids (a list, tuple or 1-D array), "
               "got NoneType"),
        ([1, "a"], "feed: expected text, a token id or a sequence of token ids (a list, tuple or 1-D array), "
                   "got list"),
        ([[1], [2]], "feed: got a batch of sequences; a parser follows one sequence, so create one parser "
                     "per sequence (or use parse_response for a whole batch)"),
    ])
    def test_what_is_neither_text_nor_ids_is_a_type_error(self, codec: ChatCodec, step: Any,
                                                         message: str) -> None:
        parser = codec.get_response_parser(prefix="")
        with pytest.raises(TypeError) as caught:
            parser.feed(step)
        assert str(caught.value) == message

    def test_ids_outside_the_vocabulary(self, codec: ChatCodec) -> None:
        parser = codec.get_response_parser(prefix="")
        with pytest.raises(ValueError) as caught:
            parser.feed(-1)
        assert str(caught.value) == f"feed: -1 is not a token id of this tokenizer {VOCABULARY}"
        with pytest.raises(ValueError) as caught:
            parser.feed([5, 10**9])
        assert str(caught.value) == f"feed[1]: 1000000000 is not a token id of this tokenizer {VOCABULARY}"
        parser.feed(codec.encode("Hi"))  # the parser is still usable
        assert parser.finalize()[0] == {"role": "assistant", "content": "Hi"}


def test_a_one_shot_parse_gives_the_streamed_text_on_invalid_byte_runs() -> None:
    """QA finding 7: one-shot '����a' (tokenizers' and the reference's decode), streamed '日���a'.

    Both paths now give '日\ufffda': the character completed before the invalid byte stays.
    """
    template = {"version": 1, "start_anchor": "A:",
                "fields": {"content": {"content": "text", "content_args": {"strip": False}}}}
    codec = ChatCodec(None, template, tokenizer=Tokenizer(byte_fallback_tokenizer()))
    ids = [1, 2, 3, 4, 5]
    assert codec.parse_response(ids, prefix="") == {"content": "日\ufffda"}
    assert codec.parse_response([ids, ids[:4]], prefix="") == [{"content": "日\ufffda"},
                                                                {"content": "日\ufffd"}]
    parser = codec.get_response_parser(prefix="")
    for token_id in ids:
        parser.feed(token_id)
    assert parser.finalize()[0] == {"content": "日\ufffda"}
    assert codec.decode(ids) == "\ufffd" * 4 + "a"  # decode itself stays the tokenizer's, as in the reference


def test_ids_of_added_tokens_beyond_the_model_vocabulary_are_valid(tmp_path: Path) -> None:
    backend = chatml_tokenizer()
    backend.add_special_tokens(["<extra>"])
    directory = make_model_dir(tmp_path, chat_template="x", tokenizer=backend)
    codec = ChatCodec.from_pretrained(directory)
    assert codec.encode("<extra>") == [392]
    assert codec.decode([392]) == "<extra>"
    with pytest.raises(ValueError, match=r"^token_ids\[0\]: 393 is not a token id of this tokenizer "
                                         r"\(the vocabulary has 393 ids, 0 to 392\)$"):
        codec.decode([393])
