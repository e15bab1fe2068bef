"""Shared fixtures: the corpus beside the checkout, and the Hypothesis profiles.

The corpus is read from ``../shared/corpus`` (CI has it beside the checkout); set
``CHATCODEC_CORPUS`` to read it from elsewhere. It is never copied into the project.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# The suite never reaches the network: a Hub id is read from a Hub cache built on disk
# (tests/model/test_hub.py), and huggingface_hub must never fall back to a download.
os.environ["HF_HUB_OFFLINE"] = "1"

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CHATCODEC_CORPUS", ROOT.parent / "shared" / "corpus"))

settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def corpus_path(*parts: str) -> Path:
    """Path of a corpus file; fails the test run loudly when the corpus is missing."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(
            f"corpus file {path} not found: check out the project beside ../shared "
            "or set CHATCODEC_CORPUS"
        )
    return path


@cache
def load_json(*parts: str) -> Any:
    """Parse a corpus JSON file once per test session."""
    return json.loads(corpus_path(*parts).read_text(encoding="utf-8"))


@cache
def corpus_template(name: str) -> str:
    """A corpus chat template, byte for byte (no newline translation: some use CRLF)."""
    with open(corpus_path("chat_templates", name), encoding="utf-8", newline="") as handle:
        return handle.read()


@cache
def golden_renders() -> list[dict[str, Any]]:
    """The lines of ``golden_renders.jsonl``, in file order."""
    lines = corpus_path("golden_renders.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS
