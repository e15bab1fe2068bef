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
    publish,
    reference_available,
    reference_parser,
    reference_version,
    tool_heavy_output,
)

#: outputs parsed back to back for the "in a row" figure (below this size only: at 544 k the fixed
#: cost of a cold cache is lost in the parse itself)
IN_A_ROW = 16
ROW_BELOW = 100_000


def timed(parse: Any, text: str, template: Any) -> float:
    start = now()
    parse(text, template, prefix="")
    return now() - start


def in_a_row(parse: Any, texts: list[str], template: Any) -> float:
    """The time per output of parsing ``texts`` back to back, after one parse not counted: what a
    server pays in its steady state, the code and the template warm, each output a new string."""
    parse(texts[0], template, prefix="")
    start = now()
    for text in texts[1:]:
        parse(text, template, prefix="")
    return (now() - start) / (len(texts) - 1)


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
            repeats = 3 * args.repeats if size < ROW_BELOW else args.repeats
            best = interleaved(functions, repeats)
            if size < ROW_BELOW:  # distinct string objects with the same text
                texts = ["".join(list(text)) for _ in range(IN_A_ROW + 1)]
                rowed = {"chatcodec": lambda texts=texts: in_a_row(parse_response, texts, compiled)}
                if reference is not None:
                    rowed["reference"] = lambda texts=texts: in_a_row(reference, texts, QWEN3_TEMPLATE)
                for name, value in interleaved(rowed, args.repeats).items():
                    best[f"{name} row"] = value
            rows.append((kind, len(text), best))
    ref_name = f"transformers {reference_version()}" if reference is not None else "not installed"
    lines = [
        "## Whole-text parsing",
        "",
        "Written by `python bench/bench_whole.py --write`. `parse_response(text, template, prefix=\"\")` "
        f"over a whole output, chatcodec against the reference ({ref_name}), the same message on both "
        "sides (tool calls and reasoning checked), ms of CPU time, best of alternating runs; "
        "speed-up = reference / chatcodec. Cold: one parse after collecting the garbage of the "
        "whole process (which holds transformers), so the caches start cold, as after unrelated "
        f"work. In a row: the time per output of {IN_A_ROW} outputs parsed back to back (after one "
        "not counted), each a new string, as a server parsing one output after another.",
        "",
        machine() + ".",
        "",
        "| output | chars | chatcodec ms cold | reference ms cold | speed-up cold "
        "| chatcodec ms in a row | reference ms in a row | speed-up in a row |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, size, best in rows:
        cells = [kind, f"{size:,}"]
        for suffix in ("", " row"):
            ours, ref = best.get("chatcodec" + suffix), best.get("reference" + suffix)
            cells.append(f"{ours * 1e3:.2f}" if ours else "n/a")
            cells += [f"{ref * 1e3:.2f}", f"{ref / ours:.2f}x"] if ref and ours else ["n/a", "n/a"]
        lines.append("| " + " | ".join(cells) + " |")
    return publish("bench_whole", lines, args.write)


if __name__ == "__main__":
    raise SystemExit(main())
