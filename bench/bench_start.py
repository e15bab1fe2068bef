"""Start-up: a new process that imports, loads a model directory, renders a prompt and parses an output.

A script, a CLI call or a worker that starts pays this once. Each measurement is a new Python
process (bytecode cached: every probe runs once before timing); its CPU time (user + system, from
``os.wait4``, so a shared machine's waiting is not counted) and its peak resident memory are read
when it ends. chatcodec (``ChatCodec.from_pretrained`` + ``apply_chat_template`` + ``parse_response``)
against the reference (transformers 5.24's ``AutoTokenizer.from_pretrained`` + the same two calls),
on the same directory (the DeepSeek ``tokenizer.json``, Qwen3-0.6B's chat template from the corpus,
the Qwen3-style response template). Then ``chatcodec parse TEMPLATE OUTPUT`` (the CLI on a small
output, through the console script pip installs and through ``python -m chatcodec``) against a bare
interpreter (``python -c pass``: the same interpreter, flags, site and environment as every other
probe, so the venv's ``.pth`` files count on both sides), with three floors beside it: importing
``regex`` alone, the standard modules ``chatcodec parse`` with a template file imports (argparse and
json, with ``re``), and both. Runs alternate; the minimum is kept.

With ``--profiles``: what loading each bundled profile's response template costs (a server loads
one when it starts), each in a new process, timed around ``load_response_template`` alone (CPU
time; the imports and reading the profile come before the clock), profiles and checkouts
alternating, the minimum kept.

Usage::

    python bench/bench_start.py [--repeats 7] [--write] [--baseline SRC]
    python bench/bench_start.py --profiles [--repeats 3] [--write] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from common import (
    CORPUS,
    ROOT,
    machine,
    publish,
    reference_available,
    reference_version,
)

MESSAGES = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the weather in Paris?"}]
OUTPUT = ('<think>\nThe user asks about the weather.\n</think>\n\nLet me check.\n<tool_call>\n'
          '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>')

OURS = """
import json, sys
from chatcodec import ChatCodec
codec = ChatCodec.from_pretrained(sys.argv[1])
messages, output = json.loads(sys.argv[2]), sys.argv[3]
prompt = codec.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
message = codec.parse_response(output, prefix=prompt)
assert message["tool_calls"][0]["function"]["name"] == "get_weather", message
"""

#: What the ``chatcodec`` command runs: the console script pip writes for ``chatcodec.cli:main``.
CONSOLE_SCRIPT = """
import re, sys
from chatcodec.cli import main
sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
sys.exit(main())
"""

#: The standard modules ``chatcodec parse TEMPLATE_FILE`` imports (``re`` comes with both).
STANDARD_IMPORTS = "import argparse, json"

#: What ``chatcodec parse TEMPLATE_FILE`` imports before chatcodec's own code: its floor.
FLOOR_IMPORTS = STANDARD_IMPORTS + ", regex"

#: One bundled profile's response-template load in a new process: CPU seconds of the load alone.
PROFILE_LOAD = """
import sys, time
from chatcodec import profiles
from chatcodec.response_templates.template import load_response_template
spec = profiles.load(sys.argv[1]).response_template
start = time.process_time()
load_response_template(spec)
print(time.process_time() - start)
"""

REFERENCE = """
import json, os, sys
os.environ["TRANSFORMERS_VERBOSITY"] = "error"
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
messages, output = json.loads(sys.argv[2]), sys.argv[3]
prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
message = tokenizer.parse_response(output, prefix=prompt)
assert message["tool_calls"][0]["function"]["name"] == "get_weather", message
"""


def model_directory() -> Path:
    """The DeepSeek tokenizer, Qwen3-0.6B's chat template and the Qwen3-style response template."""
    from bench_ids import deepseek_directory

    directory = deepseek_directory()
    config_path = directory / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    template = CORPUS / "chat_templates" / "Qwen--Qwen3-0.6B.jinja"
    config["chat_template"] = template.read_text(encoding="utf-8")
    config["eos_token"] = "<|im_end|>"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    return directory


