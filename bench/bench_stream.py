"""Streaming fixed costs: text in 4-character chunks, chatcodec against the reference and the floor.

A server calls ``feed`` once per generated token. chatcodec's ``ResponseParser`` and the
reference's (transformers 5.24, the ``bench`` extra) are fed the same Qwen3-style output in
4-character chunks (and 1-character chunks), alternating runs, minimum of CPU time per chunk kept.
The floor is the least any Python parser can cost per chunk: a loop that calls a no-op method and
appends one small dict. Sizes run from 9 k to 1.2 M characters (flat growth: the per-chunk cost
does not depend on how much came before).

Usage::

    python bench/bench_stream.py [--sizes 9000,1200000] [--repeats 7] [--write]
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
    write_section,
)


class Floor:
    """The least a parser can do per chunk: one method call that appends one small dict."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def feed(self, text: str) -> list[dict[str, Any]]:
        self.events.append({"type": "region_chunk", "text": text})
        return self.events


def per_chunk(make: Any, chunks: list[str]) -> float:
    parser = make()
    feed = parser.feed
    start = now()
    for piece in chunks:
        feed(piece)
    return (now() - start) / len(chunks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="9000,1200000")
    parser.add_argument("--chunks", default="4,1")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="replace the section of docs/performance.md")
    args = parser.parse_args(argv)
    from chatcodec import ResponseParser, load_response_template

    compiled = load_response_template(QWEN3_TEMPLATE)
    reference = reference_parser()[0] if reference_available() else None
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for chunk in (int(c) for c in args.chunks.split(",")):
        for size in sizes:
            text = prose_output(size)
            chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]
            # short runs are cheap and the most disturbed by a loaded machine: more of them
            repeats = 3 * args.repeats if size < 100_000 else max(2, args.repeats // 3)
            def new_parser() -> Any:
                return ResponseParser(compiled, prefix="")

            functions = {"chatcodec": lambda c=chunks: per_chunk(new_parser, c),
                         "floor": lambda c=chunks: per_chunk(Floor, c)}
            # the reference re-joins its whole buffer on every feed: beyond 100 k characters it is
            # timed on the first 100 k chunks' worth only (a lower bound on its cost at that size)
            if reference is not None:
                ref_chunks = chunks if size <= 100_000 else chunks[: 100_000 // chunk]
                functions["reference"] = lambda c=ref_chunks: per_chunk(
                    lambda: reference(QWEN3_TEMPLATE, prefix=""), c)
            rows.append((chunk, len(text), interleaved(functions, repeats)))
    ref_name = f"transformers {reference_version()}" if reference is not None else "not installed"
    lines = [
        "## Streaming: the cost per chunk",
        "",
        "Written by `python bench/bench_stream.py --write`. `feed` once per chunk over a Qwen3-style output "
        f"(a quarter reasoning, answer text, a JSON tool call every ~2,000 characters), chatcodec against "
        f"the reference ({ref_name}) and the floor (a no-op method that appends one small dict), µs of CPU "
        "per chunk, best of alternating runs. Beyond 100 k characters the reference is timed on its "
        "first 100 k characters (a lower bound: it re-joins its buffer on every feed).",
        "",
        machine() + ".",
        "",
        "| chunk | chars | chatcodec µs | reference µs | floor µs | speed-up | chatcodec / floor | "
        "vs smallest |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base: dict[int, float] = {}
    for chunk, size, best in rows:
        ours = best["chatcodec"]
        base.setdefault(chunk, ours)
        ref = best.get("reference")
        lines.append(f"| {chunk} | {size:,} | {ours * 1e6:.2f} | "
                     + (f"{ref * 1e6:.2f}" if ref else "n/a") + f" | {best['floor'] * 1e6:.2f} | "
                     + (f"{ref / ours:.1f}x" if ref else "n/a")
                     + f" | {ours / best['floor']:.1f}x | {ours / base[chunk]:.2f}x |")
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        write_section("bench_stream", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
