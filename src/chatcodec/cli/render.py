"""``chatcodec render``: print the prompt a chat template makes of a conversation, exactly.

stdout receives the prompt and nothing else (no added newline), as UTF-8 bytes; errors go to
stderr through :func:`chatcodec.cli.main`. Bad options (``--var`` of a name the command sets
itself, ``--now`` that is not a date) are usage errors (exit 2); a template error names the
template file (or the directory and template name). A template that reads special tokens
(``bos_token``, any ``*_token``) that nothing defines (a bare template file without ``--var``) gets
one warning naming them, unless the template guards them (``default``, ``is defined``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``chatcodec render``."""
    from chatcodec.cli.options import add_timeout

    parser.add_argument("source", metavar="MODEL_DIR_OR_TEMPLATE",
                        help="a model directory (any chat-template storage format), a Hub model id "
                             "(org/name, with chatcodec[hub]), a bundled profile name (see `chatcodec "
                             "profiles`), a template file, or a tokenizer_config.json / "
                             "chat_template.json (its chat_template and special tokens)")
    parser.add_argument("conversation", metavar="CONVERSATION.json",
                        help="a list of messages, or an OpenAI Chat Completions request (an object with "
                             "messages, tools, documents, reasoning_effort, chat_template_kwargs, ...) "
                             "('-' for stdin)")
    parser.add_argument("--tools", metavar="FILE",
                        help="a JSON list of tool schemas (overrides the conversation's)")
    parser.add_argument("--documents", metavar="FILE",
                        help="a JSON list of documents (overrides the conversation's)")
    parser.add_argument("--generation-prompt", action="store_true",
                        help="append the header that starts the assistant's turn (add_generation_prompt)")
    parser.add_argument("--continue-final-message", nargs="?", const=True, default=False, metavar="FIELD",
                        help="cut the prompt after the final message's content (or FIELD, e.g. "
                             "reasoning_content) so the model continues it")
    parser.add_argument("--template-name", metavar="NAME",
                        help="which of the model's named templates to use (default: tool_use with tools, "
                             "else default)")
    parser.add_argument("--var", action="append", default=[], metavar="KEY=VALUE", type=_variable,
                        help="a template variable; VALUE is parsed as JSON when it is JSON (True, False "
                             "and None too), else taken as a string (--var enable_thinking=false "
                             "--var name=Ada); repeatable")
    parser.add_argument("--now", metavar="ISO", type=_parse_now,
                        help="the time strftime_now() reports, e.g. 2026-01-15T12:00:00")
    add_timeout(parser)


#: Template variables ``render`` sets itself, and the option (or argument) that sets each.
RESERVED_VARIABLES = {
    "messages": "the conversation file", "tools": "--tools FILE", "documents": "--documents FILE",
    "add_generation_prompt": "--generation-prompt",
    "continue_final_message": "--continue-final-message [FIELD]", "now": "--now ISO",
    "chat_template": "the template argument (or --template-name NAME)",
}


def _variable(assignment: str) -> tuple[str, Any]:
    """``--var KEY=VALUE`` for argparse (a bad one is a usage error)."""
    from chatcodec.cli.io import parse_variable

    try:
        key, value = parse_variable(assignment)
    except ValueError as error:  # argparse names the option itself
        raise argparse.ArgumentTypeError(str(error).removeprefix("--var ")) from None
    if key in RESERVED_VARIABLES:
        raise argparse.ArgumentTypeError(
            f"{key} is set by chatcodec render; use {RESERVED_VARIABLES[key]}")
    return key, value


def run(args: argparse.Namespace) -> int:
    """Render and print the prompt; returns the exit code, 0.

    The conversation file is read as a Chat Completions request (a list of messages is
    ``{"messages": [...]}``) by :func:`chatcodec.chat_templates.requests.read_chat_request`, as
    ``ChatCodec.apply_chat_request`` reads one, with two differences for the command line: the
    generation prompt is added only with ``--generation-prompt`` (or the file's own
    ``add_generation_prompt: true``), and ``--var`` wins over the request's template variables.

    Raises:
        OSError, ValueError: an input cannot be read or parsed, or two of them are stdin (``-``).
        ChatTemplateNotFoundError, ModelStorageError: no usable chat template (an empty one too,
            named by its file).
        ChatTemplateError, ConversationError: the render failed.
    """
    from chatcodec.chat_templates.errors import ChatTemplateError
    from chatcodec.chat_templates.render import render_chat_template
    from chatcodec.chat_templates.requests import read_chat_request, request_tools
    from chatcodec.chat_templates.selection import select_chat_template
    from chatcodec.cli.io import read_conversation, read_json, read_tools
    from chatcodec.cli.options import render_timeout
    from chatcodec.cli.sources import read_chat_template_source
    from chatcodec.errors import ChatTemplateNotFoundError

    from_stdin = [name for name, value in (("MODEL_DIR_OR_TEMPLATE", args.source),
                                           ("CONVERSATION.json", args.conversation),
                                           ("--tools", args.tools), ("--documents", args.documents))
                  if value == "-"]
    if len(from_stdin) > 1:  # the first would read all of stdin, the next an empty one
        raise ValueError(f"{' and '.join(from_stdin)} cannot both be read from stdin" if len(from_stdin) == 2
                         else f"only one of {', '.join(from_stdin)} can be read from stdin")
    source = read_chat_template_source(args.source)
    conversation = read_conversation(args.conversation)
    tools = read_tools(args.tools) if args.tools else conversation.tools
    documents = read_json(args.documents, "documents") if args.documents else conversation.documents
    own_generation_prompt = conversation.request.get("add_generation_prompt")
    request = {**conversation.request, "tools": tools, "documents": documents,
               # the options, or the request's own fields (as written: read_chat_request checks
               # their types, so "false" is an error, never true); without either, no generation prompt
               "add_generation_prompt": True if args.generation_prompt
               else False if own_generation_prompt is None else own_generation_prompt,
               "continue_final_message": args.continue_final_message
               or conversation.request.get("continue_final_message") or False}
    template = select_chat_template(source.templates, args.template_name, request_tools(request))
    try:
        inputs = read_chat_request(request, template)
        variables: dict[str, Any] = {**source.special_tokens, **inputs.variables, **dict(args.var)}
        with render_timeout(args.timeout):
            prompt = render_chat_template(
                template, inputs.messages, tools=inputs.tools, documents=inputs.documents,
                add_generation_prompt=inputs.add_generation_prompt,
                continue_final_message=inputs.continue_final_message, now=args.now, **variables,
            )
    except ChatTemplateError as error:
        error.name = _template_label(source.origin, source.templates, template)
        raise
    except ChatTemplateNotFoundError as error:  # an empty template: name where it came from
        label = _template_label(source.origin, source.templates, template)
        raise ChatTemplateNotFoundError(f"{label}: {error}", name=error.name,
                                        available=error.available) from None
    tokens = source.special_tokens.items()
    variable_origins = [*((f"{source.origin}'s {key}", value) for key, value in tokens),
                        *((f"the conversation's {key}", value) for key, value in inputs.variables.items()),
                        *((f"--var {key}", value) for key, value in args.var)]
    _check_encodable(prompt, conversation.messages, tools, documents, variable_origins)
    _warn_undefined_tokens(template, variables, _template_label(source.origin, source.templates, template))
    _write(prompt)
    return 0


