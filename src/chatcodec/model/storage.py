"""Chat templates on disk: loading every storage format, saving the modern one, migrating.

A model directory may hold (SPEC §2.5):

1. ``tokenizer_config.json`` → ``chat_template``: a string, or a list of ``{"name", "template"}``
   (legacy, read-only);
2. ``chat_template.json`` → ``{"chat_template": ...}`` (legacy processor format, read-only);
3. ``chat_template.jinja``: the default template (the modern format);
4. ``additional_chat_templates/<name>.jinja``: named templates;
5. ``processor_config.json`` → ``chat_template`` (the oldest processor format, read-only).

Loading reads 2 when it holds a template, else 1, else 5; ``chat_template.jinja`` then overrides the
default and every ``additional_chat_templates/*.jinja`` is merged in by name (the reference
instead drops everything from 1 as soon as any ``.jinja`` file exists). A processor directory that
combines 2 with ``.jinja`` files is an error, as in the reference. ``.jinja`` files are read with
universal newlines, as the reference reads them.

The reference's processor prefers 5 over every other file (with a warning to move the template
to its own file) and its tokenizer never reads 5; chatcodec reads it only when no other file holds
a template, so a template saved in the modern format is never shadowed by a stale key
(``docs/compatibility.md``).

Saving writes only the modern format, leaves exactly the given templates in the directory, and
removes ``chat_template`` from the legacy JSON files (its text only: every other byte of the file
is kept, :mod:`~chatcodec.model.json_text`). Names that would escape
``additional_chat_templates/``, hold control characters or not fit a file name are rejected
before anything is written, and the writes are all-or-nothing
(:mod:`~chatcodec.model.file_changes`). Migrating refuses a directory whose legacy template
differs from the ``.jinja`` file of the same name: one of them would be lost. Every change is
described by a :class:`StorageChange`, which is what ``chatcodec migrate`` prints.

This module never renders and never reads tokenizers; other keys of the JSON files are kept.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from chatcodec.errors import ChatTemplateNotFoundError, ModelStorageError
from chatcodec.model.config import (
    TOKENIZER_CONFIG_FILE,
    broken_link,
    is_directory,
    is_model_file,
    read_json_file,
)

__all__ = [
    "ADDITIONAL_TEMPLATES_DIR",
    "CHAT_TEMPLATE_FILE",
    "LEGACY_PROCESSOR_FILE",
    "MAX_TEMPLATES_TOTAL_BYTES",
    "MAX_TEMPLATE_BYTES",
    "MAX_TEMPLATE_NAME_BYTES",
    "PROCESSOR_CONFIG_FILE",
    "TOKENIZER_CONFIG_FILE",
    "StorageChange",
    "chat_templates_from_config",
    "check_template_name",
    "load_chat_templates",
    "migrate_chat_templates",
    "plan_chat_template_save",
    "remove_empty_template_folder",
    "save_chat_templates",
]

#: The default template of the modern format.
CHAT_TEMPLATE_FILE = "chat_template.jinja"
#: The folder of named templates of the modern format.
ADDITIONAL_TEMPLATES_DIR = "additional_chat_templates"
#: The legacy processor file holding ``{"chat_template": ...}``.
LEGACY_PROCESSOR_FILE = "chat_template.json"
#: The processor configuration, whose ``chat_template`` key is the oldest processor format.
PROCESSOR_CONFIG_FILE = "processor_config.json"

#: Largest chat template a model directory may hold, in bytes of a ``.jinja`` file or characters of
#: a ``chat_template`` value (as ``chatcodec render`` reads a template file; real templates are a
#: few dozen kilobytes). Loading a directory reads, detects and may derive from its template: a
#: 55 MB ``chat_template.jinja`` took two minutes and 1.9 GB in ``from_pretrained``.
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024

#: Largest total of the ``.jinja`` chat templates one model directory may hold, in bytes (each is
#: also bounded by :data:`MAX_TEMPLATE_BYTES`): 3,000 sparse ``additional_chat_templates/*.jinja``
#: files just under 4 MiB each (12 GB to read, nothing on disk) made ``from_pretrained`` die with a
#: bare ``MemoryError`` after 30 s. Real models hold one to a few templates of a few dozen kilobytes.
MAX_TEMPLATES_TOTAL_BYTES = 16 * 1024 * 1024

#: Longest template name, in UTF-8 bytes: ``<name>.jinja`` must fit a file name (255 bytes).
MAX_TEMPLATE_NAME_BYTES = 255 - len(".jinja")

# Control, format, surrogate and line/paragraph-separator characters: none belongs in a file name.
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

_CONFLICT = (
    "cannot load the chat template due to conflicting files: this directory combines a legacy "
    "chat_template.json file with separate .jinja template files, which is not supported. Replace the "
    "legacy chat_template.json file with a modern chat_template.jinja file."
)


@dataclass(frozen=True, slots=True)
class StorageChange:
    """One change to a model directory, made by (or planned for) a save.

    Attributes:
        action: ``"write"`` a template file, ``"delete"`` a file, or ``"update"`` a JSON file.
        path: the file, relative to the model directory (``/`` separated).
        detail: what changes, for people (``"removed key 'chat_template'"``).
        content: the new file content (``None`` for a deletion).
    """

    action: Literal["write", "delete", "update"]
    path: str
    detail: str
    content: str | None = None

    def __str__(self) -> str:
        return f"{self.action} {self.path}: {self.detail}"


def load_chat_templates(path: str | os.PathLike[str]) -> str | dict[str, str]:
    """Load a model directory's chat templates, whatever format they are stored in.

    Args:
        path: the model directory, or the name (or alias) of a bundled profile (its chat template),
            as ``ChatCodec.from_pretrained`` takes them: a directory of that name wins.

    Returns:
        The template text when the directory holds only a default template, else a dict
        ``{name: template}`` (with ``"default"`` when there is one).

    Raises:
        ChatTemplateNotFoundError: the directory holds no chat template, or the profile bundles none.
        ModelStorageError: the directory does not exist, a file is malformed (not JSON, not UTF-8,
            a wrongly shaped ``chat_template`` value), a template is larger than
            :data:`MAX_TEMPLATE_BYTES`, the ``.jinja`` files together are larger than
            :data:`MAX_TEMPLATES_TOTAL_BYTES`, a file is there but cannot be read (a link to nothing, a
            directory, a FIFO), or a legacy ``chat_template.json`` is combined with ``.jinja`` files.
    """
    directory = Path(path)
    if not is_directory(directory):
        bundled = _profile_chat_template(str(path))
        if bundled is not None:
            return bundled
    _, legacy, files = _stored_templates(directory)
    templates = {**legacy, **files}
    if not templates:
        raise ChatTemplateNotFoundError(
            f"{directory}: no chat template found (looked for {CHAT_TEMPLATE_FILE}, "
            f"{ADDITIONAL_TEMPLATES_DIR}/, the 'chat_template' key of {TOKENIZER_CONFIG_FILE}, "
            f"{LEGACY_PROCESSOR_FILE} and {PROCESSOR_CONFIG_FILE})"
        )
    if list(templates) == ["default"]:
        return templates["default"]
    return templates


def _profile_chat_template(name: str) -> str | None:
    """The chat template of the bundled profile ``name``, ``None`` when no profile has that name.

    Raises:
        ChatTemplateNotFoundError: the profile bundles no chat template (its license does not allow it).
    """
    from chatcodec import profiles
    from chatcodec.errors import UnknownProfileError

    try:
        profile = profiles.load(name)
    except UnknownProfileError:
        return None
    if profile.chat_template is None:
        raise ChatTemplateNotFoundError(
            f"{name}: profile {profile.name!r} bundles no chat template ({profile.license}); load it from "
            "the model's directory")
    return profile.chat_template


def _stored_templates(directory: Path, *, migrating: bool = False
                      ) -> tuple[str | None, dict[str, str], dict[str, str]]:
    """A model directory's templates by origin: ``(legacy file name or None, its templates, the
    templates of the .jinja files)``; the .jinja files win on load.

    Args:
        directory: the model directory.
        migrating: accept ``chat_template.json`` beside ``.jinja`` files (loading refuses it, as
            the reference does; migrating checks that the copies agree instead).

    Raises:
        ModelStorageError: as for :func:`load_chat_templates`.
    """
    if not is_directory(directory):
        what = ("it is a file; pass the directory holding it" if directory.exists()
                else broken_link(directory) or "no such directory")
        raise ModelStorageError(f"{directory}: not a model directory ({what})", path=str(directory))
    default_file = directory / CHAT_TEMPLATE_FILE
    # migrating: a folder in the way is named by the write plan, which says what to do about it
    has_default = not (migrating and default_file.is_dir()) and is_model_file(default_file)
    named_files = _named_template_files(directory)
    legacy_name = LEGACY_PROCESSOR_FILE
    legacy = _templates_from_json(directory / LEGACY_PROCESSOR_FILE)
    if legacy:
        if (has_default or named_files) and not migrating:
            raise ModelStorageError(f"{directory}: {_CONFLICT}", path=str(directory / LEGACY_PROCESSOR_FILE))
    else:
        for legacy_name in (TOKENIZER_CONFIG_FILE, PROCESSOR_CONFIG_FILE):
            legacy = _templates_from_json(directory / legacy_name)
            if legacy:
                break
    _check_total_size(directory, [default_file] * has_default + list(named_files.values()))
    files = {name: _read_template(file) for name, file in named_files.items()}
    if has_default:
        files = {"default": _read_template(default_file), **files}
    return (legacy_name if legacy else None), legacy, files


def save_chat_templates(templates: str | Mapping[str, str],
                        path: str | os.PathLike[str]) -> list[StorageChange]:
    """Save chat templates in the modern format, leaving exactly these templates in the directory.

    A string goes to ``chat_template.jinja``; a dict's ``"default"`` goes there and every other
    name to ``additional_chat_templates/<name>.jinja``. Template files not in ``templates`` are
    removed, ``chat_template`` is removed from ``tokenizer_config.json`` and ``processor_config.json``
    (other keys are kept) and a legacy ``chat_template.json`` is removed, so that loading gives back
    ``templates``.

    Args:
        templates: one template, or ``{name: template}``.
        path: the model directory (created if missing).

    Returns:
        The changes made (empty when the directory already held exactly these templates).

    Raises:
        ModelStorageError: a name would escape ``additional_chat_templates/`` (or is empty), a
            template is not a string, or a JSON file to update is malformed. Nothing is written then.
    """
    changes = plan_chat_template_save(templates, path)
    _apply(Path(path), changes)
    return changes


def migrate_chat_templates(path: str | os.PathLike[str], *, dry_run: bool = False) -> list[StorageChange]:
    """Rewrite a model directory's chat templates in the modern format.

    Args:
        path: the model directory.
        dry_run: only compute the changes.

    Returns:
        The changes made (or, with ``dry_run``, that would be made); empty when the directory is
        already in the modern format.

    Raises:
        ChatTemplateNotFoundError, ModelStorageError: as for :func:`load_chat_templates` and
            :func:`save_chat_templates`; also a ``ModelStorageError`` when a legacy template
            differs from the ``.jinja`` file of the same name (migrating would lose one of them).
            A legacy copy identical to its ``.jinja`` file (``tokenizer_config.json`` or
            ``chat_template.json``, which loading refuses beside ``.jinja`` files) is dropped.
    """
    directory = Path(path)
    legacy_file, legacy, files = _stored_templates(directory, migrating=True)
    for name in sorted(legacy.keys() & files.keys()):
        if legacy[name] != files[name]:
            file = CHAT_TEMPLATE_FILE if name == "default" else f"{ADDITIONAL_TEMPLATES_DIR}/{name}.jinja"
            raise ModelStorageError(
                f"{directory}: the {name!r} chat template of {legacy_file} differs from {file}, so migrating "
                "would lose one of them. Keep the one you want (delete the other, or save it under another "
                f"name in {ADDITIONAL_TEMPLATES_DIR}/) and migrate again.", path=str(directory),
            )
    if not (legacy or files):
        load_chat_templates(directory)  # raises ChatTemplateNotFoundError, naming where it looked
    changes = plan_chat_template_save({**legacy, **files}, directory)
    if not dry_run:
        _apply(directory, changes)
    return changes


def check_template_name(name: object, directory: Path | None = None) -> str:
    """Return ``name`` if it can name ``additional_chat_templates/<name>.jinja``, else raise.

    Args:
        name: the template name.
        directory: the model directory, to check the resolved path too (``None``: names only).

    Returns:
        ``name``.

    Raises:
        ModelStorageError: the name is not a string, is empty, has a path separator or a control
            character (a newline would also break ``chatcodec migrate``'s report), is too long
            for a file name, or would escape the folder.
    """
    if not isinstance(name, str) or not name or name in (".", "..") \
            or any(sep in name for sep in ("/", "\\", os.sep)) \
            or any(unicodedata.category(char) in _CONTROL_CATEGORIES for char in name) \
            or len(name.encode("utf-8", "surrogatepass")) > MAX_TEMPLATE_NAME_BYTES:
        raise ModelStorageError(
            f"chat template name {name!r}: invalid; a name becomes the file name "
            f"{ADDITIONAL_TEMPLATES_DIR}/<name>.jinja and must not be empty, contain path separators or "
            f"control characters, or be longer than {MAX_TEMPLATE_NAME_BYTES} bytes",
            path=None if directory is None else str(directory),
        )
    if directory is not None:
        folder = (directory / ADDITIONAL_TEMPLATES_DIR).resolve()
        if (folder / f"{name}.jinja").resolve().parent != folder:
            raise ModelStorageError(f"chat template name {name!r}: would escape {folder}",
                                    path=str(directory))
    return name


def plan_chat_template_save(templates: str | Mapping[str, str],
                            path: str | os.PathLike[str]) -> list[StorageChange]:
    """The changes :func:`save_chat_templates` would make, without making them.

    Args:
        templates: the template text, or ``{name: text}``.
        path: the model directory (it need not exist).

    Returns:
        The changes, in the order they would be made.

    Raises:
        ModelStorageError: as for :func:`save_chat_templates`.
    """
    directory = Path(path)
    wanted = _normalise(templates, directory)
    changes: list[StorageChange] = []
    default = wanted.pop("default", None)
    _plan_file(changes, directory, CHAT_TEMPLATE_FILE, default)
    existing = _named_template_files(directory) if directory.is_dir() else {}
    for name in sorted(set(wanted) | set(existing)):
        _plan_file(changes, directory, f"{ADDITIONAL_TEMPLATES_DIR}/{name}.jinja", wanted.get(name))
    for file in (TOKENIZER_CONFIG_FILE, LEGACY_PROCESSOR_FILE, PROCESSOR_CONFIG_FILE):
        _plan_key_removal(changes, directory, file)
    return changes


def _normalise(templates: str | Mapping[str, str], directory: Path) -> dict[str, str]:
    if isinstance(templates, str):
        return {"default": templates}
    if not isinstance(templates, Mapping):
        raise ModelStorageError(
            f"chat templates: expected a string or a dict of named templates, got {type(templates).__name__}",
            path=str(directory),
        )
    result: dict[str, str] = {}
    for name, template in templates.items():
        check_template_name(name, directory)
        if not isinstance(template, str):
            raise ModelStorageError(
                f"chat template {name!r}: expected the template text, got {type(template).__name__}",
                path=str(directory),
            )
        result[name] = template
    return result


def _plan_file(changes: list[StorageChange], directory: Path, relative: str, content: str | None) -> None:
    file = directory / relative
    exists = file.is_file()
    if content is None:
        if exists:
            changes.append(StorageChange("delete", relative, "no longer one of the chat templates"))
        return
    if exists and _read_template(file) == content:
        return
    detail = f"{'replaced' if exists else 'new'} chat template ({len(content):,} characters)"
    changes.append(StorageChange("write", relative, detail, content))


def _plan_key_removal(changes: list[StorageChange], directory: Path, relative: str) -> None:
    """Plan removing ``chat_template`` from a JSON file, every other byte of the file kept."""
    file = directory / relative
    if not file.is_file():
        return
    data = read_json_file(file)
    if not isinstance(data, dict) or "chat_template" not in data:
        return
    if relative == LEGACY_PROCESSOR_FILE and data.keys() == {"chat_template"}:
        changes.append(StorageChange("delete", relative,
                                     "legacy processor chat template (now in .jinja files)"))
        return
    from chatcodec.model.json_text import remove_member  # here: only saving and migrating edit JSON text

    with open(file, encoding="utf-8", newline="") as handle:
        text = handle.read()
    changes.append(StorageChange("update", relative, "removed key 'chat_template' (now in .jinja files)",
                                 remove_member(text, "chat_template")))


def _apply(directory: Path, changes: list[StorageChange]) -> None:
    from chatcodec.model.file_changes import apply_file_changes  # here: it imports tempfile and shutil

    apply_file_changes(directory, [(change.path, change.content) for change in changes])
    remove_empty_template_folder(directory)


def remove_empty_template_folder(directory: Path) -> None:
    """Remove ``additional_chat_templates/`` when saving left it empty (not a link: never followed).

    Raises:
        ModelStorageError: the folder cannot be removed.
    """
    folder = directory / ADDITIONAL_TEMPLATES_DIR
    if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
        try:
            folder.rmdir()
        except OSError as error:
            raise ModelStorageError(f"{folder}: cannot remove the empty folder: {error.strerror or error}",
                                    path=str(folder)) from None


def _named_template_files(directory: Path) -> dict[str, Path]:
    folder = directory / ADDITIONAL_TEMPLATES_DIR
    if not folder.is_dir():
        return {}
    files = {}
    for file in sorted(folder.glob("*.jinja")):
        name = file.name.removesuffix(".jinja")
        if name and not file.is_dir() and is_model_file(file):  # folders are skipped, as in the reference
            files[name] = file
    return files


def _read_template(file: Path) -> str:
    _check_template_size(file.stat().st_size, str(file), "bytes")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise _not_utf8(file, error) from None


def _check_total_size(directory: Path, files: list[Path]) -> None:
    """Refuse template files whose sizes add up to more than :data:`MAX_TEMPLATES_TOTAL_BYTES`,
    before any is read."""
    total = sum(file.stat().st_size for file in files)
    if total > MAX_TEMPLATES_TOTAL_BYTES:
        raise ModelStorageError(
            f"{directory}: {len(files):,} chat template files of {total:,} bytes in all, more than "
            f"MAX_TEMPLATES_TOTAL_BYTES ({MAX_TEMPLATES_TOTAL_BYTES:,}) allows; real models hold a few "
            "templates of a few dozen kilobytes (raise chatcodec.model.storage.MAX_TEMPLATES_TOTAL_BYTES for "
            "a trusted directory)", path=str(directory))


def _check_template_size(size: int, where: str, unit: str) -> None:
    """Refuse a chat template larger than :data:`MAX_TEMPLATE_BYTES` (``unit``: bytes of a file or
    characters of a JSON value)."""
    if size > MAX_TEMPLATE_BYTES:
        raise ModelStorageError(f"{where}: a chat template of {size:,} {unit}, more than "
                                f"MAX_TEMPLATE_BYTES ({MAX_TEMPLATE_BYTES:,}) allows; real templates are a "
                                "few dozen kilobytes (raise chatcodec.model.storage.MAX_TEMPLATE_BYTES for "
                                "a trusted one)", path=where)


def _not_utf8(file: Path, error: UnicodeDecodeError) -> ModelStorageError:
    return ModelStorageError(f"{file}: not UTF-8 text (byte {error.start}: {error.reason})", path=str(file))


def _templates_from_json(file: Path) -> dict[str, str]:
    """The ``chat_template`` of a legacy JSON file as ``{name: template}`` (empty when absent)."""
    if not is_model_file(file):
        return {}
    data = read_json_file(file)
    if not isinstance(data, dict):
        raise ModelStorageError(f"{file}: expected a JSON object, got a {type(data).__name__}",
                                path=str(file))
    return chat_templates_from_config(data, str(file))


def chat_templates_from_config(data: Mapping[str, Any], file: str) -> dict[str, str]:
    """The ``chat_template`` key of a ``tokenizer_config.json``, ``processor_config.json`` or legacy
    ``chat_template.json`` object as ``{name: template}``: a string is the default template, a list
    of ``{"name", "template"}`` objects holds named ones (the reference's legacy format).

    Args:
        data: the parsed JSON object.
        file: the file it came from, for messages.

    Returns:
        The templates (empty when the key is absent or ``null``).

    Raises:
        ModelStorageError: the value has another shape, or a template is larger than
            :data:`MAX_TEMPLATE_BYTES`.
    """
    value = data.get("chat_template")
    if value is None:
        return {}
    if isinstance(value, str):
        _check_template_size(len(value), f"{file}: chat_template", "characters")
        return {"default": value}
    if not isinstance(value, list):
        raise ModelStorageError(
            f"{file}: 'chat_template' must be a string or a list of {{\"name\", \"template\"}} objects, "
            f"got {type(value).__name__}", path=str(file),
        )
    templates: dict[str, str] = {}
    for index, entry in enumerate(value):
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)
                and isinstance(entry.get("template"), str)):
            raise ModelStorageError(
                f"{file}: chat_template[{index}] must be an object with string 'name' and 'template'",
                path=str(file),
            )
        _check_template_size(len(entry["template"]), f"{file}: chat_template[{index}]", "characters")
        templates[entry["name"]] = entry["template"]
    return templates
