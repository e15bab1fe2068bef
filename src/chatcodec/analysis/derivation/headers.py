"""Role headers that the generation prompt leaves open: the turn finishes the header with a word.

Most generation prompts end with a whole role header (``<|im_start|>assistant\\n``). Some stop inside
it, and each kind of turn finishes the header its own way (HyperCLOVA X SEED Think: the prompt ends
with ``<|im_start|>assistant``; a reasoning turn goes on with ``/think\\n``, a call turn with
`` -> tool/function_call\\n``, a plain answer with ``\\n``). The rest of that header is a word, and a
word is never an atom (:mod:`chatcodec.analysis.derivation.atoms`), so without this rule nothing marks
where reasoning or a call starts and the words leak into ``content``.

The rule: when the last line of a generation prompt starts with an atom and ends inside a word
(no whitespace after it), that last line (the open header, ``<|im_start|>assistant``) and every
first line a sentinel turn writes right after that prompt (the header's rest, ``/think``,
``-> tool/function_call``) become atoms of this template. A first line that holds an atom after a
word is cut after that atom: the rest is the recipient and the marker that ends the header
(MuseGlimmer's `` to=user<|message|>`` before an answer, `` to=self<|message|>`` before reasoning;
a rest naming a tool holds a sentinel and is refused, the call field takes it,
:mod:`chatcodec.analysis.derivation.tool_fields`). They are found on sentinel renders that
continue their prompt; a rest holding a sentinel or longer than a header is refused. The search then
treats them as any marker. A rest is a word, though, so a field the search opens on one is then
anchored to where a header ends (:func:`anchor_header_rests`): at the start of the output (right
after the generation prompt) or right after the open header (``(?:^|(?<=<\\|im_start\\|>assistant))``),
never inside prose (``Write /think to think.`` stays content). The round trip labels the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import regex

from chatcodec.analysis.derivation.context import DerivationContext, leaks_sentinel

__all__ = ["OpenHeaders", "anchor_header_rests", "find_open_headers"]

#: The turns whose first line may finish an open header.
_SPECS = ("content", "reasoning", "one_call", "two_calls", "reasoning_call")
#: The longest header rest accepted (a role suffix, never a sentence).
_MAX_REST = 40
_ENDS_IN_WORD = regex.compile(r"\w$")


@dataclass
class OpenHeaders:
    """The headers a generation prompt leaves open and the rests the turns finish them with.

    Attributes:
        headers: the last lines of the generation prompts (``<|im_start|>assistant``).
        rests: the first lines of the turns after them (``/think``, ``-> tool/function_call``).
    """

    headers: list[str] = field(default_factory=list)
    rests: list[str] = field(default_factory=list)

    @property
    def atoms(self) -> list[str]:
        """Every header and rest, to add to the template's atoms."""
        return [*self.headers, *self.rests]


def find_open_headers(ctx: DerivationContext) -> OpenHeaders | None:
    """The open headers of the template's generation prompts, or ``None`` (module docstring).

    Args:
        ctx: the derivation context (its sentinel renders, in every mode).

    Returns:
        The headers and rests, or ``None`` when no generation prompt ends inside a header
        finished by a turn.
    """
    found = OpenHeaders()
    for mode in ctx.modes:
        for spec in _SPECS:
            turn = ctx.turn(spec, mode)
            if turn is None or not turn.continues or not turn.generation_prompt:
                continue
            header = turn.generation_prompt.rsplit("\n", 1)[-1]
            spans = ctx.atoms.spans(header)
            if not spans or spans[0][0] != 0 or not _ENDS_IN_WORD.search(header):
                continue
            rest = _rest(ctx, turn.output.split("\n", 1)[0].strip())
            if not rest or len(rest) > _MAX_REST or leaks_sentinel(rest):
                continue
            if header not in found.headers:
                found.headers.append(header)
            if rest not in found.rests:
                found.rests.append(rest)
    return found if found.rests else None


def _rest(ctx: DerivationContext, line: str) -> str:
    """The header rest on a turn's first line: the whole line when it holds no atom (``/think``), or
    the line up to the end of its first atom when a word comes before that atom (MuseGlimmer's
    ``to=user<|message|>``: the recipient and the marker that ends the header); ``""`` otherwise."""
    spans = ctx.atoms.spans(line)
    if not spans:
        return line
    start, end = spans[0]
    return line[:end] if start > 0 and regex.fullmatch(r"[\w=:\-]{1,24}", line[:start].strip()) else ""


def anchor_header_rests(template: dict[str, Any], headers: OpenHeaders) -> dict[str, Any]:
    """``template`` with every field that opens on a header rest anchored to a header's end.

    A field opening on a rest (``open: "/think"``, or an ``open_pattern`` matching the start of a
    rest) gets ``open_pattern`` ``(?:^|(?<=HEADER))\\s*(?:OPENER)``: the start of the output or
    right after an open header. Other fields are unchanged.

    Args:
        template: a derived response template (not modified).
        headers: the open headers found by :func:`find_open_headers`.

    Returns:
        A new template dict.
    """
    after = "|".join(["^", *(f"(?<={regex.escape(header)})" for header in headers.headers)])
    fields: dict[str, Any] = {}
    for name, spec in template["fields"].items():
        opener = _opener_pattern(spec)
        if opener is not None and any(regex.match(opener, rest) for rest in headers.rests):
            spec = {key: value for key, value in spec.items() if key not in ("open", "open_pattern")}
            spec = {"open_pattern": f"(?:{after})\\s*(?:{opener})", **spec}
        fields[name] = spec
    return {**template, "fields": fields}


def _opener_pattern(spec: dict[str, Any]) -> str | None:
    if isinstance(spec.get("open_pattern"), str):
        return str(spec["open_pattern"])
    opened: object = spec.get("open")
    if isinstance(opened, str):
        return str(regex.escape(opened))
    if isinstance(opened, list):
        return "|".join(regex.escape(text) for text in sorted(opened, key=len, reverse=True))
    return None
