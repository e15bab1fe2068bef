"""The README's OpenAI example runs as written and prints the chunks its comments show."""

from __future__ import annotations

import contextlib
import io

from tests.conftest import ROOT


def section_code() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## OpenAI: messages, Chat Completions chunks, Responses events", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_streams_what_it_says() -> None:
    code = section_code()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    shown = [line.strip()[1:] for line in code.splitlines() if line.startswith("# ")]
    assert " ".join(printed.getvalue().split()) == " ".join(" ".join(shown).split())
    assert printed.getvalue().splitlines()[-1] == "{} tool_calls"
