"""The ``x-switch`` content parser: the parser is chosen by how the region's text begins.

Some formats write one region in several ways that a single parser cannot read but whose first
characters tell apart: a Hermes ``<tool_call>`` holds a JSON call (``{"name": ...}``, or an array
of them) or, as llama.cpp's Hermes 2 Pro parser also reads, ``<function=NAME>{arguments}</function>``.
``x-switch`` reads the text after its leading whitespace and hands the whole region text to the
parser of the first case whose ``lead`` that text starts with.

``content_args``:

* ``cases`` (required): a non-empty list of ``{"lead": str, "parser": {"name", "args"}}``, tried in
  order; ``"lead": ""`` matches any text, so it only makes sense as the last case (a fallback).
  A text of only whitespace goes to the first case.

Nothing is lost: a text that no case's lead begins raises ``ValueError`` (an ``ExtensionError`` at
the offset of its first non-space character) naming the leads, and the chosen parser follows its
own nothing-lost rules. The value is the chosen parser's, as if the field named that parser.

The parser is registered ``string_aware`` (the region's close delimiter counts only outside
``"..."`` strings, as for ``json`` and ``x-json-calls``): it is meant for JSON-like cases; a region
whose cases write single-quoted strings with unbalanced ``"`` inside (Python calls) should not use it.

Streaming (:mod:`.scanners.switch_scan`): the case is decided as soon as the text's first
characters settle it, and the case's value scanner then reads the region; ``close_at_value_end``
works when every case's parser finds its value's end (``value_end.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatcodec.response_templates.content import Prepared, check_parser_spec, get_parser, prepare_parser
from chatcodec.response_templates.ext_common import ExtensionError, reject_skip_invalid

__all__ = ["choose_case", "parse_switch", "prepare_switch", "validate_switch"]

#: What a case is decided by: more text may still change the choice (``None``), or the case index.
UNDECIDED = None


def validate_switch(args: Mapping[str, Any], where: str) -> None:
    """Check ``x-switch``'s ``content_args`` when the template loads.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, ``cases`` not a non-empty list of ``{"lead", "parser"}``, a lead
            that is not a string, a case after a ``""`` lead (it could never be chosen), or a parser
            spec that :func:`check_parser_spec` refuses.
    """
    reject_skip_invalid(args, where)
    unknown = sorted(set(args) - {"cases"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for x-switch. Known: ['cases']")
    cases = args.get("cases")
    if not isinstance(cases, list) or not cases:
        raise ValueError(f"{where}.cases: must be a non-empty list of {{lead, parser}}")
    for index, case in enumerate(cases):
        at = f"{where}.cases[{index}]"
        if not isinstance(case, Mapping) or set(case) != {"lead", "parser"}:
            raise ValueError(f"{at}: must be an object with exactly the keys 'lead' and 'parser'")
        if not isinstance(case["lead"], str):
            raise ValueError(f"{at}.lead: must be a string")
        if index and cases[index - 1]["lead"] == "":
            raise ValueError(f"{at}: follows a case whose lead is \"\" (it matches any text), "
                             "so it is never chosen")
        check_parser_spec(case["parser"], f"{at}.parser")


def choose_case(leads: Sequence[str], text: str, final: bool) -> int | None:
    """The index of the case that reads ``text``, ``None`` while more text may change it, or ``-1``.

    Args:
        leads: the cases' leads, in order.
        text: the region text so far.
        final: ``text`` is the whole region text (nothing more follows).

    Returns:
        The first case whose lead the text (after its leading whitespace) starts with, once no
        earlier case can still match; ``None`` when that is not yet decided; ``-1`` when no case can
        match. A text of only whitespace is decided by the first case when ``final``.
    """
    start = len(text) - len(text.lstrip())
    if start == len(text):
        return 0 if final else UNDECIDED
    for index, lead in enumerate(leads):
        if text.startswith(lead, start):
            return index
        if not final and lead.startswith(text[start:]):
            return UNDECIDED
    return -1


def parse_switch(text: str, args: Mapping[str, Any]) -> Any:
    """The value of the case's parser that ``text`` begins as (see the module docstring).

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        That parser's value.

    Raises:
        ValueError: no case's lead begins the text, or the chosen parser rejects it.
    """
    return prepare_switch(args)(text)


def prepare_switch(args: Mapping[str, Any]) -> Prepared:
    """``x-switch`` with ``args`` bound: the cases' parsers resolved once, at load.

    Args:
        args: the validated ``content_args``.

    Returns:
        ``(raw_text) -> value``, which returns and raises what :func:`parse_switch` does.
    """
    leads = [case["lead"] for case in args["cases"]]
    parsers = [prepare_parser(get_parser(case["parser"].get("name", "text")), case["parser"].get("args", {}))
               for case in args["cases"]]

    def parse(text: str) -> Any:
        index = choose_case(leads, text, final=True)
        if index is None or index < 0:
            start = len(text) - len(text.lstrip())
            excerpt = text[start : start + 40]
            raise ExtensionError(
                f"x-switch: the text at offset {start} ({excerpt!r}) begins as none of the cases: "
                f"expected one of the leads {leads}",
                start,
            )
        return parsers[index](text)

    return parse
