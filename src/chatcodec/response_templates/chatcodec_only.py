"""What in a response template only chatcodec reads: the extensions transformers 5.24 does not know.

A response template travels in ``tokenizer_config.json``, where transformers (and the engines that
follow it) read it too. Some of what chatcodec accepts means nothing to them, and they fail in
one of two ways:

* they refuse to load the template: an ``x-`` content parser (as a field's ``content``; as a
  nested ``value_parser`` they fail when such a region closes), the field keys ``flatten``,
  ``require_close``, ``close_at_value_end`` and ``opens_once``;
* they load it and parse differently, silently: an optional placeholder ``"{name?}"`` is written
  out as that literal text (every tool call gets ``"id": "{id?}"``), and ``"strip": "blank"``
  strips the text it should keep as written.

:func:`chatcodec_only_features` lists them; ``chatcodec lint`` reports each one (``RT012``),
``ChatCodec.save_pretrained`` warns when it writes such a template, and
``Profile.needs_chatcodec`` is true for a profile that has one. The template is read as a JSON
object and not validated here (the linter also runs on templates that do not load).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from chatcodec.response_templates.transform import PLACEHOLDER

__all__ = ["ChatcodecOnlyFeature", "chatcodec_only_features"]

#: Keys of a nested ``{"name", "args"}`` spec's args that hold more nested specs.
_NESTED_SPEC_KEYS = ("value_parser", "leaf_parser")


@dataclass(frozen=True, slots=True)
class ChatcodecOnlyFeature:
    """One use of a chatcodec extension in a response template.

    Attributes:
        where: the JSON path (``fields.tool_calls.content``).
        feature: what is used (``content parser 'x-json-calls'``, ``'flatten'``, ...).
        effect: what transformers does with it instead.
    """

    where: str
    feature: str
    effect: str

    def __str__(self) -> str:
        return f"{self.where}: {self.feature} ({self.effect})"


_REFUSED = "transformers refuses to load the template"


def chatcodec_only_features(template: Mapping[str, Any]) -> list[ChatcodecOnlyFeature]:
    """Every chatcodec extension a response template uses, in template order.

    Args:
        template: the response template as a JSON object (need not be valid).

    Returns:
        One entry per use; empty when transformers 5.24 reads the template as chatcodec does.
    """
    fields = template.get("fields")
    found: list[ChatcodecOnlyFeature] = []
    for name, spec in fields.items() if isinstance(fields, Mapping) else ():
        if isinstance(spec, Mapping):
            found += _field_features(f"fields.{name}", spec)
    return found


def _field_features(where: str, spec: Mapping[str, Any]) -> Iterator[ChatcodecOnlyFeature]:
    content = spec.get("content")
    if isinstance(content, str) and content.startswith("x-"):
        yield ChatcodecOnlyFeature(f"{where}.content", f"content parser {content!r}", _REFUSED)
    args = spec.get("content_args")
    if isinstance(args, Mapping):
        if args.get("strip") == "blank":
            yield ChatcodecOnlyFeature(
                f"{where}.content_args.strip", "'strip': 'blank'",
                "transformers strips the text instead of keeping it as written")
        if not (isinstance(content, str) and content.startswith("x-")):  # else reported above
            yield from _nested_parsers(f"{where}.content_args", args)
    for key in ("flatten", "require_close", "close_at_value_end", "opens_once"):
        if spec.get(key) is True:
            yield ChatcodecOnlyFeature(f"{where}.{key}", repr(key), _REFUSED)
    for path, text in _strings(spec.get("transform"), f"{where}.transform"):
        whole = PLACEHOLDER.fullmatch(text)
        if whole is not None and whole.group(2):
            yield ChatcodecOnlyFeature(
                path, f"optional placeholder {text!r}",
                "transformers writes the literal text instead of the value or leaving the key out")


def _nested_parsers(where: str, args: Mapping[str, Any]) -> Iterator[ChatcodecOnlyFeature]:
    """The ``x-`` parsers named by the nested specs of a standard parser (``value_parser``)."""
    specs: list[tuple[str, Any]] = [(f"{where}.{key}", args.get(key)) for key in _NESTED_SPEC_KEYS]
    groups = args.get("value_parsers")
    if isinstance(groups, Mapping):
        specs += [(f"{where}.value_parsers.{key}", value) for key, value in groups.items()]
    parsers = args.get("parsers")
    if isinstance(parsers, list):
        specs += [(f"{where}.parsers[{index}]", value) for index, value in enumerate(parsers)]
    for path, spec in specs:
        if not isinstance(spec, Mapping):
            continue
        name = spec.get("name")
        if isinstance(name, str) and name.startswith("x-"):
            yield ChatcodecOnlyFeature(f"{path}.name", f"content parser {name!r}",
                                       "transformers fails when such a region closes")
            continue
        nested = spec.get("args")
        if isinstance(nested, Mapping):
            yield from _nested_parsers(f"{path}.args", nested)


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string inside a JSON value, with its path (iterative: any depth)."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            yield path, item
        elif isinstance(item, Mapping):
            stack.extend((f"{path}.{key}", child) for key, child in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", child) for index, child in reversed(list(enumerate(item))))
