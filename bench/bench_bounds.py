"""Linearity on hostile outputs: every bundled profile, every adversarial input, at two sizes.

The inputs are those of ``tests/profiles/test_hostile_outputs.py`` (``tests/profiles/adversarial.py``:
runs of one character, delimiters repeated whole or cut, deep nesting, huge numbers, lone
surrogates, NUL, garbled real outputs), built at a small and a large size (4 times larger by
default). Each is parsed one-shot (``parse_response``) and streamed in 4-character chunks
(``ResponseParser.feed``), with ``errors="keep"``. A linear parser takes about 4 times longer on
the larger input; the script prints the ratio and marks those above ``--worst`` (default 6).

Usage::

    python bench/bench_bounds.py [--sizes 20000,80000] [--profiles gpt_oss,functionary_v3_1]
                                 [--inputs "run of ' '"] [--chunk 4] [--worst 6]
    python bench/bench_bounds.py --sizes 1000000,10000000 --profiles gpt_oss --inputs "run of ' '"

Exit status 1 when some input grows faster than ``--worst``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from common import ROOT, machine, now

sys.path.insert(0, str(ROOT))


def one_shot(template: Any, prompt: str, text: str) -> float:
    from chatcodec import parse_response

    start = now()
    parse_response(text, template, prefix=prompt, errors="keep")
    return now() - start


def streamed(template: Any, prompt: str, text: str, chunk: int) -> float:
    from chatcodec import ResponseParser

    start = now()
    parser = ResponseParser(template, prefix=prompt, errors="keep")
    feed = parser.feed
    for index in range(0, len(text), chunk):
        feed(text[index : index + chunk])
    parser.finalize()
    return now() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,80000", help="the small and the large size, in characters")
    parser.add_argument("--profiles", default="", help="comma-separated profile names (default: all)")
    parser.add_argument("--inputs", default="", help="only the inputs whose description contains this")
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--worst", type=float, default=6.0, help="the largest ratio still called linear")
    args = parser.parse_args(argv)
    from tests.profiles.adversarial import adversarial

    from chatcodec import profiles

    small, large = (int(size) for size in args.sizes.split(","))
    names = args.profiles.split(",") if args.profiles else profiles.names()
    print(f"# {machine()}; sizes {small:,} and {large:,}; CPU seconds; ratio = large / small")
    print(f"{'profile':18} {'input':40} {'one-shot':>18} {'ratio':>6} {'streamed':>18} {'ratio':>6}")
    worst: list[str] = []
    for name in names:
        profile = profiles.load(name)
        template, prompt = profile.response_template, profile.generation_prompts[0]
        inputs_small, inputs_large = adversarial(name, small), adversarial(name, large)
        for description, text in inputs_small.items():
            if args.inputs not in description:
                continue
            big = inputs_large[description]
            times = [one_shot(template, prompt, text), one_shot(template, prompt, big),
                     streamed(template, prompt, text, args.chunk),
                     streamed(template, prompt, big, args.chunk)]
            ratios = [times[1] / max(times[0], 1e-4), times[3] / max(times[2], 1e-4)]
            slow = any(ratio > args.worst and later > 0.05
                       for ratio, later in zip(ratios, times[1::2], strict=True))
            mark = "  <-- superlinear" if slow else ""
            if slow:
                worst.append(f"{name}: {description}")
            print(f"{name:18} {description[:40]:40} {times[0]:8.3f} {times[1]:8.3f} {ratios[0]:6.1f} "
                  f"{times[2]:8.3f} {times[3]:8.3f} {ratios[1]:6.1f}{mark}", flush=True)
    print(f"# {len(worst)} superlinear: {worst}")
    return 1 if worst else 0


if __name__ == "__main__":
    raise SystemExit(main())
