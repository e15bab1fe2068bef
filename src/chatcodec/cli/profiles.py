"""``chatcodec profiles``: list the bundled model-family profiles with their peer-vector coverage.

Without arguments it prints one line per profile (name, coverage, bundled chat template, summary);
``chatcodec profiles NAME`` prints one profile in full; ``--json`` prints the same data as JSON
(``--response-template`` with a NAME prints that profile's response template with its
end-of-sequence token, as a ``tokenizer_config.json`` holds them: ``chatcodec parse FILE`` then
parses every output as ``chatcodec parse NAME`` does). Data goes to stdout; nothing here imports
jinja2 or rich.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from chatcodec import profiles

__all__ = ["add_arguments", "exported_response_template", "format_profile", "format_table", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``profiles`` command's arguments."""
    parser.add_argument("name", nargs="?", help="show one profile (a name or alias) instead of the list")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--response-template",
        action="store_true",
        help="with NAME: print the profile's response template and end-of-sequence token as a "
             "tokenizer_config.json holds them (chatcodec parse reads the file as the profile)",
    )


def exported_response_template(profile: profiles.Profile) -> dict[str, Any]:
    """What ``--response-template`` prints: the profile's response template and its end-of-sequence
    token, as a ``tokenizer_config.json`` holds them (``{"eos_token": ..., "response_template":
    {...}}``), so that ``chatcodec parse FILE`` ends generation at that token, as ``chatcodec parse
    NAME`` does, and parses every output the same way.

    Args:
        profile: the profile.

    Returns:
        A new dict (without ``eos_token`` when the profile has none).
    """
    exported: dict[str, Any] = {}
    eos = profile.special_tokens.get("eos_token")
    if eos:
        exported["eos_token"] = eos
    exported["response_template"] = profile.response_template
    return exported


def run(args: argparse.Namespace) -> int:
    """List the profiles, or show one; returns the exit code, 0.

    Raises:
        UnknownProfileError: no bundled profile has that name.
        ValueError: ``--response-template`` without a profile name.
    """
    if args.response_template:
        if not args.name:
            raise ValueError("profiles: --response-template needs a profile NAME")
        sys.stdout.write(json.dumps(exported_response_template(profiles.load(args.name)), indent=2,
                                    ensure_ascii=False) + "\n")
        return 0
    if args.name:
        profile = profiles.load(args.name)
        text = (
            json.dumps(_summary(profile, full=True), indent=2, ensure_ascii=False)
            if args.json
            else format_profile(profile)
        )
    else:
        loaded = [profiles.load(name) for name in profiles.names()]
        text = (
            json.dumps([_summary(profile) for profile in loaded], indent=2)
            if args.json
            else format_table(loaded)
        )
    sys.stdout.write(text + "\n")
    return 0


def _coverage(profile: profiles.Profile) -> str:
    if profile.coverage is None:
        return "-"
    passed, total = profile.coverage
    return f"{passed}/{total} ({passed / total:.0%})"


def _summary(profile: profiles.Profile, *, full: bool = False) -> dict[str, Any]:
    source = profile.chat_template_source or {}
    data: dict[str, Any] = {
        "name": profile.name,
        "aliases": list(profile.aliases),
        "description": profile.description,
        "peer_vectors": None
        if profile.coverage is None
        else {"passed": profile.coverage[0], "total": profile.coverage[1]},
        "chat_template": source.get("model"),
        "needs_chatcodec": profile.needs_chatcodec,
        "demo": profile.demo is not None,
    }
    if full:
        data.update(
            models=list(profile.models),
            generation_prompt=profile.generation_prompt,
            generation_prompts=list(profile.generation_prompts),
            special_tokens=profile.special_tokens,
            license=profile.license,
            redistributable=profile.redistributable,
            sources=list(profile.sources),
            notes=profile.notes,
        )
    return data


def format_table(loaded: list[profiles.Profile]) -> str:
    """One line per profile: name, coverage, bundled chat template (``-`` if none), description."""
    rows = [("profile", "peer vectors", "chat template", "format")]
    rows += [
        (profile.name, _coverage(profile), _template_name(profile), profile.description) for profile in loaded
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)) + "  " + row[3]
        for row in rows
    ]
    verified = sum(
        1 for profile in loaded if profile.coverage and profile.coverage[0] >= 0.95 * profile.coverage[1]
    )
    with_demo = [profile.name for profile in loaded if profile.demo is not None and profile.chat_template]
    lines.append(
        f"\n{len(loaded)} profiles, {verified} pass >= 95 % of their peer vectors. "
        "`chatcodec profiles NAME` shows one."
    )
    lines.append(f"{len(with_demo)} have a demo, `chatcodec demo --profile NAME`: {', '.join(with_demo)}.")
    return "\n".join(line.rstrip() for line in lines)


def _template_name(profile: profiles.Profile) -> str:
    """The bundled chat template's model name without its organisation or a note in parentheses."""
    model = (profile.chat_template_source or {}).get("model")
    if model is None:
        return "-"
    return str(model).split(" (", 1)[0].rsplit("/", 1)[-1]


def format_profile(profile: profiles.Profile) -> str:
    """Everything a user needs to know about one profile, as text."""
    source = profile.chat_template_source or {}
    others = [prompt for prompt in profile.generation_prompts if prompt != profile.generation_prompt]
    lines = [
        f"{profile.name}: {profile.description}",
        f"  aliases:            {', '.join(profile.aliases) or '-'}",
        f"  models:             {', '.join(profile.models)}",
        f"  peer vectors:       {_coverage(profile)}",
        f"  generation prompt:  {profile.generation_prompt!r}",
        f"  other prompts:      {', '.join(repr(p) for p in others) or '-'}",
        f"  special tokens:     {', '.join(f'{k}={v!r}' for k, v in profile.special_tokens.items()) or '-'}",
        f"  chat template:      {source.get('model', 'not bundled')} ({profile.license}"
        f"{', redistributable' if profile.redistributable else ''})",
        f"  needs chatcodec:    {'yes (chatcodec extensions)' if profile.needs_chatcodec else 'no'}",
        f"  demo:               {'chatcodec demo --profile ' + profile.name if profile.demo else '-'}",
        f"  sources:            {'; '.join(profile.sources)}",
    ]
    if profile.notes:
        lines.append(f"  notes:              {profile.notes}")
    return "\n".join(lines)
