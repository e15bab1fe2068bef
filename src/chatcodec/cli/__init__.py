"""The ``chatcodec`` command line: ``main(argv) -> exit code``.

Each command lives in its own module exporting ``add_arguments(parser)`` and ``run(args) -> int``.
Only the module of the command being run is imported, so ``chatcodec parse`` never pays for
jinja2 or rich. Rules kept here:

* stdout carries only data (the prompt, a JSON message, JSON Lines events); diagnostics go to
  stderr;
* a warning (a prefix without the start anchor, a template's undefined special token) prints one
  line, ``chatcodec: warning: <message>``, as it happens;
* an expected error prints one line, ``chatcodec: <ErrorClass>: <message>``, and exits 1; usage
  errors exit 2 (argparse's convention: bad option values are caught by the argument types of
  :mod:`chatcodec.cli.options`); ``--debug`` or ``CHATCODEC_DEBUG=1`` shows the traceback;
* ``chatcodec --version`` prints the version.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["COMMANDS", "main"]

#: Command name -> (module, one-line help). Modules are imported only when their command runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("chatcodec.cli.demo", "render a chat and stream a real model output through a bundled profile"),
    "parse": ("chatcodec.cli.parse", "parse a model output into an assistant message (or events)"),
    "render": ("chatcodec.cli.render", "render a conversation with a chat template"),
    "migrate": ("chatcodec.cli.migrate", "rewrite a legacy model directory in the modern template format"),
    "profiles": ("chatcodec.cli.profiles", "list the bundled model-family profiles and their coverage"),
    "lint": ("chatcodec.cli.lint", "report portability problems in a chat or response template"),
    "doctor": ("chatcodec.cli.doctor", "check a model's chat and response templates: round trip, prefix "
               "stability, tool-call forms, other engines, lint"),
    "derive": ("chatcodec.cli.derive", "derive a response template from a chat template, and verify it"),
}


def _build_parser(command: str | None) -> argparse.ArgumentParser:
    """The argument parser: every command's subparser for the overview (``command`` is ``None``), or
    only ``command``'s when the arguments name one (each subparser costs start-up time, and the
    others could not match: the name was found where the command goes)."""
    parser = argparse.ArgumentParser(
        prog="chatcodec",
        description="Render chat templates and parse model output with response templates.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of errors")
    parser.add_argument("--version", action="version", version=f"chatcodec {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if command is not None and name != command:
            continue
        command_parser = sub.add_parser(name, help=help_text, description=help_text,
                                        formatter_class=_HelpFormatter)
        if name == command:
            importlib.import_module(module_name).add_arguments(command_parser)
    return parser


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as the terminal, measured without importing :mod:`shutil`
    (argparse builds a formatter for every argument it declares, and shutil's import costs each run)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


def _terminal_columns() -> int:
    """The terminal's width as argparse measures it: ``COLUMNS`` when it is a positive number, else
    the width of the terminal standard output is on, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    try:
        return (os.get_terminal_size(stdout.fileno()).columns or 80) if stdout is not None else 80
    except (AttributeError, ValueError, OSError):
        return 80


def _version() -> str:
    from chatcodec import __version__

    return __version__


def _find_command(argv: Sequence[str]) -> str | None:
    """The command the arguments run: the first argument when it is one (after ``--debug``), else
    ``None`` (no command, or a top-level option such as ``--help`` that shows them all)."""
    for arg in argv:
        if arg in COMMANDS:
            return arg
        if arg != "--debug":
            return None
    return None


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None, *_: Any) -> None:
    """Print a warning as one stderr line, ``chatcodec: warning: <first line of the message>``."""
    text = str(message).splitlines()[0] if str(message) else category.__name__
    print(f"chatcodec: warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: the arguments after the program name; ``None`` reads ``sys.argv[1:]``.

    Returns:
        The exit code: 0 on success, 1 on an error in the input, 2 on a usage error.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser(_find_command(args_list))
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    debug = args.debug or os.environ.get("CHATCODEC_DEBUG") == "1"
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(module.run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # the one place that turns any failure into one clear line
        if debug:
            import traceback

            traceback.print_exc()
        from chatcodec.errors import ChatCodecError

        kind = type(error).__name__
        if not isinstance(error, (ChatCodecError, ValueError, OSError, LookupError)) and not debug:
            kind = f"internal error ({kind}); rerun with --debug and report it"
        print(f"chatcodec: {kind}: {error}", file=sys.stderr)
        return 1
