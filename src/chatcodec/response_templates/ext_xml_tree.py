"""The ``x-xml-tree`` content parser: nested XML-ish elements as JSON objects and arrays.

MiniMax-M3 writes each tool argument as an element named after the parameter, expanding objects
into child elements and arrays into ``<item>`` elements::

    <number><real>1.5</real><imaginary>-2.5</imaginary></number><tags><item>a</item></tags>

gives ``{"number": {"real": 1.5, "imaginary": -2.5}, "tags": ["a"]}``. ``xml-inline`` cannot express
this (its values are flat). Tags are ``<name>`` / ``</name>`` without attributes, the name a letter,
``_`` or ``-`` and then letters, digits, ``_``, ``.`` and ``-`` (the template writes a parameter's
name as its tag: command-line tools take ``-A`` or ``-n``, which MiniMax-M3 writes as ``<-A>``,
vllm-ascend #12815); whitespace outside the top-level elements and between child elements is layout.

``content_args``:

* ``remove`` (list of strings): literal text deleted before parsing where it stands right before a
  tag or at the end of the text (MiniMax-M3 prefixes every tag with the marker ``]<]minimax[>[``,
  also the enclosing ``</invoke>`` that ends the region's text); anywhere else it is text
  (kept in a leaf's value, an error outside one), never deleted;
* ``item_tag`` (string, default ``"item"``): an element whose children all have this tag is an array;
* ``leaf_parser`` (``{"name", "args"}``, default text without stripping): parses the text of an
  element without children (``{"name": "json", "args": {"allow_non_json": true}}`` turns ``1.5``
  into a number and leaves ``Tokyo`` a string);
* ``marked_open`` (bool, default false; needs ``remove``): an opening tag counts only where a
  ``remove`` marker stands right before it, and a closing tag without the marker counts only where
  it closes the open element; any other tag is text of the element's value. MiniMax-M3 marks every
  tag it writes as structure, but closing tags come with and without the marker in real outputs,
  while code and markup in a value (``List<String>``, ``<div>...</div>``) carry none. A marked
  tag's name may hold any character but whitespace, ``<>/=`` and quotes (``<$filter>``).

Nothing is dropped: an unbalanced or mismatched tag, other text outside the top-level elements,
text beside child elements and an element name given twice among the children of an object or at
the top level (a dict would keep the last; only an array's ``item_tag`` children repeat) raise
``ValueError`` naming the tag or the offset. A tag with attributes (``<a x="1">``), a comment or a
self-closing tag is not a tag: it is text, kept in a leaf's value or an error elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex

from chatcodec.response_templates.content import Prepared, check_parser_spec, get_parser, prepare_parser

__all__ = ["MARKED_NAME", "is_text_tag", "marked_tags", "parse_xml_tree", "prepare_xml_tree",
           "validate_xml_tree"]

_TAG = regex.compile(r"<(/?)((?:[^\W\d]|-)[\w.\-]*)>")


class _Element:
    __slots__ = ("children", "name", "offset", "stray", "text")

    def __init__(self, name: str, offset: int = 0) -> None:
        self.name = name
        self.offset = offset  # where its opening tag starts
        self.text: list[str] = []
        self.children: list[_Element] = []
        self.stray: tuple[int, str] | None = None  # the first non-blank text run, and its offset

    def add_text(self, text: str, offset: int) -> None:
        self.text.append(text)
        if self.stray is None and text.strip():
            self.stray = (offset, text)

    def check_mixed(self) -> None:
        """Raise when non-blank text would be lost: beside child elements, or outside any element."""
        if self.stray is not None and (self.children or not self.name):
            offset, text = self.stray
            where = f"beside child elements in <{self.name}>" if self.name else "outside an element"
            raise ValueError(f"x-xml-tree: text {where} at offset {offset}: {text[:40]!r}")


def validate_xml_tree(args: Mapping[str, Any], where: str) -> None:
    """Check ``x-xml-tree``'s ``content_args`` when the template loads.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, a bad ``remove`` or ``item_tag``, or a bad ``leaf_parser`` spec.
    """
    unknown = sorted(set(args) - {"remove", "item_tag", "leaf_parser", "marked_open"})
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {unknown} for x-xml-tree. "
            "Known: ['item_tag', 'leaf_parser', 'marked_open', 'remove']"
        )
    if not isinstance(args.get("marked_open", False), bool):
        raise ValueError(f"{where}.marked_open: must be true or false")
    if args.get("marked_open") and not args.get("remove"):
        raise ValueError(f"{where}.marked_open: needs the markers of 'remove'")
    remove = args.get("remove", [])
    if not isinstance(remove, list) or not all(isinstance(item, str) and item for item in remove):
        raise ValueError(f"{where}.remove: must be a list of non-empty strings")
    if not isinstance(args.get("item_tag", "item"), str) or not args.get("item_tag", "item"):
        raise ValueError(f"{where}.item_tag: must be a non-empty string")
    if "leaf_parser" in args:
        check_parser_spec(args["leaf_parser"], f"{where}.leaf_parser")


def parse_xml_tree(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Parse nested elements into objects and arrays (see the module docstring).

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        ``{top-level element name: value}``.

    Raises:
        ValueError: an unbalanced or mismatched tag, text beside elements, or a leaf the
            ``leaf_parser`` rejects.
    """
    tree: dict[str, Any] = prepare_xml_tree(args)(text)
    return tree


