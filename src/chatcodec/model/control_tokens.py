"""Control-token sanitising: special and added tokens typed into user input are encoded as text.

A chat template writes control tokens (``<|im_start|>``, ``[TOOL_CALLS]``, ...) around the user's
strings. If the user's strings contain the same text, a plain ``encode`` of the rendered prompt
turns it into the control token too, and the user can forge turns or tool calls. With
``apply_chat_template(..., sanitize_control_tokens=True)``:

1. :func:`mark_control_tokens` wraps every control token in the inputs (messages, tools, documents,
   extra template variables; not dict keys) between two private-use markers, after removing any
   marker already there (so markers cannot be forged);
2. the template renders as usual;
3. :func:`encode_marked_chat` encodes the marked pieces as plain text (:meth:`Tokenizer.encode_plain_inside`)
   and everything else normally, and reports character offsets in the *marked* text, so the
   ``{% generation %}`` spans of the same render map onto tokens.

The markers and the piece-wise encoding follow transformers 5.24 (``mark_control_tokens``,
``encode_marked_chat``). The control tokens differ: the reference uses the special tokens plus the
added tokens spelled out in the template text (or ``chat_control_tokens``); chatcodec uses every
special and added token (SPEC §2.3), except whitespace-only ones such as Gemma's ``"\\n"``, which
templates and users write as ordinary text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from chatcodec.errors import ControlTokenError
from chatcodec.model.tokenizer import Tokenizer

__all__ = [
    "CONTROL_TOKEN_END",
    "CONTROL_TOKEN_START",
    "control_token_pattern",
    "encode_marked_chat",
    "mark_control_tokens",
    "strip_markers",
]

#: Private-use characters around a control token that came from user input (the reference's values).
CONTROL_TOKEN_START = "\U000f0000"
CONTROL_TOKEN_END = "\U000f0001"


@lru_cache(maxsize=16)
def control_token_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    """A regex matching any of ``tokens``, longest first (a token wins over the tokens it contains).

    Whitespace-only tokens are left out; an empty set matches nothing.

    Args:
        tokens: the control tokens (a tuple, so the compiled pattern can be cached).

    Returns:
        The compiled pattern.
    """
    usable = sorted({token for token in tokens if token and not token.isspace()}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, usable)) or "(?!)")


@lru_cache(maxsize=16)
def _marker_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    inner = control_token_pattern(tokens).pattern
    start, end = CONTROL_TOKEN_START, CONTROL_TOKEN_END
    return re.compile(f"{start}({inner}){end}|[{start}{end}]")


def strip_markers(text: str) -> str:
    """``text`` without any control-token marker."""
    return text.replace(CONTROL_TOKEN_START, "").replace(CONTROL_TOKEN_END, "")


def mark_control_tokens(value: Any, pattern: re.Pattern[str]) -> Any:
    """Wrap the control tokens inside every string of ``value`` with the markers.

    Args:
        value: a string, or lists / tuples / dicts of them (messages, tools, documents, variables);
            other values are returned as they are, dict keys are not marked.
        pattern: from :func:`control_token_pattern`.

    Returns:
        A marked copy (lists for tuples, new dicts); strings lose markers they already had.
    """
    if isinstance(value, str):
        return pattern.sub(lambda match: f"{CONTROL_TOKEN_START}{match[0]}{CONTROL_TOKEN_END}",
                           strip_markers(value))
    if isinstance(value, dict):
        return {key: mark_control_tokens(item, pattern) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [mark_control_tokens(item, pattern) for item in value]
    return value


def _encode_piece(tokenizer: Tokenizer, piece: str, base: int, first: bool,
                  ids: list[int], offsets: list[tuple[int, int]]) -> None:
    """Encode a piece of template-written text starting at ``base``, offsets shifted to match."""
    if first:
        piece_ids, piece_offsets = tokenizer.encode_with_offsets(piece)
        shift = base
    else:  # after a newline, so SentencePiece adds no word-boundary space, then drop the newline
        newline_ids, _ = tokenizer.encode_with_offsets("\n")
        piece_ids, piece_offsets = tokenizer.encode_with_offsets("\n" + piece)
        if piece_ids[: len(newline_ids)] == newline_ids:
            piece_ids = piece_ids[len(newline_ids):]
            piece_offsets = piece_offsets[len(newline_ids):]
            shift = base - 1
        else:
            piece_ids, piece_offsets = tokenizer.encode_with_offsets(piece)
            shift = base
    ids.extend(piece_ids)
    offsets.extend((max(start + shift, base), max(end + shift, base)) for start, end in piece_offsets)


def encode_marked_chat(tokenizer: Tokenizer, chat: str,
                       control_tokens: Iterable[str]) -> tuple[list[int], list[tuple[int, int]]]:
    """Encode a prompt rendered from marked inputs.

    Marked control tokens become plain-text ids (offsets: the whole token's span for each id);
    the rest, including the template's own control tokens, is encoded normally. Lone markers
    (a template split a marked token) are dropped but still separate the text around them.

    Args:
        tokenizer: the model's tokenizer.
        chat: the rendered prompt, markers included.
        control_tokens: the tokens :func:`mark_control_tokens` was given.

    Returns:
        ``(ids, offsets)``, offsets being character spans in ``chat`` (markers included).

    Raises:
        ControlTokenError: the tokenizer turns a control token's text into that control token
            even as plain text, so it cannot be sanitised.
    """
    ids: list[int] = []
    offsets: list[tuple[int, int]] = []
    position = 0
    for match in _marker_pattern(tuple(control_tokens)).finditer(chat):
        if match.start() > position:
            _encode_piece(tokenizer, chat[position:match.start()], position, position == 0, ids, offsets)
        token = match[1]
        if token is not None:
            token_ids = tokenizer.encode_plain_inside(token)
            control_id = tokenizer.token_to_id(token)
            if control_id is not None and control_id in token_ids:
                raise ControlTokenError(
                    f"sanitize_control_tokens: {token!r} cannot be sanitised: the tokenizer produces "
                    "it from plain text. Remove it from the input, or pass sanitize_control_tokens=False."
                )
            ids.extend(token_ids)
            offsets.extend([(match.start(1), match.end(1))] * len(token_ids))
        position = match.end()
    if position < len(chat):
        _encode_piece(tokenizer, chat[position:], position, position == 0, ids, offsets)
    return ids, offsets
