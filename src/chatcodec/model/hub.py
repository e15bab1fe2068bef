"""Models on the Hugging Face Hub, through ``huggingface_hub``'s own cache (``chatcodec[hub]``).

What lives here: telling a Hub id (``"org/name"``) from other names, fetching the few files
chatcodec reads from a Hub repository into the user's Hub cache (:func:`download_model`), and
:func:`push_codec` (``ChatCodec.push_to_hub``). ``huggingface_hub`` is imported only here, and only
when a Hub id is used.

Rules kept:

* Only the files chatcodec reads are fetched (:data:`HUB_FILES`, and ``tokenizer.json`` only when
  token ids are wanted), never weights.
* Downloads go through ``huggingface_hub.snapshot_download``, so files land in the standard cache
  (``models--org--name/{blobs,refs,snapshots}``) that transformers and vLLM share, and a model
  already there loads offline: ``HF_HUB_OFFLINE=1`` (read at each call, not only when
  ``huggingface_hub`` is imported) or ``local_files_only=True`` never touch the network.
* Every failure is a :class:`~chatcodec.errors.HubError` naming the repository and the fix.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chatcodec.errors import HubError

__all__ = [
    "HUB_FILES",
    "INSTALL_HUB",
    "TOKENIZER_FILES",
    "download_model",
    "hub_offline",
    "looks_like_hub_id",
    "push_codec",
]

#: The files of a repository chatcodec reads (``fnmatch`` patterns, as ``allow_patterns`` takes
#: them): chat templates in every storage format, the configuration and special tokens, the end of
#: sequence ids of ``generation_config.json``, and the processor configuration.
HUB_FILES: tuple[str, ...] = (
    "chat_template.jinja",
    "additional_chat_templates/*.jinja",
    "tokenizer_config.json",
    "chat_template.json",
    "special_tokens_map.json",
    "generation_config.json",
    "processor_config.json",
)

#: Fetched too when token ids are wanted.
TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json",)

#: How to get ``huggingface_hub``.
INSTALL_HUB = "pip install 'chatcodec[hub]'"

#: ``org/name``: the Hub's rules for a repository id (letters, digits, ``-``, ``_``, ``.``; no
#: ``--`` or ``..``; at most 96 characters per part).
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


def looks_like_hub_id(name: str) -> bool:
    """Whether ``name`` is written like a Hub model id, ``"org/name"``.

    Args:
        name: a ``from_pretrained`` / command-line argument.

    Returns:
        ``True`` for ``org/name`` following the Hub's naming rules (no ``--``, ``..``, no ``.git``
        suffix); a bare name (``"gpt2"``) is not taken for one, so a mistyped profile name is
        reported as such rather than looked up online.
    """
    return (_HUB_ID.fullmatch(name) is not None and "--" not in name and ".." not in name
            and not name.endswith(".git"))


def hub_offline(local_files_only: bool = False) -> bool:
    """Whether a Hub lookup must stay in the cache.

    Args:
        local_files_only: the caller's own request.

    Returns:
        ``True`` when ``local_files_only`` is set or ``HF_HUB_OFFLINE`` is true in the environment
        now (``1``, ``ON``, ``YES``, ``TRUE``, as ``huggingface_hub`` reads it; it reads it once, at
        import).
    """
    return local_files_only or os.environ.get("HF_HUB_OFFLINE", "").upper() in {"1", "ON", "YES", "TRUE"}


def _import_hub(repo_id: str) -> Any:
    try:
        return importlib.import_module("huggingface_hub")
    except ImportError:
        raise HubError(f"{repo_id}: looks like a Hugging Face Hub model id, and loading one needs the "
                       f"huggingface_hub package. Install it with `{INSTALL_HUB}`, or pass a local model "
                       "directory or the name of a bundled profile (`chatcodec profiles` lists them)",
                       repo_id=repo_id) from None


def download_model(repo_id: str, *, revision: str | None = None, token: str | bool | None = None,
                   cache_dir: str | os.PathLike[str] | None = None, local_files_only: bool = False,
                   tokenizer: bool = True) -> Path:
    """Fetch the files chatcodec reads from a Hub model repository into the Hub cache.

    Args:
        repo_id: ``"org/name"``.
        revision: a branch, tag or commit hash (default: the repository's default branch).
        token: a Hub token (``None``: ``huggingface_hub``'s own, from ``HF_TOKEN`` or the login;
            ``False``: none).
        cache_dir: the Hub cache (default: ``huggingface_hub``'s, ``HF_HUB_CACHE``).
        local_files_only: never reach the network (also when ``HF_HUB_OFFLINE`` is true).
        tokenizer: fetch ``tokenizer.json`` too.

    Returns:
        The snapshot folder (``.../models--org--name/snapshots/<commit>``) holding the files the
        repository has among :data:`HUB_FILES` (and :data:`TOKENIZER_FILES`).

    Raises:
        HubError: ``huggingface_hub`` is not installed; the repository or revision does not exist
            or needs a token; offline and not cached (or cached only in part); the Hub cannot be
            reached.
    """
    hub = _import_hub(repo_id)
    patterns = [*HUB_FILES, *(TOKENIZER_FILES if tokenizer else ())]
    offline = hub_offline(local_files_only)
    cache = _check_cache(repo_id, cache_dir)
    try:
        folder = hub.snapshot_download(repo_id, revision=revision, token=token, cache_dir=cache_dir,
                                       local_files_only=offline, allow_patterns=patterns)
    except Exception as error:
        raise _hub_error(repo_id, revision, offline, error, cache) from error
    return Path(folder)


def _check_cache(repo_id: str, cache_dir: str | os.PathLike[str] | None) -> Path:
    """The Hub cache folder a download uses (``cache_dir``, else ``huggingface_hub``'s, from
    ``HF_HUB_CACHE`` or ``HF_HOME``), refused when something unusable is at its path (a file, a
    link loop: ``huggingface_hub`` raised a bare ``RuntimeError`` for the loop). A folder that
    does not exist yet is fine: a download creates it."""
    cache = Path(cache_dir) if cache_dir is not None else Path(
        importlib.import_module("huggingface_hub.constants").HF_HUB_CACHE)
    try:
        is_folder = stat.S_ISDIR(cache.stat().st_mode)
    except FileNotFoundError:
        if cache.is_symlink():  # a download cannot create the folder there
            raise HubError(f"{repo_id}: the Hub cache {cache} is a symbolic link to {os.readlink(cache)}, "
                           "which does not exist", repo_id=repo_id) from None
        is_folder = True
    except OSError as error:  # a link loop (ELOOP), no permission on a folder on the way
        raise HubError(f"{repo_id}: the Hub cache {cache} cannot be used ({error.strerror or error})",
                       repo_id=repo_id) from None
    if not is_folder:
        raise HubError(f"{repo_id}: the Hub cache {cache} is not a folder (cache_dir=, HF_HUB_CACHE or "
                       "HF_HOME names it)", repo_id=repo_id)
    return cache


#: The HTTP clients ``huggingface_hub`` uses: their errors (a refused connection, a time-out) are
#: the network's, raised as they are by the calls that upload.
_HTTP_CLIENTS = frozenset({"httpx", "httpx2", "requests", "urllib3"})


def _hub_error(repo_id: str, revision: str | None, offline: bool, error: Exception,
               cache: Path | None = None) -> Exception:
    """The :class:`HubError` for an exception of ``huggingface_hub`` (anything else is returned as is);
    ``cache`` is the Hub cache folder looked in, named when the model is not there."""
    kind = type(error).__name__
    at = f" at revision {revision!r}" if revision else ""
    where = "" if cache is None else f" {cache}" + ("" if cache.is_dir() else " (no such folder)")
    if kind == "RevisionNotFoundError":
        message = f"the repository has no revision {revision!r} (a branch, tag or commit hash)"
    elif kind == "GatedRepoError":
        message = "the repository is gated: accept its conditions on the Hub, then pass token= (or log in)"
    elif kind == "RepositoryNotFoundError":
        message = ("no such model repository on the Hub (or it is private: pass token= or log in with "
                   "`hf auth login`)")
    elif kind in ("LocalEntryNotFoundError", "IncompleteSnapshotError") and offline:
        message = (f"not in the Hub cache{where}{at}, and the Hub may not be reached (HF_HUB_OFFLINE=1 or "
                   "local_files_only=True); load it once online, or pass the folder of a downloaded copy")
    elif kind in ("LocalEntryNotFoundError", "IncompleteSnapshotError"):
        message = f"the Hub could not be reached and the model is not in the Hub cache{where}{at} ({error})"
    elif kind == "HFValidationError":
        message = f"not a valid Hub repository id ({error})"
    elif kind == "OfflineModeIsEnabled":  # was: "the Hub answered with an error (... offline mode ...)"
        message = "HF_HUB_OFFLINE is set, so the Hub may not be reached; unset it to push"
    elif kind == "HfHubHTTPError" or isinstance(error, OSError):
        message = f"the Hub answered with an error ({error})"
    elif type(error).__module__.partition(".")[0] in _HTTP_CLIENTS:  # push_to_hub let these through
        message = f"the Hub could not be reached ({kind}: {error})"
    else:
        return error
    return HubError(f"{repo_id}: {message}", repo_id=repo_id)


# --- push_to_hub -----------------------------------------------------------------------------------

def push_codec(save: Callable[[Path], object], repo_id: str, *, base: Path | None = None,
               commit_message: str | None = None,
               commit_description: str | None = None, private: bool | None = None,
               token: str | bool | None = None, revision: str | None = None,
               create_pr: bool = False) -> Any:
    """Commit what ``codec.save_pretrained`` writes to a Hub repository (created when missing).

    The codec is saved into a temporary directory, and each file it writes becomes a
    ``CommitOperationAdd`` of one commit. When the codec was loaded from the same repository
    (``base``), the directory starts as a copy of the files it was read from, so the commit holds
    exactly the changes ``save_pretrained`` would make to that repository: files whose bytes are
    unchanged are left out, and files it would delete (a legacy ``chat_template.json``, a named
    template no longer there) become ``CommitOperationDelete`` operations.

    Args:
        save: the codec's ``save_pretrained`` (called with the temporary directory).
        repo_id: ``"org/name"``.
        base: the Hub cache snapshot of ``repo_id`` the codec was loaded from, or ``None``.
        commit_message: the commit title (default ``"Upload chat templates with chatcodec"``).
        commit_description: the commit (or pull request) description.
        private: for a new repository, whether it is private (``None``: the Hub's default).
        token: a Hub token (``None``: ``huggingface_hub``'s own).
        revision: the branch to commit to (default: the default branch).
        create_pr: open a pull request instead of committing to the branch.

    Returns:
        ``huggingface_hub``'s ``CommitInfo`` (its ``pr_url`` is set with ``create_pr``).

    Raises:
        HubError: ``huggingface_hub`` is not installed, or the Hub refused or could not be reached.
        ModelStorageError: as ``save_pretrained`` (nothing is sent then).
    """
    hub = _import_hub(repo_id)
    with tempfile.TemporaryDirectory(prefix="chatcodec-push-") as folder:
        directory = Path(folder)
        before = _copy_read_files(base, directory) if base is not None else {}
        save(directory)
        after = _digests(directory)
        operations: list[Any] = [
            hub.CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(directory / path))
            for path, digest in after.items() if before.get(path) != digest]
        operations += [hub.CommitOperationDelete(path_in_repo=path) for path in before if path not in after]
        try:
            api = hub.HfApi(token=token)
            api.create_repo(repo_id, private=private, exist_ok=True)
            return api.create_commit(repo_id, operations, commit_message=commit_message or
                                     "Upload chat templates with chatcodec",
                                     commit_description=commit_description, revision=revision,
                                     create_pr=create_pr)
        except Exception as error:
            raise _hub_error(repo_id, revision, False, error) from error


def _copy_read_files(source: Path, target: Path) -> dict[str, str]:
    """Copy the files of ``source`` chatcodec reads into ``target`` (following the cache's links);
    returns their digests by repository path."""
    import fnmatch

    for file in sorted(source.rglob("*")):
        relative = file.relative_to(source).as_posix()
        if file.is_file() and any(fnmatch.fnmatch(relative, pattern)
                                  for pattern in (*HUB_FILES, *TOKENIZER_FILES)):
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target / relative)
    return _digests(target)


def _digests(directory: Path) -> dict[str, str]:
    """``{repository path: sha256}`` of every file under ``directory``, in path order."""
    return {file.relative_to(directory).as_posix(): hashlib.sha256(file.read_bytes()).hexdigest()
            for file in sorted(directory.rglob("*")) if file.is_file()}
