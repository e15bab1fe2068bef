"""Whitespace as framing: the text fields keep what the model wrote, minus the template's own framing.

A ``text`` field strips surrounding whitespace by default, so a derived template used to lose every
newline a model wrote at the edges of its reasoning or answer (SGLang asserts Qwen3's
``"\\nLet me think\\n"``). Stripping nothing is wrong too: the template writes some whitespace itself
around each field (Qwen3: ``'<think>\\n' + reasoning + '\\n</think>\\n\\n' + content``), and that
whitespace is framing, not text.

The rule: the whitespace a sentinel render shows right next to a text field's sentinel, between it
and a marker (or the start of the output), is **framing** and moves into that marker's delimiter as
an optional part; the fields then keep the rest as written (``content_args.strip: "blank"``: a
region of only whitespace still reads as nothing). Where each run goes:

* after the reasoning opener, before its closer, and after its closer (up to the answer or a call):
  into the reasoning field's ``open_pattern`` / ``close_pattern`` (``<think>(?:\\n)?``,
  ``(?:\\n)?</think>(?:\\n\\n)?``);
* before a tool-call opener or a reasoning opener (after the answer, between two calls, at the
  start of the output: GLM-4.6's ``\\n<think>``): in front of that field's ``open_pattern``;
* before or after an atom that closes the answer (a turn end, ``<|START_RESPONSE|>``): around that
  close of the implicit ``content`` field;
* at the start of the output, before the answer (GLM-4's ``<|assistant|>\\n``): a close of the
  implicit field that only matches there (``^(?:\\n)``, as ``derivation.labels`` does).

The runs are read off the sentinel renders in every mode and history variant, as the derived
template's own delimiters find them in what the parser reads (the prompt after the start anchor,
then the output; a render that does not continue its prompt too, as the round trip reads it after
the whole prompt). Whitespace the template writes after the answer at the very end of the output
(``content + '\\n'`` before the end-of-sequence token, which a server cuts off) has no marker to
move into: such a template's ``content`` keeps stripping, as before, since a model trained on it
ends every answer with that whitespace. A reasoning field no render shows (a heuristic) has no
framing to learn and keeps stripping too.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import regex

from chatcodec.analysis.derivation.context import CALL_A, CONTENT, REASONING, SPECS, DerivationContext, Turn

__all__ = ["Framing", "find_framing", "frame_text_fields"]

#: The sentinel turns whose renders show framing (an answer before a call is rendered only here).
_SPECS: dict[str, dict[str, Any]] = {
    **{name: SPECS[name] for name in ("content", "reasoning", "reasoning_call", "one_call", "two_calls")},
    "content_call": {"content": CONTENT, "calls": [CALL_A]},
}
_VARIANTS = ("single", "after_tool")
_WHITESPACE_BEFORE = regex.compile(r"\s*\Z")
_WHITESPACE_AFTER = regex.compile(r"\s*")
#: A text field that keeps what the model wrote (a region of only whitespace reads as nothing).
_KEEP = {"strip": "blank"}


@dataclass
class Framing:
    """The whitespace runs the template writes next to its text fields (each set: every run seen).

    Attributes:
        before_reasoning: before the reasoning opener (at the start of the output, after an answer).
        reasoning_open: after the reasoning opener, before the reasoning.
        reasoning_close: after the reasoning, before its closer.
        after_reasoning: after the reasoning closer, before the answer or a call.
        before_call: before a tool-call opener.
        output_start: at the start of the output, before the answer.
        output_end: after the answer, at the end of the output (before the end-of-sequence token).
        before_close: per answer-closing atom (``content``'s ``close``), right before it.
        after_close: per answer-closing atom, right after it, before the answer.
    """

    before_reasoning: set[str] = field(default_factory=set)
    reasoning_open: set[str] = field(default_factory=set)
    reasoning_close: set[str] = field(default_factory=set)
    after_reasoning: set[str] = field(default_factory=set)
    before_call: set[str] = field(default_factory=set)
    output_start: set[str] = field(default_factory=set)
    output_end: set[str] = field(default_factory=set)
    before_close: dict[str, set[str]] = field(default_factory=dict)
    after_close: dict[str, set[str]] = field(default_factory=dict)


_WHITESPACE_ESCAPES = {"\n": r"\n", "\t": r"\t", "\r": r"\r", " ": " "}


def _escape(text: str) -> str:
    """``text`` as a regex source, whitespace readable (``\\n``, not a backslash and a newline)."""
    return "".join(_WHITESPACE_ESCAPES.get(char) or regex.escape(char) for char in text)


def _literal_pattern(literals: Iterable[str]) -> str:
    return "|".join(_escape(text) for text in sorted(literals, key=lambda text: (-len(text), text)))


def _pattern(spec: dict[str, Any], which: str) -> str | None:
    """A field's ``open`` or ``close`` as one regex source (``None`` when it has none)."""
    pattern = spec.get(f"{which}_pattern")
    if isinstance(pattern, str):
        return pattern
    literal = spec.get(which)
    if isinstance(literal, str):
        return _escape(literal)
    if isinstance(literal, list) and literal:
        return _literal_pattern(literal)
    return None


def _compiled(source: str | None) -> regex.Pattern[str] | None:
    return regex.compile(source, regex.DOTALL) if source else None


def _seen(turn: Turn, anchors: list[str]) -> str:
    """What the parser reads for ``turn``: the prompt after the last start anchor, then the output."""
    cut = max((turn.prompt.rfind(anchor) + len(anchor) for anchor in anchors if anchor in turn.prompt),
              default=len(turn.prompt))
    return turn.prompt[cut:] + turn.output


def _run_before(text: str, end: int) -> str:
    match = _WHITESPACE_BEFORE.search(text, 0, end)
    return match.group(0) if match else ""


def _run_after(text: str, start: int) -> str:
    match = _WHITESPACE_AFTER.match(text, start)
    return match.group(0) if match else ""


def _ends_with(pattern: regex.Pattern[str] | None, text: str, end: int) -> bool:
    """Whether a match of ``pattern`` ends exactly at ``end`` of ``text``."""
    if pattern is None:
        return False
    return any(match.end() == end and match.end() > match.start() for match in pattern.finditer(text, 0, end))


def _closer_at(closes: list[str], text: str, position: int) -> str | None:
    for literal in sorted(closes, key=len, reverse=True):
        if text.startswith(literal, position):
            return literal
    return None


def _closer_before(closes: list[str], text: str, end: int) -> str | None:
    for literal in sorted(closes, key=len, reverse=True):
        if text.endswith(literal, 0, end):
            return literal
    return None


def find_framing(ctx: DerivationContext, template: dict[str, Any]) -> Framing:
    """The framing whitespace of ``template``'s text fields, read off the sentinel renders.

    Args:
        ctx: the derivation context (its renders, in every mode).
        template: the derived response template whose delimiters locate the fields.

    Returns:
        The :class:`Framing` (empty sets where the renders show none).
    """
    anchor = template.get("start_anchor", "")
    anchors = [anchor] if isinstance(anchor, str) else list(anchor)
    fields = template["fields"]
    reasoning = fields.get("reasoning_content", {})
    reasoning_open = _compiled(_pattern(reasoning, "open"))
    reasoning_close = _compiled(_pattern(reasoning, "close"))
    tool_open = _compiled(_pattern(fields.get("tool_calls", {}), "open"))
    content_close = fields.get("content", {}).get("close", [])
    closes = [content_close] if isinstance(content_close, str) else list(content_close)
    found = Framing()
    for mode in ctx.modes:
        for variant in _VARIANTS:
            for spec in _SPECS.values():
                turn = ctx.turn_for(spec, mode, variant)
                if turn is None:
                    continue
                seen = _seen(turn, anchors)
                _reasoning_framing(found, seen, reasoning_open, reasoning_close)
                _content_framing(found, seen, closes)
                if tool_open is not None:
                    found.before_call |= _runs_before(seen, tool_open, reasoning_close)
                if reasoning_open is not None:
                    found.before_reasoning |= _runs_before(seen, reasoning_open, None)
    return found


def _reasoning_framing(found: Framing, seen: str, opener: regex.Pattern[str] | None,
                       closer: regex.Pattern[str] | None) -> None:
    if REASONING not in seen or opener is None or closer is None:
        return
    start = seen.index(REASONING)
    end = start + len(REASONING)
    lead = _run_before(seen, start)
    if lead and _ends_with(opener, seen, start - len(lead)):
        found.reasoning_open.add(lead)
    trail = _run_after(seen, end)
    match = closer.match(seen, end + len(trail))
    if match is None:
        return
    if trail:
        found.reasoning_close.add(trail)
    after = _run_after(seen, match.end())
    if after and match.end() + len(after) < len(seen):
        found.after_reasoning.add(after)


def _content_framing(found: Framing, seen: str, closes: list[str]) -> None:
    if CONTENT not in seen:
        return
    start = seen.index(CONTENT)
    end = start + len(CONTENT)
    lead = _run_before(seen, start)
    if lead and start == len(lead):
        found.output_start.add(lead)
    elif lead:
        closer = _closer_before(closes, seen, start - len(lead))
        if closer is not None:
            found.after_close.setdefault(closer, set()).add(lead)
    trail = _run_after(seen, end)
    if trail and end + len(trail) == len(seen):
        found.output_end.add(trail)
    closer = _closer_at(closes, seen, end + len(trail)) if trail else None
    if closer is not None:
        found.before_close.setdefault(closer, set()).add(trail)


def _runs_before(seen: str, opener: regex.Pattern[str], absorbed: regex.Pattern[str] | None) -> set[str]:
    """The whitespace runs right before each match of ``opener`` in ``seen`` (at the start of the
    output, after an answer, between two calls), except those right after a match of ``absorbed``
    (the reasoning closer's framing takes them)."""
    runs = set()
    for match in opener.finditer(seen):
        lead = _run_before(seen, match.start())
        if lead and not _ends_with(absorbed, seen, match.start() - len(lead)):
            runs.add(lead)
    return runs


def _has_alternatives(source: str) -> bool:
    """Whether a regex source has a ``|`` outside any group, class or escape."""
    depth, index, in_class = 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        index += 1
    return False


def _group(source: str) -> str:
    """``source`` ready to be joined to more pattern text (grouped when it has alternatives)."""
    return f"(?:{source})" if _has_alternatives(source) else source


def _optional(runs: Iterable[str]) -> str:
    """``(?:\\n\\n|\\n)?``: any of ``runs`` (the longest first), or nothing; ``""`` for no runs."""
    runs = [run for run in runs if run]
    return f"(?:{_literal_pattern(runs)})?" if runs else ""


def frame_text_fields(ctx: DerivationContext, template: dict[str, Any],
                      heuristic_reasoning: bool = False) -> dict[str, Any]:
    """``template`` with the framing whitespace moved into its delimiters and its text fields kept as
    written (module docstring).

    Args:
        ctx: the derivation context.
        template: a derived response template (not modified).
        heuristic_reasoning: the reasoning field is a guess no render shows: it keeps stripping.

    Returns:
        A new template dict; the fields' keys keep their order.
    """
    found = find_framing(ctx, template)
    framed = copy.deepcopy(template)
    fields = framed["fields"]
    if "reasoning_content" in fields and not heuristic_reasoning:
        fields["reasoning_content"] = _frame_reasoning(fields["reasoning_content"], found)
    if "tool_calls" in fields and found.before_call:
        fields["tool_calls"] = _frame_opener(fields["tool_calls"], found.before_call)
    if "reasoning_content" in fields and found.before_reasoning:
        fields["reasoning_content"] = _frame_opener(fields["reasoning_content"], found.before_reasoning)
    if "content" in fields:
        fields["content"] = _frame_content(fields["content"], found)
    return framed


def _frame_reasoning(spec: dict[str, Any], found: Framing) -> dict[str, Any]:
    opener, closer = _pattern(spec, "open"), _pattern(spec, "close")
    result: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("open", "open_pattern") and opener is not None and found.reasoning_open:
            result["open_pattern"] = f"{opener}{_optional(found.reasoning_open)}"
        elif key in ("close", "close_pattern") and closer is not None and (found.reasoning_close
                                                                            or found.after_reasoning):
            result["close_pattern"] = (f"{_optional(found.reasoning_close)}{_group(closer)}"
                                       f"{_optional(found.after_reasoning)}")
        else:
            result[key] = value
    return {**result, "content_args": {**result.get("content_args", {}), **_KEEP}}


def _frame_opener(spec: dict[str, Any], runs: set[str]) -> dict[str, Any]:
    opener = _pattern(spec, "open")
    if opener is None:
        return spec
    result: dict[str, Any] = {"open_pattern": f"{_optional(runs)}{_group(opener)}"}
    result.update((key, value) for key, value in spec.items() if key not in ("open", "open_pattern"))
    return result


def _frame_content(spec: dict[str, Any], found: Framing) -> dict[str, Any]:
    if "open" in spec or "open_pattern" in spec:
        return spec
    if found.output_end:  # the answer ends with framing no marker follows: it is stripped, as before
        kept = dict(spec)
    else:
        kept = {**spec, "content_args": {**spec.get("content_args", {}), **_KEEP}}  # after the delimiters
    framed_closes = set(found.before_close) | set(found.after_close)
    if not found.output_start and not framed_closes:
        return kept
    start = [f"^(?:{_literal_pattern(found.output_start)})"] if found.output_start else []
    if "close_pattern" in spec:
        parts = [*start, spec["close_pattern"]]
    else:
        literals = spec.get("close", [])
        literals = [literals] if isinstance(literals, str) else list(literals)
        ordered = sorted(literals, key=len, reverse=True)
        parts = [*start, *(_framed_close(literal, found) for literal in ordered)]
    result = {key: value for key, value in kept.items()
              if key not in ("close", "close_pattern", "content_args")}
    result["close_pattern"] = "|".join(parts)
    return {**result, **({"content_args": kept["content_args"]} if "content_args" in kept else {})}


def _framed_close(literal: str, found: Framing) -> str:
    return (f"{_optional(found.before_close.get(literal, ()))}{_escape(literal)}"
            f"{_optional(found.after_close.get(literal, ()))}")
