"""The decoding path stays light: it imports neither jinja2, rich nor tokenizers (rule R2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "qwen3-coder"

PROBE = """
import sys
import chatcodec
message = chatcodec.parse_response("<think>a</think>b", {"start_anchor": "x", "fields": {
    "r": {"open": "<think>", "close": "</think>"}, "c": {}}}, prefix="")
assert message == {"r": "a", "c": "b"}, message
template = {"start_anchor": "x", "fields": {"c": {"close_pattern": "\\\\s*<end>"}}}
parser = chatcodec.ResponseParser(template, prefix="")
parser.feed("a "); parser.finalize()
from chatcodec.cli import main
assert main(["parse", sys.argv[1], sys.argv[2], "--no-prefix", "--events"]) == 0
heavy = sorted(name for name in ("jinja2", "rich", "tokenizers", "transformers") if name in sys.modules)
print(",".join(heavy))
"""


def test_decoding_and_chatcodec_parse_import_nothing_heavy() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(EXAMPLE / "response_template.json"), str(EXAMPLE / "output.txt")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.splitlines()[-1] == ""


def test_import_chatcodec_alone_loads_no_submodule_of_decoding() -> None:
    probe = "import sys, chatcodec; print(sorted(m for m in sys.modules if m.startswith('chatcodec.')))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def modules_loaded_by_parse(*names: str, new_only: bool = False) -> str:
    """Which of ``names`` are in ``sys.modules`` after ``chatcodec parse TEMPLATE_FILE OUTPUT`` ran
    in a new interpreter (comma-joined, sorted; ``new_only``: leave out those the interpreter had
    loaded before chatcodec was imported)."""
    probe = (
        "import sys\n"
        "before = set(sys.modules) if sys.argv[3] == '1' else set()\n"
        "from chatcodec.cli import main\n"
        "assert main(['parse', sys.argv[1], sys.argv[2], '--no-prefix']) == 0\n"
        "names = sys.argv[4:]\n"
        "print(','.join(sorted(name for name in names if name in sys.modules and name not in before)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(EXAMPLE / "response_template.json"), str(EXAMPLE / "output.txt"),
         "1" if new_only else "0", *names],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.splitlines()[-1]


def test_chatcodec_parse_with_a_template_file_loads_no_tokenizer_config_logging_or_profiles() -> None:
    """A template path with a folder in it is never a profile name: the profiles package (its
    dataclasses and markers) is not imported to find that out."""
    assert modules_loaded_by_parse(
        "chatcodec.model.tokenizer", "chatcodec.model.config", "chatcodec.model.incremental", "logging",
        "chatcodec.profiles") == ""


def test_chatcodec_parse_with_a_template_file_imports_no_dataclasses_pathlib_typing_or_scanners() -> None:
    """What ``chatcodec parse TEMPLATE_FILE`` needs beyond a bare interpreter is argparse, json and
    ``regex``: dataclasses (with inspect), pathlib (with urllib.parse and ipaddress) and typing cost
    a third of a bare interpreter's start each, and the value scanners serve ``value_deltas`` only
    (docs/performance.md, "Start-up")."""
    assert modules_loaded_by_parse(
        "dataclasses", "inspect", "pathlib", "typing", "chatcodec.response_templates.scanners",
        new_only=True) == ""