#: Starts ``argv[1:]`` from a small process (``python -S``, nothing imported) and prints its CPU time
#: and peak memory. Linux keeps a process's peak resident size across fork and exec, so a probe
#: started by this script (which holds the bench's own modules) would report at least this
#: script's size: a bare interpreter measured ~4 MiB too big, and every lighter probe the same.
LAUNCHER = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def run(command: list[str], source: Path = ROOT / "src") -> tuple[float, float]:
    """CPU seconds (user + system) and peak resident MiB of one new process running ``command`` with
    chatcodec imported from ``source`` (this checkout's ``src`` unless a baseline's), started by
    :data:`LAUNCHER` so that its peak memory is its own."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up run writes the bytecode the others read
    result = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *command], capture_output=True,
                            text=True, env=env, check=False)
    code, seconds, peak = result.stdout.split() if result.returncode == 0 else ("-1", "0", "0")
    if int(code) != 0:
        raise SystemExit(f"{command[:3]} failed:\n{result.stderr}")
    return float(seconds), int(peak) / 1024


def profile_load(name: str, source: Path) -> float:
    """CPU milliseconds of loading the bundled profile ``name``'s response template in a new process,
    with chatcodec imported from ``source``."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    result = subprocess.run([sys.executable, "-c", PROFILE_LOAD, name], capture_output=True, text=True,
                            env=env, check=False)
    if result.returncode != 0:
        raise SystemExit(f"loading {name} from {source} failed:\n{result.stderr}")
    return float(result.stdout.split()[-1]) * 1000


