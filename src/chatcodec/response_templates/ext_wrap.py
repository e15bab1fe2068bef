"""The ``x-wrap`` content parser: a region's raw text as the one string of a one-key object.

Some tool calls carry their argument as raw text, not as JSON: Llama 3.1's code interpreter and
Functionary's ``python`` tool write the code itself (``<|python_tag|>print(1)``, Functionary v3.2's
``>>>python\\nprint(1)``). llama.cpp reads such a call as ``{"code": <the text>}``
(``common/chat.cpp``, ``wrap_code_as_arguments``), which is what a tool's arguments must be: an
object. ``x-wrap`` gives that object. It is meant as a case of ``x-switch``, chosen by the lead that
only the raw form writes.

``content_args``:

* ``key`` (required, non-empty string): the object's key (``"code"``);
* ``lead`` (string, default ``""``): the literal the text begins with after its leading
  whitespace (the case's lead), which is not part of the value.

The value is ``{key: the text after the lead, exactly as written}``. Nothing is lost: a text that
does not begin with the lead raises ``ValueError`` (an ``ExtensionError`` at its first non-space
character). Its value scanner (:mod:`.scanners.wrap_scan`) streams the text as it comes; the value
runs to the region's end, so with ``close_at_value_end`` the region ends at its close delimiter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.ext_common import ExtensionError, reject_skip_invalid

__all__ = ["parse_wrap", "validate_wrap", "wrapped_start"]

_KEYS = ("key", "lead")


def validate_wrap(args: Mapping[str, Any], where: str) -> None:
    """Check ``x-wrap``'s ``content_args`` when the template loads.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, a missing or empty ``key``, or a ``lead`` that is not a string.
    """
    reject_skip_invalid(args, where)
    unknown = sorted(set(args) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for x-wrap. Known: {list(_KEYS)}")
    key = args.get("key")
    if not isinstance(key, str) or not key:
        raise ValueError(f"{where}.key: must be a non-empty string")
    if not isinstance(args.get("lead", ""), str):
        raise ValueError(f"{where}.lead: must be a string")


def wrapped_start(text: str, lead: str) -> int:
    """Where the wrapped text starts: after leading whitespace and ``lead``.

    Args:
        text: the region text.
        lead: the literal the text must begin with after its leading whitespace.

    Returns:
        The offset just after the lead.

    Raises:
        ExtensionError: the text does not begin with the lead.
    """
    start = len(text) - len(text.lstrip())
    if not text.startswith(lead, start):
        excerpt = text[start : start + 40]
        raise ExtensionError(f"x-wrap: {lead!r} expected at offset {start}, got {excerpt!r}", start)
    return start + len(lead)


def parse_wrap(text: str, args: Mapping[str, Any]) -> dict[str, str]:
    """The text after the lead, under the key (see the module docstring).

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        ``{args["key"]: the text after the lead}``.

    Raises:
        ValueError: the text does not begin with the lead.
    """
    return {args["key"]: text[wrapped_start(text, args.get("lead", "")) :]}
