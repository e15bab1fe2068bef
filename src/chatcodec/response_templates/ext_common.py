"""What every ``x-`` content parser shares: the rule that a malformed tool call is never dropped.

The ``x-`` parsers once had a ``skip_invalid`` argument that dropped malformed calls (and text that
was not a call) without a trace, even with ``errors="strict"``, which broke SPEC §1.5 "nothing is
lost". It is gone: a parser raises ``ValueError`` and the engine turns that into a
``ResponseParseError`` carrying the partial message and the raw region text (strict), or a
``parse_errors`` record holding the raw text (keep). A template that still sets it gets a load
error saying so, rather than a generic "unknown key".

:class:`ExtensionError` is the ``ValueError`` the parsers raise when they know where in the region
text the problem is: the engine reads its ``position`` to report the offset in the generated text
and to point the caret of the error message at it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.content_error import ContentError

__all__ = ["ExtensionError", "reject_skip_invalid"]


class ExtensionError(ContentError):
    """An ``x-`` parser's failure at a known place in the region text (see :class:`ContentError`)."""


def reject_skip_invalid(args: Mapping[str, Any], where: str) -> None:
    """Refuse the removed ``skip_invalid`` key with the reason and what to use instead.

    Args:
        args: an ``x-`` parser's ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: ``args`` has ``skip_invalid``.
    """
    if "skip_invalid" in args:
        raise ValueError(
            f"{where}.skip_invalid: skip_invalid was removed: a malformed tool call raises "
            "(errors='strict') or is recorded with its raw text under parse_errors (errors='keep'), "
            "never dropped. Remove the key"
        )
