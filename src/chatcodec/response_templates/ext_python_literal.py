"""The ``x-python-literal`` content parser: a value as Python's ``str()`` writes a list or a dict.

Some chat templates write a tool-call argument that is not a string with Jinja's ``{{ value }}``
or ``value | string``, which is Python's ``str()``: ``{'units': 'metric', 'on': True, 'note': None}``
(Seed-OSS, Qwen3-Coder). No JSON reader takes that text back, so the tool schemas cannot type it
(SPEC §1.6 casts objects and arrays from JSON). vLLM's and SGLang's parsers for these families
try ``json.loads`` and then ``ast.literal_eval``; this parser is the same idea as a value parser
(``xml-inline``'s ``value_parser``), with the literal reader of ``x-pythonic`` (:mod:`ast`, never
``eval``):

* a text whose stripped form starts with ``[`` or ``{``, is not JSON and is one Python list or dict
  literal becomes that value (``True``/``False``/``None``; a tuple inside it reads as a list);
* any other text is returned as written (a scalar, JSON text, a malformed literal, a literal nested
  more than ``MAX_NESTING_DEPTH`` levels deep): the tool schemas type it afterwards as they type any
  text argument, so ``"7"`` becomes ``7`` only where the schema says ``integer``, and JSON text
  becomes an object only where it says ``object``.

Only text that JSON cannot read is converted, because only Python's ``str()`` writes it: a
template that writes strings as they are and containers with ``str()`` gives a string argument
``{"a": 1}`` and a dict argument ``{'a': 1}``. A string argument whose text is itself a Python
literal (``['x']``) cannot be told from a list by the text alone, and comes back as the list.

There are no ``content_args``. Nothing is lost: text that is not read as a literal is the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.ext_common import reject_skip_invalid

__all__ = ["parse_python_literal_value", "validate_python_literal"]


def validate_python_literal(args: Mapping[str, Any], where: str) -> None:
    """Check the ``content_args`` of an ``x-python-literal`` value (it takes none).

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: any key.
    """
    reject_skip_invalid(args, where)
    if args:
        raise ValueError(f"{where}: unknown key(s) {sorted(args)}; x-python-literal takes no content_args")


def parse_python_literal_value(text: str, args: Mapping[str, Any]) -> Any:
    """A list or dict written by Python's ``str()``, else the text as written (module docstring).

    Args:
        text: the value's raw text.
        args: the ``content_args`` (none).

    Returns:
        The list or dict, or ``text`` unchanged.
    """
    from chatcodec.response_templates.ext_pythonic import parse_python_literal
    from chatcodec.response_templates.lax_json import loads_json
    from chatcodec.response_templates.limits import exceeds_depth

    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return text
    try:
        loads_json(stripped)
    except (ValueError, RecursionError):
        pass
    else:
        return text  # JSON text: the tool schemas decide whether it is an object or a string
    try:
        value = parse_python_literal(stripped)
    except ValueError:
        return text
    if not isinstance(value, (list, dict)) or exceeds_depth(value):
        return text  # a tuple of scalars reads as a list; deeper than MAX_NESTING_DEPTH stays text
    return value
