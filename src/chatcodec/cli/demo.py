"""``chatcodec demo``: the main job on bundled data, with no arguments and no network.

It takes a bundled profile (``--profile``, default :data:`DEFAULT_PROFILE`), renders the profile's
demo conversation (with tools) through the profile's own chat template, then feeds a real model
output for that conversation (copied from the peer-output corpus) to a streaming
parser (the profile's, as ``ChatCodec.from_pretrained(NAME).get_response_parser`` makes it: it ends at
the profile's end-of-sequence token) a few characters at a time, showing reasoning, content and tool
calls as they arrive, and finally prints the parsed assistant message as JSON.

Events are shown by the ``parse --stream`` views (:mod:`chatcodec.cli.view`): rich panels on a
terminal, plain text otherwise or with ``--plain``. jinja2 is imported only when the demo runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from chatcodec import profiles
from chatcodec.cli.options import seconds
from chatcodec.errors import UnknownProfileError

if TYPE_CHECKING:
    from chatcodec.cli.protocols import View

__all__ = ["CHUNK_CHARS", "DEFAULT_PROFILE", "add_arguments", "names_with_demo", "run"]

#: The profile ``chatcodec demo`` runs without ``--profile``: its real output (vLLM's GLM-4.5 test)
#: has reasoning, content and a tool call, so the default shows all three regions streaming.
DEFAULT_PROFILE = "glm45"
#: Characters per streamed chunk (roughly a token).
CHUNK_CHARS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``demo`` command's arguments."""
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        type=_demo_profile,
        help=f"the bundled profile to run (default: {DEFAULT_PROFILE}): one with a demo, see "
             "`chatcodec profiles`",
    )
    parser.add_argument(
        "--delay",
        type=seconds,
        default=None,
        help="seconds between streamed chunks (default: 0.02 on a terminal, 0 otherwise)",
    )
    parser.add_argument("--plain", action="store_true", help="plain text output even on a terminal")


def _demo_profile(name: str) -> profiles.Profile:
    """``--profile NAME`` for argparse: a profile with a demo; any other name is a usage error (exit
    2) listing the profiles that have one."""
    try:
        profile = profiles.load(name)
    except UnknownProfileError:
        problem = f"profile {name!r}: no bundled profile has this name or alias"
    else:
        if profile.demo is not None and profile.chat_template is not None:
            return profile
        problem = (f"profile {profile.name!r} has no bundled demo (no chat template to render its "
                   "conversation)")
    raise argparse.ArgumentTypeError(f"{problem}; choose one of: {', '.join(names_with_demo())}")


def run(args: argparse.Namespace) -> int:
    """Render the demo conversation, stream the demo output through the parser and print the
    message; returns the exit code, 0 (a profile without a demo is a usage error of ``--profile``).
    """
    profile = args.profile
    demo = profile.demo
    assert demo is not None and profile.chat_template is not None  # checked by _demo_profile
    from chatcodec.chat_templates.render import render_chat_template
    from chatcodec.cli.view import chunks, play
    from chatcodec.model.codec import ChatCodec

    variables: dict[str, Any] = {**profile.special_tokens, **demo.template_kwargs}
    prompt = render_chat_template(
        profile.chat_template, demo.messages, tools=demo.tools, add_generation_prompt=True, **variables
    )
    delay = (
        args.delay if args.delay is not None else (0.02 if sys.stdout.isatty() and not args.plain else 0.0)
    )
    _print_setup(profile, prompt)
    parser = ChatCodec.from_pretrained(profile.name).get_response_parser(prefix=prompt, tools=demo.tools)
    play(parser, chunks(demo.output, CHUNK_CHARS), _view(args.plain), delay)
    return 0


def names_with_demo() -> list[str]:
    """The profiles ``chatcodec demo --profile`` can run (a demo and a bundled chat template), sorted."""
    loaded = (profiles.load(name) for name in profiles.names())
    return [profile.name for profile in loaded if profile.demo is not None and profile.chat_template]


def _view(plain: bool) -> View:
    from chatcodec.cli.view import PlainView, choose_view

    return PlainView(sys.stdout) if plain else choose_view(sys.stdout, sys.stderr)


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
