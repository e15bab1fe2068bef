"""The value scanner of ``x-xml-tree``: nested elements as objects, as they are written.

The text is read as :mod:`..ext_xml_tree` reads it: tags ``<name>``/``</name>``, the ``remove``
markers deleted where they stand right before a tag (or at the very end), everything else text;
with ``marked_open``, a tag without its marker is text unless it closes the open element.
Held back while undecided: a ``<`` that may still become a tag, a run of markers (or the start of
one) that a tag may follow. Then:

* a top-level element, or a child of an object, is a key: its value is begun once its first
  content decides what it is: text that is not whitespace makes it a leaf, whose text streams
  through the scanner of the ``leaf_parser`` (and is finished from the leaf parser's result at its
  close); a first child tag makes it an object (its children are keys in turn), unless that child
  is an ``item_tag``: an array (or an object with one item) is set whole at its close;
* an element closed with only whitespace inside is a leaf, set at its close.

Anything the parser refuses (a mismatched tag, text beside children, a name given twice) stops
the scanner.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex

from chatcodec.response_templates.content import run_parser
from chatcodec.response_templates.ext_xml_tree import MARKED_NAME, is_text_tag, marked_tags, parse_xml_tree
from chatcodec.response_templates.scanners.nested import Part
from chatcodec.response_templates.scanners.protocol import Delta, Path, ValueScanner

__all__ = ["XmlTreeScanner", "xml_tree_scanner"]

_TAG = regex.compile(r"<(/?)((?:[^\W\d]|-)[\w.\-]*)>")
_DEFAULT_LEAF = {"name": "text", "args": {"strip": False}}


class _Element:
    __slots__ = ("depth", "keys", "leaf", "mode", "name", "part", "path", "record", "text")

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.mode = "undecided"  # "leaf", "object", "held"
        self.text: list[str] = []  # whitespace so far (undecided), or the leaf's text
        self.keys: set[str] = set()
        self.part: Part | None = None
        self.leaf: ValueScanner | None = None
        self.record: list[str] = []  # a held element's text, tags included
        self.depth = 0  # tags open inside a held element


class XmlTreeScanner:
    """See the module docstring."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        from chatcodec.response_templates.scanners import scanner_for

        self._args = args
        self._item = args.get("item_tag", "item")
        self._leaf_spec: Mapping[str, Any] = args.get("leaf_parser", _DEFAULT_LEAF)
        self._scanner_for = scanner_for
        markers = sorted(args.get("remove", []), key=len, reverse=True)
        alternatives = "|".join(regex.escape(m) for m in markers)
        run = f"(?:{alternatives})" if markers else "(?!)"
        prefixes = sorted({m[:k] for m in markers for k in range(1, len(m))}, key=len, reverse=True)
        partial = "|".join(regex.escape(p) for p in prefixes) or "(?!)"
        # what at the end of the text is undecided: markers (a tag or the end may follow), the start
        # of a marker, the start of a tag (markers before it may go)
        name = MARKED_NAME if args.get("marked_open") else r"(?:[^\W\d]|-)[\w.\-]*"
        self._tail = regex.compile(f"(?:{run}+\\s*|{run}*(?:{partial})|{run}*</?(?:{name})?)\\Z")
        self._remove = regex.compile(f"{run}+(?={_TAG.pattern})") if markers else None
        self._marked = marked_tags(markers) if args.get("marked_open") else None
        self._marker = markers[0] if markers else ""
        self._remove_at_end = regex.compile(f"{run}+(?=\\s*\\Z)") if markers else None
        self._pending = ""
        self._stack: list[_Element] = []
        self._keys: set[str] = set()
        self._dead = False
        self._started = False
        self.complete: int | None = None

    # -- tokens -------------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if not self._started:
            self._started = True
            out.append(("begin", (), "object"))
        if self._dead:
            return out
        buf = self._pending + text
        tail = self._tail.search(buf)
        cut = len(buf) if tail is None else tail.start()
        self._pending = buf[cut:]
        self._read(buf[:cut], out)
        return out

    def end(self) -> list[Delta]:
        out: list[Delta] = []
        pending, self._pending = self._pending, ""
        if not self._dead and pending:
            if self._remove_at_end is not None:
                pending = self._remove_at_end.sub("", pending)
            self._read(pending, out)
        return out

    def _read(self, text: str, out: list[Delta]) -> None:
        """Read decided text: markers before tags removed, then tags and the text between them."""
        if self._marked is not None:
            self._read_marked(text, out)
            return
        if self._remove is not None:
            text = self._remove.sub("", text)
        position = 0
        for match in _TAG.finditer(text):
            self._text(text[position : match.start()], out)
            self._tag(match.group(1) == "/", match.group(2), match.group(0), out)
            position = match.end()
            if self._dead:
                return
        self._text(text[position:], out)

    def _read_marked(self, text: str, out: list[Delta]) -> None:
        """``_read`` in ``marked_open`` mode: a tag is structure only with its marker, or when it
        closes the open element; the marker stays in a held element's record (it is re-parsed)."""
        assert self._marked is not None
        position = 0
        for match in self._marked.finditer(text):
            if match.group("end") is not None:
                break  # only in ``end``'s text, whose final markers are already gone
            closing, name = match.group(2) == "/", match.group(3)
            open_name = self._stack[-1].name if self._stack else None
            if is_text_tag(match.group("marker") is not None, closing, name, open_name):
                continue
            self._text(text[position : match.start()], out)
            self._tag(closing, name, match.group(0), out)  # the raw tag only feeds held records
            position = match.end()
            if self._dead:
                return
        self._text(text[position:], out)

    # -- the tree -----------------------------------------------------------------------------------

    def _stop(self) -> None:
        self._dead = True

    def _text(self, text: str, out: list[Delta]) -> None:
        if not text or self._dead:
            return
        if not self._stack:
            if text.strip():
                self._stop()  # text outside an element
            return
        held = next((e for e in self._stack if e.mode == "held"), None)
        element = self._stack[-1]
        if held is not None:
            held.record.append(text)
        elif element.mode == "object":
            if text.strip():
                self._stop()  # text beside child elements
        elif element.mode == "leaf":
            self._leaf_text(element, text, out)
        elif text.strip():
            element.mode = "leaf"
            element.part = Part(element.path)
            spec = self._leaf_spec
            element.leaf = self._scanner_for(spec.get("name", "text"), spec.get("args", {}))
            before = "".join(element.text)
            element.text = []
            self._leaf_text(element, before + text, out)
        else:
            element.text.append(text)

    def _leaf_text(self, element: _Element, text: str, out: list[Delta]) -> None:
        element.text.append(text)
        if element.leaf is not None and element.part is not None:
            element.part.emit(element.leaf.feed(text), out)

    def _tag(self, closing: bool, name: str, raw: str, out: list[Delta]) -> None:
        held = next((e for e in self._stack if e.mode == "held"), None)
        if held is not None:
            held.record.append(raw)
            top = self._stack[-1]
            if not closing:
                self._stack.append(_Element(name, ()))
                self._stack[-1].mode = "held"
                return
            if top.name != name:
                self._stop()
                return
            self._stack.pop()
            if top is held:
                self._set_held(held, out)
            return
        if closing:
            self._close(name, out)
        else:
            self._open(name, raw, out)

    def _open(self, name: str, raw: str, out: list[Delta]) -> None:
        if not self._stack:
            if name in self._keys:
                self._stop()
                return
            self._keys.add(name)
            self._stack.append(_Element(name, (name,)))
            return
        parent = self._stack[-1]
        if parent.mode == "leaf":
            self._stop()  # a child after text
            return
        if parent.mode == "undecided":
            if name == self._item:
                parent.mode = "held"
                marker = self._marker if self._marked is not None else ""
                parent.record = [f"{marker}<{parent.name}>", *parent.text, raw]
                self._stack.append(_Element(name, ()))
                self._stack[-1].mode = "held"
                return
            parent.mode = "object"
            out.append(("begin", parent.path, "object"))
        if name in parent.keys or name == self._item:
            self._stop()  # a name given twice, or an item beside other children
            return
        parent.keys.add(name)
        self._stack.append(_Element(name, (*parent.path, name)))

    def _close(self, name: str, out: list[Delta]) -> None:
        if not self._stack or self._stack[-1].name != name:
            self._stop()
            return
        element = self._stack.pop()
        if element.mode == "object":
            out.append(("end", element.path, None))
            return
        text = "".join(element.text)
        try:
            value = run_parser(self._leaf_spec, text)
        except ValueError:
            self._stop()
            return
        if element.mode == "undecided":
            out.append(("set", element.path, value))
            return
        part = element.part
        assert part is not None
        if element.leaf is not None:
            part.emit(element.leaf.end(), out)
        part.finish(value, out)
        if not part.ok:
            self._stop()

    def _set_held(self, element: _Element, out: list[Delta]) -> None:
        text = "".join(element.record)
        try:
            args = self._args if self._marked is not None else {**self._args, "remove": []}
            value = parse_xml_tree(text, args)[element.name]
        except (ValueError, KeyError):
            self._stop()
            return
        out.append(("set", element.path, value))


def xml_tree_scanner(args: Mapping[str, Any]) -> XmlTreeScanner:
    """The scanner of an ``x-xml-tree`` value."""
    return XmlTreeScanner(args)
