"""The ``{% generation %}...{% endgeneration %}`` block and the character spans it marks.

A chat template wraps the text the assistant generated in ``{% generation %}`` blocks; the spans
of those blocks in the rendered prompt become the assistant mask used in training. Two ways of
finding them, both linear in the output size:

* **direct** (every block is written straight to the output, the case of real templates): the
  renderer counts the characters it has received so far (``RenderState.offset``); a block's
  span starts there. The reference does the same but re-joins all previous output for every block
  (quadratic), and gets wrong offsets for blocks inside macros or ``{% set %}`` blocks.
* **marked** (some block sits inside a macro, a ``{% call %}``, ``{% filter %}`` or ``{% set %}``
  block, a recursive loop, another generation block, or a ``{% block %}`` of a template that
  calls blocks through ``self.<name>()`` / ``super()``, whose output is buffered first): each
  block's text is wrapped in two marker characters, and the spans are read off (and the markers
  removed) after rendering. The markers are Unicode noncharacters chosen per render among those
  absent from the prompt (a plain render comes first), so content may hold any character. The
  renderer checks the result against the plain render, so a template that transforms a block's
  text (``|trim`` on a buffer, say) fails loudly instead of giving wrong spans.

This module holds the extension, the AST check that picks the way, and the marker scan.
"""

from __future__ import annotations

from typing import Any

from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.parser import Parser

from chatcodec.chat_templates.limits import active_state

__all__ = [
    "SPAN_MARKERS",
    "GenerationExtension",
    "choose_span_markers",
    "generation_is_direct",
    "strip_span_markers",
]

#: Characters that may mark the start and end of generation blocks in a marked render: the 66
#: Unicode noncharacters (U+10FFFE, U+10FFFF, U+FDD0..U+FDEF, then U+nFFFE / U+nFFFF of planes
#: 0..15). A render uses the first two that do not occur in its prompt.
SPAN_MARKERS: tuple[str, ...] = (
    "\U0010fffe", "\U0010ffff", *map(chr, range(0xFDD0, 0xFDF0)),
    *(chr(plane * 0x10000 + low) for plane in range(16) for low in (0xFFFE, 0xFFFF)),
)

# Nodes whose body is rendered into a buffer instead of straight to the output.
_BUFFERING_NODES = (nodes.Macro, nodes.CallBlock, nodes.FilterBlock, nodes.AssignBlock)


class GenerationExtension(Extension):
    """The ``{% generation %}`` tag: renders its body unchanged and records where it landed."""

    tags = {"generation"}  # noqa: RUF012 - Jinja's Extension API declares a plain class attribute

    def parse(self, parser: Parser) -> nodes.Node:
        """Parse ``{% generation %}...{% endgeneration %}`` into a call block (Jinja's extension API).

        Args:
            parser: Jinja's parser, positioned on the ``generation`` tag.

        Returns:
            A call block that renders the body through the span-recording method.
        """
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_generation_support")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _generation_support(self, caller: Any) -> str:
        text: str = caller()
        state = active_state()
        if state is not None and state.track_spans:
            if state.span_markers is not None:
                start, end = state.span_markers
                return start + text + end
            state.spans.append((state.offset, state.offset + len(text)))
        return text


def _is_generation_block(node: nodes.Node) -> bool:
    if not isinstance(node, nodes.CallBlock) or not isinstance(node.call, nodes.Call):
        return False
    target = node.call.node
    return (isinstance(target, nodes.ExtensionAttribute)
            and target.identifier == GenerationExtension.identifier)


def generation_is_direct(template: nodes.Template) -> bool:
    """Whether every ``{% generation %}`` block of a parsed template writes straight to the output.

    Args:
        template: the template's AST (``ENVIRONMENT.parse(source)``).

    Returns:
        ``False`` when some generation block sits inside a construct that buffers its output.
    """
    buffering: tuple[type[nodes.Node], ...] = _BUFFERING_NODES
    if any(name.name in ("self", "super") for name in template.find_all(nodes.Name)):
        buffering += (nodes.Block,)  # self.<block>() and super() render a block into a buffer
    stack: list[tuple[nodes.Node, bool]] = [(template, False)]
    while stack:
        node, buffered = stack.pop()
        if _is_generation_block(node) and buffered:
            return False
        inner = buffered or isinstance(node, buffering) or (
            isinstance(node, nodes.For) and bool(node.recursive))
        stack.extend((child, inner) for child in node.iter_child_nodes())
    return True


def choose_span_markers(prompt: str) -> tuple[str, str] | None:
    """The first two of :data:`SPAN_MARKERS` that do not occur in ``prompt``.

    Args:
        prompt: the plain render of the template.

    Returns:
        ``(start marker, end marker)``, or ``None`` when fewer than two are free.
    """
    free: list[str] = []
    for marker in SPAN_MARKERS:
        if marker not in prompt:
            free.append(marker)
            if len(free) == 2:
                return free[0], free[1]
    return None


def strip_span_markers(text: str, start: str, end: str) -> tuple[str, list[tuple[int, int]]] | None:
    """Remove the span markers of a marked render and return the text and the spans.

    Args:
        text: the marked render.
        start, end: the markers the render used.

    Returns:
        ``(text, spans)`` with spans in order of their start, or ``None`` when the markers are not
        properly nested (the template cut or reordered a block's text).
    """
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    open_starts: list[int] = []
    length = 0
    position = 0
    while True:
        start_at = text.find(start, position)
        end_at = text.find(end, position)
        if start_at < 0 and end_at < 0:
            break
        at = end_at if start_at < 0 or (0 <= end_at < start_at) else start_at
        pieces.append(text[position:at])
        length += at - position
        if at == start_at:
            open_starts.append(length)
        elif open_starts:
            spans.append((open_starts.pop(), length))
        else:
            return None
        position = at + 1
    if open_starts:
        return None
    pieces.append(text[position:])
    spans.sort()
    return "".join(pieces), spans
