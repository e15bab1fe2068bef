"""Whole-text parsing: ``parse_response(text)`` on prose and on JSON-heavy tool-call output.

chatcodec and the reference (transformers 5.24, the ``bench`` extra) parse the same outputs with the
same Qwen3-style template (compiled once on both sides: a loaded ``ResponseTemplate`` for chatcodec,
the dict for the reference), alternating runs, minimum of CPU time kept. Prose: a quarter
reasoning, then answer text with a tool call every ~2,000 characters. Tool-heavy: ``write_file``
calls whose JSON string arguments are full of quotes, escapes and brackets.

Usage::

    python bench/bench_whole.py [--sizes 9000,544000] [--repeats 7] [--write]
"""

from __future__ import annotations

import argparse
from typing import Any

from common import (
    QWEN3_TEMPLATE,
    interleaved,
    machine,
    now,
    prose_output,
    reference_available,
    reference_parser,
    reference_version,
    tool_heavy_output,
    write_section,
)


def timed(parse: Any, text: str, template: Any) -> float:
    start = now()
    parse(text, template, prefix="")
    return now() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="9000,544000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="replace the section of docs/performance.md")
    args = parser.parse_args(argv)
    from chatcodec import load_response_template, parse_response

    compiled = load_response_template(QWEN3_TEMPLATE)
    reference = reference_parser()[1] if reference_available() else None
    rows = []
    for kind, make in (("prose", prose_output), ("tool-heavy", tool_heavy_output)):
        for size in (int(s) for s in args.sizes.split(",")):
            text = make(size)
            if reference is not None:  # the same calls and reasoning (content differs on purpose:
                # chatcodec keeps all the text between calls, docs/compatibility.md)
                ours = parse_response(text, compiled, prefix="")
                theirs = reference(text, QWEN3_TEMPLATE, prefix="")
                assert all(ours.get(key) == theirs.get(key) for key in ("tool_calls", "reasoning_content"))
            functions = {"chatcodec": lambda text=text: timed(parse_response, text, compiled)}
            if reference is not None:
                functions["reference"] = lambda text=text: timed(reference, text, QWEN3_TEMPLATE)
            # short runs are cheap and the most disturbed by a loaded machine: more of them
            repeats = 3 * args.repeats if size < 100_000 else args.repeats
            rows.append((kind, len(text), interleaved(functions, repeats)))
    ref_name = f"transformers {reference_version()}" if reference is not None else "not installed"
    lines = [
        "## Whole-text parsing",
        "",
        "Written by `python bench/bench_whole.py --write`. `parse_response(text, template, prefix=\"\")` "
        f"over a whole output, chatcodec against the reference ({ref_name}), the same message on both "
        "sides (tool calls and reasoning checked), ms of CPU time, best of alternating runs; "
        "speed-up = reference / chatcodec.",
        "",
        machine() + ".",
        "",
        "| output | chars | chatcodec ms | reference ms | speed-up |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, size, best in rows:
        ref = best.get("reference")
        lines.append(f"| {kind} | {size:,} | {best['chatcodec'] * 1e3:.2f} | "
                     + (f"{ref * 1e3:.2f} | {ref / best['chatcodec']:.2f}x |" if ref else "n/a | n/a |"))
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        write_section("bench_whole", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
