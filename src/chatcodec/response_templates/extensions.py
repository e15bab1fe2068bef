"""Content-parser extensions (``x-`` names) for formats the seven standard parsers cannot express.

A template that uses an ``x-`` parser needs chatcodec: the reference (transformers) does not know
these names. Each entry maps the name to ``(parse, validate)``:

* ``parse(text, args) -> value`` turns the raw region text into a value and raises ``ValueError``
  (naming what is wrong and where in ``text``) when it cannot;
* ``validate(args, where) -> None`` checks ``content_args`` when the template is loaded and raises
  ``ValueError`` naming ``where`` (e.g. ``"fields.tool_calls.content_args"``) and the bad key.

Extension regions always stream ``dirty`` (their value only exists at close).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["EXTENSIONS", "ParseFn", "ValidateFn"]

ParseFn = Callable[[str, Mapping[str, Any]], Any]
ValidateFn = Callable[[Mapping[str, Any], str], None]

#: ``x-`` parser name -> (parse, validate). Names must start with ``"x-"``.
EXTENSIONS: dict[str, tuple[ParseFn, ValidateFn]] = {}
