"""The README's serving examples run as written, in the engine environment, and print what it shows;
``examples/serving/vllm_stream.py`` is the README's code, ``examples/serving/sglang_stream.py`` prints
the README's ``text`` block."""

from __future__ import annotations

import contextlib
import io
import runpy

from tests.conftest import ROOT


def section_code() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Serving with vLLM / SGLang", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_streams_what_it_says() -> None:
    code = section_code()
    lines = code.splitlines()
    last_code = max(number for number, line in enumerate(lines) if line and not line.startswith("#"))
    shown = [line[1:] for line in lines[last_code + 1 :]]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    assert " ".join(printed.getvalue().split()) == " ".join(" ".join(shown).split())
    example = (ROOT / "examples" / "serving" / "vllm_stream.py").read_text(encoding="utf-8")
    assert code == example + "".join(f"{line}\n" for line in lines[last_code + 1 :])


def test_the_sglang_example_prints_what_the_readme_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Serving with vLLM / SGLang", 1)[1]
    section = section.split("examples/serving/sglang_stream.py", 1)[1]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runpy.run_path(str(ROOT / "examples" / "serving" / "sglang_stream.py"), run_name="__main__")
    assert printed.getvalue() == shown