def prepare_xml_tree(args: Mapping[str, Any]) -> Prepared:
    """``x-xml-tree`` with ``args`` bound: the ``remove`` pattern compiled and the ``leaf_parser``
    resolved once, at load (:func:`~chatcodec.response_templates.content.prepare_parser`).

    Args:
        args: the validated ``content_args``.

    Returns:
        ``(raw_text) -> value``, which returns and raises what :func:`parse_xml_tree` does.
    """
    markers: list[str] = args.get("remove", [])
    removal: regex.Pattern[str] | None = None
    if markers:  # only before a tag or at the end: a marker inside a value is the value's text
        alternatives = "|".join(regex.escape(marker) for marker in sorted(markers, key=len, reverse=True))
        removal = regex.compile(f"(?:{alternatives})+(?={_TAG.pattern}|\\s*\\Z)")
    spec = args.get("leaf_parser", {"name": "text", "args": {"strip": False}})
    leaf = prepare_parser(get_parser(spec.get("name", "text")), spec.get("args", {}))
    item_tag = args.get("item_tag", "item")

    def value(element: _Element) -> Any:
        if not element.children:
            return leaf("".join(element.text))
        if all(child.name == item_tag for child in element.children):
            return [value(child) for child in element.children]
        return {child.name: value(child) for child in _unique(element)}

    marked = marked_tags(markers) if args.get("marked_open") else None

    def parse(text: str) -> dict[str, Any]:
        if marked is not None:
            root = _tree(text, marked)
        else:
            if removal is not None:
                text = removal.sub("", text)
            root = _tree(text, _TAG)
        return {child.name: value(child) for child in _unique(root)}

    return parse


def _unique(element: _Element) -> list[_Element]:
    """The children of an object, which must have distinct names (a dict would keep the last)."""
    seen: set[str] = set()
    for child in element.children:
        if child.name in seen:
            where = f"in <{element.name}>" if element.name else "at the top level"
            raise ValueError(
                f"x-xml-tree: element <{child.name}> is given twice {where} "
                f"(the second at offset {child.offset})"
            )
        seen.add(child.name)
    return element.children


#: A tag name in ``marked_open`` mode: the marker tells a tag from text, so a name is any run
#: without whitespace, ``<``, ``>``, ``/``, quotes or ``=`` (``<$filter>``, a parameter of an OData API)
MARKED_NAME = r"[^\s<>/\"'=]+"


def marked_tags(markers: list[str]) -> regex.Pattern[str]:
    """The tags of ``marked_open`` mode: ``(?P<marker>MARKERS)?<(/?)(name)>``, and a run of markers
    before the end of the text (group ``end``), which is framing too."""
    alternatives = "|".join(regex.escape(marker) for marker in sorted(markers, key=len, reverse=True))
    return regex.compile(
        f"(?P<marker>(?:{alternatives})+)?<(/?)({MARKED_NAME})>|(?:{alternatives})+(?P<end>\\s*\\Z)")


def is_text_tag(marked: bool, closing: bool, name: str, open_name: str | None) -> bool:
    """Whether a tag is text in ``marked_open`` mode: an opening tag without its marker, or an
    unmarked closing tag that does not close the open element (``open_name``)."""
    return not marked and (not closing or name != open_name)


def _tree(text: str, tags: regex.Pattern[str]) -> _Element:
    root = _Element("")
    stack = [root]
    position = 0
    end = len(text)
    marked_mode = tags is not _TAG
    first = 2 if marked_mode else 1  # the groups of _TAG, after the marker group in marked mode
    for match in tags.finditer(text):
        if marked_mode and match.group("end") is not None:
            end = match.start()  # markers before the end of the text: framing
            break
        closing, name = match.group(first), match.group(first + 1)
        if marked_mode and is_text_tag(match.group("marker") is not None, bool(closing), name,
                                       stack[-1].name if len(stack) > 1 else None):
            continue
        stack[-1].add_text(text[position : match.start()], position)
        position = match.end()
        if not closing:
            element = _Element(name, match.start())
            stack[-1].children.append(element)
            stack.append(element)
        elif len(stack) == 1 or stack[-1].name != name:
            expected = f"</{stack[-1].name}>" if len(stack) > 1 else "no closing tag"
            raise ValueError(
                f"x-xml-tree: </{name}> at offset {match.start()} does not close an open "
                f"element (expected {expected})"
            )
        else:
            stack.pop().check_mixed()
    if len(stack) > 1:
        raise ValueError(f"x-xml-tree: <{stack[-1].name}> is never closed")
    root.add_text(text[position:end], position)
    root.check_mixed()
    return root
