"""Linearity on hostile outputs: every bundled profile, every adversarial input, at two sizes.

The inputs are those of ``tests/profiles/test_hostile_outputs.py`` (``tests/profiles/adversarial.py``:
runs of one character, delimiters repeated whole or cut, deep nesting, huge numbers, lone
surrogates, NUL, garbled real outputs), built at a small and a large size (4 times larger by
default). Each is parsed one-shot (``parse_response``) and streamed in 4-character chunks
(``ResponseParser.feed``), with ``errors="keep"``. A linear parser takes about 4 times longer on
the larger input; the script prints the ratio and marks those above ``--worst`` (default 6).

With ``--views``, the command line's streaming views (``chatcodec parse --stream``: the plain
view, and the live rich view a terminal gets) are timed instead, on qwen3 output that is a long run
of prose after a whitespace run, at the two sizes.

Usage::

    python bench/bench_bounds.py [--sizes 20000,80000] [--profiles gpt_oss,functionary_v3_1]
                                 [--inputs "run of ' '"] [--chunk 4] [--worst 6]
    python bench/bench_bounds.py --sizes 1000000,10000000 --profiles gpt_oss --inputs "run of ' '"
    python bench/bench_bounds.py --views --sizes 2500000,10000000

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


def viewed(text: str, rich: bool) -> float:
    """CPU seconds of ``chatcodec parse qwen3 - --no-prefix --stream`` on ``text``, output discarded."""
    import io

    from chatcodec.cli.view import PlainView, RichView, chunks, play
    from chatcodec.model.codec import ChatCodec

    class Null(io.StringIO):
        def write(self, text: str) -> int:
            return len(text)

    if rich:
        from rich.console import Console

        view: Any = RichView(Console(file=Null(), force_terminal=True, width=100, color_system=None))
    else:
        view = PlainView(Null())
    parser = ChatCodec.from_pretrained("qwen3").get_response_parser(prefix="")
    start = now()
    play(parser, chunks(text, 4), view)
    return now() - start


def views(small: int, large: int) -> int:
    """Time both views at the two sizes; 1 when one grows 1.5 times faster than the text."""
    print(f"# {machine()}; sizes {small:,} and {large:,}; CPU seconds")
    slow = 0
    for rich in (False, True):
        texts = [" " * 1000 + "\n" + ("word " * (size // 5))[:size] for size in (small, large)]
        times = [viewed(text, rich) for text in texts]
        ratio = times[1] / max(times[0], 1e-4)
        slow += ratio > 1.5 * large / small
        print(f"{'rich' if rich else 'plain'} view: {times[0]:.2f} s, {times[1]:.2f} s "
              f"(ratio {ratio:.1f} for {large / small:.0f}x the text)")
    return 1 if slow else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,80000", help="the small and the large size, in characters")
    parser.add_argument("--profiles", default="", help="comma-separated profile names (default: all)")
    parser.add_argument("--inputs", default="", help="only the inputs whose description contains this")
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--worst", type=float, default=6.0, help="the largest ratio still called linear")
    parser.add_argument("--views", action="store_true", help="time the command line's streaming views")
    args = parser.parse_args(argv)
    if args.views:
        small, large = (int(size) for size in args.sizes.split(","))
        return views(small, large)
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
