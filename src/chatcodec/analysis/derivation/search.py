"""Choosing among derived candidates: each is scored by parsing the sentinel renders back.

The derivation proposes a few options for each part (start anchors, reasoning markers, tool-call
fields); a candidate template combines one of each. Its score is the number of sentinel turns
(content, reasoning, reasoning with a call, one call, two calls, a nested-argument call; in every
mode; after one user turn and after a tool result) whose output parses back to the sentinel
message. Parts are chosen one after another (anchor and reasoning, then the anchor after a tool
result, then the tool field), and atoms left in ``content`` by the best candidate join the
discard list until nothing changes. The realistic probes of the round trip are never used here:
they judge the result afterwards (inference.md §10.4: a verifier must not replay what the
derivation learned from).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from chatcodec.analysis.derivation.context import SPECS, DerivationContext, Turn, leaks_sentinel
from chatcodec.analysis.derivation.text_fields import ReasoningMarkers
from chatcodec.analysis.round_trip import compare_message

__all__ = ["Candidate", "SentinelCase", "assemble", "score", "sentinel_cases"]

#: Rounds of adding the atoms left in ``content`` to the discard list.
DISCARD_ROUNDS = 3
#: How much more a field of a render that continues its prompt counts than one of a render that does
#: not: the round trip judges the latter ``inconsistent`` when they fail, never ``failed``, so they
#: only break ties (Bielik's thinking mode opens ``<think>`` in the prompt and renders call turns
#: without it; reading those would make ``<think>`` a start anchor and lose every reasoning block).
CONTINUING_WEIGHT = 1000


@dataclass(frozen=True)
class SentinelCase:
    """A sentinel turn and the message it must parse back to."""

    spec: str
    variant: str
    turn: Turn
    message: dict[str, Any]


@dataclass(frozen=True)
class Candidate:
    """One combination of parts.

    Attributes:
        anchors: the start anchor literals.
        reasoning: the reasoning markers, or ``None``.
        tool_field: the ``tool_calls`` field spec, or ``None``.
        discards: the implicit ``content`` field's close literals.
    """

    anchors: tuple[str, ...]
    reasoning: ReasoningMarkers | None
    tool_field: dict[str, Any] | None
    discards: tuple[str, ...]

    def template(self) -> dict[str, Any]:
        """The response template (``reasoning_content``, ``tool_calls``, ``content``, in that order)."""
        fields: dict[str, Any] = {}
        if self.reasoning is not None:
            opener = _reasoning_open(self.reasoning.open)
            fields["reasoning_content"] = {**opener, **_reasoning_close(self.reasoning)}
        if self.tool_field is not None:
            fields["tool_calls"] = self.tool_field
        fields["content"] = {"close": list(self.discards)} if self.discards else {}
        anchor: str | list[str] = self.anchors[0] if len(self.anchors) == 1 else list(self.anchors)
        return {"version": 1, "defaults": {"role": "assistant"}, "start_anchor": anchor, "fields": fields}

    def leaks(self) -> bool:
        """Whether any delimiter holds a sentinel."""
        texts = [*self.anchors, *self.discards]
        if self.reasoning is not None:
            texts += [self.reasoning.open, self.reasoning.close, *self.reasoning.ends]
        if self.tool_field is not None:
            keys = ("open", "close", "open_pattern", "close_pattern")
            texts += [str(self.tool_field.get(key, "")) for key in keys]
            texts.append(str(self.tool_field.get("content_args", "")))
        return any(leaks_sentinel(text) for text in texts)


def _reasoning_open(opener: str) -> dict[str, str]:
    """The reasoning field's open: its first marker may come twice (a model repeating the ``<think>``
    its prompt opened, Gemma 4's doubled ``<|channel>``), as the bundled profiles accept."""
    match = regex.match(r"<[^<>\s]+>|\[[^\[\]\s]+\]", opener)
    if match is None:
        return {"open": opener}
    return {"open_pattern": f"(?:{regex.escape(match.group(0))})+{regex.escape(opener[match.end():])}"}


def _reasoning_close(markers: ReasoningMarkers) -> dict[str, str]:
    """The reasoning field's close: its closer, or a look-ahead for any of the markers that follow
    reasoning without a closer of its own (:attr:`ReasoningMarkers.ends`), left to their fields."""
    if not markers.ends:
        return {"close": markers.close}
    return {"close_pattern": "(?=" + "|".join(regex.escape(end) for end in markers.ends) + ")"}


def _keeps_open(anchor: str, markers: ReasoningMarkers | None) -> bool:
    """Whether the prefix after ``anchor`` still holds a reasoning opener the prompt ends with: a
    guessed opener that no turn renders, or one only the prompt writes (``in_prompt``), must be read
    from the prompt, so the anchor stops before it."""
    if markers is not None and markers.in_prompt:
        return markers.open not in anchor
    return markers is None or not markers.heuristic or not anchor.rstrip().endswith(markers.open)


