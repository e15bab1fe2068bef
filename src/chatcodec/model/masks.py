"""Assistant masks: ``{% generation %}`` character spans mapped onto tokens.

Rule kept (SPEC §2.3): a token is in the mask when **any** of its characters lies inside a span.
transformers 5.24 computes its mask from token offsets too (a token whose offsets overlap a span),
which gives the same mask for every non-empty span; it differs on an empty span (an assistant turn
with empty content): 5.24 marks a token that straddles the span's position, chatcodec marks none,
since the span holds no character (docs/compatibility.md). 5.23 looked up only a span's first and
last character (``char_to_token``), which lost whole spans and marked user turns. This module needs
only each token's character span, so every entry point (single, batch, padded, truncated,
sanitised) computes the mask the same way.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

__all__ = ["assistant_mask", "merge_spans"]


def merge_spans(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort character spans and merge overlapping or touching ones; empty spans are dropped."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(span for span in spans if span[1] > span[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def assistant_mask(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[int]:
    """1 for each token with a character inside a span, else 0.

    Args:
        offsets: each token's ``(start, end)`` character span in the rendered text; a token
            covering no character (``start == end``, e.g. one a post-processor added) is never
            in the mask.
        spans: the ``{% generation %}`` character spans ``(start, end)`` of the same text.

    Returns:
        One int per token. Runs in O((tokens + spans) log spans).
    """
    merged = merge_spans(spans)
    starts = [start for start, _ in merged]
    mask = []
    for start, end in offsets:
        # the last span starting before the token's end is the only one that can overlap it
        index = bisect_right(starts, end - 1) - 1
        mask.append(1 if end > start and index >= 0 and merged[index][1] > start else 0)
    return mask
