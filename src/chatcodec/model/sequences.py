"""The shapes of model input and output: one sequence or a batch, text or token ids.

What lives here: telling text from token ids and single sequences from batches (lists, tuples,
and arrays or tensors through their ``tolist()``, so numpy and torch are never imported), for the
model-level ``parse_response`` / ``decode`` and a parser's ``feed``.

Rules kept: the shapes are the reference's (transformers 5.24 ``PreTrainedTokenizerBase.decode /
parse_response``): a string or a 1-D sequence of ids is one sequence; a list of them or a 2-D array
is a batch. Beyond the reference, a batch may mix text and ids. Anything else is a ``TypeError``
naming the argument and the position of the offending item, never a failure deep inside
``tokenizers``.
"""

from __future__ import annotations

import operator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["as_id_list", "is_token_ids", "split_sequences", "to_python", "token_id", "token_id_sequences"]


def to_python(value: Any) -> Any:
    """Arrays and tensors become nested lists through ``tolist()``; other values pass through."""
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) and not isinstance(value, (str, list, tuple)) else value


def token_id(item: Any) -> int | None:
    """``item`` as a token id: an int or an integer scalar (``numpy.int64``, ...), never a bool."""
    if isinstance(item, bool):
        return None
    try:
        return operator.index(item)
    except TypeError:
        return None


def is_token_ids(value: Any) -> bool:
    """Whether ``value`` is a list or tuple of token ids (one sequence)."""
    return isinstance(value, (list, tuple)) and all(token_id(item) is not None for item in value)


def as_id_list(value: Any, what: str) -> list[int]:
    """One sequence of token ids (an id, a list or tuple of ids, or a 1-D array) as a list of ints.

    Args:
        value: the ids.
        what: what they are (``"feed"``, ``"prefix[1]"``), for the message.

    Returns:
        The ids as Python ints.

    Raises:
        TypeError: anything else; the message names ``what``.
    """
    value = to_python(value)
    single = token_id(value)
    if single is not None:
        return [single]
    if isinstance(value, (list, tuple)):
        ids = [token_id(item) for item in value]
        if all(item is not None for item in ids):
            return [item for item in ids if item is not None]
    raise TypeError(f"{what}: expected a token id or a sequence of token ids, got {type(value).__name__}")


def _check_started_ids(value: Any, what: str) -> None:
    """A list or tuple that starts with a token id is one sequence of ids: name its first item that
    is not one (``response[3]: ... got str``) instead of the whole value.

    Raises:
        TypeError: ``value`` starts with a token id and holds an item that is not one.
    """
    if not (isinstance(value, (list, tuple)) and value and token_id(value[0]) is not None):
        return
    for index, item in enumerate(value):
        if token_id(item) is None:
            raise TypeError(f"{what}[{index}]: expected a token id (the sequence starts with token ids), "
                            f"got {type(item).__name__}")


def _sequence(item: Any, what: str, *, text: bool) -> str | list[int]:
    """One item of a batch: text (when ``text`` allows it) or one sequence of ids."""
    item = to_python(item)
    if text and isinstance(item, str):
        return item
    if is_token_ids(item):
        return as_id_list(item, what)
    _check_started_ids(item, what)
    expected = "text or a sequence of token ids" if text else "a sequence of token ids"
    raise TypeError(f"{what}: expected {expected}, got {type(item).__name__}")


def split_sequences(value: Any, what: str) -> tuple[list[str | list[int]], bool]:
    """Split the input of the model-level ``parse_response`` into sequences.

    Follows transformers 5.24 ``PreTrainedTokenizerBase.parse_response``: a string or a 1-D
    sequence of ids is one sequence; a list of strings, a list of id lists or a 2-D array is a
    batch; an empty list is an empty batch. A batch may also mix strings and id lists (the
    reference decodes such a batch as if every item were text, and fails).

    Args:
        value: the response (or prefix).
        what: ``"response"`` or ``"prefix"``, for messages.

    Returns:
        ``(sequences, batched)``; each sequence is a string or a list of ids.

    Raises:
        TypeError: the value is none of those shapes (the message names ``what`` and the item; in a
            sequence that starts with token ids, the first item that is not one).
    """
    value = to_python(value)
    if isinstance(value, str):
        return [value], False
    if isinstance(value, (list, tuple)):
        if is_token_ids(value) and value:
            return [as_id_list(value, what)], False
        _check_started_ids(value, what)
        return [_sequence(item, f"{what}[{index}]", text=True) for index, item in enumerate(value)], True
    raise TypeError(
        f"{what}: expected a string, token ids, a batch of either, or a 1-D/2-D array; "
        f"got {type(value).__name__}"
    )


def token_id_sequences(value: Any, what: str) -> tuple[list[list[int]], bool]:
    """Split the argument of ``decode``: one id, one sequence of ids, or a batch of sequences.

    As transformers 5.24 ``decode``: a single id is a sequence of one (``decode(78)``), an empty
    list is one empty sequence (``decode([]) == ""``), a list of lists is a batch.

    Args:
        value: the ids.
        what: the argument's name, for messages.

    Returns:
        ``(sequences, batched)``.

    Raises:
        TypeError: text, or anything else that is not token ids (the message names the item).
    """
    value = to_python(value)
    single = token_id(value)
    if single is not None:
        return [[single]], False
    if isinstance(value, (list, tuple)):
        if is_token_ids(value):
            return [as_id_list(value, what)], False
        sequences = [_sequence(item, f"{what}[{index}]", text=False) for index, item in enumerate(value)]
        return [ids for ids in sequences if isinstance(ids, list)], True
    raise TypeError(f"{what}: expected a token id, a sequence of token ids or a batch of them "
                    f"(lists, tuples, 1-D/2-D arrays), got {type(value).__name__}")