def _anchors_before_opener(anchors: Sequence[str], reasoning: Sequence[ReasoningMarkers | None]) -> list[str]:
    """The anchors cut right before a reasoning opener only the prompt writes (``in_prompt``)."""
    cut = []
    for markers in reasoning:
        if markers is None or not markers.in_prompt:
            continue
        for anchor in anchors:
            head = anchor[:anchor.rfind(markers.open)] if markers.open in anchor else ""
            if head.strip() and head not in anchors and head not in cut:
                cut.append(head)
    return cut


def sentinel_cases(ctx: DerivationContext, specs: Sequence[str] = tuple(SPECS),
                   variants: Sequence[str] = ("single", "after_tool")) -> list[SentinelCase]:
    """The sentinel turns the template renders (in every mode), with their messages."""
    cases = []
    for mode in ctx.modes:
        for variant in variants:
            for spec in specs:
                turn = ctx.turn(spec, mode, variant)
                if turn is not None:
                    cases.append(SentinelCase(spec, variant, turn, ctx.message(spec, variant)))
    return cases


def _parse(template: Any, case: SentinelCase, tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    from chatcodec.errors import ChatCodecError
    from chatcodec.response_templates.api import parse_response

    try:
        with warnings.catch_warnings():  # a candidate whose anchor is not in a prompt scores low anyway
            warnings.simplefilter("ignore")
            return parse_response(case.turn.output, template, prefix=case.turn.prompt, tools=tools)
    except (ChatCodecError, ValueError):
        return None


def score(ctx: DerivationContext, candidate: Candidate, cases: Sequence[SentinelCase]) -> int:
    """How many compared fields of ``cases`` parse back, those of renders that continue their prompt
    weighted :data:`CONTINUING_WEIGHT` (-1: the template does not load or leaks)."""
    from chatcodec.errors import ResponseTemplateError
    from chatcodec.response_templates.template import load_response_template

    if candidate.leaks():
        return -1
    try:
        template = load_response_template(candidate.template())
    except (ResponseTemplateError, ValueError):
        return -1
    total = 0
    for case in cases:
        parsed = _parse(template, case, ctx.tools)
        if parsed is None:
            continue
        fields, _, _ = compare_message(case.message, parsed, case.turn.output)
        passed = sum(1 for status in fields.values() if status in ("pass", "empty"))
        total += passed * (CONTINUING_WEIGHT if case.turn.continues else 1)
    return total


def leftover_atoms(ctx: DerivationContext, candidate: Candidate, cases: Sequence[SentinelCase]) -> list[str]:
    """Atoms the candidate leaves in ``content`` that the sentinel message does not have."""
    from chatcodec.response_templates.template import load_response_template

    template = load_response_template(candidate.template())
    found: list[str] = []
    for case in cases:
        parsed = _parse(template, case, ctx.tools)
        content = parsed.get("content") if parsed else None
        if not isinstance(content, str):
            continue
        expected = case.message.get("content") or ""
        if isinstance(expected, str) and expected:
            content = content.replace(expected, " ")
        for atom in ctx.atoms.texts(content):
            if atom not in found and atom not in candidate.discards and not leaks_sentinel(atom):
                found.append(atom)
    return found


def best(ctx: DerivationContext, candidates: Sequence[Candidate], cases: Sequence[SentinelCase]) -> Candidate:
    """The highest-scoring candidate (the first of equals)."""
    scored = [(score(ctx, candidate, cases), index) for index, candidate in enumerate(candidates)]
    top = max(scored, key=lambda item: (item[0], -item[1]))
    return candidates[top[1]]


def assemble(ctx: DerivationContext, anchors: tuple[list[str], list[str]],
             reasoning: Sequence[ReasoningMarkers | None], tool_fields: Sequence[dict[str, Any] | None],
             discards: Sequence[str]) -> Candidate:
    """Choose the parts (module docstring) and return the best candidate."""
    main, extra = anchors
    single = sentinel_cases(ctx, variants=("single",))
    every = sentinel_cases(ctx)
    first_tool = tool_fields[0] if tool_fields else None
    base = tuple(dict.fromkeys(discards))
    main = [*main, *_anchors_before_opener(main, reasoning)]
    stage1 = [Candidate((anchor,), markers, first_tool, base)
              for markers in reasoning for anchor in main or ["\n"] if _keeps_open(anchor, markers)]
    chosen = best(ctx, stage1, single)
    stage2 = [chosen] + [Candidate((*chosen.anchors, anchor), chosen.reasoning, first_tool, base)
                         for anchor in extra if _keeps_open(anchor, chosen.reasoning)]
    chosen = best(ctx, stage2, every)
    stage3 = [Candidate(chosen.anchors, chosen.reasoning, field, base) for field in tool_fields or [None]]
    chosen = best(ctx, stage3, every)
    for _ in range(DISCARD_ROUNDS):
        more = leftover_atoms(ctx, chosen, every)
        if not more:
            break
        wider = Candidate(chosen.anchors, chosen.reasoning, chosen.tool_field, (*chosen.discards, *more))
        if score(ctx, wider, every) < score(ctx, chosen, every):
            break
        chosen = wider
    return chosen
