"""Render each corpus chat template over a 200-message conversation: chatcodec vs the reference.

Run in an environment with both chatcodec and the reference installed (``pip install -e '.[bench]'``):

    python bench/bench_render.py [--messages 200] [--repeat 7] [--write docs/performance.md]

Both sides render the same conversation with the same special tokens, in the same process, with
compiled templates cached (each side's cache is warmed first), alternating runs. For each template
the script prints the best time per render of each side and the ratio chatcodec / reference
(< 1 is faster), and checks that both produced the same text (or both raised). With ``--write``
it replaces the "Encoding" section of the performance document with the table.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
SECTION = "## Encoding: chat-template rendering"


def conversation(n: int) -> list[dict[str, Any]]:
    """``n`` messages alternating user / assistant, ending with a user message."""
    messages = []
    for i in range(n):
        if i % 2 == 0:
            messages.append({"role": "user", "content": f"Question {i}: what is {i} + {i}? Explain briefly."})
        else:
            messages.append({"role": "assistant", "content": f"The answer is {2 * i - 2}. " * 3})
    if messages[-1]["role"] != "user":
        messages.pop()
    return messages


def special_tokens() -> dict[str, dict[str, str]]:
    manifest = json.loads((CORPUS / "chat_templates" / "MANIFEST.json").read_text(encoding="utf-8"))
    return {entry["file"]: dict(entry.get("special_tokens") or {}) for entry in manifest}


def extra_kwargs() -> dict[str, dict[str, Any]]:
    """Template variables some templates cannot render without (taken from the golden renders)."""
    extra: dict[str, dict[str, Any]] = {}
    for line in (CORPUS / "golden_renders.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        extra.setdefault(record["template"], record["kwargs"])
    return extra


def run(fn: Any) -> Any:
    try:
        return fn()
    except Exception as error:  # both sides may reject the conversation; compare that too
        return error


def interleaved(ours: Any, theirs: Any, repeat: int) -> tuple[float, float, Any, Any]:
    """Best time of each side over ``repeat`` alternating runs (alternating spreads machine noise
    evenly; the minimum is the least noisy estimate of the cost)."""
    best = [float("inf"), float("inf")]
    results: list[Any] = [None, None]
    for _ in range(repeat):
        for index, fn in enumerate((ours, theirs)):
            start = time.perf_counter()
            results[index] = run(fn)
            best[index] = min(best[index], time.perf_counter() - start)
    return best[0], best[1], results[0], results[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--write", metavar="FILE", help="replace the encoding section of this markdown file")
    args = parser.parse_args()

    import transformers
    from transformers.utils import chat_template_utils as reference

    import chatcodec
    from chatcodec.chat_templates.render import render_chat_template

    messages = conversation(args.messages)
    kwargs_by_template = extra_kwargs()
    rows = []
    for file in sorted((CORPUS / "chat_templates").glob("*.jinja")):
        template = file.read_text(encoding="utf-8")
        kwargs = kwargs_by_template.get(file.name, special_tokens().get(file.name, {}))

        def ours(template: str = template, kwargs: dict[str, Any] = kwargs) -> str:
            return render_chat_template(template, messages, add_generation_prompt=True, **kwargs)

        def theirs(template: str = template, kwargs: dict[str, Any] = kwargs) -> str:
            chat = [{k: v for k, v in m.items() if v is not None} for m in messages]
            rendered, _ = reference.render_jinja_template(
                conversations=[chat], chat_template=template, add_generation_prompt=True,
                **copy.deepcopy(kwargs))
            return rendered[0]

        run(ours)
        run(theirs)
        ours_time, theirs_time, ours_result, theirs_result = interleaved(ours, theirs, args.repeat)
        same = (ours_result == theirs_result if isinstance(ours_result, str)
                else isinstance(theirs_result, Exception) and not isinstance(theirs_result, str))
        rows.append((file.stem, ours_time, theirs_time, same, isinstance(ours_result, Exception)))

    header = (f"{SECTION}\n\nEach corpus chat template rendering a {args.messages}-message conversation "
              f"(user/assistant, generation prompt), best of {args.repeat} alternating runs after a "
              f"warm-up, chatcodec {chatcodec.__version__} vs transformers {transformers.__version__} in "
              "the same process "
              f"(Python {sys.version.split()[0]}). Ratio = chatcodec / reference (below 1 is faster). "
              "Written by `python bench/bench_render.py --write docs/performance.md` (needs the `bench` "
              "extra, i.e. transformers, installed beside chatcodec).\n\n")
    table = ["| template | chatcodec ms | reference ms | ratio | same output |", "|---|---:|---:|---:|---|"]
    for name, ours_time, theirs_time, same, failed in rows:
        note = "yes" + (" (both raise)" if failed else "") if same else "**NO**"
        table.append(f"| {name} | {ours_time * 1e3:.2f} | {theirs_time * 1e3:.2f} | "
                     f"{ours_time / theirs_time:.2f} | {note} |")
    ratios = [ours_time / theirs_time for _, ours_time, theirs_time, _, _ in rows]
    summary = (f"\nMedian ratio {statistics.median(ratios):.2f}, worst {max(ratios):.2f}; "
               f"{sum(r[3] for r in rows)}/{len(rows)} templates give the same result.\n")
    text = header + "\n".join(table) + "\n" + summary
    print(text)
    if args.write:
        _write_section(Path(args.write), text)
    return 0 if all(r[3] for r in rows) else 1


def _write_section(path: Path, section: str) -> None:
    current = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n"
    # the section runs to the next heading or marker line (bench_parse.py owns the text between its
    # <!-- bench_parse:start/end --> markers), or to the end of the file
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |^<!-- |\Z)", re.S | re.M)
    if pattern.search(current):
        updated = pattern.sub(lambda _: section + "\n", current)
    else:
        updated = current.rstrip("\n") + "\n\n" + section
    path.write_text(updated, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