def profiles_main(repeats: int, write: bool, baseline: Path | None) -> int:
    """Each bundled profile's response-template load, in new processes (``--profiles``)."""
    sys.path.insert(0, str(ROOT / "src"))
    from chatcodec import profiles

    sources = {"chatcodec": ROOT / "src"}
    if baseline is not None:
        sources["baseline"] = baseline.resolve()
    names = profiles.names()
    for name in names:  # bytecode cached
        for source in sources.values():
            profile_load(name, source)
    best = {(name, side): float("inf") for name in names for side in sources}
    for _ in range(repeats):
        for name in names:
            for side, source in sources.items():
                best[name, side] = min(best[name, side], profile_load(name, source))
    sides = list(sources)
    lines = [
        "## Start-up: loading each bundled profile",
        "",
        "Written by `python bench/bench_start.py --profiles --write`. Each bundled profile's response "
        "template loaded (`load_response_template`) in a new process, bytecode cached, CPU ms of the load "
        "alone (the imports and reading the profile come before the clock), best of "
        f"{repeats} alternating runs" + (" beside the baseline checkout's" if baseline else "") + ".",
        "",
        machine() + ".",
        "",
        "| profile | " + " | ".join(f"{side} ms" for side in sides) + (" | ratio |" if baseline else " |"),
        "|---|" + "---:|" * (len(sides) + (1 if baseline else 0)),
    ]
    for name in names:
        row = [f"{best[name, side]:.1f}" for side in sides]
        if baseline is not None:
            row.append(f"{best[name, 'baseline'] / best[name, 'chatcodec']:.2f}x")
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    summary = []
    for side in sides:
        times = sorted(best[name, side] for name in names)
        worst = max(names, key=lambda name: best[name, side])
        summary.append(f"{side}: all {len(names)} together {sum(times):.0f} ms, median "
                       f"{times[len(times) // 2]:.1f} ms, worst {worst} {best[worst, side]:.1f} ms")
    lines += ["", "; ".join(summary) + "."]
    return publish("bench_start_profiles", lines, write)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="replace the section of docs/performance.md")
    parser.add_argument("--baseline", type=Path, help="another checkout's src folder (e.g. `git archive "
                        "COMMIT src` unpacked): its cold start and `chatcodec parse` run interleaved too")
    parser.add_argument("--profiles", action="store_true",
                        help="time each bundled profile's response-template load instead")
    args = parser.parse_args(argv)
    if args.profiles:
        return profiles_main(args.repeats, args.write, args.baseline)
    directory = model_directory()
    example = ROOT / "examples" / "qwen3-coder"
    data = [str(directory), json.dumps(MESSAGES), OUTPUT]
    parse_args = ["parse", str(example / "response_template.json"), str(example / "output.txt"),
                  "--no-prefix"]
    commands = {
        "chatcodec": [sys.executable, "-c", OURS, *data],
        "bare interpreter": [sys.executable, "-c", "pass"],
        "chatcodec parse": [sys.executable, "-c", CONSOLE_SCRIPT, *parse_args],
        "python -m chatcodec parse": [sys.executable, "-m", "chatcodec", *parse_args],
        "floor: import regex": [sys.executable, "-c", "import regex"],
        "floor: import argparse, json": [sys.executable, "-c", STANDARD_IMPORTS],
        "floor: import argparse, json, regex": [sys.executable, "-c", FLOOR_IMPORTS],
    }
    if reference_available():
        commands["reference"] = [sys.executable, "-c", REFERENCE, *data]
    sources = dict.fromkeys(commands, ROOT / "src")
    if args.baseline is not None:
        for name in ("chatcodec", "chatcodec parse"):
            commands[f"{name} (baseline)"] = commands[name]
            sources[f"{name} (baseline)"] = args.baseline.resolve()
    for name, command in commands.items():  # bytecode cached, files in the page cache
        run(command, sources[name])
    best = {name: (float("inf"), float("inf")) for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            seconds, mib = run(command, sources[name])
            best[name] = (min(best[name][0], seconds), min(best[name][1], mib))
    shutil.rmtree(directory, ignore_errors=True)
    ours, bare, cli = best["chatcodec"], best["bare interpreter"], best["chatcodec parse"]
    module_cli = best["python -m chatcodec parse"]
    floor_regex, floor = best["floor: import regex"], best["floor: import argparse, json, regex"]
    standard = best["floor: import argparse, json"]
    ref = best.get("reference")
    ref_name = f"transformers {reference_version()}" if ref else "not installed"
    lines = [
        "## Start-up",
        "",
        "Written by `python bench/bench_start.py --write`. Each a new process, bytecode cached, CPU time "
        "(user + system) and peak resident memory read when it ends, best of alternating runs. Cold start: "
        "import, load a model directory (DeepSeek `tokenizer.json`, Qwen3-0.6B's chat template, the "
        "Qwen3-style response template), render a prompt, parse a short output; chatcodec "
        f"(`ChatCodec.from_pretrained`) against the reference ({ref_name}, `AutoTokenizer.from_pretrained`). "
        "`chatcodec parse` on a small output (`examples/qwen3-coder`; the console script pip installs, and "
        "`python -m chatcodec`) against a bare interpreter (`python -c pass`).",
        "",
        machine() + ".",
        "",
        "| process | CPU s | peak MiB |",
        "|---|---:|---:|",
    ]
    for name, (seconds, mib) in best.items():
        lines.append(f"| {name} | {seconds:.3f} | {mib:.1f} |")
    lines += [
        "",
        f"Cold start: {ours[0]:.3f} s and {ours[1]:.1f} MiB (targets 0.15 s, 30 MiB)"
        + (f"; the reference is {ref[0] / ours[0]:.1f}x slower (target at least 8x) and holds "
           f"{ref[1]:.1f} MiB." if ref else "."),
        f"`chatcodec parse`: {cli[0] / bare[0]:.1f}x a bare interpreter (target at most 3x); "
        f"`python -m chatcodec parse` (which imports runpy first) {module_cli[0] / bare[0]:.1f}x.",
        f"Floors: importing `regex` alone is {floor_regex[0] / bare[0]:.1f}x a bare interpreter, the "
        "standard modules `chatcodec parse` imports (argparse, json, with `re`) "
        f"{standard[0] / bare[0]:.1f}x, and both {floor[0] / bare[0]:.1f}x, before any of chatcodec's "
        "code runs.",
    ]
    return publish("bench_start", lines, args.write)


if __name__ == "__main__":
    raise SystemExit(main())
