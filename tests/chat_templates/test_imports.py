"""The modules the decoding half and the model object share with encoding never import jinja2."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "chatcodec",
        "chatcodec.tool_schemas",
        "chatcodec.model.storage",
        "chatcodec.cli.io",
        "chatcodec.chat_templates",
    ],
)
def test_no_jinja2(module: str) -> None:
    code = f"import sys, {module}; print('jinja2' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
