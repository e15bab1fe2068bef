"""``chatcodec render``: print the prompt a chat template makes of a conversation, exactly.

stdout receives the prompt and nothing else (no added newline), as UTF-8 bytes; errors go to
stderr through :func:`chatcodec.cli.main`.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``chatcodec render``."""
    parser.add_argument("source", metavar="MODEL_DIR_OR_TEMPLATE",
                        help="a model directory (any chat-template storage format), a template file, "
                             "or a bundled profile name (see `chatcodec profiles`)")
    parser.add_argument("conversation", metavar="CONVERSATION.json",
                        help="a list of messages, or an object with messages, tools, documents "
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
    parser.add_argument("--var", action="append", default=[], metavar="KEY=VALUE",
                        help="a template variable; VALUE is parsed as JSON when it is JSON, else taken as a "
                             "string (--var enable_thinking=false --var name=Ada); repeatable")
    parser.add_argument("--now", metavar="ISO",
                        help="the time strftime_now() reports, e.g. 2026-01-15T12:00:00")


def run(args: argparse.Namespace) -> int:
    """Render and print the prompt; returns the exit code, 0.

    Raises:
        OSError, ValueError: an input cannot be read or parsed.
        ChatTemplateNotFoundError, ModelStorageError: no usable chat template.
        ChatTemplateError, ConversationError: the render failed.
    """
    from chatcodec.chat_templates.render import render_chat_template
    from chatcodec.chat_templates.selection import select_chat_template
    from chatcodec.cli.io import (
        parse_variable,
        read_chat_template_source,
        read_conversation,
        read_json,
        read_tools,
    )

    source = read_chat_template_source(args.source)
    conversation = read_conversation(args.conversation)
    tools = read_tools(args.tools) if args.tools else conversation.tools
    documents = read_json(args.documents, "documents") if args.documents else conversation.documents
    template = select_chat_template(source.templates, args.template_name, tools)
    variables: dict[str, Any] = dict(source.special_tokens)
    variables.update(parse_variable(assignment) for assignment in args.var)
    prompt = render_chat_template(
        template, conversation.messages, tools=tools, documents=documents,
        add_generation_prompt=args.generation_prompt, continue_final_message=args.continue_final_message,
        now=_parse_now(args.now), **variables,
    )
    _write(prompt)
    return 0


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"--now {value!r}: expected an ISO date and time, e.g. 2026-01-15T12:00:00"
        ) from None


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
