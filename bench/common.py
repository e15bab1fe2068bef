"""What the ``bench/`` scripts share: outputs, the templates, the reference, timing and the report.

Every script runs chatcodec and the reference (transformers 5.24, the ``bench`` extra) in one
process, alternating them, repeats each measurement and keeps the minimum (the machine is shared
and noisy), and prints ratios. ``--write`` replaces the script's own section of
``docs/performance.md`` (between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``).
"""

from __future__ import annotations

import gc
import importlib.util
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT / "src"))

#: Qwen3's output format in the standard parsers both implementations read (the qwen3 profile's own
#: template uses chatcodec's ``x-json-calls``, which the reference does not have).
QWEN3_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"},
    },
}

SENTENCE = ("The forecast for Paris mentions light rain in the afternoon, so an umbrella is a good "
            "idea; temperatures stay between 12 and 17 degrees. ")
CALL = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
        "</tool_call>\n")


def prose_output(size: int) -> str:
    """About ``size`` characters as Qwen3 writes them: a quarter reasoning, then answer text with a
    tool call about every 2,000 characters, then the end of turn."""
    reasoning = (SENTENCE * (size // 4 // len(SENTENCE) + 1))[: size // 4]
    paragraph = SENTENCE * 13 + CALL
    body = paragraph * max(1, (size - len(reasoning)) // len(paragraph))
    return f"<think>\n{reasoning}\n</think>\n\n{body}"


def tool_call(index: int) -> str:
    """One JSON tool call with string arguments full of quotes, escapes and brackets (~540 chars)."""
    code = ('def area(r):\\n    \\"\\"\\"Area of a circle of radius r.\\"\\"\\"\\n'
            '    return 3.14159 * r ** 2\\n'
            '# see {\\"units\\": [\\"m\\", \\"cm\\"]}\\n')
    return ('<tool_call>\n{"name": "write_file", "arguments": {"path": "src/geometry_' + str(index) + '.py", '
            '"content": "' + code + '", "mode": "overwrite", "tags": ["math", "geometry", "circle"], '
            '"options": {"encoding": "utf-8", "newline": "\\\\n", "backup": true, "retries": 3}}}\n'
            "</tool_call>\n")


def tool_heavy_output(size: int) -> str:
    """About ``size`` characters of JSON tool calls after a short reasoning (what agents write)."""
    parts = ["<think>\nI will write the files one by one.\n</think>\n\n"]
    total, index = len(parts[0]), 0
    while total < size:
        call = tool_call(index)
        parts.append(call)
        total, index = total + len(call), index + 1
    return "".join(parts)


def best_of(function: Callable[[], float], repeats: int) -> float:
    """The smallest of ``repeats`` results of ``function`` (each a time), with the GC collected
    before and disabled during each run."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            best = min(best, function())
        finally:
            gc.enable()
    return best


def interleaved(functions: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """Run each of ``functions`` once per round, ``repeats`` rounds, alternating; the minimum of each."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, function in functions.items():
            gc.collect()
            gc.disable()
            try:
                best[name] = min(best[name], function())
            finally:
                gc.enable()
    return best


def reference_available() -> bool:
    """Whether the reference (transformers, from the ``bench`` extra) is importable here."""
    return importlib.util.find_spec("transformers") is not None


def reference_parser() -> tuple[Any, Any]:
    """The reference's ``ResponseParser`` and ``parse_response``."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers.utils.chat_parsing import ResponseParser
    from transformers.utils.chat_parsing.response_parser import parse_response

    return ResponseParser, parse_response


def reference_version() -> str:
    import transformers

    return str(transformers.__version__)


def machine() -> str:
    """One line naming the interpreter, the machine and its load when measured."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"Python {platform.python_version()} on {platform.machine()} ({os.cpu_count()} CPUs, "
            f"load {load:.1f} when measured)")


def write_section(name: str, section: str) -> None:
    """Replace the ``name`` section of ``docs/performance.md`` (appended when missing)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Performance\n\n"
    block = f"{start}\n{section.rstrip()}\n{end}\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    DOC.write_text(text, encoding="utf-8")


def publish(name: str, lines: list[str], write: bool) -> int:
    """Print a bench's table (``lines``, joined) and, with ``write``, put it in the ``name`` section of
    ``docs/performance.md``; the exit status of the bench (0)."""
    section = "\n".join(lines) + "\n"
    print(section)
    if write:
        write_section(name, section)
    return 0


def now() -> float:
    """The process's CPU time in seconds: on a shared machine, time spent waiting for a core is
    not counted (the ratios are of CPU time, as in the issue that set the targets)."""
    return time.process_time()
