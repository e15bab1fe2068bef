"""``derive_response_template``: a response template derived from a chat template, and verified.

How (inference.md): render sentinel turns with the chat template and diff the renders
(:mod:`chatcodec.analysis.derivation`: anchors, reasoning markers and the content field's discard
list in ``text_fields``, the tool-call field in ``tool_fields``, the choice among candidates in
``search``), then judge the result with the round trip of :mod:`chatcodec.analysis.round_trip`
on realistic probes the derivation never saw, in every variant (one turn, a multi-turn history,
after a tool result) and every mode of the template (``enable_thinking``, ...). Standard content
parsers come first (``json``, ``xml-inline``, ``text``); an ``x-`` parser only where the format
needs one (arguments as a JSON string: ``x-json-calls``; values JSON cannot read: ``x-bare-object``).

Each capability gets a label:

* ``verified``: its round trip passed (all cases that the template renders, in every variant and mode);
* ``heuristic``: in the template but not checkable: reasoning markers the template never renders
  in a turn (found in the generation prompt, the rendered prompt or the template source), or
  renders that do not continue the template's own generation prompt (``inconsistent``);
* ``unsupported``: the template does not render it (no reasoning, no tool calls, a template that
  refuses two calls), or its round trip fails; the reason names the failing case.

A capability is **applicable** when the template renders it (its round trip passed, failed, or
was inconsistent); a derived template is **verified** when its ``content`` and every applicable
capability are. That a round trip
passed proves agreement with the chat template, not with the model: formats a model writes but its
template never renders (gpt-oss harmony, Llama 4 pythonic) still need a bundled profile.

Public API::

    derived = derive_response_template(chat_template, variables={"eos_token": "<|im_end|>"})
    derived.response_template            # the JSON template (dict)
    derived.capabilities["one_call"]     # CapabilityLabel(status, reason, applicable)
    derived.verified                     # every applicable capability verified
    derived.to_json()                    # {"response_template", "capabilities": {name: {"status", ...}}}
    derived.report                       # the round trip's RoundTripReport (every case, its conversation)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chatcodec.analysis.probes import CAPABILITIES
from chatcodec.analysis.round_trip import CapabilityResult, RoundTripReport

__all__ = ["CapabilityLabel", "DerivedTemplate", "derive_response_template"]

#: The labels, strongest first.
LABELS = ("verified", "heuristic", "unsupported")


@dataclass(frozen=True)
class CapabilityLabel:
    """What is known about one capability of a derived template.

    Attributes:
        status: ``verified``, ``heuristic`` or ``unsupported``.
        reason: why (empty for ``verified`` apart from notes).
        applicable: the template renders the capability consistently, so the round trip can judge it.
    """

    status: str
    reason: str
    applicable: bool

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "applicable": self.applicable}


@dataclass(frozen=True)
class DerivedTemplate:
    """A derived response template, its labels and the round trip that judged it.

    Attributes:
        response_template: the template (a plain JSON dict).
        capabilities: capability name -> :class:`CapabilityLabel`, for ``content``, ``reasoning``,
            ``one_call`` and ``parallel_calls``.
        report: the round trip of the template (every case, with the conversation that reproduces it).
        notes: what the derivation decided that a reader should know (message shape, tool format).
    """

    response_template: dict[str, Any]
    capabilities: dict[str, CapabilityLabel]
    report: RoundTripReport
    notes: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """Whether ``content`` and every other applicable capability are verified (a template whose
        turns the round trip cannot read at all is not)."""
        return self.capabilities["content"].status == "verified" and all(
            label.status == "verified" for label in self.capabilities.values() if label.applicable)

    @property
    def unverified(self) -> list[str]:
        """The capabilities in the template that are not verified (a parse using them should warn)."""
        return [name for name, label in self.capabilities.items() if label.status != "verified"]

    def to_json(self) -> dict[str, Any]:
        """``{"response_template", "capabilities": {name: {"status", "reason", "applicable"}},
        "verified", "notes"}``."""
        return {"response_template": self.response_template,
                "capabilities": {name: label.to_json() for name, label in self.capabilities.items()},
                "verified": self.verified, "notes": list(self.notes)}


def derive_response_template(chat_template: str, *,
                             variables: Mapping[str, Any] | None = None) -> DerivedTemplate:
    """Derive a response template from a chat template and label what the round trip verified.

    Args:
        chat_template: the chat template text (one template; pick a named one first).
        variables: the model's special tokens (``eos_token`` ends each output as a model stops
            there; the others are atoms) and any variable the template requires.

    Returns:
        The :class:`DerivedTemplate`.

    Raises:
        ChatTemplateError: the template does not compile.
        ChatTemplateLimitError: the plain conversation hits a sandbox limit (runs out of render
            time, ``MAX_RENDER_SECONDS`` or ``MAX_TEMPLATE_STEPS``, or builds too much:
            ``MAX_STRING_LENGTH``, ...): the derivation renders dozens of conversations, so it stops
            after that one render (:mod:`chatcodec.analysis.render_time`).
        ChatTemplateNotFoundError: the template text is empty.
        ChatTemplateError: the template raises on every probe conversation and on the plain one
            (nothing renders, so nothing can be derived); the message names the template's error,
            its line and the plain conversation.
    """
    from chatcodec.analysis.derivation.atoms import Atoms
    from chatcodec.analysis.derivation.context import DerivationContext
    from chatcodec.analysis.derivation.framing import frame_text_fields
    from chatcodec.analysis.derivation.headers import anchor_header_rests, find_open_headers
    from chatcodec.analysis.derivation.labels import answer_label, discard_answer_label
    from chatcodec.analysis.derivation.recipients import (
        address_calls,
        anchors_before_marker,
        find_recipient_form,
    )
    from chatcodec.analysis.derivation.search import assemble
    from chatcodec.analysis.derivation.text_fields import (
        ReasoningMarkers,
        anchor_candidates,
        content_discards,
        heuristic_reasoning,
        rendered_reasoning,
    )
    from chatcodec.analysis.derivation.tool_fields import derive_tool_field
    from chatcodec.analysis.round_trip import MARKUP_DECODED, discover_shape, round_trip, template_modes
    from chatcodec.chat_templates.environment import compile_chat_template
    from chatcodec.chat_templates.render import EMPTY_TEMPLATE_MESSAGE
    from chatcodec.errors import ChatTemplateNotFoundError

    if not chat_template.strip():
        raise ChatTemplateNotFoundError(EMPTY_TEMPLATE_MESSAGE)
    compile_chat_template(chat_template)  # a syntax error is the caller's to see, with its line
    values = dict(variables or {})
    _stop_at_a_limit(chat_template, values)
    shape = discover_shape(chat_template, values)
    modes = template_modes(chat_template, values, shape)
    ctx = DerivationContext.create(chat_template, values, shape, modes)
    open_headers = find_open_headers(ctx)
    if open_headers:  # HyperCLOVA X's "<|im_start|>assistant" + "/think" (derivation.headers)
        ctx.atoms = Atoms.for_tokens([*ctx.atoms.specials, *open_headers.atoms])
    markers = rendered_reasoning(ctx)
    guessed = None if markers else heuristic_reasoning(ctx)
    reasoning: list[ReasoningMarkers | None] = [*markers[:3], *([guessed] if guessed else []), None]
    if guessed is not None and guessed.heuristic.startswith("h1"):
        reasoning = [guessed]  # the prompt opens the block: the model writes its close (inference.md h1)
    tools = derive_tool_field(ctx)
    main, after_tool = anchor_candidates(ctx)
    lead: list[str] = []
    recipients = find_recipient_form(ctx)
    addressed = address_calls(recipients, tools.fields, ctx.eos) if recipients else []
    if recipients and addressed:  # functionary v3.2's ">>>all\n" / ">>>NAME\n" (derivation.recipients)
        tools.fields = addressed
        tools.kind = f"{tools.kind}, each message addressed ({recipients.text_opener!r} for text)"
        lead = [recipients.text_opener]
        main = [*anchors_before_marker(ctx, recipients), *main]
    discards = [*lead, *content_discards(ctx), *tools.discards, *([ctx.eos] if ctx.eos else [])]
    candidate = assemble(ctx, (main, after_tool), reasoning, tools.fields, discards)
    template = candidate.template()
    if open_headers:
        template = anchor_header_rests(template, open_headers)
    template = discard_answer_label(template, answer_label(ctx))  # Hunyuan's "助手：" (derivation.labels)
    heuristic = candidate.reasoning is not None and bool(candidate.reasoning.heuristic)
    template = frame_text_fields(ctx, template, heuristic)  # Qwen3's "<think>\n" (derivation.framing)
    report = round_trip(chat_template, template, variables=values, modes=modes, shape=shape)
    nothing = _renders_nothing(chat_template, values, report)
    if nothing is not None:
        raise nothing
    labels = _labels(report, candidate.reasoning.heuristic if candidate.reasoning else "", tools.problem)
    notes = [f"message shape: {shape.describe()}"]
    if tools.kind:
        notes.append(f"tool calls: {tools.kind}")
    if any(MARKUP_DECODED in case.note for case in report.cases):
        notes.append("HTML escapes: " + MARKUP_DECODED + "; verified on the decoded renders, while the "
                     "prompts it renders show earlier calls escaped: join with `~` or drop `|safe` in the "
                     "chat template")
    if len(modes) > 1:
        notes.append("modes checked: " + ", ".join(_mode_text(mode) for mode in modes))
    return DerivedTemplate(template, labels, report, notes)


def _stop_at_a_limit(chat_template: str, values: dict[str, Any]) -> None:
    """Raise when the plain conversation hits a sandbox limit: every one of the dozens of renders
    that follow would hit it too (an endless loop kept ``chatcodec derive`` running for over ten
    minutes, 60 s a render; a string doubled up to ``MAX_STRING_LENGTH``, past 120 s).

    Raises:
        ChatTemplateLimitError: naming the limit and its value, at the template's line.
    """
    from chatcodec.analysis.render_time import limit_phrase, plain_render_limit
    from chatcodec.chat_templates.errors import ChatTemplateLimitError

    hit = plain_render_limit(chat_template, values)
    if hit is not None:
        raise ChatTemplateLimitError(
            f"derive: the chat template {limit_phrase(hit)} on the plain conversation: {hit.message}; "
            "nothing was derived (the derivation renders dozens of conversations)",
            limit=hit.limit, value=hit.value, lineno=hit.lineno, source_line=hit.source_line)


def _renders_nothing(chat_template: str, values: dict[str, Any], report: RoundTripReport) -> Exception | None:
    """The error for a template that renders nothing at all: it raised on every probe conversation
    and on the plain one (one user question, no tools). The template's own error on the plain
    conversation (rendered again to keep its line), with that conversation, so anyone can reproduce
    it. ``None`` when the plain conversation renders: a template that refuses only the probes (all of
    which carry tools: MiroThinker's macros raise on any tool list) is the labels' to explain."""
    import json

    from chatcodec.analysis.render_time import PLAIN_MESSAGES
    from chatcodec.chat_templates.errors import ChatTemplateError
    from chatcodec.chat_templates.render import render_chat_template

    if not report.cases or any(case.status != "render_error" for case in report.cases):
        return None
    plain: dict[str, Any] = {"messages": [dict(message) for message in PLAIN_MESSAGES], "tools": None,
                             "add_generation_prompt": True, "kwargs": {}}
    try:
        render_chat_template(chat_template, plain["messages"], add_generation_prompt=True, **values)
    except ChatTemplateError as raised:
        return ChatTemplateError(
            f"derive: the chat template raises on every probe conversation ({len(report.cases)} tried) "
            f"and on the plain one, so nothing can be derived; it raised {raised.message!r} on "
            f"{json.dumps(plain, ensure_ascii=False)}",
            lineno=raised.lineno, source_line=raised.source_line, original_type=raised.original_type)
    except Exception:  # not the template's own error (a bad variable): the labels say what the probes hit
        return None
    return None


def _mode_text(mode: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in mode.items()) or "default"


def _labels(report: RoundTripReport, heuristic: str, tool_problem: str) -> dict[str, CapabilityLabel]:
    labels = {}
    for name in CAPABILITIES:
        result = report.capabilities[name]
        labels[name] = _label(name, result, heuristic, tool_problem)
    return labels


def _label(name: str, result: CapabilityResult, heuristic: str, tool_problem: str) -> CapabilityLabel:
    from chatcodec.analysis.round_trip import MARKUP_DECODED

    status = result.status
    if status == "pass" and any(MARKUP_DECODED in case.note for case in result.cases):
        return CapabilityLabel("verified", "verified on the renders with Jinja's HTML escapes decoded: the "
                               "template escapes them (`&#34;` for `\"`), a model does not", True)
    if status == "pass":
        return CapabilityLabel("verified", "", True)
    if status == "fail" and tool_problem and name in ("one_call", "parallel_calls"):
        return CapabilityLabel("unsupported", f"no tool-call field was derived ({tool_problem}), and the "
                               f"round trip fails: {result.reason}", True)
    if status == "fail":
        return CapabilityLabel("unsupported", f"the round trip fails: {result.reason}", True)
    if status == "inconsistent":
        return CapabilityLabel("heuristic", f"not verifiable: {result.reason}", True)
    if name == "reasoning" and heuristic:
        return CapabilityLabel("heuristic", heuristic, False)
    if name in ("one_call", "parallel_calls") and tool_problem:
        return CapabilityLabel("unsupported", tool_problem, False)
    if status == "render_error":
        return CapabilityLabel("unsupported", f"the template refuses it: {result.reason}", False)
    return CapabilityLabel("unsupported", f"the template does not render it ({result.reason})", False)
