"""``chatcodec lint``: report portability problems in chat templates and response templates.

Each finding is one line on stdout, ``PATH[NAME]:LINE: SEVERITY CODE message`` (chat templates)
or ``PATH: SEVERITY CODE WHERE: message`` with the pattern's JSON path (response templates);
severities are ``error`` (the template is wrong), ``warning`` (not portable) and ``info``
(:mod:`chatcodec.analysis.lint`). A template that cannot be used at all is an error: ``CT000`` for
a chat template that does not compile (its line when known) or is empty (only whitespace),
``RT000`` for a response template that does not load. Exit status: 1 when an error was found (with
``--strict``, also a warning) or an input could not be read, else 0.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatcodec.cli.sources import TemplateFile

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``chatcodec lint``."""
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a chat template file, a response template (.json), a bundled profile name, "
                             "a tokenizer_config.json "
                             "or chat_template.json (its chat templates and response_template), or a model "
                             "directory (the same, from all its files)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 on warnings (portability) too, not only on errors")


def run(args: argparse.Namespace) -> int:
    """Lint every path and print the findings; returns the exit code: 1 when an error (with
    ``--strict``, a warning) was found, else 0.

    Raises:
        OSError, ValueError: a path cannot be read.
    """
    findings: list[tuple[str, str]] = []
    for path in args.paths:
        for label, kind, content in _inputs(path):
            found = _chat_findings(label, content) if kind == "chat" else _response_findings(label, content)
            findings += found
    for _, line in findings:
        print(line)
    failing = {"error", "warning"} if args.strict else {"error"}
    return 1 if any(severity in failing for severity, _ in findings) else 0


def _chat_findings(label: str, source: str) -> list[tuple[str, str]]:
    """``(severity, line)`` for each finding of a chat template."""
    from chatcodec.analysis.lint import chat_template_findings

    return [(finding.severity, f"{label}" + ("" if finding.line is None else f":{finding.line}")
             + f": {finding.severity} {finding.code} {finding.message}")
            for finding in chat_template_findings(source)]


def _response_findings(label: str, template: Any) -> list[tuple[str, str]]:
    """``(severity, line)`` for each finding of a response template."""
    from chatcodec.analysis.lint import response_template_findings

    return [(finding.severity, f"{label}: {finding.severity} {finding.code} "
             + ("" if finding.where is None else f"{finding.where}: ") + finding.message)
            for finding in response_template_findings(template)]


def _inputs(path: str) -> list[tuple[str, str, Any]]:
    """``(label, "chat" | "response", content)`` for each template found at ``path``."""
    from chatcodec.cli.io import read_text
    from chatcodec.cli.sources import (
        model_path,
        not_found,
        read_template_json,
        resolve_source,
        template_json_text,
    )

    kind = resolve_source(path)
    if kind == "profile":
        return _profile_inputs(path)
    if kind == "file" and path != "-" and not Path(path).exists():
        raise OSError(not_found(path, "a template file, a model directory"))
    directory = Path(model_path(path))
    if directory.is_dir():
        from chatcodec.model.storage import load_chat_templates

        templates = load_chat_templates(directory)
        named = {"default": templates} if isinstance(templates, str) else templates
        found: list[tuple[str, str, Any]] = [
            (f"{path}[{name}]", "chat", text) for name, text in named.items()
        ]
        from chatcodec.model.config import TOKENIZER_CONFIG_FILE, read_tokenizer_config

        response = read_tokenizer_config(directory).response_template
        if response is not None:
            found.append((f"{Path(path) / TOKENIZER_CONFIG_FILE}[response_template]", "response", response))
        return found
    if path.endswith(".json"):
        return _json_inputs(read_template_json(path), path)
    text = read_text(path, limit="MAX_CHAT_TEMPLATE_BYTES")
    held = template_json_text(text, path) if path != "-" else None
    if held is not None:  # a configuration file without the .json extension
        return _json_inputs(held, path)
    if path != "-" and text.lstrip().startswith("{") and _is_json_object(text):
        return [(path, "response", json.loads(text))]
    return [(path, "chat", text)]


def _profile_inputs(name: str) -> list[tuple[str, str, Any]]:
    """The templates of a bundled profile: its chat template (when it bundles one), labelled
    ``profile NAME[default]``, and its response template, ``profile NAME[response_template]``."""
    from chatcodec import profiles

    profile = profiles.load(name)
    label = f"profile {profile.name}"
    found: list[tuple[str, str, Any]] = []
    if profile.chat_template is not None:
        found.append((f"{label}[default]", "chat", profile.chat_template))
    found.append((f"{label}[response_template]", "response", profile.response_template))
    return found


def _json_inputs(held: TemplateFile, path: str) -> list[tuple[str, str, Any]]:
    """The templates of a JSON file, read as the model loader reads a model directory's files: a
    response template, or a ``tokenizer_config.json`` / ``chat_template.json`` (its chat templates
    labelled ``PATH[name]``, its ``response_template`` labelled ``PATH[response_template]``)."""
    from chatcodec.cli.sources import NOT_A_TEMPLATE_FILE

    if held.kind == "other":
        raise ValueError(f"{path}: {NOT_A_TEMPLATE_FILE}")
    if held.kind == "response":
        return [(path, "response", held.response_template)]
    found: list[tuple[str, str, Any]] = [(f"{path}[{name}]", "chat", text)
                                         for name, text in held.chat_templates.items()]
    if held.response_template is not None:
        found.append((f"{path}[response_template]", "response", held.response_template))
    return found


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):  # not JSON, an integer past 4,300 digits, nested too deeply
        return False
