"""``chatcodec derive MODEL``: a response template derived from a chat template, with what was verified.

``MODEL`` is a model directory (its chat template and special tokens), a Hugging Face Hub model id
(read from the Hub cache, fetched first when the Hub may be reached: ``cli.sources.model_path``), a
bundled profile, a chat template file, or a ``tokenizer_config.json`` / ``chat_template.json``.
stdout carries the data:
the response template (JSON), or with ``--json`` the object ``{"response_template",
"capabilities": {name: {"status", "reason", "applicable"}}, "verified", "notes"}``. Without
``--json`` the labels go to stderr, one line per capability. Exit status 0 when a template was
derived, whatever its labels (``verified`` in the JSON says whether every capability the template
renders was verified); 1 when the chat template cannot be read or compiled, raises on every probe
conversation and on the plain one (the error names its raise and the conversation), or when it runs out of
render time (``--timeout SECONDS``, default ``MAX_RENDER_SECONDS``) on the plain conversation:
then nothing is derived and the error names the template and the limit (stderr, with or without
``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``chatcodec derive``."""
    from chatcodec.cli.options import add_timeout
    from chatcodec.cli.render import _variable

    parser.add_argument("source", metavar="MODEL",
                        help="a model directory, a Hub model id (org/name), a bundled profile name, a chat "
                             "template file, or a tokenizer_config.json / chat_template.json")
    parser.add_argument("--json", action="store_true",
                        help="print {response_template, capabilities, verified, notes} as JSON")
    parser.add_argument("--template-name", metavar="NAME",
                        help="which of the model's named templates to derive from (default: tool_use when "
                             "the model has one, else default)")
    parser.add_argument("--var", action="append", default=[], metavar="KEY=VALUE", type=_variable,
                        help="a template variable for every render (a special token such as "
                             "--var eos_token='<|im_end|>' for a bare template file); repeatable")
    add_timeout(parser)


def run(args: argparse.Namespace) -> int:
    """Derive, print the template (or the JSON report) and the labels; returns the exit code, 0.

    Raises:
        OSError, ValueError: the input cannot be read, or a special token (``--var`` too) is longer than
            :data:`~chatcodec.model.derived.MAX_DERIVE_TOKEN_CHARS`.
        ChatTemplateNotFoundError, ModelStorageError: no usable chat template.
        ChatTemplateError: the chat template does not compile, or raises on every probe conversation.
    """
    from chatcodec.analysis.derive import derive_response_template
    from chatcodec.chat_templates.errors import ChatTemplateError
    from chatcodec.chat_templates.selection import select_chat_template
    from chatcodec.cli.options import render_timeout
    from chatcodec.cli.render import _template_label
    from chatcodec.cli.sources import read_chat_template_source

    source = read_chat_template_source(args.source)
    template = select_chat_template(source.templates, args.template_name, [{"type": "function"}])
    variables: dict[str, Any] = {**source.special_tokens, **dict(args.var)}
    from chatcodec.model.derived import long_token_problem

    too_long = long_token_problem(variables)
    if too_long is not None:  # the derivation's time grows faster than a token (100,000 characters: minutes)
        raise ValueError(f"derive: {source.origin}: nothing was derived: {too_long}")
    if "eos_token" not in variables:
        print("chatcodec: warning: no eos_token is known (a bare template file): outputs are compared up to "
              "the end of the turn; pass --var eos_token=... for the model's", file=sys.stderr)
    try:
        with render_timeout(args.timeout):
            derived = derive_response_template(template, variables=variables)
    except ChatTemplateError as error:  # name the template, as chatcodec render does
        error.name = _template_label(source.origin, source.templates, template)
        raise
    if args.json:
        print(json.dumps(derived.to_json(), ensure_ascii=False, indent=2))
        return 0
    print(json.dumps(derived.response_template, ensure_ascii=False, indent=2))
    verdict = ("verified: every capability the template renders round-trips" if derived.verified
               else "not verified: see the labels")
    print(f"chatcodec: derived from {source.origin}: {verdict}", file=sys.stderr)
    for name, label in derived.capabilities.items():
        print(f"  {name:<15} {label.status:<12} {label.reason}".rstrip(), file=sys.stderr)
    for note in derived.notes:
        print(f"  note: {note}", file=sys.stderr)
    return 0
