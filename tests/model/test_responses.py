"""Model output shapes, the end of generation, and the token-aware streaming wrapper."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.errors import ParserStateError, TokenizerUnavailableError
from chatcodec.model.incremental import IncrementalDecoder
from chatcodec.model.responses import EndOfSequence, ModelResponseParser
from chatcodec.model.sequences import as_id_list, split_sequences
from chatcodec.model.tokenizer import Tokenizer, tokenizer_unavailable
from tests.model.helpers import chatml_tokenizer


class FakeArray:
    """Stands in for a numpy array or a torch tensor: only ``tolist()`` is used."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def tolist(self) -> Any:
        return self.data


class RecordingParser:
    """Stands in for ResponseParser: records what it is fed."""

    def __init__(self) -> None:
        self.fed: list[str] = []
        self.initial_events = [{"type": "region_open", "field": "reasoning_content"}]

    def feed(self, text: str) -> list[dict[str, Any]]:
        self.fed.append(text)
        return [{"type": "region_chunk", "field": "content", "text": text, "dirty": False}]

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return {"content": "".join(self.fed)}, [{"type": "region_close", "field": "content", "value": "x"}]


class TestShapes:
    @pytest.mark.parametrize(("value", "expected"), [
        ("text", (["text"], False)),
        ([1, 2, 3], ([[1, 2, 3]], False)),
        ((1, 2), ([[1, 2]], False)),
        (["a", "b"], (["a", "b"], True)),
        ([[1, 2], [3]], ([[1, 2], [3]], True)),
        ([], ([], True)),
        (FakeArray([5, 6]), ([[5, 6]], False)),
        (FakeArray([[5, 6], [7, 8]]), ([[5, 6], [7, 8]], True)),
        (["text", [1, 2], (3,)], (["text", [1, 2], [3]], True)),  # a batch may mix text and ids
    ])
    def test_sequences_and_batches(self, value: Any, expected: tuple[list[Any], bool]) -> None:
        assert split_sequences(value, "response") == expected

    @pytest.mark.parametrize(("value", "message"), [
        (3.5, "response: expected a string, token ids, a batch of either, or a 1-D/2-D array; got float"),
        ([[1, "a"]], "response[0][1]: expected a token id (the sequence starts with token ids), got str"),
        ([1, 2, "a"], "response[2]: expected a token id (the sequence starts with token ids), got str"),
        ((7, 2.5), "response[1]: expected a token id (the sequence starts with token ids), got float"),
        ([1, [2]], "response[1]: expected a token id (the sequence starts with token ids), got list"),
        (["a", [1, None]], "response[1][1]: expected a token id (the sequence starts with token ids), "
                           "got NoneType"),
        (FakeArray([[[1]]]), "response[0]: expected text or a sequence of token ids, got list"),
    ])
    def test_other_shapes_are_type_errors(self, value: Any, message: str) -> None:
        with pytest.raises(TypeError) as caught:
            split_sequences(value, "response")
        assert str(caught.value) == message

    def test_integer_scalars_are_ids(self) -> None:
        class Scalar:  # numpy.int64 and friends implement __index__
            def __init__(self, value: int) -> None:
                self.value = value

            def __index__(self) -> int:
                return self.value

        assert as_id_list([Scalar(3), 4], "feed") == [3, 4]
        assert as_id_list(Scalar(5), "feed") == [5]
        assert split_sequences([[Scalar(1)], (2, Scalar(3))], "response") == ([[1], [2, 3]], True)

    def test_as_id_list(self) -> None:
        assert as_id_list(7, "feed") == [7]
        assert as_id_list(FakeArray([1, 2]), "feed") == [1, 2]
        with pytest.raises(TypeError) as caught:
            as_id_list(True, "feed")
        assert str(caught.value) == "feed: expected a token id or a sequence of token ids, got bool"


