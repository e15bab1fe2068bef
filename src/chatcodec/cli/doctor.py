"""``chatcodec doctor MODEL``: what is wrong with a model's chat and response templates.

MODEL is a model directory, a Hub model id, a bundled profile name or a chat template file (see
:mod:`chatcodec.analysis.doctor` for the checks). Each finding prints as
``SEVERITY [CHECK] line N: message``, followed, when a render shows it, by the conversation that
reproduces it (``  conversation: {...}``, one line of JSON); ``info`` findings only with ``--all``;
a summary line ends the report.
``--json`` prints ``{"findings": [...]}`` instead (each ``{"check", "severity", "message", "line",
"conversation"}``). Exit status: 1 when a finding is an error, else 0.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from chatcodec.analysis.findings import CHECKS

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``chatcodec doctor``."""
    from chatcodec.cli.options import add_timeout

    parser.add_argument("model", metavar="MODEL",
                        help="a model directory, a Hub model id (org/name, with chatcodec[hub]), a bundled "
                             "profile name, or a chat template file")
    parser.add_argument("--json", action="store_true",
                        help='print {"findings": [...]} as JSON (every finding)')
    parser.add_argument("--all", action="store_true", help="print info findings too")
    parser.add_argument("--check", action="append", choices=CHECKS, metavar="CHECK",
                        help=f"run only this check (repeatable): {', '.join(CHECKS)}")
    parser.add_argument("--response-template", metavar="TEMPLATE",
                        help="the response template to check against (a JSON file or a bundled profile "
                             "name); default: the model's own")
    add_timeout(parser)


def run(args: argparse.Namespace) -> int:
    """Examine the model and print the findings; returns 1 when one is an error, else 0.

    Raises:
        OSError, ValueError, HubError: MODEL cannot be read or has no chat template.
    """
    from chatcodec.analysis.doctor import run_doctor
    from chatcodec.cli.options import render_timeout

    with render_timeout(args.timeout):  # a model directory may derive its response template: renders too
        target = _target(args.model, args.response_template)
        findings = run_doctor(target, tuple(args.check) if args.check else CHECKS)
    if args.json:
        print(json.dumps({"findings": [finding.to_json() for finding in findings]}, ensure_ascii=False,
                         indent=2))
    else:
        for finding in findings:
            if finding.severity == "info" and not args.all:
                continue
            print(finding)
            if finding.conversation is not None:
                print(f"  conversation: {json.dumps(finding.conversation, ensure_ascii=False)}")
        counts = {severity: sum(finding.severity == severity for finding in findings)
                  for severity in ("error", "warning", "info")}
        hidden = "" if args.all or not counts["info"] else " (--all shows them)"
        print(f"{target.name}: {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} "
              f"info{hidden}")
    return 1 if any(finding.severity == "error" for finding in findings) else 0


def _target(source: str, response_source: str | None) -> Any:
    """The :class:`~chatcodec.analysis.doctor.DoctorTarget` that MODEL names."""
    from chatcodec.analysis.doctor import DoctorTarget
    from chatcodec.cli.sources import (
        model_path,
        read_chat_template_source,
        read_response_template,
        resolve_source,
    )

    kind = resolve_source(source)
    response = _checked(read_response_template(response_source), response_source) if response_source else None
    origin = response_source
    if kind in ("directory", "hub", "profile"):
        from chatcodec.model.codec import ChatCodec

        codec = ChatCodec.from_pretrained(model_path(source), load_tokenizer=False)
        if codec.chat_template is None:
            what = (f"profile {codec.profile!r} bundles no chat template" if kind == "profile"
                    else "no chat template")
            raise ValueError(f"{source}: {what}; doctor examines a chat template")
        templates = codec.chat_template
        variables = {**codec.special_tokens_map, **codec.template_variables}
        if response is None:
            response, origin = codec.response_template, codec.response_template_source
    else:
        held = read_chat_template_source(source)
        templates, variables = held.templates, dict(held.special_tokens)
        if response is None and held.response_template is not None:  # a tokenizer_config.json's own,
            response, origin = _checked(held.response_template, source), source  # as ChatCodec reads it
        profile = _detected(templates)
        if profile is not None:  # as ChatCodec.from_pretrained attaches a detected profile to a directory
            variables = {**dict(profile.special_tokens or {}), **dict(profile.template_kwargs or {}),
                         **variables}
            if response is None:
                response, origin = profile.response_template, f"profile:{profile.name}"
    named = {"default": templates} if isinstance(templates, str) else dict(templates)
    return DoctorTarget(source, named, variables, response, origin)


def _checked(response: Any, source: str) -> Any:
    """``response`` when it loads as a response template.

    Raises:
        ResponseTemplateError: it does not; the message names ``source`` first, as ``chatcodec parse``'s.
    """
    from chatcodec.errors import ResponseTemplateError
    from chatcodec.response_templates.template import load_response_template

    try:
        load_response_template(response)
    except ResponseTemplateError as error:
        raise ResponseTemplateError(f"{source}: {error}", field=error.field, key=error.key,
                                    path=error.path) from None
    return response


def _detected(templates: str | dict[str, str]) -> Any:
    """The bundled profile detected from a template file's default template, or ``None``."""
    from chatcodec import profiles

    template = templates if isinstance(templates, str) else templates.get("default", "")
    name = profiles.detect(template) if template else None
    return None if name is None else profiles.load(name)