#: Filters that give an undefined operand a value, and tests that ask whether it is defined: a
#: variable the template passes through one of them is one it expects may be missing.
GUARD_FILTERS = frozenset({"default", "d"})
GUARD_TESTS = frozenset({"defined", "undefined"})


def _warn_undefined_tokens(template: str, variables: dict[str, Any], label: str) -> None:
    """Warn once when the template reads special tokens (``bos_token``, any ``*_token``) that nothing
    defined: a bare template file has no model's tokens, and they silently render as empty text.

    A token the template guards anywhere (``x|default(...)``, ``x|d(...)``, ``x is defined``,
    ``x is undefined``, negated too) is not named: the template handles its absence. ``x is none``
    is no guard (an undefined variable is not none, so the guarded branch still renders it empty).
    """
    import warnings

    import jinja2.meta

    from chatcodec.chat_templates.environment import ENVIRONMENT

    tree = ENVIRONMENT.parse(template)
    used = jinja2.meta.find_undeclared_variables(tree) - _guarded_names(tree)
    missing = sorted(name for name in used if name.endswith("_token") and name not in variables)
    if missing:
        warnings.warn(
            f"{label}: the template uses {', '.join(missing)}, which nothing defines (rendered as empty "
            "text); render with a model directory or a profile name (their special tokens), or pass "
            f"--var {missing[0]}=...", UserWarning, stacklevel=2)


def _guarded_names(tree: Any) -> set[str]:
    """The variables that are the operand of a guard filter or test (:data:`GUARD_FILTERS`,
    :data:`GUARD_TESTS`) somewhere in the parsed template ``tree``."""
    from jinja2 import nodes

    return {
        node.node.name
        for node in tree.find_all((nodes.Filter, nodes.Test))
        if isinstance(node.node, nodes.Name)
        and node.name in (GUARD_FILTERS if isinstance(node, nodes.Filter) else GUARD_TESTS)
    }


def _parse_now(value: str) -> datetime:
    """``--now ISO`` for argparse (a bad one is a usage error)."""
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected an ISO date and time, e.g. 2026-01-15T12:00:00") from None


def _template_label(origin: str, templates: str | dict[str, str], template: str) -> str:
    """``origin``, or ``origin[name]`` for one of several named templates."""
    if isinstance(templates, str):
        return origin
    name = next((name for name, text in templates.items() if text is template), None)
    return origin if name is None else f"{origin}[{name}]"


def _check_encodable(prompt: str, messages: Any, tools: Any, documents: Any,
                     variables: Sequence[tuple[str, Any]] = ()) -> None:
    """Refuse a prompt UTF-8 cannot encode (a lone surrogate), naming the input it came from.

    Args:
        prompt: the rendered prompt.
        messages, tools, documents: the inputs, searched in this order.
        variables: ``(where, value)`` of the template variables (special tokens, the request's
            variables, ``--var``), searched last, the last one given first (it wins the render).

    Raises:
        ValueError: the prompt holds a lone surrogate.
    """
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as error:
        char = prompt[error.start]
        inputs = [*((f"messages[{index}]", message) for index, message in enumerate(messages)),
                  ("tools", tools), ("documents", documents), *reversed(variables)]
        origin = next((where for where, value in inputs if _has_surrogate(value)), "the template")
        raise ValueError(
            f"the prompt holds a lone surrogate (U+{ord(char):04X} at character {error.start}), which UTF-8 "
            f"cannot encode; it comes from {origin} (a JSON \\ud800-style escape without its pair?)"
        ) from None


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, dict):
        return any(_has_surrogate(key) or _has_surrogate(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    return False


def _write(text: str) -> None:
    """Write ``text`` to stdout as UTF-8, whatever the terminal's encoding, without a newline."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()
