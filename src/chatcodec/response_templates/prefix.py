"""The prompt prefix: why a parser needs it and what it may be.

Rule kept here (SPEC §1.8, the reference's wording): ``prefix`` is required, because a chat
template often pre-writes part of the assistant message (an opening ``<think>``) that the parser
must see; ``""`` (or ``[]``, as in the reference) opts out explicitly. The response engine takes
text only: token ids are decoded by the model layer (:mod:`chatcodec.model.responses`) first. What
of the prefix is fed (the part after the last start anchor) is
:meth:`~chatcodec.response_templates.template.ResponseTemplate.truncate_prefix`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

__all__ = ["PREFIX_REQUIRED", "prefix_text", "require_prefix"]

_T = TypeVar("_T")

#: Why ``prefix`` is required (the reference's message).
PREFIX_REQUIRED = (
    "ResponseParser/parse_response requires `prefix` (the chat prompt sent to the model before "
    "generation), because chat templates often pre-write part of the assistant message (e.g. an "
    "opening `<think>` tag) that the parser must see to parse the output correctly. If the "
    'generation already contains the complete message, pass `prefix=""` to opt out explicitly.'
)


def require_prefix(prefix: _T | None) -> _T:
    """Refuse a missing ``prefix`` with the reason it is required.

    Args:
        prefix: the prompt as given (text, ids or ``[]``), or ``None``.

    Returns:
        ``prefix``, which is not ``None``.

    Raises:
        ValueError: ``prefix`` is ``None``; the message is :data:`PREFIX_REQUIRED`.
    """
    if prefix is None:
        raise ValueError(PREFIX_REQUIRED)
    return prefix


def prefix_text(prefix: str | Sequence[Any]) -> str:
    """The prompt text a response parser is given: the string itself, or ``""`` for ``[]``.

    Args:
        prefix: the prompt (not ``None``; see :func:`require_prefix`).

    Returns:
        The prompt text.

    Raises:
        TypeError: anything else, such as token ids (the message says where ids are accepted).
    """
    if isinstance(prefix, str):
        return prefix
    if isinstance(prefix, (list, tuple)) and not prefix:
        return ""
    raise TypeError(
        f"prefix: expected the prompt text, got {type(prefix).__name__}; decode token ids first "
        "(ChatCodec.get_response_parser accepts token ids)")
