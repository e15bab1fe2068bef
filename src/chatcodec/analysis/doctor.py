"""``chatcodec doctor``: every check of one model's chat and response templates, as findings.

What lives here: the model under examination (:class:`DoctorTarget`: its chat templates, the
variables every render gets, its response template) and :func:`run_doctor`, which runs the checks
in :data:`~chatcodec.analysis.findings.CHECKS` order:

* ``lint`` (:mod:`chatcodec.analysis.lint`): the templates' text, with the lint's severities;
* ``round-trip`` (:mod:`chatcodec.analysis.round_trip`, shared with ``chatcodec derive``): assistant
  turns rendered with the chat template and parsed back with the response template, per capability;
* ``prefix-stability`` (:mod:`chatcodec.analysis.prefix_stability`);
* ``tool-call-forms`` (:mod:`chatcodec.analysis.tool_call_forms`);
* ``cross-engine:minijinja`` / ``cross-engine:hf-jinja`` (:mod:`chatcodec.analysis.cross_engine`).

A model with several named chat templates is examined template by template; findings about a
named template other than ``default`` start with ``[name]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatcodec.analysis.findings import CHECKS, Finding

__all__ = ["DoctorTarget", "round_trip_findings", "run_doctor"]


@dataclass(frozen=True)
class DoctorTarget:
    """What ``chatcodec doctor`` examines.

    Attributes:
        name: the model directory, profile, Hub id or file, for messages.
        chat_templates: ``{name: template}`` (``{"default": ...}`` for a single template).
        variables: the template variables every render gets (special tokens, profile variables).
        response_template: the response template, or ``None`` when the model has none.
        response_template_source: where it came from (``tokenizer_config.json``, ``profile:<name>``).
    """

    name: str
    chat_templates: dict[str, str]
    variables: dict[str, Any] = field(default_factory=dict)
    response_template: dict[str, Any] | None = None
    response_template_source: str | None = None


def run_doctor(target: DoctorTarget, checks: tuple[str, ...] = CHECKS) -> list[Finding]:
    """Run the checks on every chat template of ``target``.

    Args:
        target: the model.
        checks: which checks to run (a subset of :data:`~chatcodec.analysis.findings.CHECKS`).

    Returns:
        The findings, check by check in :data:`CHECKS` order, then by template.

    Raises:
        ValueError: an unknown check name.
    """
    unknown = [check for check in checks if check not in CHECKS]
    if unknown:
        raise ValueError(f"doctor: unknown check {unknown[0]!r}; the checks are {', '.join(CHECKS)}")
    findings: list[Finding] = []
    stalled: dict[str, bool] = {}  # template name -> whether it hits a sandbox limit on the plain probe
    for check in CHECKS:
        if check not in checks:
            continue
        if check == "lint":
            findings += _response_lint(target)
        if check == "cross-engine:hf-jinja" and "cross-engine:minijinja" in checks:
            continue  # run together with minijinja (one pass over the probes)
        for name, template in target.chat_templates.items():
            if check != "lint":
                if name not in stalled:
                    stall = _at_a_limit(check, template, target.variables)
                    stalled[name] = stall is not None
                    if stall is not None:
                        findings.append(_named(stall, name, len(target.chat_templates)))
                if stalled[name]:
                    continue
            found = _run_check(check, checks, template, target)
            findings += [_named(finding, name, len(target.chat_templates)) for finding in found]
    order = {check: index for index, check in enumerate(CHECKS)}
    return sorted(findings, key=lambda finding: order[finding.check])


def _at_a_limit(check: str, template: str, variables: dict[str, Any]) -> Finding | None:
    """An error (under ``check``, the first check that renders) when the plain conversation hits a
    sandbox limit (:mod:`chatcodec.analysis.render_time`), else ``None``. The checks render dozens
    of conversations, so such a template kept ``chatcodec doctor`` busy for ``MAX_RENDER_SECONDS``
    (60 s) each on an endless loop (more than ten minutes for one check), and 97 s on a string
    doubled up to ``MAX_STRING_LENGTH``. It is rendered once, and the checks that render are skipped."""
    from chatcodec.analysis.doctor_probes import Probe
    from chatcodec.analysis.render_time import PLAIN_MESSAGES, limit_phrase, plain_render_limit

    error = plain_render_limit(template, variables)
    if error is None:
        return None
    probe = Probe([dict(message) for message in PLAIN_MESSAGES], None, True, variables)
    return Finding(check, "error", f"the chat template {limit_phrase(error)} on the plain conversation: "
                   f"{error.message}; the checks that render it were not run (each renders dozens of "
                   "conversations)", error.lineno, probe.conversation())


def _run_check(check: str, checks: tuple[str, ...], template: str, target: DoctorTarget) -> list[Finding]:
    from chatcodec.analysis.cross_engine import check_cross_engines
    from chatcodec.analysis.prefix_stability import check_prefix_stability
    from chatcodec.analysis.tool_call_forms import check_tool_call_forms

    variables = target.variables
    if check == "lint":
        return _chat_lint(template)
    if check == "round-trip":
        return round_trip_findings(template, target.response_template, variables,
                                   target.response_template_source)
    if check == "prefix-stability":
        return check_prefix_stability(template, variables)
    if check == "tool-call-forms":
        return check_tool_call_forms(template, variables)
    engines = tuple(engine for engine in ("minijinja", "hf-jinja") if f"cross-engine:{engine}" in checks)
    return check_cross_engines(template, variables, engines)


def _named(finding: Finding, name: str, count: int) -> Finding:
    if count == 1 or name == "default":
        return finding
    return Finding(finding.check, finding.severity, f"[{name}] {finding.message}", finding.line,
                   finding.conversation)


def _chat_lint(template: str) -> list[Finding]:
    from chatcodec.analysis.lint import chat_template_findings

    return [Finding("lint", lint.severity, f"{lint.code} {lint.message}", lint.line)
            for lint in chat_template_findings(template)]


def _response_lint(target: DoctorTarget) -> list[Finding]:
    from chatcodec.analysis.lint import response_template_findings

    if target.response_template is None:
        return []
    return [Finding("lint", lint.severity, f"{lint.code} response template "
                    + (f"{lint.where}: " if lint.where else "") + lint.message)
            for lint in response_template_findings(target.response_template)]


#: The message field each capability compares.
_FIELDS = {"content": "content", "reasoning": "reasoning_content", "one_call": "tool_calls",
           "parallel_calls": "tool_calls"}

#: What a capability's round-trip status means, and its severity.
_STATUS = {
    "fail": ("error", "parsing the rendered turn with the response template does not give the message back"),
    "inconsistent": ("warning", "the template does not say what the model writes after the generation prompt "
                                "(the rendered turn does not continue the prompt, and parsing it after the "
                                "whole prompt does not give the message back)"),
    "render_error": ("info", "the chat template refuses the conversation"),
    "not_rendered": ("info", "the chat template does not render it"),
}


def round_trip_findings(template: str, response_template: dict[str, Any] | None, variables: dict[str, Any],
                        source: str | None = None) -> list[Finding]:
    """``round-trip`` findings: one per capability that does not pass, with its first case.

    Args:
        template: the chat template text.
        response_template: the model's response template, or ``None``.
        variables: the template variables every render gets.
        source: where the response template came from, for messages.

    Returns:
        ``error`` for a capability whose round trip fails (a field comes back different, or the
        parser raises), ``warning`` for one the template leaves inconsistent, ``info`` for one it
        refuses or does not render, and one ``info`` when there is no response template.
    """
    from chatcodec.analysis.round_trip import (
        CONTENT_AS_REASONING,
        MARKUP_DECODED,
        content_rendered_as_reasoning,
        round_trip,
    )

    if response_template is None:
        return [Finding("round-trip", "info", "not run: the model has no response template (none in "
                        "tokenizer_config.json, and no bundled profile matches its chat template); "
                        "`chatcodec derive` can derive one")]
    report = round_trip(template, response_template, variables=variables)
    findings = []
    escaped = next((case for case in report.cases if MARKUP_DECODED in case.note), None)
    if escaped is not None:
        findings.append(Finding("round-trip", "error", f"{escaped.probe.label}: {MARKUP_DECODED}; the "
                                "prompts the template renders show earlier turns escaped, unlike what the "
                                "model writes: join with `~` (no escaping) or drop `|safe`",
                                _safe_line(template),
                                escaped.conversation.to_json()))
    origin = f" ({source})" if source else ""
    for name, capability in report.capabilities.items():
        if capability.status == "pass":
            continue
        severity, meaning = _STATUS[capability.status]
        key = _FIELDS[name]
        case = next((case for case in capability.cases if case.fields.get(key) == capability.status),
                    next((case for case in capability.cases if case.status == capability.status), None))
        detail = capability.reason or (case.reason if case else "")
        if case is not None and capability.status == "inconsistent" \
                and content_rendered_as_reasoning(case.probe.message, case.parsed):
            meaning = f"the chat template is at odds with itself: {CONTENT_AS_REASONING}"
        if case is not None:
            differences = [difference for difference in case.differences if difference.key.startswith(key)]
            if differences:
                first = differences[0]
                detail = (f"{case.probe.capability}/{case.probe.case}/{case.probe.variant}: {first.key}: "
                          f"expected {first.expected!r}, parsed {first.actual!r}")
                if case.reason and first.key not in case.reason:
                    detail += f" ({case.reason})"
            if case.error:
                detail += f"; {case.error}"
        fix = (f"; fix the response template{origin} or the chat template so that they agree"
               if severity == "error" else "")
        findings.append(Finding("round-trip", severity, f"{name}: {meaning}: {detail}{fix}", None,
                                case.conversation.to_json() if case is not None else None))
    return findings


def _safe_line(template: str) -> int | None:
    """The 1-based line of the chat template's first ``|safe`` filter (where a ``Markup`` value, whose
    ``+`` escapes the text joined to it, comes from), or ``None``."""
    import regex

    match = regex.search(r"\|\s*safe\b", template)
    return template.count("\n", 0, match.start()) + 1 if match else None
