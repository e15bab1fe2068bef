"""``chatcodec demo``: the main job on bundled data, with no arguments and no network.

It takes a bundled profile (``--profile``, default :data:`DEFAULT_PROFILE`), renders the profile's
demo conversation (with tools) through the profile's own chat template, then feeds a real model
output for that conversation (copied from the peer-output corpus) to a streaming
:class:`chatcodec.ResponseParser` a few characters at a time, showing reasoning, content and tool
calls as they arrive, and finally prints the parsed assistant message as JSON.

Events are shown by :class:`_PlainView` (region labels, chunks as they arrive, each structured
value when its region closes). jinja2 is imported only when the demo runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from chatcodec import profiles

__all__ = ["DEFAULT_PROFILE", "add_arguments", "chunks", "run"]

#: The profile ``chatcodec demo`` runs without ``--profile``.
DEFAULT_PROFILE = "qwen3_coder"
#: Characters per streamed chunk (roughly a token).
CHUNK_CHARS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``demo`` command's arguments."""
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"the bundled profile to run (default: {DEFAULT_PROFILE}); see `chatcodec profiles`",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=None,
        help="seconds between streamed chunks (default: 0.02 on a terminal, 0 otherwise)",
    )
    parser.add_argument("--plain", action="store_true", help="plain text output even on a terminal")


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Split ``text`` into pieces of ``size`` characters, the way a token stream arrives."""
    return [text[start : start + size] for start in range(0, len(text), size)]


def run(args: argparse.Namespace) -> int:
    """Render the demo conversation, stream the demo output through the parser, print the message."""
    profile = profiles.load(args.profile)
    demo = profile.demo
    if demo is None or profile.chat_template is None:
        with_demo = [name for name in profiles.names() if profiles.load(name).demo is not None]
        raise ValueError(
            f"demo: profile {profile.name!r} has no bundled demo (its chat template is not bundled). "
            f"Profiles with a demo: {', '.join(with_demo)}"
        )
    from chatcodec.chat_templates.render import render_chat_template

    variables: dict[str, Any] = {**profile.special_tokens, **demo.template_kwargs}
    prompt = render_chat_template(
        profile.chat_template, demo.messages, tools=demo.tools, add_generation_prompt=True, **variables
    )
    delay = (
        args.delay if args.delay is not None else (0.02 if sys.stdout.isatty() and not args.plain else 0.0)
    )
    _print_setup(profile, prompt)
    message = _stream(profile, demo.output, prompt, demo.tools, delay)
    sys.stdout.write(json.dumps(message, indent=2, ensure_ascii=False) + "\n")
    return 0


def _print_setup(profile: profiles.Profile, prompt: str) -> None:
    demo = profile.demo
    assert demo is not None
    source = (profile.chat_template_source or {}).get("model", profile.name)
    print(f"# profile {profile.name}: {profile.description}", flush=True)
    for message in demo.messages:
        print(f"# {message['role']}: {message.get('content', '')}")
    print(f"# tools: {', '.join(_tool_name(tool) for tool in demo.tools) or '-'}")
    print(
        f"# prompt rendered with the {source} chat template ({len(prompt)} characters), ending in "
        f"{prompt[-60:]!r}"
    )
    print(f"# streaming a real output ({demo.source}):\n", flush=True)


def _tool_name(tool: dict[str, Any]) -> str:
    return str(tool.get("function", tool).get("name", "?"))


class _PlainView:
    """Writes events as text: a ``[field]`` label when a region opens, chunks as they arrive, and the
    parsed value of a structured region (tool calls) when it closes."""

    def __init__(self) -> None:
        self._label: str | None = None  # shown with the region's first visible character

    def on_event(self, event: dict[str, Any]) -> None:
        if event["type"] == "region_open":
            self._label = f"\n[{event['field']}] "
        elif event["type"] == "region_chunk":
            text = event["text"]
            if self._label is not None:
                text = text.lstrip()
                if text:
                    text, self._label = self._label + text, None
            sys.stdout.write(text)
        elif not isinstance(event["value"], str):
            sys.stdout.write(f"\n[{event['field']} parsed] {json.dumps(event['value'], ensure_ascii=False)}")
        sys.stdout.flush()

    def close(self, message: dict[str, Any]) -> None:
        sys.stdout.write("\n\n# final message:\n")


def _stream(
    profile: profiles.Profile, output: str, prompt: str, tools: list[dict[str, Any]], delay: float
) -> dict[str, Any]:
    from chatcodec.response_templates.engine import ResponseParser

    view = _PlainView()
    parser = ResponseParser(profile.response_template, prefix=prompt, tools=tools)
    for event in parser.initial_events:
        view.on_event(event)
    for piece in chunks(output):
        for event in parser.feed(piece):
            view.on_event(event)
        if delay:
            time.sleep(delay)
    message, final_events = parser.finalize()
    for event in final_events:
        view.on_event(event)
    view.close(message)
    return message
