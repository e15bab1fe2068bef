"""``chatcodec migrate``: rewrite a legacy model directory's chat templates in the modern format.

Says on stderr what it changed (or, with ``--dry-run``, what it would change); prints nothing on
stdout.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``chatcodec migrate``."""
    parser.add_argument("directory", metavar="MODEL_DIR", help="the model directory to rewrite in place")
    parser.add_argument("--dry-run", action="store_true", help="only say what would change")


def run(args: argparse.Namespace) -> int:
    """Migrate the directory and report the changes; returns the exit code, 0.

    Raises:
        ChatTemplateNotFoundError, ModelStorageError: the directory has no usable chat template.
    """
    from chatcodec.model.storage import migrate_chat_templates

    changes = migrate_chat_templates(args.directory, dry_run=args.dry_run)
    if not changes:
        print(f"{args.directory}: chat templates are already in the modern format; nothing to change",
              file=sys.stderr)
        return 0
    verb = "would" if args.dry_run else "did"
    for change in changes:
        print(f"{verb} {change}", file=sys.stderr)
    if args.dry_run:
        print(f"{args.directory}: dry run, nothing written ({len(changes)} changes)", file=sys.stderr)
    return 0
