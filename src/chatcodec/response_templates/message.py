"""The assistant message under construction: how closed regions become message keys.

SPEC §1.5 "Values" and "Finalize", with chatcodec's "nothing is lost" rules:

* ``repeats`` appends each value to a list; ``join`` concatenates string values with the separator;
  ``flatten`` (a chatcodec extension) appends the items of each value, which must be a list.
* A non-repeating plain-text field (``content: text``, no transform) keeps **all** its text: its value
  is the parsed concatenation of the raw text of every region it had, so the final message agrees
  with the streamed chunks (the reference keeps only the last region). With ``"strip": "blank"``
  a region of only whitespace (the layout between two tool calls) adds nothing.
* Any other non-repeating field that matches a second time is an error (``errors="strict"``) or a
  recorded problem that keeps the first value (``errors="keep"``), never a silent overwrite.
* A field's first value replaces its default (the reference appended a ``join`` to a string default).
* At the end, empty values (``None``, ``""``, ``[]``, ``{}``) are dropped unless the key is in
  ``defaults`` or belongs to a required (``optional: false``) field that matched.

This module never sees the buffer or the events; the engine hands it finished values.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatcodec.response_templates.content import BLANK
from chatcodec.response_templates.template import FieldSpec, ResponseTemplate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PARSE_ERRORS_KEY", "PARSE_WARNINGS_KEY", "MessageBuilder", "copy_value"]

#: Message key under which ``errors="keep"`` records the problems it did not raise.
PARSE_ERRORS_KEY = "parse_errors"
#: Message key of the records about values that parsed but deserve a look (in both error modes):
#: a tool call to a function that is not in ``tools=``.
PARSE_WARNINGS_KEY = "parse_warnings"


def copy_value(value: Any) -> Any:
    """A copy of a JSON-like value (dicts and lists are copied, other values are immutable).

    Iterative, so no nesting and no caller's stack depth can make it raise ``RecursionError``.
    """
    if type(value) in _ATOMS or not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        is_dict = isinstance(target, dict)
        items = source.items() if is_dict else enumerate(source)
        for key, item in items:
            # a str, number or None is copied as is, told without a call (the usual item)
            if type(item) not in _ATOMS and isinstance(item, (dict, list)):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child))
                item = child
            if is_dict:
                target[key] = item
            else:
                target.append(item)
    return root


#: Immutable JSON values (by exact type): :func:`copy_value` keeps them as they are.
_ATOMS = frozenset((str, int, float, bool, type(None)))


#: The values that are empty when they hold nothing (``None`` is empty too).
_CONTAINERS = (str, list, dict)


class MessageBuilder:
    """Collects the values of closed regions into one message.

    Attributes:
        errors: the problems recorded with ``errors="keep"`` (``{"field", "parser", "offset",
            "error", "text", "raw", "span"}`` each).
        warnings: values kept that deserve a look (``{"field", "kind", "name", "offset",
            "message"}`` each; ``kind`` is ``"unknown_tool"``).
    """

    __slots__ = ("_matched", "_template", "_texts", "_values", "errors", "warnings")

    def __init__(self, template: ResponseTemplate) -> None:
        self._template = template
        # a copy of the defaults for each message: the mapping in C, a container value copied deep
        # (plain loops here and in build: each comprehension is a function of its own, which every
        # parse pays for, with cold CPU caches after unrelated work)
        values = dict(template.defaults)
        for key, value in values.items():
            if isinstance(value, (dict, list)):
                values[key] = copy_value(value)
        self._values: dict[str, Any] = values
        self._matched: dict[str, None] = {}  # the fields that matched (a dict is a third of a set's size)
        self._texts: dict[str, list[str]] = {}
        self.errors: list[dict[str, Any]] = []
        self.warnings: list[dict[str, Any]] = []

    def add(self, field: FieldSpec, value: Any, raw: str) -> None:
        """Store the value of one closed region of ``field``.

        Args:
            field: the region's field.
            value: the parsed, transformed, typed value.
            raw: the region's raw text (what a concatenating text field keeps).

        Raises:
            ValueError: ``join`` got a non-string value, ``flatten`` a value that is not a list, or a
                non-repeating structured field matched again; nothing is stored then.
        """
        name = field.name
        first = name not in self._matched
        if field.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"'join' requires each match to parse to a string, got {type(value).__name__}"
                )
            self._values[name] = value if first else self._values[name] + field.join + value
        elif field.flatten:
            if not isinstance(value, list):
                raise ValueError(
                    f"'flatten' requires each match to be a list, got {type(value).__name__}"
                )
            if first:
                self._values[name] = []
            self._values[name].extend(value)
        elif field.repeats:
            if first:
                self._values[name] = [value]
            else:
                self._values[name].append(value)
        elif field.concatenates:
            texts = self._texts.get(name)
            if texts is None:  # (not setdefault: it would make a list at every region)
                self._texts[name] = [raw]
            else:
                texts.append(raw)
            if first:
                self._values.setdefault(name, None)  # keeps the key's place in the message
        elif first:
            self._values[name] = value
        else:
            raise ValueError(
                "matched a second time, but the field has no 'repeats', so it holds one value (the "
                'earlier one is kept). Set "repeats": true to collect every match'
            )
        self._matched[name] = None

    @property
    def matched(self) -> Iterable[str]:
        """The names of the fields that have a closed region so far (read-only view)."""
        return self._matched.keys()

    def missing_required(self) -> list[str]:
        """Required (``optional: false``) fields that never matched, in template order."""
        missing = []
        for field in self._template.fields.values():
            if not field.optional and field.name not in self._matched:
                missing.append(field.name)
        return missing

    def build(self) -> dict[str, Any]:
        """The message as it stands: concatenated text parsed, empty values dropped, problems listed.

        Returns:
            A new dict (values are not copied; the builder is not used after ``finalize``).
        """
        fields = self._template.fields
        for name, parts in self._texts.items():
            field = fields[name]
            if field.content_args.get("strip") == BLANK:  # a region of only whitespace is layout
                parts = [part for part in parts if part.strip()]
            self._values[name] = field.parse("".join(parts))
        defaults = self._template.defaults
        message = {}
        matched = self._matched
        for key, value in self._values.items():
            # kept: a default's key, a value that is not empty (None, "", [], {}; 0 and False are
            # values), a required field that matched
            if key in defaults or (value is not None and (value or not isinstance(value, _CONTAINERS))) \
                    or (key in matched and key in fields and not fields[key].optional):
                message[key] = value
        if self.errors:
            message[PARSE_ERRORS_KEY] = list(self.errors)
        if self.warnings:
            message[PARSE_WARNINGS_KEY] = list(self.warnings)
        return message

    def snapshot(self) -> dict[str, Any]:
        """A deep copy of :meth:`build`, safe to hand out with an exception."""
        snapshot: dict[str, Any] = copy_value(self.build())
        return snapshot
