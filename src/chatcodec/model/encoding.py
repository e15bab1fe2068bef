"""Rendered prompts to token ids: the ``tokenize=True`` half of ``apply_chat_template``.

What lives here: encoding a rendered prompt (plainly, or piece-wise when control tokens were
sanitised), its assistant mask, and the batch output the reference returns (``input_ids``,
``attention_mask``, ``assistant_masks``) with truncation, padding and ``return_tensors``. Rendering
is not done here (:mod:`chatcodec.chat_templates`), and nothing here reads files.

Rule kept: every entry point goes through :func:`encode_chat`, so the ids and the mask of a
prompt are the same whether it is encoded alone, in a batch, padded, truncated or sanitised.
Padding and truncation follow transformers 5.24 (``padding=True``/``"longest"``/``"max_length"``,
``padding_side`` and ``truncation_side`` from ``tokenizer_config.json``); padded positions have
attention and mask 0.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from chatcodec.model.control_tokens import encode_marked_chat
from chatcodec.model.masks import assistant_mask
from chatcodec.model.tokenizer import Tokenizer

__all__ = ["MAX_PADDED_TOKENS", "EncodedChat", "PaddingOptions", "batch_output", "encode_chat"]

#: Most token ids one call may pad its prompts to, over the whole batch (the padded length times the
#: number of prompts): ``padding="max_length", max_length=10**10`` asked for lists of ten billion ids
#: and died with a bare ``MemoryError`` (or the system's out-of-memory killer). 2**26 ids are about
#: 1 GB of ``input_ids`` and ``attention_mask`` lists; the longest context of a model today (10M
#: tokens) fits with room. Read at each call.
MAX_PADDED_TOKENS = 2**26


@dataclass
class EncodedChat:
    """One prompt's ids, their character spans, and its assistant mask (or ``None``)."""

    ids: list[int]
    offsets: list[tuple[int, int]]
    mask: list[int] | None = None


def encode_chat(tokenizer: Tokenizer, text: str, spans: Sequence[tuple[int, int]] | None,
                control_tokens: Iterable[str] | None) -> EncodedChat:
    """Encode a rendered prompt without post-processor tokens (the template writes its own).

    Args:
        tokenizer: the model's tokenizer.
        text: the rendered prompt (with control-token markers when ``control_tokens`` is set).
        spans: the ``{% generation %}`` character spans of ``text``, or ``None`` for no mask.
        control_tokens: the tokens marked in the inputs (sanitising), or ``None``.

    Returns:
        The ids, their character offsets, and the assistant mask when ``spans`` is given.

    Raises:
        ControlTokenError: a marked control token cannot be encoded as plain text.
    """
    if control_tokens is None:
        ids, offsets = tokenizer.encode_with_offsets(text)
    else:
        ids, offsets = encode_marked_chat(tokenizer, text, control_tokens)
    mask = assistant_mask(offsets, spans) if spans is not None else None
    return EncodedChat(ids, offsets, mask)


