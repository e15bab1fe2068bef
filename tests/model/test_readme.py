"""The README's model-object example runs as written and prints what it says."""

from __future__ import annotations

import contextlib
import io

from tests.conftest import ROOT


def section_code() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API: a model directory", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_runnable_example() -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(section_code(), "README.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines[0] == "{'type': 'region_open', 'field': 'reasoning_content'}"
    assert lines[-1] == (
        "{'role': 'assistant', 'reasoning_content': '\\nThe user wants the weather in Paris.\\n', "
        "'tool_calls': [{'type': 'function', 'function': {'name': 'get_weather', "
        "'arguments': {'city': 'Paris'}}}]}"
    )
