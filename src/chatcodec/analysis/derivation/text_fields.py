"""Start anchors, reasoning markers and the content field's discard list, from sentinel renders.

* **Anchors** (inference.md §2.3): the generation prompt ``G`` (what ``add_generation_prompt``
  appends), and ``G`` cut before each of its last three atoms, so that a block the prompt opens
  or pre-closes (``<think>\\n``, ``<think></think>``) stays in the prefix the parser reads. When
  ``G`` is empty (Mistral-style prompts), the prompt's text after the user turn. After a tool
  result some templates write no assistant header (DeepSeek, Mistral, Gemma 4; SPEC §1.8b): the
  prompt's text after the tool result is a second anchor candidate.
* **Reasoning markers**: the atom (with a word glued to it, Gemma 4's ``<|channel>thought``)
  right before the reasoning sentinel, and the first atom after it, in every mode whose render
  shows reasoning and continues its prompt. When no render shows reasoning, three heuristics
  (labelled as such, never verified): ``G`` ends with an opening tag whose closing tag is in the
  template source (h1); a think / thought / reason tag pair in the rendered prompt or the source
  (h2); a lone ``</think>`` in the source (h3).
* **Discards**: the atoms the template writes around the answer (turn ends, ``<|START_RESPONSE|>``,
  a pre-closed ``</think>``) close the implicit ``content`` field, so they never reach ``content``;
  so does the generation prompt when a turn writes it again before its answer (gpt-oss starts each
  message of a turn with ``<|start|>assistant``), ahead of its own atoms.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from chatcodec.analysis.derivation.context import CONTENT, REASONING, TOOL_RESULT, USER, DerivationContext

__all__ = ["ReasoningMarkers", "anchor_candidates", "content_discards", "heuristic_reasoning",
           "rendered_reasoning"]

#: The longest word glued to a marker atom that still counts as part of the marker.
_GLUED_WORD = 24


@dataclass(frozen=True)
class ReasoningMarkers:
    """Where reasoning opens and closes.

    Attributes:
        open: the opening marker (``<think>``).
        close: the closing marker (``</think>``).
        heuristic: ``""`` when read off a render, else which heuristic found it (a sentence).
        ends: when the reasoning has no closer of its own, the markers that follow it in the renders
            (SMI's ``<|out|>`` before an answer, ``<|act|>`` before a call): the field ends right
            before any of them and leaves each to the field or discard it belongs to (``close`` is
            then the first of them).
        in_prompt: the generation prompt writes ``open`` and the turns leave it out (Apriel 1.6's
            prompt ends with ``Here are my reasoning steps:``, its turns start with the reasoning):
            the parser finds it in the prefix, so the start anchor stops before it.
    """

    open: str
    close: str
    heuristic: str = ""
    ends: tuple[str, ...] = ()
    in_prompt: bool = False


def _marker_before(ctx: DerivationContext, text: str) -> str | None:
    """The marker that ends ``text`` (trailing whitespace ignored): an atom, maybe with a word glued on."""
    stripped = text.rstrip()
    spans = ctx.atoms.spans(stripped)
    if not spans:
        return None
    start, end = spans[-1]
    tail = stripped[end:]
    if tail and (len(tail) > _GLUED_WORD or regex.search(r"\s", tail) or not regex.fullmatch(r"\w+", tail)):
        return None
    return stripped[start:]


def _marker_after(ctx: DerivationContext, text: str) -> str | None:
    """The marker that starts ``text`` (leading whitespace ignored): an atom."""
    stripped = text.lstrip()
    spans = ctx.atoms.spans(stripped)
    if not spans or spans[0][0] != 0:
        return None
    return stripped[:spans[0][1]]


def rendered_reasoning(ctx: DerivationContext) -> list[ReasoningMarkers]:
    """Reasoning markers read off the renders, most frequent first (empty: never rendered).

    When one opener is followed by different markers in different turns (no closer of its own: the
    State Model Interface writes ``<|think|>`` then ``<|out|>`` before an answer, ``<|act|>`` before
    a call), the first candidate ends before any of them (:attr:`ReasoningMarkers.ends`).
    """
    found: dict[tuple[str, str], int] = {}
    for mode in ctx.modes:
        for spec in ("reasoning", "reasoning_call"):
            turn = ctx.turn(spec, mode)
            if turn is None or not turn.continues or REASONING not in turn.output:
                continue
            text = turn.generation_prompt + turn.output
            index = text.index(REASONING)
            opener = _marker_before(ctx, text[:index])
            closer = _marker_after(ctx, text[index + len(REASONING):])
            if opener and closer and opener != closer:
                found[(opener, closer)] = found.get((opener, closer), 0) + 1
    ranked = sorted(found.items(), key=lambda item: -item[1])
    markers = [ReasoningMarkers(opener, closer) for (opener, closer), _ in ranked]
    openers = [marker.open for marker in markers]
    shared = [opener for opener in dict.fromkeys(openers) if openers.count(opener) > 1]
    ending = [ReasoningMarkers(opener, closers[0], ends=closers) for opener in shared
              for closers in [tuple(m.close for m in markers if m.open == opener)]]
    return [*ending, *markers, *_opened_in_prompt(ctx, markers)]


def _opened_in_prompt(ctx: DerivationContext, known: list[ReasoningMarkers]) -> list[ReasoningMarkers]:
    """Reasoning a generation prompt opens with text its turns leave out: a turn's render stops
    following the prompt where the prompt's tail ``T`` begins, and continues with the reasoning
    itself, then a marker (Apriel 1.6: ``T`` = ``Here are my reasoning steps:``, then ``[BEGIN FINAL
    RESPONSE]``). ``T`` (stripped: one line of words, no atom) opens the reasoning, read from the
    prefix; the round trip reads such turns after the whole prompt."""
    found: list[ReasoningMarkers] = []
    for mode in ctx.modes:
        for spec in ("reasoning", "reasoning_call"):
            turn = ctx.turn(spec, mode)
            if turn is None or turn.continues:
                continue
            tail = turn.prompt[turn.rendered.common:].strip()
            output = turn.output.lstrip()
            if not regex.search(r"\w", tail) or "\n" in tail or ctx.atoms.spans(tail) \
                    or not output.startswith(REASONING):
                continue  # a tag the prompt opens or pre-closes is h1's (heuristic_reasoning)
            closer = _marker_after(ctx, output[len(REASONING):])
            markers = ReasoningMarkers(tail, closer or "", in_prompt=True)
            if closer and markers not in found and all(m.open != tail for m in known):
                found.append(markers)
    return found


_THINK_TAG = regex.compile(r"<(/?)([\w:|.-]*(?:think|thought|reason)[\w:|.-]*)>", regex.IGNORECASE)
_THINK_BRACKET = regex.compile(r"\[(/?)(THINK|THOUGHT|REASONING)\]")


def heuristic_reasoning(ctx: DerivationContext) -> ReasoningMarkers | None:
    """Reasoning markers the template never renders in a turn, guessed (h1-h3, module docstring)."""
    source = ctx.chat_template
    for mode in ctx.modes:
        turn = ctx.turn("content", mode)
        generation = turn.generation_prompt.rstrip() if turn else ""
        opener = _marker_before(ctx, generation) if generation else None
        if opener and ctx.atoms.is_atom(opener) and opener.startswith("<") and not opener.startswith("</"):
            closer = "</" + opener[1:]
            if closer in source:
                return ReasoningMarkers(opener, closer, f"h1: the generation prompt ends with {opener!r} and "
                                        f"the template source holds {closer!r}; no turn renders reasoning")
    prompt_turn = ctx.turn("content", ctx.modes[0])
    rendered_prompt = prompt_turn.prompt if prompt_turn else ""
    places = (("the rendered prompt", rendered_prompt), ("the template source", source))
    for where, text in places:
        pair = _tag_pair(text)
        if pair:
            return ReasoningMarkers(pair[0], pair[1], f"h2: {where} names the pair {pair[0]!r} / "
                                    f"{pair[1]!r}; no turn renders reasoning")
    if "</think>" in source:
        return ReasoningMarkers("<think>", "</think>", "h3: the template source splits on '</think>'; no "
                                "turn renders reasoning")
    return None


def _tag_pair(text: str) -> tuple[str, str] | None:
    kinds = ((_THINK_TAG, "<{}>", "</{}>"), (_THINK_BRACKET, "[{}]", "[/{}]"))
    for pattern, opener_format, closer_format in kinds:
        names = {match.group(2) for match in pattern.finditer(text) if not match.group(1)}
        for name in sorted(names):
            opener, closer = opener_format.format(name), closer_format.format(name)
            if opener in text and closer in text:
                return opener, closer
    return None


def _cut_candidates(ctx: DerivationContext, base: str) -> list[str]:
    candidates = [base] if base.strip() else []
    for cut in ctx.atoms.cut_points(base, 3):
        if base[:cut].strip():
            candidates.append(base[:cut])
    return candidates


def _after(text: str, marker: str) -> str | None:
    index = text.rfind(marker)
    return text[index + len(marker):] if index >= 0 else None


def anchor_candidates(ctx: DerivationContext) -> tuple[list[str], list[str]]:
    """``(main, after_tool)`` anchor candidates, best guess first.

    ``main`` come from each mode's generation prompt; ``after_tool`` from the prompt after a tool
    result (used only when it does not already hold a main anchor).
    """
    main: list[str] = []
    extra: list[str] = []
    for mode in ctx.modes:
        turn = ctx.turn("content", mode)
        if turn is None:
            continue
        base = turn.generation_prompt
        if not base.strip():
            base = (_after(turn.prompt, USER) or "").lstrip()
        main += [c for c in _cut_candidates(ctx, base) if c not in main]
        tool_turn = ctx.turn("content", mode, "after_tool")
        tail = _after(tool_turn.prompt, TOOL_RESULT) if tool_turn is not None else None
        if tail is not None:
            extra += [c for c in _tail_candidates(ctx, tail) if c not in extra and c not in main]
    return main, extra


def _tail_candidates(ctx: DerivationContext, tail: str) -> list[str]:
    """Runs of the last atoms of the prompt after a tool result (``[/TOOL_RESULTS]``)."""
    starts = [start for start, _ in ctx.atoms.spans(tail)][-4:]
    ends = [*starts[1:], len(tail)]
    found = []
    for i in reversed(range(len(starts))):  # the shortest run first: it wins a tie
        start = starts[i]
        for end in reversed(ends[i:]):
            candidate = tail[start:end].rstrip()
            if candidate.strip() and "qz" not in candidate.lower() and candidate not in found:
                found.append(candidate)
    return found


def content_discards(ctx: DerivationContext) -> list[str]:
    """The atoms around the answer in content and reasoning renders (every mode), in first-seen order."""
    found: list[str] = []
    for mode in ctx.modes:
        for spec in ("content", "reasoning"):
            turn = ctx.turn(spec, mode)
            if turn is None or CONTENT not in turn.output:
                continue
            text = turn.output
            if REASONING in text:
                text = text[text.index(REASONING) + len(REASONING):]
            header = turn.generation_prompt.strip()
            if header and ctx.atoms.spans(header) and header in text and header not in found:
                found.insert(0, header)  # before its own atoms: the first alternative that matches wins
            for atom in ctx.atoms.texts(text.replace(CONTENT, " ")):
                if atom not in found:
                    found.append(atom)
    return found
