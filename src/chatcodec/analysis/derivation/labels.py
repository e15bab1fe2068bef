"""A role label every answer starts with: a word and a colon written where the output begins.

Some templates open each plain answer with a label instead of a marker (vLLM's Hunyuan-A13B tool
template: ``助手：`` "Assistant:" right after ``<|extra_0|>``; its call turns start with
``<tool_calls>`` and carry no label). A word is never an atom
(:mod:`chatcodec.analysis.derivation.atoms`), so without this rule the label stays in ``content``.

The rule: when every sentinel answer turn that continues its prompt, in every mode and history
variant, starts its output with the same label (one to twelve letters and a colon, ASCII ``:`` or
full-width ``：``) glued to the answer, the implicit ``content`` field closes on that label **only
at the start of the output** (``^\\s*助手：``), so the same word with a colon inside an answer stays
prose. The round trip labels the result.
"""

from __future__ import annotations

from typing import Any

import regex

from chatcodec.analysis.derivation.context import CONTENT, DerivationContext

__all__ = ["answer_label", "discard_answer_label"]

_LABEL = regex.compile(r"[^\W\d_]{1,12}[:：]")
_VARIANTS = ("single", "after_tool")


def answer_label(ctx: DerivationContext) -> str:
    """The label every answer turn starts with (module docstring), or ``""``."""
    labels = set()
    for mode in ctx.modes:
        for variant in _VARIANTS:
            turn = ctx.turn("content", mode, variant)
            if turn is None or not turn.continues:
                continue
            lead = turn.output.split(CONTENT, 1)[0] if CONTENT in turn.output else None
            labels.add(lead.strip() if lead is not None and _LABEL.fullmatch(lead.strip()) else "")
    return labels.pop() if len(labels) == 1 else ""


def discard_answer_label(template: dict[str, Any], label: str) -> dict[str, Any]:
    """``template`` whose implicit field (``content``) also closes on ``label`` at the start of the
    output; unchanged when the field closes on a pattern already or ``label`` is empty."""
    fields = dict(template["fields"])
    spec = fields.get("content")
    if not label or not isinstance(spec, dict) or "open" in spec or "open_pattern" in spec \
            or "close_pattern" in spec:
        return template
    closes = spec.get("close", [])
    literals = [closes] if isinstance(closes, str) else list(closes)
    pattern = "|".join([r"^\s*" + regex.escape(label), *(regex.escape(text) for text in literals)])
    fields["content"] = {**{key: value for key, value in spec.items() if key != "close"},
                         "close_pattern": pattern}
    return {**template, "fields": fields}
