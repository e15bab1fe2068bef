"""Value scanners: incremental readers that say what a region's value already is, as it is written.

The partial-value protocol (``docs/streaming_values.md``) has two halves. This package is the
content-parser half: one scanner per content parser that can be followed soundly (:mod:`.protocol`
says what a scanner promises, :mod:`.shadow` how a partly emitted value is finished from the real
one). The engine half (path mapping through transforms, argument typing, events) is
:mod:`chatcodec.response_templates.value_stream`.

:func:`scanner_for` finds the scanner of a parser by name; a parser without one (``x-first``,
``kv-lines``, ``json`` with ``allow_non_json``, the scalar parsers) streams no values: its value
arrives whole at close. The scanner modules are imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from chatcodec.response_templates.content import STANDARD_PARSERS
from chatcodec.response_templates.scanners.protocol import Delta, Path, ScannerFactory, ValueScanner

__all__ = ["GRANULARITIES", "SCANNERS", "Delta", "Path", "ScannerFactory", "ValueScanner", "factory_for",
           "granularity", "has_scanner", "scanner_for"]

#: content parser name -> ``"module:factory"`` of its scanner (modules of this package).
SCANNERS: dict[str, str] = {
    "json": "json_scan:json_scanner",
    "text": "text_scan:text_scanner",
    "x-json-calls": "json_calls_scan:json_calls_scanner",
    "x-findall": "regex_items_scan:findall_scanner",
    "xml-inline": "regex_items_scan:xml_inline_scanner",
    "x-bare-object": "bare_object_scan:bare_object_scanner",
    "x-pythonic": "pythonic_scan:pythonic_scanner",
    "python-call-list": "pythonic_scan:python_call_list_scanner",
    "x-first": "first_scan:first_scanner",
    "x-xml-tree": "xml_tree_scan:xml_tree_scanner",
}


#: parser name -> (the registry entry it was found from, its scanner factory): found once per name,
#: not at every region open; an entry registered anew under the name is looked up again
_FACTORIES: dict[str, tuple[Any, ScannerFactory | None]] = {}


@lru_cache(maxsize=1)
def _extensions() -> Mapping[str, Any]:
    """The ``x-`` parser registry (imported on first use, then read without an import statement)."""
    from chatcodec.response_templates.extensions import EXTENSIONS

    return EXTENSIONS


def _factory(name: str) -> ScannerFactory | None:
    entry: Any = STANDARD_PARSERS.get(name)
    if entry is None and name.startswith("x-"):
        entry = _extensions().get(name)
    known = _FACTORIES.get(name)
    if known is not None and known[0] is entry:
        return known[1]
    factory = _find_factory(name)
    _FACTORIES[name] = (entry, factory)
    return factory


def _find_factory(name: str) -> ScannerFactory | None:
    from chatcodec.response_templates.content import lookup_parser

    parser = lookup_parser(name)
    own: ScannerFactory | None = getattr(parser, "scanner", None) if parser is not None else None
    target = SCANNERS.get(name)
    if own is not None or target is None:
        return own
    module, function = target.split(":")
    factory: ScannerFactory = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return factory


def factory_for(name: str) -> ScannerFactory | None:
    """The scanner factory of the content parser ``name`` (``None``: it has none), for a caller
    that makes many scanners of one parser (``x-switch`` resolves its cases' factories once)."""
    return _factory(name)


def scanner_for(name: str, args: Mapping[str, Any]) -> ValueScanner | None:
    """A new scanner for one region (or nested part) read by the content parser ``name``.

    Args:
        name: the content parser's name.
        args: its ``content_args`` (validated at load).

    Returns:
        A fresh scanner, or ``None`` when the parser (with these arguments) has none.
    """
    factory = _factory(name)
    return None if factory is None else factory(args)


#: The ways a region can stream its value, from the finest to the coarsest (:func:`granularity`).
GRANULARITIES = ("as written", "as its parsers agree", "each match whole", "whole at close")


def granularity(name: str, args: Mapping[str, Any]) -> str:
    """How a region of parser ``name`` streams its value, in words (for docs and reports).

    A parser that reads part of its text with another parser (``x-first``'s parsers, the streamed
    group of ``x-findall`` and ``xml-inline``) streams no finer than that parser. A regex whose
    value group stands in branches (``pattern_split.split_branches``) counts as its streamed
    branches do; a branch that no opening makes certain (MiniCPM5's CDATA parameter, which could
    still be a plain value until its ``]]>``) sets its match whole all the same.

    Returns:
        One of :data:`GRANULARITIES`: ``"as written"``, ``"as its parsers agree"`` (``x-first``:
        what the parsers still possible read alike, then the one left), ``"each match whole"`` (a
        regex that does not split around its value group) or ``"whole at close"``.
    """
    if not has_scanner(name, args):
        return "whole at close"
    if name == "x-first":
        inner = _coarsest(args["parsers"])
        return "as its parsers agree" if inner == "as written" else inner
    if name == "x-switch":
        return _coarsest([case["parser"] for case in args["cases"]])
    if name in ("x-findall", "xml-inline"):
        from chatcodec.response_templates.scanners.regex_items_scan import streamed_groups

        groups = streamed_groups(name, args)
        if not groups:
            return "each match whole"
        if name == "xml-inline":
            specs = [args.get("value_parser")]
        else:
            specs = [args.get("value_parsers", {}).get(group) for group in groups]
        return _coarsest([spec for spec in specs if spec is not None]) if any(specs) else "as written"
    return "as written"


def _coarsest(specs: list[Mapping[str, Any]]) -> str:
    """The coarsest granularity of parser specs (``{"name", "args"}``; a missing name is ``text``)."""
    ways = [granularity(spec.get("name", "text"), spec.get("args", {})) for spec in specs]
    return max(ways, key=GRANULARITIES.index)


def has_scanner(name: str, args: Mapping[str, Any]) -> bool:
    """Whether regions of parser ``name`` with ``args`` stream their values (``scanner_for`` gives one)."""
    return scanner_for(name, args) is not None
