"""The prompt prefix: why a parser needs it and what it may be.

Rule kept here (SPEC §1.8, the reference's wording): ``prefix`` is required, because a chat
template often pre-writes part of the assistant message (an opening ``<think>``) that the parser
must see; ``""`` (or ``[]``, as in the reference) opts out explicitly. The response engine takes
text only: token ids are decoded by the model layer (:mod:`chatcodec.model.responses`) first. What
of the prefix is fed (the part after the last start anchor) is
:meth:`~chatcodec.response_templates.template.ResponseTemplate.truncate_prefix`. A non-empty prefix
without the start anchor is parsed whole (SPEC §1.5), which is almost always a prompt rendered
without ``add_generation_prompt``: :func:`warn_without_start_anchor` says so, once per parser, for
every entry point (the parser's construction calls it).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from chatcodec.response_templates.template import ResponseTemplate

    _T = TypeVar("_T")

__all__ = ["NO_START_ANCHOR_HINT", "PREFIX_REQUIRED", "prefix_text", "require_prefix",
           "warn_without_start_anchor"]

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


#: Why a prefix error can come from a prompt without the start anchor (added to such errors).
NO_START_ANCHOR_HINT = ("the prefix has no start anchor, so all of it is parsed as the assistant message: "
                        "was it rendered without add_generation_prompt?")

#: The chatcodec package's folder (``Path(__file__).resolve().parents[1]``, without pathlib's import).
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + "/"


def warn_without_start_anchor(template: ResponseTemplate) -> None:
    """Warn that the prefix lacks the start anchor; the warning points at the first caller outside
    chatcodec, whichever entry point (``parse_response``, ``ResponseParser``, ``ChatCodec``) led here.

    Args:
        template: the loaded response template (its start anchor is named).
    """
    spec = template.spec
    if "start_anchor" in spec:
        anchors = spec["start_anchor"]
        anchor = " or ".join(map(repr, anchors)) if isinstance(anchors, list) else repr(anchors)
    else:
        anchor = f"pattern {spec.get('start_anchor_pattern')!r}"
    warnings.warn(
        f"the prefix does not contain the response template's start anchor {anchor}, so the whole prompt "
        "is parsed as the start of the assistant message and ends up in it. Build the prompt with "
        "add_generation_prompt=True (chatcodec render --generation-prompt), or pass prefix='' "
        "(chatcodec parse --no-prefix) when there is no prompt.", UserWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the chatcodec package, seen from the caller."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level
