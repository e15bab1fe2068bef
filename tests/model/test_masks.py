"""Assistant masks: a token is in the mask when any of its characters lies inside a span."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatcodec.model.masks import assistant_mask, merge_spans


def test_any_character_inside_a_span_counts() -> None:
    offsets = [(0, 3), (3, 6), (6, 9), (9, 12)]
    assert assistant_mask(offsets, [(4, 5)]) == [0, 1, 0, 0]
    assert assistant_mask(offsets, [(5, 7)]) == [0, 1, 1, 0]  # straddles a token boundary
    assert assistant_mask(offsets, [(3, 6)]) == [0, 1, 0, 0]  # edges are exclusive at the end
    assert assistant_mask(offsets, [(0, 12)]) == [1, 1, 1, 1]


def test_span_ending_in_token_zero_marks_only_that_token() -> None:
    # the reference reads end_token == 0 as "to the end of the sequence" and masks everything
    assert assistant_mask([(0, 5), (5, 8), (8, 9)], [(0, 2)]) == [1, 0, 0]


def test_every_byte_token_of_a_split_character() -> None:
    # "Hi 😀" in a byte-level BPE: four byte tokens all cover the emoji (character 3)
    offsets = [(0, 2), (2, 3), (3, 4), (3, 4), (3, 4), (3, 4), (4, 14)]
    assert assistant_mask(offsets, [(0, 4)]) == [1, 1, 1, 1, 1, 1, 0]


def test_tokens_covering_no_character_are_never_in_the_mask() -> None:
    assert assistant_mask([(0, 0), (0, 3), (3, 3)], [(0, 3)]) == [0, 1, 0]


def test_no_spans() -> None:
    assert assistant_mask([(0, 1), (1, 2)], []) == [0, 0]


def test_spans_are_merged() -> None:
    assert merge_spans([(5, 8), (0, 2), (2, 3), (7, 9), (4, 4)]) == [(0, 3), (5, 9)]
    assert assistant_mask([(0, 1), (3, 4), (4, 5), (8, 10)], [(5, 8), (0, 2), (7, 9)]) == [1, 0, 0, 1]


@st.composite
def offsets_and_spans(draw: st.DrawFn) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    cuts = sorted(draw(st.lists(st.integers(0, 40), max_size=15)))
    offsets = list(zip([0, *cuts], [*cuts, 40], strict=True))
    spans = [tuple(sorted(pair)) for pair in draw(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)),
                                                           max_size=5))]
    return offsets, spans  # type: ignore[return-value]


@given(offsets_and_spans())
def test_matches_the_definition(case: tuple[list[tuple[int, int]], list[tuple[int, int]]]) -> None:
    offsets, spans = case
    expected = [
        int(any(a <= char < b for char in range(start, end) for a, b in spans)) for start, end in offsets
    ]
    assert assistant_mask(offsets, spans) == expected
