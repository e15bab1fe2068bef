"""Recipient-addressed turns: every message of a turn starts with a marker and its recipient.

Some templates write each part of an assistant turn as ``MARKER RECIPIENT SEPARATOR MESSAGE``: the
recipient is a fixed word for text meant for the user and the tool's name for a call (functionary
v3.2: ``>>>all\\nHello`` and ``>>>get_weather\\n{"city": "Paris"}``; the generation prompt already ends
with the first ``>>>``). llama.cpp's autoparser calls this form "recipient-based" (inference.md F15).
Derived as any other form, the call opener is a bare name, so ``all`` reads as a call to ``all``,
and the second call's marker ends up inside the first call's arguments.

The form is recognised from the sentinel renders of one mode whose turns continue their prompt: the
generation prompt ends with a marker atom, the plain answer starts with one word and whitespace
before the answer, the one-call turn starts with the tool's name and whitespace, and the second call
of a two-call turn follows the same marker. Then:

* the calls open on the marker followed by a name that is not the text recipient (a negative
  look-ahead) and close before the next marker or at the end-of-sequence token;
* the marker with the text recipient (``>>>all``) joins the ``content`` field's discard list, so
  it never reaches ``content``.

The generation prompt cut right before its marker is offered first as the start anchor, so the first
marker stays in the prefix the parser reads (the search still chooses by parsing the sentinel turns
back). Nothing is trusted: the round trip labels the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

from chatcodec.analysis.derivation.context import CALL_A, CALL_B, CONTENT, DerivationContext

__all__ = ["RecipientForm", "address_calls", "anchors_before_marker", "find_recipient_form"]

_RECIPIENT = regex.compile(r"(\w{1,16})([ \t]*\n|[ \t]+)")


@dataclass(frozen=True)
class RecipientForm:
    """How a template addresses the messages of a turn.

    Attributes:
        marker: the atom before every message (``>>>``).
        text_recipient: the recipient of text for the user (``all``).
    """

    marker: str
    text_recipient: str

    @property
    def text_opener(self) -> str:
        """The marker and the text recipient (``>>>all``): discarded before text."""
        return self.marker + self.text_recipient


def find_recipient_form(ctx: DerivationContext) -> RecipientForm | None:
    """The recipient form of the template's turns, or ``None`` (module docstring)."""
    for mode in ctx.modes:
        content, one, two = (ctx.turn(spec, mode) for spec in ("content", "one_call", "two_calls"))
        if content is None or one is None or two is None or not (content.continues and one.continues):
            continue
        marker = _last_marker(ctx, content.generation_prompt.rstrip())
        if not marker:
            continue
        match = _RECIPIENT.match(content.output)
        if match is None or not content.output[match.end():].startswith(CONTENT):
            continue
        call = regex.match(regex.escape(CALL_A[0]) + r"\s", one.output)
        if call is None or marker + CALL_B[0] not in two.output:
            continue
        return RecipientForm(marker, match.group(1))
    return None


#: A run of one punctuation character, angle brackets included (functionary's ``>>>``, which the
#: atoms leave out because ``<`` and ``>`` belong to tags there).
_RUN = regex.compile(r"([^\w\s])\1{2,}$")


def _last_marker(ctx: DerivationContext, text: str) -> str:
    """The marker ``text`` ends with: its last atom, or a run of one punctuation character."""
    spans = ctx.atoms.spans(text)
    if spans and spans[-1][1] == len(text):
        return text[spans[-1][0]:]
    run = _RUN.search(text)
    return run.group(0) if run else ""


def anchors_before_marker(ctx: DerivationContext, form: RecipientForm) -> list[str]:
    """Each mode's generation prompt cut right before the marker it ends with."""
    found: list[str] = []
    for mode in ctx.modes:
        turn = ctx.turn("content", mode)
        generation = turn.generation_prompt.rstrip() if turn is not None else ""
        anchor = generation[:-len(form.marker)] if generation.endswith(form.marker) else ""
        if anchor.strip() and anchor not in found:
            found.append(anchor)
    return found


def address_calls(form: RecipientForm, fields: list[dict[str, Any]], eos: str | None) -> list[dict[str, Any]]:
    """The tool-call field candidates opening on the marker and a recipient that is not the text
    recipient, closing before the next marker (or at ``eos``); candidates whose opener does not start
    with the name are left out (the form does not apply to them)."""
    marker = regex.escape(form.marker)
    not_text = rf"(?!{regex.escape(form.text_recipient)}\s)"
    close = rf"(?={marker})" + (f"|{regex.escape(eos)}" if eos else "")
    addressed = []
    for field in fields:
        opener = field.get("open_pattern", "")
        if not opener.startswith("(?P<name>"):
            continue
        rest = {key: value for key, value in field.items() if key not in ("open", "close", "close_pattern")}
        addressed.append({**rest, "open_pattern": marker + not_text + opener, "close_pattern": close})
    return addressed
