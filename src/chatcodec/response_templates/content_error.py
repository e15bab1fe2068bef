"""The error a content parser raises when it knows where in the region text the problem is.

Content parsers (the standard ones in :mod:`content`, the JSON dialects of
:mod:`lax_json` and the ``x-`` parsers) raise ``ValueError`` for text they cannot turn into a
value. When they raise :class:`ContentError` instead, the engine reads its ``position`` to report
the offset in the generated text (``ResponseParseError.offset``) and to point the error message
at it.
"""

from __future__ import annotations

__all__ = ["ContentError"]


class ContentError(ValueError):
    """A content parser's failure at a known place in the region text.

    Args:
        message: what is wrong, starting with the parser's name (``"xml-inline: ..."``).
        position: index in the region's raw text where the problem starts, or ``None`` when it
            cannot be mapped back to the raw text (a JSON dialect's rewritten text).

    Attributes:
        position: as given.
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position
