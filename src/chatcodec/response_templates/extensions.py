"""Content-parser extensions (``x-`` names) for formats the standard parsers cannot express.

A template that uses an ``x-`` parser needs chatcodec: the reference (transformers) does not know
these names. Each entry maps the name to an :class:`Extension` ``(parse, validate, string_aware)``:

* ``parse(text, args) -> value`` turns the raw region text into a value and raises ``ValueError``
  (naming what is wrong and where in ``text``) when it cannot;
* ``validate(args, where) -> None`` checks ``content_args`` when the template is loaded and raises
  ``ValueError`` naming ``where`` (e.g. ``"fields.tool_calls.content_args"``) and the bad key;
* ``prepare`` (optional): ``(args) -> (text) -> value``, ``parse`` with ``args`` bound and whatever
  they name (patterns, nested parsers) compiled once, when the template loads;
* ``string_aware`` (default false) says the region's text is JSON-like: the engine then counts the
  region's close delimiter only outside strings (``"..."`` with backslash escapes, and the
  ``string_delims`` pairs of the region's ``content_args``), as it does for ``json`` regions, so
  ``{"t": "a</tool_call>b"}`` does not end a ``</tool_call>`` region. A plain ``(parse, validate)``
  pair is accepted and means ``string_aware=False``.

Extension regions always stream ``dirty`` (their value only exists at close).

The extensions (documented in ``docs/profiles.md``, section "Content-parser extensions"):

* ``x-pythonic`` (:mod:`.ext_pythonic`): ``[f(a=1, b="x"), g()]`` via :mod:`ast`, never ``eval``;
* ``x-json-calls`` (:mod:`.ext_json_calls`): JSON tool calls, one or many, ``;``/newline/marker
  separated, name/arguments key aliases, name-as-key, stringified arguments;
* ``x-findall`` (:mod:`.ext_findall`): every match of a regex, its named groups parsed by named
  content parsers (several calls inside one section; typed per-parameter tags);
* ``x-first`` (:mod:`.ext_findall`): the first of several content parsers that accepts the text;
* ``x-xml-tree`` (:mod:`.ext_xml_tree`): nested elements as objects and ``<item>`` arrays;
* ``x-bare-object`` (:mod:`.ext_bare_object`): ``{key:value}`` with bare keys of any text and
  delimited strings (Gemma 4's call arguments);
* ``x-python-literal`` (:mod:`.ext_python_literal`): a value parser for arguments written with
  Python's ``str()`` (``{'a': True}``): such a list or dict is read, any other text kept as written;
* ``x-named-call`` (:mod:`.ext_named_call`): one call written as its name, then its JSON arguments
  (Mistral v11+ ``NAME[ARGS]{...}``);
* ``x-switch`` (:mod:`.ext_switch`): the parser chosen by how the text begins (a Hermes
  ``<tool_call>`` holding a JSON call or ``<function=NAME>{...}</function>``);
* ``x-wrap`` (:mod:`.ext_wrap`): the raw text as the one string of a one-key object (the code a
  ``<|python_tag|>`` call writes, as ``{"code": ...}``).

None of them drops a malformed call or stray text (:mod:`.ext_common`): they raise ``ValueError``.

``x-findall``, ``x-first`` and ``x-xml-tree`` take nested ``{"name": parser, "args": {...}}`` specs,
which may name a standard parser or another extension; they are checked by
:func:`~chatcodec.response_templates.content.check_parser_spec` (re-exported here) and resolved once
when the template loads, by each entry's ``prepare`` (``Extension.prepare``), the same way the
template loader resolves a field's ``content``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from chatcodec.response_templates.content import (
    ParseFn,
    Prepared,
    ValidateFn,
    check_parser_spec,
    run_parser,
)
from chatcodec.response_templates.ext_bare_object import parse_bare_object, validate_bare_object
from chatcodec.response_templates.ext_findall import (
    parse_findall,
    parse_first,
    prepare_findall,
    prepare_first,
    validate_findall,
    validate_first,
)
from chatcodec.response_templates.ext_json_calls import parse_json_calls, validate_json_calls
from chatcodec.response_templates.ext_named_call import parse_named_call, validate_named_call
from chatcodec.response_templates.ext_python_literal import (
    parse_python_literal_value,
    validate_python_literal,
)
from chatcodec.response_templates.ext_pythonic import parse_pythonic, validate_pythonic
from chatcodec.response_templates.ext_switch import parse_switch, prepare_switch, validate_switch
from chatcodec.response_templates.ext_wrap import parse_wrap, validate_wrap
from chatcodec.response_templates.ext_xml_tree import parse_xml_tree, prepare_xml_tree, validate_xml_tree
from chatcodec.response_templates.scanners.protocol import ValueScanner

__all__ = ["EXTENSIONS", "Extension", "ParseFn", "ValidateFn", "check_parser_spec", "run_parser"]


class Extension(NamedTuple):
    """One entry of :data:`chatcodec.response_templates.extensions.EXTENSIONS` (the ``x-`` contract).

    A plain ``(parse, validate)`` pair is accepted too (``string_aware`` is then false).

    Attributes:
        parse: ``(raw_text, content_args) -> value``; raises ``ValueError``.
        validate: ``(content_args, where) -> None``; raises ``ValueError`` naming ``where`` and the key.
        string_aware: the region's text is JSON-like, so its close delimiter only counts outside
            strings (``"..."`` and the ``string_delims`` pairs of ``content_args``).
        scanner: ``(content_args) -> ValueScanner | None``, the parser's value scanner for
            ``value_deltas`` (``docs/streaming_values.md``); ``None``: the bundled one by name, if any.
        prepare: ``(content_args) -> (raw_text) -> value``, the parser with its arguments bound and
            its nested parsers resolved once at load (:attr:`.content.ContentParser.prepare`); ``None``:
            ``parse`` with the arguments bound.
    """

    parse: ParseFn
    validate: ValidateFn
    string_aware: bool = False
    scanner: Callable[[Mapping[str, Any]], Any] | None = None
    prepare: Callable[[Mapping[str, Any]], Prepared] | None = None


def _named_call_scanner(args: Mapping[str, Any]) -> ValueScanner:
    from chatcodec.response_templates.scanners.named_call_scan import named_call_scanner

    return named_call_scanner(args)


def _wrap_scanner(args: Mapping[str, Any]) -> ValueScanner:
    from chatcodec.response_templates.scanners.wrap_scan import wrap_scanner

    return wrap_scanner(args)


def _switch_scanner(args: Mapping[str, Any]) -> ValueScanner | None:
    from chatcodec.response_templates.scanners.switch_scan import switch_scanner

    return switch_scanner(args)


#: ``x-`` parser name -> (parse, validate, string_aware). Names must start with ``"x-"``.
EXTENSIONS: dict[str, Extension] = {
    "x-pythonic": Extension(parse_pythonic, validate_pythonic),
    "x-json-calls": Extension(parse_json_calls, validate_json_calls, string_aware=True),
    "x-findall": Extension(parse_findall, validate_findall, prepare=prepare_findall),
    "x-first": Extension(parse_first, validate_first, prepare=prepare_first),
    "x-xml-tree": Extension(parse_xml_tree, validate_xml_tree, prepare=prepare_xml_tree),
    "x-bare-object": Extension(parse_bare_object, validate_bare_object, string_aware=True),
    "x-python-literal": Extension(parse_python_literal_value, validate_python_literal),
    "x-named-call": Extension(parse_named_call, validate_named_call, string_aware=True,
                              scanner=_named_call_scanner),
    "x-switch": Extension(parse_switch, validate_switch, string_aware=True, scanner=_switch_scanner,
                          prepare=prepare_switch),
    "x-wrap": Extension(parse_wrap, validate_wrap, scanner=_wrap_scanner),
}
