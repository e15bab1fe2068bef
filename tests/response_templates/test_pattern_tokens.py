"""The pattern tokenizer's top-level split, shared by the delimiter, prompt-end and value-split
analyses."""

from __future__ import annotations

from chatcodec.response_templates.pattern_tokens import tokens, top_level_alternatives


def test_a_pattern_without_a_top_level_bar_is_one_alternative() -> None:
    assert top_level_alternatives(tokens("<think>")) == [["<", "t", "h", "i", "n", "k", ">"]]


def test_bars_inside_groups_and_classes_do_not_cut() -> None:
    assert top_level_alternatives(tokens("(?:a|b)c|[|]d")) == [
        ["(?:", "a", "|", "b", ")", "c"],
        ["[|]", "d"],
    ]


def test_whole_token_constructs_do_not_open_a_group() -> None:
    # inline flags, a comment and a recursion are single tokens ending with ')': the bar after
    # each is still at the top level.
    assert top_level_alternatives(tokens("(?i)a|(?#note)b|(?1)|c")) == [
        ["(?i)", "a"],
        ["(?#note)", "b"],
        ["(?1)"],
        ["c"],
    ]


def test_look_arounds_and_anchors_stay_with_their_alternative() -> None:
    assert top_level_alternatives(tokens("<think>|^(?=</think>)")) == [
        ["<", "t", "h", "i", "n", "k", ">"],
        ["^", "(?=", "<", "/", "t", "h", "i", "n", "k", ">", ")"],
    ]