class TestEndOfSequence:
    def test_ids(self) -> None:
        end = EndOfSequence([2, 7], [])
        assert end.cut_ids([5, 6]) == ([5, 6], False)
        assert end.cut_ids([5, 7, 2, 2]) == ([5], True)
        assert not end.ended  # the caller ends it once the text before the id is through
        end.end()
        assert end.ended
        assert end.cut_text("x") == ""

    def test_text_is_cut_at_the_first_end_text(self) -> None:
        end = EndOfSequence([], ["<|im_end|>", "<|endoftext|>"])
        assert end.cut_text("Hi<|endoftext|>x<|im_end|>") == "Hi"
        assert end.ended
        assert end.cut_text("more") == ""

    def test_a_possible_start_of_an_end_text_is_held_back(self) -> None:
        end = EndOfSequence([], ["<|im_end|>"])
        assert end.cut_text("Hi <|im") == "Hi "
        assert end.cut_text("_e") == ""
        assert end.cut_text("nd|>tail") == ""
        assert end.ended

    def test_held_back_text_that_is_not_an_end_text_is_released(self) -> None:
        end = EndOfSequence([], ["<|im_end|>"])
        assert end.cut_text("a <|im") == "a "
        assert end.cut_text("_start|>") == "<|im_start|>"
        assert end.cut_text("x <") == "x "
        assert end.cut_text("", final=True) == "<"
        assert not end.ended

    @given(st.text(st.sampled_from(list("ab<|>e_nd")), max_size=30), st.data())
    def test_any_split_gives_the_same_text(self, text: str, data: st.DataObject) -> None:
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        whole = EndOfSequence([], ["<|end|>", "<e>"])
        streamed = EndOfSequence([], ["<|end|>", "<e>"])
        expected = whole.cut_text(text, final=True)
        got = "".join(streamed.cut_text(piece) for piece in pieces) + streamed.cut_text("", final=True)
        assert got == expected
        assert streamed.ended == whole.ended


@pytest.fixture(scope="module")
def chatml() -> Tokenizer:
    return Tokenizer(chatml_tokenizer())


def wrapper(tokenizer: Tokenizer | None, end: EndOfSequence) -> tuple[ModelResponseParser, RecordingParser]:
    inner = RecordingParser()

    def new_decoder() -> IncrementalDecoder:
        if tokenizer is None:
            raise tokenizer_unavailable("test")
        return tokenizer.incremental_decoder()

    return ModelResponseParser(inner, end, new_decoder), inner


class TestModelResponseParser:
    def test_ids_are_decoded_incrementally_and_stop_at_the_end_of_sequence(self, chatml: Tokenizer) -> None:
        eos = chatml.token_to_id("<|im_end|>")
        assert eos is not None
        parser, inner = wrapper(chatml, EndOfSequence([eos], ["<|im_end|>"]))
        ids = chatml.encode("<think>é😀</think>Done")
        for token_id in ids[:-1]:
            parser.feed(token_id)
        parser.feed([ids[-1], eos, 0, 0])  # the text before the end in the same step is kept
        assert parser.ended
        assert parser.feed([5]) == []
        message, events = parser.finalize()
        assert "".join(inner.fed) == "<think>é😀</think>Done"
        assert "\ufffd" not in "".join(inner.fed)
        assert message == {"content": "<think>é😀</think>Done"}
        assert events == [{"type": "region_close", "field": "content", "value": "x"}]
        assert parser.text == "<think>é😀</think>Done"

    def test_text_held_back_before_an_end_id_is_released(self, chatml: Tokenizer) -> None:
        eos = chatml.token_to_id("<|im_end|>")
        assert eos is not None
        parser, inner = wrapper(chatml, EndOfSequence([eos], ["<|im_end|>"]))
        parser.feed("a <|im")
        parser.feed([eos])
        assert parser.ended
        parser.finalize()
        assert "".join(inner.fed) == "a <|im"

    def test_text_steps_and_id_steps_mix(self, chatml: Tokenizer) -> None:
        parser, inner = wrapper(chatml, EndOfSequence([], ["<|im_end|>"]))
        parser.feed(chatml.encode("Hi "))
        parser.feed("there<|im_")
        parser.feed("end|>ignored")
        parser.finalize()
        assert "".join(inner.fed) == "Hi there"

    def test_initial_events_pass_through(self) -> None:
        parser, _ = wrapper(None, EndOfSequence([], []))
        assert parser.initial_events == [{"type": "region_open", "field": "reasoning_content"}]

    def test_held_back_text_is_released_at_finalize(self) -> None:
        parser, inner = wrapper(None, EndOfSequence([], ["<|im_end|>"]))
        assert parser.feed("a <|im") == [{"type": "region_chunk", "field": "content", "text": "a ",
                                          "dirty": False}]
        _, events = parser.finalize()
        assert inner.fed == ["a ", "<|im"]
        assert events[0] == {"type": "region_chunk", "field": "content", "text": "<|im", "dirty": False}

    def test_ids_without_a_tokenizer(self) -> None:
        parser, _ = wrapper(None, EndOfSequence([], []))
        with pytest.raises(TokenizerUnavailableError):
            parser.feed([1, 2])

    def test_feed_or_finalize_after_finalize(self) -> None:
        parser, _ = wrapper(None, EndOfSequence([], []))
        parser.finalize()
        with pytest.raises(ParserStateError, match=r"^feed: the parser was finalized"):
            parser.feed("x")
        with pytest.raises(ParserStateError, match=r"^finalize: the parser was already finalized"):
            parser.finalize()
