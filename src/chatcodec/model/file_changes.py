"""Making a set of file changes in a model directory all at once, or not at all.

Saving writes several files and deletes others. Rules kept here:

* a failure never leaves a half-migrated directory behind. Every target is checked first (a
  directory where a file goes, a file where a folder goes); every new content is written to a
  temporary file beside its target; only then are the temporary files renamed over their targets
  (``os.replace``, atomic per file) and the deletions made. A failure before the renames removes
  what was staged. Operating system errors become :class:`~chatcodec.errors.ModelStorageError`
  naming the path;
* nothing outside the directory is touched: a symbolic link on the way to a file written or
  deleted (a linked ``additional_chat_templates/``, a ``tokenizer_config.json`` that is a link, even
  a dangling one) that leads out of the directory is refused before anything is written, naming the
  link. A link that stays inside is replaced by the file, never written through.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from chatcodec.errors import ModelStorageError

__all__ = ["apply_file_changes", "check_inside"]

_T = TypeVar("_T")

_NOTHING_WRITTEN = "; nothing was written."
_PARTLY_WRITTEN = "; the changes listed before it were made."


def apply_file_changes(directory: Path, changes: Sequence[tuple[str, str | bytes | None]]) -> None:
    """Write or delete files under ``directory``: every change, or (when one fails early) none.

    Args:
        directory: the model directory (created if missing).
        changes: ``(relative path, new content)`` pairs, ``None`` as the content meaning "delete";
            text is written as UTF-8 exactly (no newline translation), bytes as they are.

    Raises:
        ModelStorageError: something is in the way of a file, a link on the way to one leads out
            of ``directory``, or the system refused a write or a deletion; the message names the
            path and says whether anything was changed.
    """
    for relative, _ in changes:
        check_inside(directory, directory / relative)
    writes = [(directory / relative, text) for relative, text in changes if text is not None]
    for target, _ in writes:
        _check_writable(directory, target)
    created = [folder for folder in {target.parent for target, _ in writes} if not folder.exists()]
    staged: list[tuple[Path, Path]] = []
    try:
        for target, text in writes:
            staged.append((_stage(target, text), target))
    except BaseException:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        for folder in sorted(created, key=lambda path: len(path.parts), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    for temporary, target in staged:
        _os_call(os.replace, target, "cannot write", _PARTLY_WRITTEN, temporary, target)
    for relative, content in changes:
        if content is None:
            file = directory / relative
            _os_call(os.unlink, file, "cannot delete", _PARTLY_WRITTEN, file)


def _check_writable(directory: Path, target: Path) -> None:
    for parent in reversed(target.relative_to(directory).parents):
        folder = directory / parent
        if folder.exists() and not folder.is_dir():
            raise ModelStorageError(
                f"{folder}: is not a directory, so the named chat templates cannot be written in it. "
                "Move it away and try again; nothing was written.", path=str(folder))
    if target.exists() and not target.is_file():
        raise ModelStorageError(
            f"{target}: is a directory, so the chat template cannot be written there. Move it away and "
            "try again; nothing was written.", path=str(target))


def check_inside(directory: Path, target: Path) -> None:
    """Refuse ``target`` when a symbolic link on the way to it from ``directory`` leads out of
    ``directory`` (the directory itself may be a link: it is where the user asked to save).

    Args:
        directory: the model directory.
        target: a path under it, to be written or deleted.

    Raises:
        ModelStorageError: naming the link and where it leads; nothing was written.
    """
    root = Path(os.path.realpath(directory))
    current = directory
    for part in target.relative_to(directory).parts:
        current = current / part
        if not current.is_symlink():
            continue
        leads_to = Path(os.path.realpath(current))
        if leads_to != root and root not in leads_to.parents:
            raise ModelStorageError(
                f"{current}: is a symbolic link to {os.readlink(current)} ({leads_to}), outside the model "
                f"directory {directory}; chatcodec writes nothing outside the directory it saves to. "
                "Replace the link by the file or folder itself (or remove it) and try again; nothing was "
                "written.", path=str(current))


def _stage(target: Path, text: str | bytes) -> Path:
    """Write ``text`` to a new temporary file beside ``target`` and return its path."""
    _os_call(target.parent.mkdir, target.parent, "cannot create the folder", _NOTHING_WRITTEN,
             parents=True, exist_ok=True)
    descriptor, name = _os_call(tempfile.mkstemp, target, "cannot write", _NOTHING_WRITTEN,
                                prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(descriptor)
    temporary = Path(name)
    try:
        if isinstance(text, bytes):
            temporary.write_bytes(text)
        else:
            with open(temporary, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _os_error(target, "cannot write", _NOTHING_WRITTEN, error) from None
    return temporary


def _os_call(function: Callable[..., _T], path: Path, what: str, outcome: str, *args: Any,
             **kwargs: Any) -> _T:
    try:
        return function(*args, **kwargs)
    except OSError as error:
        raise _os_error(path, what, outcome, error) from None


def _os_error(path: Path, what: str, outcome: str, error: OSError) -> ModelStorageError:
    return ModelStorageError(f"{path}: {what}: {error.strerror or error}{outcome}", path=str(path))
