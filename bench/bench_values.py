"""Cost of ``value_deltas=True``: per-chunk time of a tool-heavy stream with and without it.

For each bundled profile measured (one per content parser that has a value scanner), a
tool-heavy output (a short answer, then tool calls whose arguments hold long strings, numbers,
lists and nested objects) is streamed in 1- and 4-character chunks through
``ResponseParser(..., value_deltas=False)`` and ``(..., value_deltas=True)``; the table gives the
best per-chunk ``feed`` time of each and their ratio. It also checks linear time (the per-chunk
cost with ``value_deltas`` at two output sizes) and reports, for a 2,000-character string argument,
how many characters after its first one the first ``text`` delta arrived (0: in the same feed).

Speed is measured, never asserted in tests (STYLE: ratios in the same run). Usage::

    python bench/bench_values.py            # print the table
    python bench/bench_values.py --quick    # fewer repeats
    python bench/bench_values.py --plain    # only value_deltas=False (compare branches: run it
                                            # with PYTHONPATH pointing at each checkout's src)
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

from chatcodec import ResponseParser, profiles

_ANSWER = "Let me look that up for you; one moment while I call the tools. "
_LONG = "".join(f"Line {n}: the quick brown fox jumps over the lazy dog. " for n in range(40))

#: profile -> how it writes one call (name, arguments as a JSON object) and the region around calls.
def _json_call(name: str, args: dict[str, Any]) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": args})}\n</tool_call>\n'


def _xml_call(name: str, args: dict[str, Any]) -> str:
    parameters = "".join(
        f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value)}\n</parameter>\n"
        for key, value in args.items())
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>\n"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _dsml_call(name: str, args: dict[str, Any]) -> str:
    """DeepSeek V3.2: a regex whose value group stands in a ``string="true"`` / ``"false"`` alternation."""
    dsml = "｜DSML｜"
    parameters = "".join(
        f'<{dsml}parameter name="{key}" string="{str(isinstance(value, str)).lower()}">{_text(value)}'
        f"</{dsml}parameter>\n" for key, value in args.items())
    return f'<{dsml}function_calls>\n<{dsml}invoke name="{name}">\n{parameters}</{dsml}invoke>\n' \
        f"</{dsml}function_calls>\n"


def _minicpm5_call(name: str, args: dict[str, Any]) -> str:
    """MiniCPM5: plain ``<param>`` values (the text branch of a CDATA-or-text alternation)."""
    parameters = "".join(f'<param name="{key}">{_text(value)}</param>' for key, value in args.items())
    return f'<function name="{name}">{parameters}</function>\n'


def _pythonic_json_call(name: str, args: dict[str, Any]) -> str:
    """LFM2 writing a JSON call in its Python-call markers (``x-first``: the parsers agree)."""
    return f'<|tool_call_start|>[{json.dumps({"name": name, "arguments": args})}]<|tool_call_end|>\n'


_CALLS: dict[str, Any] = {"qwen3": _json_call, "hermes": _json_call, "qwen3_coder": _xml_call,
                          "deepseek_v32": _dsml_call, "minicpm5": _minicpm5_call, "lfm2": _pythonic_json_call}


def _arguments(n: int) -> dict[str, Any]:
    return {"path": f"notes/{n}.txt", "content": _LONG, "line": n, "tags": ["a", "b"],
            "mode": {"append": True}}


def make_output(profile: str, calls: int) -> str:
    """A tool-heavy output: a short answer, then ``calls`` calls with long string arguments."""
    write = _CALLS[profile]
    return _ANSWER + "".join(write("write_file", _arguments(n)) for n in range(calls))


def time_feeds(template: Any, text: str, chunk: int, value_deltas: bool, repeats: int) -> float:
    """Best per-chunk ``feed`` time in microseconds."""
    chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    best = float("inf")
    for _ in range(repeats):
        parser = ResponseParser(template, prefix="", value_deltas=value_deltas) if value_deltas else \
            ResponseParser(template, prefix="")
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


def calls_per_chunk(template: Any, text: str, chunk: int, value_deltas: bool) -> float:
    """Python function calls per ``feed`` (cProfile's count): a measure the machine's load cannot move."""
    import cProfile
    import pstats

    chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    parser = ResponseParser(template, prefix="", value_deltas=value_deltas)
    profile = cProfile.Profile()
    profile.enable()
    for piece in chunks:
        parser.feed(piece)
    profile.disable()
    return float(pstats.Stats(profile).total_calls) / len(chunks)  # type: ignore[attr-defined]


def first_fragment_lag(template: Any, text: str, chunk: int) -> int:
    """Characters between the first character of the ``content`` argument and its first text delta."""
    start = text.index("Line 0")
    parser = ResponseParser(template, prefix="", value_deltas=True)
    for at in range(0, len(text), chunk):
        for event in parser.feed(text[at : at + chunk]):
            if event["type"] == "region_value" and event["op"] == "text" and event["path"][-1] == "content":
                return max(0, at - start)
    return -1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat per measurement")
    parser.add_argument("--plain", action="store_true", help="only value_deltas=False")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 3
    print("| profile | calls | chars | chunk | plain µs/chunk | value_deltas µs/chunk | ratio "
          "| Python calls/chunk (plain, value_deltas) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in _CALLS:
        template = profiles.load(name).response_template
        for calls in (4, 32):
            text = make_output(name, calls)
            for chunk in (1, 4):
                plain = time_feeds(template, text, chunk, False, repeats)
                if args.plain:
                    print(f"| {name} | {calls} | {len(text):,} | {chunk} | {plain:.2f} | | |")
                    continue
                values = time_feeds(template, text, chunk, True, repeats)
                counted = (calls_per_chunk(template, text, chunk, False),
                           calls_per_chunk(template, text, chunk, True))
                print(f"| {name} | {calls} | {len(text):,} | {chunk} | {plain:.2f} | {values:.2f} | "
                      f"{values / plain:.2f}x | {counted[0]:.1f}, {counted[1]:.1f} |")
    if not args.plain:
        for name in _CALLS:
            template = profiles.load(name).response_template
            lag = first_fragment_lag(template, make_output(name, 1), 4)
            print(f"\n{name}: first text delta of a 2,000-character argument {lag} characters after "
                  "its start")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
