"""The engine suite: chatcodec's plugins inside vLLM 0.33 and SGLang 0.5.23, on the CPU.

Run it in the environment ``scripts/engines_env.sh`` builds (``.engines-venv/bin/python -m pytest
tests_engines``); it is not part of the default test run (``testpaths`` is ``tests``). The plugins
are loaded the way the engines load them: through the installed entry points.
"""

from __future__ import annotations

import pytest
from tests.conftest import corpus_path  # noqa: F401  (the Hypothesis profiles and the corpus location)


@pytest.fixture(scope="session", autouse=True)
def engines_loaded() -> None:
    """Run both engines' plugin loaders once, as ``vllm serve`` / ``sglang.launch_server`` do."""
    from sglang.srt.plugins import load_plugins
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    load_plugins()
