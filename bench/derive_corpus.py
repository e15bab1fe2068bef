"""Measure ``chatcodec derive`` on the corpus chat templates: verified templates, labels, time, peers.

Run from the repository root (the corpus is read from ``../shared/corpus`` or ``CHATCODEC_CORPUS``)::

    python bench/derive_corpus.py --part development      # while developing: never the held-out part
    python bench/derive_corpus.py --part held-out         # once, to report
    python bench/derive_corpus.py --part all --peers --write docs/derive.md

The corpus templates are split once and for all into a development part and a held-out part
(``tests/analysis/corpus_split.py``: sha256 of the file name, odd = held out). For each template
the script derives a response template with the special tokens and required variables the
corpus manifest gives the model (as a model directory would), and reports:

* a **tool template**: one whose round trip shows an assistant tool call (``one_call`` applicable);
* **verified**: every applicable capability verified (``DerivedTemplate.verified``);
* the label of each capability, and the seconds the derivation took.

With ``--peers``, every corpus template that a bundled profile is detected for is checked against
that family's peer vectors (``peer_vectors.json``): each output is parsed with the profile (its own
generation prompt, as ``tests/profiles/test_peer_vectors.py`` does) and with the derived template
(the template's own generation prompt, ending with the vector's ``prompt_suffix``), and the two
messages are compared as the corpus README says. A vector counts as **in dialect** when every
marker atom of its output is one the template renders (in a sentinel turn or its generation
prompt): outputs in a dialect the template never renders (gpt-oss channels, pythonic calls for a
JSON template) cannot be derived from it. With ``--write`` the tables replace the measured
sections of the given Markdown file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.analysis.corpus_split import development_templates, held_out_templates, is_held_out  # noqa: E402
from tests.analysis.helpers import template_and_variables  # noqa: E402
from tests.conftest import load_json  # noqa: E402
from tests.profiles.helpers import matches, peer_view, whitespace_is_exact  # noqa: E402

from chatcodec import profiles  # noqa: E402
from chatcodec.analysis.derive import DerivedTemplate, derive_response_template  # noqa: E402
from chatcodec.analysis.probes import PROBE_TOOLS, Conversation  # noqa: E402
from chatcodec.analysis.round_trip import render_case  # noqa: E402
from chatcodec.chat_templates.render import render_chat_template  # noqa: E402
from chatcodec.errors import ChatCodecError  # noqa: E402
from chatcodec.response_templates.api import parse_response  # noqa: E402

CAPABILITIES = ("content", "reasoning", "one_call", "parallel_calls")
SHORT = {"verified": "✓", "heuristic": "h", "unsupported": "–"}


def derive(name: str) -> tuple[DerivedTemplate, float]:
    template, variables = template_and_variables(name)
    start = time.perf_counter()
    derived = derive_response_template(template, variables=variables)
    return derived, time.perf_counter() - start


def measure(names: list[str]) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        derived, seconds = derive(name)
        rows.append({"template": name, "seconds": seconds, "verified": derived.verified,
                     "tools": derived.capabilities["one_call"].applicable,
                     "labels": {cap: derived.capabilities[cap].to_json() for cap in CAPABILITIES},
                     "derived": derived})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tools = [row for row in rows if row["tools"]]
    return {"templates": len(rows), "verified": sum(row["verified"] for row in rows),
            "tool_templates": len(tools), "tool_verified": sum(row["verified"] for row in tools),
            "max_seconds": max((row["seconds"] for row in rows), default=0.0),
            "total_seconds": sum(row["seconds"] for row in rows)}


def _rate(part: int, whole: int) -> str:
    return f"{part} / {whole} ({100 * part / whole:.0f} %)" if whole else "0 / 0"


def table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| template | tools | verified | content | reasoning | one call | parallel calls | s |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        labels = [SHORT[row["labels"][cap]["status"]] + ("" if row["labels"][cap]["applicable"] else "*")
                  for cap in CAPABILITIES]
        lines.append(f"| {row['template'].removesuffix('.jinja')} | {'yes' if row['tools'] else ''} | "
                     f"{'yes' if row['verified'] else 'no'} | {' | '.join(labels)} | {row['seconds']:.1f} |")
    return lines


# --- peer vectors --------------------------------------------------------------------------------

def _in_dialect(template: str, variables: dict[str, Any], derived: DerivedTemplate,
                vector: dict[str, Any]) -> bool:
    """Whether the template renders the vector's expected message as the vector's output: the
    expected message as the final assistant turn, in any mode of the template, gives the vector's
    ``prompt_suffix`` and output (whitespace aside)."""
    expected = vector["expected"]
    spec: dict[str, Any] = {"content": expected["content"] or ""}
    if expected["reasoning_content"]:
        spec["reasoning_content"] = expected["reasoning_content"]
    if expected["tool_calls"]:
        spec["calls"] = [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
        if not expected["content"]:
            del spec["content"]
    shape = derived.report.shape
    conversation = Conversation([{"role": "user", "content": "Hi"}, shape.message(spec)],
                                vector["tools"] or PROBE_TOOLS, False, {})
    wanted = _squeeze((vector["prompt_suffix"] or "") + vector["output"])
    for mode in derived.report.modes:
        try:
            rendered = render_case(template, Conversation(conversation.messages, conversation.tools, False,
                                                          {**variables, **mode}), variables.get("eos_token"))
        except ChatCodecError:  # a message the template refuses is not in its dialect
            continue
        suffix = vector["prompt_suffix"] or ""
        text = rendered.output
        if suffix and rendered.prompt.endswith(suffix) and rendered.continues_prompt:
            text = suffix + text
        if _squeeze(text) == wanted:
            return True
    return False


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _template_prefix(template: str, variables: dict[str, Any], derived: DerivedTemplate,
                     suffix: str | None) -> str:
    """The prompt a vector continues, from the template itself: its generation prompt when that ends
    with the vector's ``prompt_suffix``, else the derived start anchor followed by the suffix (a
    vector without one was written after a prompt that opened nothing)."""
    anchor = derived.response_template["start_anchor"]
    anchor = anchor if isinstance(anchor, str) else anchor[0]
    if not suffix:
        return anchor
    for mode in derived.report.modes:
        try:
            prompt = render_chat_template(template, [{"role": "user", "content": "Hi"}], tools=PROBE_TOOLS,
                                          add_generation_prompt=True, **{**variables, **mode})
        except Exception:
            continue
        if prompt.endswith(suffix):
            return prompt
    return anchor + suffix


def _parse(template: Any, vector: dict[str, Any], prefix: str) -> dict[str, Any] | str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return peer_view(parse_response(vector["output"], template, prefix=prefix, tools=vector["tools"]))
    except ValueError as error:
        return f"raises: {str(error).splitlines()[0][:80]}"


def peers(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    vectors = load_json("peer_vectors.json")["vectors"]
    results = []
    for row in rows:
        template, variables = template_and_variables(row["template"])
        family = profiles.detect(template)
        if family is None:
            continue
        profile = profiles.load(family)
        derived: DerivedTemplate = row["derived"]
        for vector in (v for v in vectors if v["family"] == family):
            prefix = _template_prefix(template, variables, derived, vector["prompt_suffix"])
            ours = _parse(derived.response_template, vector, prefix)
            theirs = _parse(profile.response_template, vector,
                            profile.generation_prompt_ending(vector["prompt_suffix"]))
            exact = whitespace_is_exact(vector["note"])
            if isinstance(ours, str) or isinstance(theirs, str):  # both raise: both refuse the output
                agree = isinstance(ours, str) and isinstance(theirs, str)
            else:
                agree = matches(ours, theirs, exact_whitespace=exact)
            expected = not isinstance(ours, str) and matches(ours, vector["expected"], exact_whitespace=exact)
            results.append({"template": row["template"], "family": family, "vector": vector["id"],
                            "in_dialect": _in_dialect(template, variables, derived, vector),
                            "agree": agree, "expected": expected, "ours": ours, "theirs": theirs})
    return results


def _part(name: str) -> str:
    return "held-out" if is_held_out(name) else "development"


def peer_lines(results: list[dict[str, Any]]) -> list[str]:
    inside = [r for r in results if r["in_dialect"]]
    lines = ["| templates | vectors (template × family vector) | in dialect | derived agrees with the "
             "profile, in dialect | derived gives the expected message, in dialect | agrees, all vectors |",
             "|---|---|---|---|---|---|"]
    for part in ("development", "held-out", "all"):
        mine = [r for r in results if part == "all" or _part(r["template"]) == part]
        inner = [r for r in mine if r["in_dialect"]]
        agree = _rate(sum(r["agree"] for r in inner), len(inner))
        lines.append(f"| {part} | {len(mine)} | {len(inner)} | **{agree}** | "
                     f"{_rate(sum(r['expected'] for r in inner), len(inner))} | "
                     f"{_rate(sum(r['agree'] for r in mine), len(mine))} |")
    lines += ["", "| template | family | in dialect | agree |", "|---|---|---|---|"]
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for result in results:
        by_pair.setdefault((result["template"], result["family"]), []).append(result)
    for (template, family), items in by_pair.items():
        inner = [r for r in items if r["in_dialect"]]
        lines.append(f"| {template.removesuffix('.jinja')} | {family} | {len(inner)} / {len(items)} | "
                     f"{sum(r['agree'] for r in inner)} / {len(inner)} |")
    disagreements = [r for r in inside if not r["agree"]]
    if disagreements:
        lines += ["", "In-dialect vectors where the derived template and the profile differ:", ""]
        lines += [f"- `{r['vector']}` ({r['template'].removesuffix('.jinja')}): derived {_short(r['ours'])}, "
                  f"profile {_short(r['theirs'])}" for r in disagreements]
    return lines


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return "`" + (text if len(text) < 140 else text[:137] + "...").replace("|", "\\|").replace("`", "'") + "`"


# --- report --------------------------------------------------------------------------------------

def section(title: str, body: list[str]) -> str:
    return f"<!-- measured: {title} -->\n" + "\n".join(body) + f"\n<!-- end: {title} -->"


def write(path: Path, sections: dict[str, list[str]]) -> None:
    text = path.read_text(encoding="utf-8")
    for title, body in sections.items():
        name = re.escape(title)
        pattern = re.compile(rf"<!-- measured: {name} -->.*?<!-- end: {name} -->", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{path}: no section {title!r} to replace")
        text = pattern.sub(lambda _match, b=body, t=title: section(t, b), text)
    path.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("development", "held-out", "all"), default="development")
    parser.add_argument("--peers", action="store_true", help="also compare with the profiles on peer vectors")
    parser.add_argument("--write", metavar="MARKDOWN", type=Path,
                        help="replace the measured sections of this file")
    args = parser.parse_args()
    parts = {"development": development_templates(), "held-out": held_out_templates()}
    chosen = list(parts) if args.part == "all" else [args.part]
    sections: dict[str, list[str]] = {}
    all_rows = []
    totals = []
    for part in chosen:
        rows = measure(parts[part])
        all_rows += rows
        stats = summary(rows)
        totals.append((part, stats))
        print(f"{part}: {json.dumps(stats)}")
        sections[f"{part} templates"] = table(rows)
    if len(chosen) > 1 or args.write:
        lines = ["| part | templates | verified | tool templates | tool templates verified | slowest (s) |",
                 "|---|---|---|---|---|---|"]
        for part, stats in totals:
            verified = _rate(stats["verified"], stats["templates"])
            tool_verified = _rate(stats["tool_verified"], stats["tool_templates"])
            lines.append(f"| {part} | {stats['templates']} | {verified} | {stats['tool_templates']} | "
                         f"**{tool_verified}** | {stats['max_seconds']:.1f} |")
        sections["summary"] = lines
    if args.peers:
        results = peers(all_rows)
        sections["peer vectors"] = peer_lines(results)
        print("\n".join(sections["peer vectors"][:5]))
    if args.write:
        write(args.write, sections)
    else:
        for title, body in sections.items():
            if title != "peer vectors":
                print(f"\n## {title}\n" + "\n".join(body))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
