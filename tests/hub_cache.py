"""A Hugging Face Hub cache built on disk, in ``huggingface_hub``'s documented layout.

``<cache>/models--<org>--<name>/blobs/<hash>`` holds each file's bytes once;
``refs/<branch>`` holds the commit hash a branch points to; ``snapshots/<commit>/<path>`` is a
relative symbolic link to the blob (https://huggingface.co/docs/huggingface_hub/guides/manage-cache).
``huggingface_hub.snapshot_download(..., local_files_only=True)`` reads it without the network,
which is how chatcodec loads a model already in the cache.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

#: A commit hash (40 hex digits) for the snapshots the tests build.
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_hub_cache(cache: Path, repo_id: str, files: Mapping[str, str | bytes], *, commit: str = COMMIT,
                   refs: tuple[str, ...] = ("main",)) -> Path:
    """Add one snapshot of ``repo_id`` to the Hub cache at ``cache``.

    Args:
        cache: the cache folder (``HF_HUB_CACHE``).
        repo_id: ``"org/name"``.
        files: repository path -> content.
        commit: the snapshot's commit hash.
        refs: the branches (or tags) that point to it.

    Returns:
        The snapshot folder.
    """
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    for path, content in files.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / path
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    for ref in refs:
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snapshot
