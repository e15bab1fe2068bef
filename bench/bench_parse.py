"""Streaming-parse speed: chatcodec against the reference (transformers 5.24), in one run.

Measures the cost of one ``ResponseParser.feed`` call (per chunk) while a long output is streamed
in 1-character and 4-character chunks, at several output lengths, with a literal template
(Hermes/Qwen 2.5: ``<think>``, JSON ``<tool_call>``) and a regex template (Qwen3-Coder XML tool
calls, ``\\s*</think>``). It also times a 40,000-space run against a ``\\s*``-prefixed delimiter,
and one-shot ``parse_response(text, template_dict)`` over many short outputs (the template given
as a dict every call, as a loop over a dataset does).
The results replace the "Decoding" section of ``docs/performance.md`` (between its markers).

The reference runs in this process when ``transformers`` is importable (``pip install -e
'.[bench]'``); otherwise pass ``--reference-python`` (e.g. ``/tmp/refenv/bin/python``), an
interpreter that has it, and this script runs itself there as a worker.

Usage::

    python bench/bench_parse.py                      # full run, writes docs/performance.md
    python bench/bench_parse.py --quick --no-write   # smaller sizes, print only
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import write_section

ROOT = Path(__file__).resolve().parent.parent

TEMPLATES: dict[str, dict[str, Any]] = {
    "literal": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                           "transform": {"type": "function", "function": "{content}"}},
            "content": {"close": "<|im_end|>"},
        },
    },
    "regex": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think>", "close_pattern": r"\s*</think>"},
            "tool_calls": {
                "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>", "close": "</tool_call>",
                "repeats": True, "content": "xml-inline",
                "content_args": {"tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"},
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"close": "<|im_end|>"},
        },
    },
}

_SENTENCE = ("The forecast for Paris mentions light rain in the afternoon, so an umbrella is a good "
             "idea; temperatures stay between 12 and 17 degrees. ")
_CALLS = {
    "literal": ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
                "</tool_call>\n"),
    "regex": ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
              "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"),
}


def make_output(kind: str, size: int) -> str:
    """A realistic output of about ``size`` characters: a quarter reasoning, then answer text with a
    tool call about every 2,000 characters."""
    reasoning = (_SENTENCE * (size // 4 // len(_SENTENCE) + 1))[: size // 4]
    paragraph = _SENTENCE * 13 + _CALLS[kind]
    body = paragraph * max(1, (size - len(reasoning)) // len(paragraph))
    return f"<think>\n{reasoning}\n</think>\n\n{body}"


def time_feeds(parser_cls: Any, template: dict[str, Any], text: str, chunk: int, repeats: int) -> float:
    """Best per-chunk time of ``feed`` in microseconds (finalize not included)."""
    chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    best = float("inf")
    for _ in range(repeats):
        parser = parser_cls(template, prefix="")
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        for piece in chunks:
            parser.feed(piece)
        elapsed = time.perf_counter() - start
        gc.enable()
        parser.finalize()
        best = min(best, elapsed / len(chunks))
    return best * 1e6


WS_TEMPLATE = {
    "start_anchor": "A",
    "fields": {"reasoning_content": {"open": "<think>", "close_pattern": r"\s*</think>"}, "content": {}},
}


#: Whitespace-led delimiters watched while a long run arrives, then text that is no delimiter
#: (QA round 2, P1/P2): (template, what opens the region the run is in, the run's character).
RUN_CASES: dict[str, tuple[dict[str, Any], str, str]] = {
    "open \\s*<tool_call>": ({"start_anchor": "S", "fields": {
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>"}, "content": {}}}, "", " "),
    "close \\s*</think>\\s*": ({"start_anchor": "S", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": r"\s*</think>\s*"}, "content": {}}},
        "<think>x", " "),
    "close \\n+</think>": ({"start_anchor": "S", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": r"\n+</think>"}, "content": {}}},
        "<think>x", "\n"),
    "gpt_oss, outside a channel": (json.loads((ROOT / "src/chatcodec/profiles/gpt_oss/response_template.json")
                                              .read_text(encoding="utf-8")), "", " "),
    # QA round 3: a pending match that a run extends (searched again only when the run ends)
    "pending close </tc>\\s*": ({"start_anchor": "S", "fields": {
        "calls": {"open": "<tc>", "close_pattern": r"</tc>\s*", "repeats": True}, "content": {}}},
        "<tc>x</tc>", " "),
    "qwen3_coder, a name after <function=": (json.loads(
        (ROOT / "src/chatcodec/profiles/qwen3_coder/response_template.json").read_text(encoding="utf-8")),
        "<tool_call>\n<function=", "x"),
}


def time_run_then_text(parser_cls: Any, case: str, length: int, whole: bool = False) -> float:
    """Seconds to stream a ``length``-character run one character per feed, then ``hello`` and
    ``finalize``: linear means doubling the run doubles this. With ``whole`` (the reference) the
    run is given in one untimed feed and only ``hello`` and ``finalize`` are timed: the reference
    rescans its whole buffer on every feed, so that is a lower bound on each of its feeds, and
    streaming the run character by character would cost it hours."""
    template, opening, char = RUN_CASES[case]
    parser = parser_cls(template, prefix="")
    parser.feed(opening)
    if whole:
        parser.feed(char * length)
    start = time.perf_counter()
    if not whole:
        for _ in range(length):
            parser.feed(char)
    parser.feed("hello")
    parser.finalize()
    return time.perf_counter() - start


def time_whitespace_run(parser_cls: Any, spaces: int) -> float:
    """Seconds to stream ``spaces`` spaces (one per feed) into a region closed by ``\\s*</think>``."""
    parser = parser_cls(WS_TEMPLATE, prefix="")
    parser.feed("<think>x")
    start = time.perf_counter()
    for _ in range(spaces):
        parser.feed(" ")
    parser.feed("</think>done")
    parser.finalize()
    return time.perf_counter() - start


#: How many short outputs the one-shot measurement parses.
ONE_SHOT_OUTPUTS = 2_000


def short_outputs(count: int) -> list[str]:
    """``count`` short, distinct outputs (reasoning, a sentence, sometimes a tool call)."""
    call = _CALLS["regex"]
    return [f"<think>\nStep {i}.\n</think>\n\nAnswer {i}.{call if i % 3 == 0 else ''}<|im_end|>"
            for i in range(count)]


def time_one_shot(parse_fn: Any, count: int, repeats: int) -> float:
    """Best per-output time of ``parse_fn(text, template_dict, prefix="")`` in microseconds."""
    outputs = short_outputs(count)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for text in outputs:
            parse_fn(text, TEMPLATES["regex"], prefix="")
        best = min(best, (time.perf_counter() - start) / count)
    return best * 1e6


def time_compile(load_fn: Any, count: int = 20) -> float:
    """Milliseconds to load (validate and compile) the regex template when it is not cached."""
    specs = [{**TEMPLATES["regex"], "defaults": {"role": "assistant", "run": f"{time.time()}-{i}"}}
             for i in range(count)]
    start = time.perf_counter()
    for spec in specs:
        load_fn(spec)
    return (time.perf_counter() - start) / count * 1e3


#: Run lengths for RUN_CASES (the reference, quadratic in every feed, only the first two).
RUN_LENGTHS = (10_000, 20_000, 40_000, 80_000)


def run_all(implementation: tuple[Any, Any], sizes: list[int], repeats: int, spaces: int,
            reference: bool = False) -> dict[str, Any]:
    parser_cls, parse_fn = implementation
    rows = {f"{kind}/{size}/{chunk}": time_feeds(parser_cls, TEMPLATES[kind], make_output(kind, size), chunk,
                                                  repeats if size < 100_000 else 2)
            for kind in TEMPLATES for size in sizes for chunk in (1, 4)}
    lengths = RUN_LENGTHS[: 2 if reference else None]
    runs = {f"{case}/{length}": time_run_then_text(parser_cls, case, length, whole=reference)
            for case in RUN_CASES for length in lengths}
    return {"rows": rows, "whitespace": time_whitespace_run(parser_cls, spaces),
            "one_shot": time_one_shot(parse_fn, ONE_SHOT_OUTPUTS, repeats), "runs": runs}


def reference_parser() -> tuple[Any, Any]:
    from transformers.utils.chat_parsing import ResponseParser  # the `bench` extra
    from transformers.utils.chat_parsing.response_parser import parse_response

    return ResponseParser, parse_response


def measure_reference(args: argparse.Namespace, sizes: list[int]) -> dict[str, Any] | None:
    if importlib.util.find_spec("transformers") is not None:
        return run_all(reference_parser(), sizes, args.repeats, args.spaces, reference=True)
    python = args.reference_python
    if not python or not Path(python).exists():
        print("reference not measured: install the bench extra or pass --reference-python", file=sys.stderr)
        return None
    command = [python, __file__, "--worker", "--sizes", ",".join(map(str, sizes)),
               "--repeats", str(args.repeats), "--spaces", str(args.spaces)]
    env = {**os.environ, "TRANSFORMERS_VERBOSITY": "error"}
    output = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return result


def render(ours: dict[str, Any], ref: dict[str, Any] | None, sizes: list[int], spaces: int) -> str:
    """The Markdown of the Decoding section."""
    lines = [
        "## Decoding",
        "",
        "Written by `python bench/bench_parse.py` (do not edit by hand). Cost of one "
        "`ResponseParser.feed` call while an output is streamed, best of several runs, same "
        "process and machine for both implementations. Outputs are a quarter reasoning, then answer "
        "text with a tool call every ~2,000 characters.",
        "",
        f"Machine: Python {platform.python_version()} on {platform.machine()}"
        f" ({os.cpu_count()} CPUs). chatcodec keeps only the unresolved tail of the buffer, so its "
        "per-chunk cost does not depend on how much was generated before; the reference re-joins "
        "its whole buffer on every feed.",
        "",
        "| template | chars | chunk | chatcodec µs/chunk | reference µs/chunk | speed-up | chatcodec vs 9k |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, value in ours["rows"].items():
        kind, size, chunk = key.split("/")
        base = ours["rows"][f"{kind}/{sizes[0]}/{chunk}"]
        ref_value = ref["rows"].get(key) if ref else None
        ref_text = f"{ref_value:.2f}" if ref_value else "n/a"
        ratio = f"{ref_value / value:.1f}x" if ref_value else "n/a"
        lines.append(f"| {kind} | {int(size):,} | {chunk} | {value:.2f} | {ref_text} | {ratio} | "
                     f"{value / base:.2f}x |")
    lines += ["", _targets(ours, ref, sizes), "",
              f"Whitespace run: {spaces:,} spaces streamed one per feed into a region closed by "
              "`\\s*</think>`: "
              f"chatcodec {ours['whitespace']:.3f} s"
              + (f", reference {ref['whitespace']:.2f} s." if ref else "."),
              "",
              f"One-shot: `parse_response(text, template_dict, prefix=\"\")` over {ONE_SHOT_OUTPUTS:,} short "
              "outputs (the regex template passed as a dict every call; chatcodec compiles an equal dict "
              f"once, which alone costs {ours['compile_ms']:.1f} ms): "
              f"chatcodec {ours['one_shot']:.1f} µs/output"
              + (f", reference {ref['one_shot']:.1f} µs/output ({ref['one_shot'] / ours['one_shot']:.1f}x)."
                 if ref else ".")]
    lines += ["", "Long runs (QA rounds 2 and 3): a run of N characters while a whitespace-led "
              "delimiter is watched or a regex match is pending, then `hello` and `finalize`. "
              "chatcodec: seconds for the whole stream, one character per feed (linear: doubling N "
              "doubles it). Reference: seconds for `hello` and `finalize` alone after the run in one "
              "feed, a lower bound on every one of its feeds (streaming the run would cost it hours).",
              "",
              "| case | " + " | ".join(f"N={n:,}" for n in RUN_LENGTHS) + " | 80k / 10k |",
              "|---|" + "---:|" * (len(RUN_LENGTHS) + 1)]
    for case in RUN_CASES:
        values = [ours["runs"][f"{case}/{n}"] for n in RUN_LENGTHS]
        growth = values[-1] / max(values[0], 1e-6)
        cells = " | ".join(f"{v:.4f}" for v in values)
        lines.append(f"| chatcodec: {case} | {cells} | {growth:.1f}x |")
        if ref and "runs" in ref:
            ref_values = [ref["runs"].get(f"{case}/{n}") for n in RUN_LENGTHS]
            lines.append(f"| reference: {case} | " + " | ".join("n/a" if v is None else f"{v:.4f}"
                                                                 for v in ref_values) + " | |")
    return "\n".join(lines) + "\n"


def _targets(ours: dict[str, Any], ref: dict[str, Any] | None, sizes: list[int]) -> str:
    small, large = sizes[0], sizes[-1]
    growth = max(ours["rows"][f"{k}/{large}/{c}"] / ours["rows"][f"{k}/{small}/{c}"]
                 for k in TEMPLATES for c in (1, 4))
    parts = [f"Largest per-chunk growth from {small:,} to {large:,} chars: {growth:.2f}x (target <= 1.3x)."]
    if ref:
        def worst(size: int) -> float:
            return min(ref["rows"][f"{k}/{size}/{c}"] / ours["rows"][f"{k}/{size}/{c}"]
                       for k in TEMPLATES for c in (1, 4))
        parts.append(f"Smallest speed-up at {large:,} chars: {worst(large):.1f}x (target >= 5x); "
                     f"at {small:,} chars: {worst(small):.1f}x (target >= 2x).")
    return " ".join(parts)




def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (no target check)")
    parser.add_argument("--sizes", help="comma-separated output lengths (default 9000,64000,515000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement below 100k chars")
    parser.add_argument("--spaces", type=int, default=40_000, help="length of the whitespace run")
    parser.add_argument("--reference-python", default="/tmp/refenv/bin/python",
                        help="interpreter with transformers, used when this one lacks it")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave the docs alone")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    default = "9000,64000" if args.quick else "9000,64000,515000"
    sizes = [int(s) for s in (args.sizes or default).split(",")]
    if args.worker:
        print(json.dumps(run_all(reference_parser(), sizes, args.repeats, args.spaces, reference=True)))
        return 0
    sys.path.insert(0, str(ROOT / "src"))
    from chatcodec import ResponseParser, load_response_template, parse_response

    ours = run_all((ResponseParser, parse_response), sizes, args.repeats, args.spaces)
    ours["compile_ms"] = time_compile(load_response_template)
    ref = measure_reference(args, sizes)
    section = render(ours, ref, sizes, args.spaces)
    print(section)
    if not args.no_write:
        write_section("bench_parse", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
