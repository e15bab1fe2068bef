"""The parsing core's cost per delta on real outputs, streamed as the serving plugins run it.

Every corpus output (``../shared/corpus/peer_vectors.json``) of the measured families is fed one
token-ish piece at a time (a marker such as ``<｜tool▁sep｜>`` or ``</arg_key>``, a word with the
space before it, a whitespace run, one punctuation character) to
``ResponseParser(..., errors="keep", value_deltas=True, offsets=True)`` with the family's
generation prompt and the vector's tools; the time of all feeds and ``finalize`` (CPU time of the
thread) is divided by the deltas. Parsers are built outside the timing. Each measurement is the
least of its repeats (the machine is shared). The Python calls per delta (``cProfile``'s count, C
functions included, over one more pass with parsers built outside it) are exact, unlike the times.

A row ``FAMILY+long`` streams the family's first corpus output whose first call has a string
argument, with that argument replaced by a 2,042-character text (38 lines of prose, written as the
format writes it: JSON escapes, or raw inside an XML parameter): the case of a long argument (code,
a file), where most deltas only add text to one string (``scanners.text_run``'s short path).

``--base COMMIT`` measures the sources of ``COMMIT`` too (``git archive`` into a temporary
directory), alternating the two checkouts in fresh processes, and prints their ratio and whether
every event of every output is the same in both. Usage::

    python bench/bench_core_deltas.py                   # this checkout only
    python bench/bench_core_deltas.py --base 65e936b    # side by side with a commit
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import regex

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "peer_vectors.json"
#: The families whose core cost issue 9 follows, then two that meet the target, for reference.
FAMILIES = ("glm45", "deepseek_r1", "deepseek_v3", "deepseek_v31", "kimi_k2", "minimax_m2", "qwen3_coder",
            "qwen3", "hermes", "deepseek_v3+long", "kimi_k2+long", "minimax_m2+long", "qwen3_coder+long",
            "glm45+long", "hermes+long")
#: The long argument of the ``+long`` rows.
LONG = "".join(f"Line {n}: the quick brown fox jumps over the lazy dog.\n" for n in range(38))

#: A marker (``<｜…｜>``, ``<|…|>``, ``<tag>``), a word with its leading space, a whitespace run, a character.
_PIECE = regex.compile(r"<｜[^｜<>]*｜>|<\|[^|<>]*\|>|</?[A-Za-z_]+>| ?\w+|\s+|.", regex.DOTALL)


def pieces(text: str) -> list[str]:
    """``text`` cut as a tokenizer would, roughly: markers whole, words with their leading space."""
    found = _PIECE.findall(text)
    assert "".join(found) == text
    return found


def _vectors(family: str) -> list[dict[str, Any]]:
    vectors = json.loads(CORPUS.read_text(encoding="utf-8"))["vectors"]
    if family.endswith("+long"):
        return [next(long for vector in vectors if vector["family"] == family[:-5]
                     and (long := _long(vector)) is not None)]
    return [vector for vector in vectors if vector["family"] == family]


def _long(vector: dict[str, Any]) -> dict[str, Any] | None:
    """``vector`` with its first call's first string argument replaced by :data:`LONG` (see the
    module docstring), or ``None`` when it has no such argument."""
    calls = vector["expected"].get("tool_calls") or []
    arguments = calls[0].get("arguments") if calls else None
    value = next((value for value in arguments.values() if isinstance(value, str)), None) \
        if isinstance(arguments, dict) else None
    output = vector["output"]
    if not value:
        return None
    written = json.dumps(value)
    if written in output:
        return {**vector, "output": output.replace(written, json.dumps(LONG), 1)}
    if value in output:
        return {**vector, "output": output.replace(value, LONG, 1)}
    return None


def measure(families: tuple[str, ...], repeats: int) -> dict[str, dict[str, Any]]:
    """Per family: ``us`` (least µs per delta), ``calls`` (Python calls per delta), ``deltas`` and
    ``events`` (a digest of every event)."""
    import cProfile
    import pstats

    from chatcodec import ResponseParser, profiles

    result: dict[str, dict[str, Any]] = {}
    for family in families:
        profile = profiles.load(family.removesuffix("+long"))
        template = profile.response_template
        runs = [(profile.generation_prompt_ending(v["prompt_suffix"]), v["tools"], pieces(v["output"]))
                for v in _vectors(family)]
        deltas = sum(len(chunks) for _, _, chunks in runs)
        digest = hashlib.sha256()
        best = float("inf")
        for turn in range(repeats):
            parsers = [ResponseParser(template, prefix=prefix, tools=tools, errors="keep", value_deltas=True,
                                      offsets=True)
                       for prefix, tools, _ in runs]
            gc.collect()
            gc.disable()
            start = time.thread_time()
            events = [[parser.feed(piece) for piece in chunks] + [parser.finalize()]
                      for parser, (_, _, chunks) in zip(parsers, runs, strict=True)]
            elapsed = time.thread_time() - start
            gc.enable()
            best = min(best, elapsed)
            if turn == 0:
                digest.update(json.dumps(events, sort_keys=True, default=repr).encode())
        parsers = [ResponseParser(template, prefix=prefix, tools=tools, errors="keep", value_deltas=True,
                                  offsets=True)
                   for prefix, tools, _ in runs]
        profiler = cProfile.Profile()
        profiler.enable()
        for parser, (_, _, chunks) in zip(parsers, runs, strict=True):
            for piece in chunks:
                parser.feed(piece)
            parser.finalize()
        profiler.disable()
        calls = sum(row[1] for row in pstats.Stats(profiler).stats.values())  # type: ignore[attr-defined]
        result[family] = {"us": best / deltas * 1e6, "calls": calls / deltas, "deltas": deltas,
                          "events": digest.hexdigest()[:16]}
    return result


def _run(src: Path, families: tuple[str, ...], repeats: int) -> dict[str, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, __file__, "--child", "--repeats", str(repeats), *families]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def _base_sources(commit: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src"], check=True,
                             capture_output=True).stdout
    archive_path = into / "src.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", default=list(FAMILIES))
    parser.add_argument("--base", help="a commit to measure side by side")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per checkout")
    parser.add_argument("--repeats", type=int, default=20, help="passes over the outputs per round")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    families = tuple(args.families)
    if args.child:
        print(json.dumps(measure(families, args.repeats)))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_core_deltas_") as temp:
        checkouts = {"this": ROOT / "src"}
        if args.base:
            checkouts = {"base": _base_sources(args.base, Path(temp)), **checkouts}
        results: dict[str, dict[str, dict[str, Any]]] = {}
        for _ in range(args.rounds):
            for name, src in checkouts.items():
                for family, row in _run(src, families, args.repeats).items():
                    kept = results.setdefault(name, {}).setdefault(family, row)
                    kept["us"] = min(kept["us"], row["us"])
    this = results["this"]
    if args.base:
        base = results["base"]
        print(f"| family | deltas | {args.base} µs/delta | this µs/delta | ratio | Python calls/delta, "
              f"{args.base} → this | same events |")
        print("|---|---:|---:|---:|---:|---|---|")
        for family in families:
            old, new = base[family], this[family]
            same = "yes" if old["events"] == new["events"] else "NO"
            print(f"| {family} | {new['deltas']} | {old['us']:.2f} | {new['us']:.2f} | "
                  f"{new['us'] / old['us']:.2f} | {old['calls']:.1f} → {new['calls']:.1f} | {same} |")
    else:
        print("| family | deltas | µs/delta | Python calls/delta |")
        print("|---|---:|---:|---:|")
        for family in families:
            row = this[family]
            print(f"| {family} | {row['deltas']} | {row['us']:.2f} | {row['calls']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
