"""The prompt given as ``prefix=`` to the model-level ``parse_response`` / ``get_response_parser``.

What lives here: the shapes a prompt may take (text, ids, a batch of either, a 2-D array, or the
dict ``apply_chat_template`` returns, with its ``attention_mask``), one prompt per response
(:func:`prompts_for`) and a prompt as text (:func:`prompt_text`).

Rules kept:

* Padding is never prompt text. With an attention mask, exactly the masked positions are dropped;
  without one, pad ids are dropped from both ends of the ids (left padding and right padding of a
  batch). The reference decodes the pads, so a right-padded prompt's pad tokens end up in the
  parsed ``content``.
* A prompt without the start anchor is parsed whole, as SPEC §1.5 and the reference say; the
  ``UserWarning`` that says so comes from the response parser's construction
  (:func:`chatcodec.response_templates.prefix.warn_without_start_anchor`), as for every entry point.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from chatcodec.model.sequences import split_sequences, to_python, token_id_sequences
from chatcodec.model.tokenizer import TokenizerHandle

__all__ = ["Prompt", "parser_prompt_text", "prompt_text", "prompts_for", "split_prompts"]


@dataclass(frozen=True)
class Prompt:
    """One prompt as given.

    Attributes:
        sequence: the text, or the token ids.
        what: its name in error messages (``"prefix"``, ``"prefix[1]"``).
        unpadded: padding was already removed (by an attention mask): no pad id is dropped.
    """

    sequence: str | list[int]
    what: str = "prefix"
    unpadded: bool = False


def _masked_rows(prefix: Mapping[str, Any]) -> tuple[list[Prompt], bool]:
    """The prompts of an ``apply_chat_template`` dict: ``input_ids``, minus masked positions."""
    if "input_ids" not in prefix:
        raise TypeError("prefix: a dict must hold input_ids (and attention_mask), as apply_chat_template "
                        f"returns; got keys {sorted(map(str, prefix))}")
    rows, batched = token_id_sequences(prefix["input_ids"], "prefix['input_ids']")
    names = [f"prefix[{index}]" if batched else "prefix" for index in range(len(rows))]
    mask = prefix.get("attention_mask")
    if mask is None:
        return [Prompt(row, name) for row, name in zip(rows, names, strict=True)], batched
    masks, mask_batched = token_id_sequences(mask, "prefix['attention_mask']")
    if mask_batched != batched or len(masks) != len(rows):
        raise ValueError(f"prefix: attention_mask has {len(masks)} row(s) but input_ids has {len(rows)}; "
                         "pass the apply_chat_template output unchanged")
    for index, (row, values) in enumerate(zip(rows, masks, strict=True)):
        if len(row) != len(values):
            at = f"[{index}]" if batched else ""
            raise ValueError(f"prefix: attention_mask{at} has {len(values)} value(s) but input_ids{at} has "
                             f"{len(row)}; pass the apply_chat_template output unchanged")
    prompts = [
        Prompt([token for token, keep in zip(row, values, strict=True) if keep], name, unpadded=True)
        for row, values, name in zip(rows, masks, names, strict=True)
    ]
    return prompts, batched


def split_prompts(prefix: Any) -> tuple[list[Prompt], bool]:
    """Split ``prefix=`` into prompts.

    Args:
        prefix: text, ids, a batch of either, a 1-D/2-D array, or a dict with ``input_ids`` and
            ``attention_mask`` (the ``apply_chat_template`` output, lists or arrays).

    Returns:
        ``(prompts, batched)``.

    Raises:
        TypeError: ``prefix`` is none of those shapes (the message names the item).
        ValueError: the attention mask does not have the shape of the ids.
    """
    prefix = to_python(prefix)
    if isinstance(prefix, Mapping):
        return _masked_rows(prefix)
    sequences, batched = split_sequences(prefix, "prefix")
    prompts = [Prompt(item, f"prefix[{i}]" if batched else "prefix") for i, item in enumerate(sequences)]
    return prompts, batched


def prompts_for(prefix: Any, count: int) -> list[Prompt]:
    """One prompt per response: a single sequence is broadcast, a batch must match in length.

    Args:
        prefix: as for :func:`split_prompts`; ``[]`` opts out (as in the reference).
        count: the number of responses.

    Returns:
        ``count`` prompts.

    Raises:
        ValueError: a batch of another length (the reference's message).
    """
    if isinstance(prefix, (list, tuple)) and not prefix:
        return [Prompt("")] * count
    prompts, batched = split_prompts(prefix)
    if not batched:
        return prompts * count
    if len(prompts) != count:
        raise ValueError(
            f"Got {count} response(s) but {len(prompts)} prefix(es); `prefix` must be a single sequence "
            "(broadcast to every response), or one prefix per response."
        )
    return prompts


def prompt_text(prompt: Prompt, tokenizer: TokenizerHandle, pad_ids: Collection[int]) -> str:
    """A prompt as text: ids decoded with special tokens kept, padding left out.

    Args:
        prompt: the prompt.
        tokenizer: the model's tokenizer (needed for ids only).
        pad_ids: the model's pad ids (its ``pad_token``'s and ``generation_config.json``'s
            ``pad_token_id``), dropped from both ends of ids not already unpadded by a mask.

    Returns:
        The text.

    Raises:
        TokenizerUnavailableError: ids were given and the model has no tokenizer.
        ValueError: an id outside the vocabulary.
    """
    ids = prompt.sequence
    if isinstance(ids, str):
        return ids
    decoder = tokenizer.require()
    decoder.check_ids(ids, prompt.what)  # before padding is cut, so the message's index is right
    start, end = 0, len(ids)
    if not prompt.unpadded:
        while start < end and ids[start] in pad_ids:
            start += 1
        while end > start and ids[end - 1] in pad_ids:
            end -= 1
    return decoder.decode(ids[start:end], what=prompt.what)


def parser_prompt_text(prefix: Any, tokenizer: TokenizerHandle, pad_ids: Collection[int]) -> str | None:
    """``get_response_parser``'s ``prefix=`` as text (``None`` stays ``None``: the parser refuses it).

    Args:
        prefix: text, one sequence of ids (``[]`` opts out, as in the reference), or the
            ``apply_chat_template`` dict of one prompt.
        tokenizer, pad_ids: as for :func:`prompt_text`.

    Returns:
        The prompt text, or ``None``.

    Raises:
        ValueError: a batch of prompts, or an id outside the vocabulary.
        TypeError: anything else.
    """
    if prefix is None or isinstance(prefix, str):
        return prefix
    if isinstance(prefix, (list, tuple)) and not prefix:
        return ""
    prompts, batched = split_prompts(prefix)
    if batched:
        raise ValueError("get_response_parser: prefix= must be a single sequence (text or 1-D ids)")
    return prompt_text(prompts[0], tokenizer, pad_ids)