@dataclass
class PaddingOptions:
    """The reference's padding / truncation arguments, with the model's defaults filled in."""

    padding: bool | str = False
    truncation: bool | str = False
    max_length: int | None = None
    pad_token_id: int | None = None
    padding_side: str = "right"
    truncation_side: str = "right"
    model_max_length: int | None = None
    pad_to_multiple_of: int | None = None

    def target_length(self, lengths: list[int]) -> int | None:
        """The padded length, or ``None`` for no padding.

        Args:
            lengths: the lengths of the encoded prompts.

        Returns:
            The length to pad every prompt to, or ``None``.

        Raises:
            ValueError: an unknown ``padding`` value, ``"max_length"`` with no length known, or a
                padded batch of more than :data:`MAX_PADDED_TOKENS` ids.
        """
        strategy = self.strategy()
        if strategy == "do_not_pad":
            return None
        if strategy == "longest":
            length = max(lengths, default=0)
        else:
            known = self.max_length if self.max_length is not None else self.model_max_length
            if known is None:
                raise ValueError(
                    "padding='max_length': pass max_length= (the model sets no model_max_length)")
            length = known
        multiple = self.pad_to_multiple_of
        length = length if not multiple else -(-length // multiple) * multiple
        if length > max(lengths, default=0) and length * len(lengths) > MAX_PADDED_TOKENS:
            source = "max_length" if strategy == "max_length" and self.max_length is not None else (
                "model_max_length" if strategy == "max_length" else "the longest prompt")
            rounded = f" rounded up to a multiple of pad_to_multiple_of ({multiple:,})" if multiple else ""
            raise ValueError(
                f"padding: {len(lengths):,} prompt(s) padded to {length:,} tokens ({source}{rounded}) would "
                f"hold {length * len(lengths):,} token ids, more than MAX_PADDED_TOKENS "
                f"({MAX_PADDED_TOKENS:,}, in chatcodec.model.encoding); pass a smaller max_length or "
                "pad_to_multiple_of")
        return length

    def strategy(self) -> str:
        """The padding strategy: ``"longest"``, ``"max_length"`` or ``"do_not_pad"``.

        Raises:
            ValueError: an unknown ``padding`` value.
        """
        strategy = "longest" if self.padding is True else (self.padding or "do_not_pad")
        if strategy not in ("longest", "max_length", "do_not_pad"):
            raise ValueError(
                f"padding: expected True, False, 'longest', 'max_length' or 'do_not_pad', got {strategy!r}")
        return str(strategy)

    def check_pad_token(self) -> None:
        """The reference's check: asking for padding needs a pad token, even when no prompt is short.

        Raises:
            ValueError: a padding strategy is asked for and the model has no pad token (transformers
                5.24: "Asking to pad but the tokenizer does not have a padding token").
        """
        if self.pad_token_id is None and self.strategy() != "do_not_pad":
            raise ValueError(
                "padding: asked to pad but the model has no pad_token; set one (codec.pad_token = "
                "codec.eos_token, or pad_token in tokenizer_config.json), or pass padding=False")

    def check_multiple(self) -> None:
        """The reference's check: truncating and padding to a multiple need a multiple as length.

        Raises:
            ValueError: ``truncation``, ``padding`` and ``pad_to_multiple_of`` together with a
                ``max_length`` that is not a multiple (the reference's message).
        """
        limit = self.truncation_length() if self.padding not in (False, "do_not_pad") else None
        multiple = self.pad_to_multiple_of
        if limit is not None and multiple and self.max_length is not None and limit % multiple:
            raise ValueError(
                f"Truncation and padding are both activated but truncation length ({limit}) is not a "
                f"multiple of pad_to_multiple_of ({multiple}).")

    def truncation_length(self) -> int | None:
        """The length to truncate to, or ``None`` for no truncation."""
        if self.truncation in (False, "do_not_truncate"):
            return None
        return self.max_length if self.max_length is not None else self.model_max_length


def _truncate(chat: EncodedChat, length: int, side: str) -> None:
    keep = slice(0, length) if side == "right" else slice(max(len(chat.ids) - length, 0), None)
    chat.ids, chat.offsets = chat.ids[keep], chat.offsets[keep]
    if chat.mask is not None:
        chat.mask = chat.mask[keep]


def _pad(values: list[int], length: int, value: int, side: str) -> list[int]:
    fill = [value] * (length - len(values))
    return values + fill if side == "right" else fill + values


def _to_tensors(output: dict[str, Any], return_tensors: str) -> dict[str, Any]:
    modules = {"np": "numpy", "pt": "torch"}
    if return_tensors not in modules:
        raise ValueError(f"return_tensors: expected None, 'np' or 'pt', got {return_tensors!r}")
    try:
        module = importlib.import_module(modules[return_tensors])
    except ImportError:
        raise ImportError(
            f"return_tensors={return_tensors!r} needs {modules[return_tensors]}; install it, "
            "or leave return_tensors=None for lists"
        ) from None
    make = module.array if return_tensors == "np" else module.tensor
    lengths = {len(row) for row in output["input_ids"]}
    if len(lengths) > 1:
        raise ValueError(
            f"return_tensors={return_tensors!r}: the prompts have different lengths {sorted(lengths)}; "
            "pass padding=True"
        )
    return {key: make(value) for key, value in output.items()}


def batch_output(chats: list[EncodedChat], *, batched: bool, options: PaddingOptions,
                 return_tensors: str | None = None) -> dict[str, Any]:
    """The ``return_dict=True`` output of ``apply_chat_template``.

    Args:
        chats: the encoded prompts (changed in place by truncation).
        batched: the input was a batch; otherwise the lists are not nested (unless tensors are
            asked for, which are always 2-D, as in the reference).
        options: padding and truncation.
        return_tensors: ``None`` (lists), ``"np"`` or ``"pt"``.

    Returns:
        ``{"input_ids", "attention_mask"}``, plus ``"assistant_masks"`` when masks were computed.

    Raises:
        ValueError: padding asked for without a pad token (even when no prompt is short, as in the
            reference), or an unknown strategy.
    """
    options.check_pad_token()
    options.check_multiple()
    limit = options.truncation_length()
    if limit is not None:
        for chat in chats:
            _truncate(chat, limit, options.truncation_side)
    target = options.target_length([len(chat.ids) for chat in chats])
    side, pad_id = options.padding_side, options.pad_token_id or 0
    output: dict[str, Any] = {"input_ids": [], "attention_mask": []}
    with_mask = bool(chats) and chats[0].mask is not None
    if with_mask:
        output["assistant_masks"] = []
    for chat in chats:
        length = max(target or 0, len(chat.ids))
        output["input_ids"].append(_pad(chat.ids, length, pad_id, side))
        output["attention_mask"].append(_pad([1] * len(chat.ids), length, 0, side))
        if with_mask:
            output["assistant_masks"].append(_pad(chat.mask or [], length, 0, side))
    if return_tensors is not None:
        return _to_tensors(output, return_tensors)
    return output if batched else {key: value[0] for key, value in output.items()}
