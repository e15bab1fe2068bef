"""Measure ``chatcodec derive`` on chat templates from outside the corpus: an independent held-out set.

The corpus held-out part (``bench/derive_corpus.py``) was looked at while the derivation was
developed, so it no longer measures how the derivation generalises. This script measures it on
real chat templates that are *not* in ``../shared/corpus/chat_templates/`` (by content), listed
with their source (repository, path, commit), the special tokens of their model and their SHA-256
in ``bench/derive_external_sources.json``. The templates themselves are not part of chatcodec:
fetch them into a directory first (``git show COMMIT:PATH > DIR/FILE`` in a clone of each
repository; for an entry with ``json_field``, the UTF-8 string of that field of the JSON file), then::

    python bench/derive_external.py DIR                 # the table, per template and in total
    python bench/derive_external.py DIR --peers --write docs/derive.md --section "external after"

A template whose SHA-256 differs from the listed one, whose content (whitespace aside) equals a
corpus template, or that another set's sources file (every ``bench/derive_external*_sources.json``)
lists, is refused: the measurement is only repeatable on the same files, and only independent on
files the corpus and the other sets do not hold. ``--check`` runs these checks alone, without
deriving (a set is measured once, with the final code; checking its files must not measure it).
A **tool template** is one whose round trip shows an assistant tool call; **verified** means every
applicable capability verified, as in
``bench/derive_corpus.py``. With ``--peers``, each template whose model has outputs in
``peer_vectors.json`` (``peer_family`` in the sources) parses them (``peers``).

``--sources bench/derive_external2_sources.json`` measures the second independent set, built after
the first had shaped rules of the derivation, ``--sources bench/derive_external3_sources.json``
the third, built after the second had, and ``derive_external4_sources.json`` and
``derive_external5_sources.json`` the fourth and fifth, each built after the one before it had; no
template may be listed in two files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

from tests.conftest import CORPUS, load_json  # noqa: E402
from tests.profiles.helpers import matches, whitespace_is_exact  # noqa: E402

from chatcodec.analysis.derive import derive_response_template  # noqa: E402
from chatcodec.chat_templates.errors import ChatTemplateError  # noqa: E402
from derive_corpus import (  # noqa: E402
    CAPABILITIES,
    _in_dialect,
    _parse,
    _rate,
    _short,
    _template_prefix,
    summary,
    table,
    write,
)

SOURCES = ROOT / "bench" / "derive_external_sources.json"
#: Every sources file: a template listed in one may not reappear in another (by SHA-256).
ALL_SOURCES = (SOURCES, *(ROOT / "bench" / f"derive_external{n}_sources.json" for n in range(2, 6)))


def _squeezed(text: str) -> str:
    return "".join(text.split())


def sources_files() -> list[Path]:
    """Every external set's sources file: ``ALL_SOURCES`` and each ``bench/derive_external*_sources.json``,
    so a set added later is checked against the others without editing a list (resolved, no repeats)."""
    found = sorted((ROOT / "bench").glob("derive_external*_sources.json"))
    return list(dict.fromkeys(path.resolve() for path in (*ALL_SOURCES, *found)))


def load_sources(directory: Path, sources: Path = SOURCES) -> list[tuple[dict[str, Any], str]]:
    """``[(source entry, template text)]`` for every template ``sources`` lists, checked.

    Raises:
        SystemExit: a listed file is missing from ``directory``, its SHA-256 is not the listed one,
            its content (whitespace aside) is a corpus template's, or another sources file lists it.
    """
    corpus = {_squeezed(path.read_text(encoding="utf-8")): path.name
              for path in (CORPUS / "chat_templates").glob("*.jinja")}
    entries = json.loads(sources.read_text(encoding="utf-8"))["sources"]
    elsewhere = {entry["sha256"]: other.name for other in sources_files()
                 if other != sources.resolve() and other.is_file()
                 for entry in json.loads(other.read_text(encoding="utf-8"))["sources"]}
    loaded = []
    for entry in entries:
        path = directory / entry["file"]
        if not path.is_file():
            raise SystemExit(f"{path}: missing; fetch {entry['repo']} {entry['commit']}:{entry['path']}")
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            raise SystemExit(f"{path}: sha256 {digest}, the sources list {entry['sha256']}")
        if digest in elsewhere:
            raise SystemExit(f"{path}: also listed in {elsewhere[digest]}; the sets must not overlap")
        text = data.decode("utf-8")
        if _squeezed(text) in corpus:
            raise SystemExit(f"{path}: the same template as the corpus's {corpus[_squeezed(text)]}")
        loaded.append((entry, text))
    return loaded


def measure(loaded: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    """One row per template: labels, verified, tool template, seconds (as ``derive_corpus.measure``)."""
    rows = []
    for entry, text in loaded:
        variables = {**entry["special_tokens"], **entry.get("required_kwargs", {})}
        start = time.perf_counter()
        try:
            derived = derive_response_template(text, variables=variables)
        except ChatTemplateError as error:
            # the template renders none of the probes: every set was chosen for rendering tool
            # calls, so it counts as a tool template the derivation failed on, never left out
            reason = f"derive refused the template: {str(error).splitlines()[0]}"
            rows.append({"template": entry["file"], "seconds": time.perf_counter() - start,
                         "verified": False, "text": text, "variables": variables,
                         "family": entry.get("peer_family"), "tools": True, "derived": None,
                         "labels": {cap: {"status": "unsupported", "reason": reason, "applicable": True}
                                    for cap in CAPABILITIES}})
            continue
        seconds = time.perf_counter() - start
        rows.append({"template": entry["file"], "seconds": seconds, "verified": derived.verified,
                     "text": text, "variables": variables, "family": entry.get("peer_family"),
                     "tools": derived.capabilities["one_call"].applicable,
                     "labels": {cap: derived.capabilities[cap].to_json() for cap in CAPABILITIES},
                     "derived": derived})
    return rows


def summary_lines(stats: dict[str, Any]) -> list[str]:
    return ["| templates | verified | tool templates | tool templates verified | slowest (s) |",
            "|---|---|---|---|---|",
            f"| {stats['templates']} | {_rate(stats['verified'], stats['templates'])} | "
            f"{stats['tool_templates']} | **{_rate(stats['tool_verified'], stats['tool_templates'])}** | "
            f"{stats['max_seconds']:.1f} |"]


def peers(rows: list[dict[str, Any]]) -> list[str]:
    """Real model outputs (``peer_vectors.json``) of each template's family, parsed with the derived
    template after the template's own generation prompt and compared with the message the peer test
    expects; **in dialect** as in ``bench/derive_corpus.py`` (the template renders that message as
    that output). There is no bundled profile for most of these models, so the comparison is with
    the expected message only."""
    vectors = load_json("peer_vectors.json")["vectors"]
    lines = ["| template | family | verified | vectors | in dialect | expected, in dialect | expected, all |",
             "|---|---|---|---|---|---|---|"]
    misses: list[str] = []
    totals = [0, 0, 0, 0]
    for row in rows:
        mine = [vector for vector in vectors if vector["family"] == row["family"]]
        if not mine:
            continue
        if row["derived"] is None:  # nothing derived: no vector is read right
            totals[0] += len(mine)
            lines.append(f"| {row['template'].removesuffix('.jinja')} | {row['family']} | no | "
                         f"{len(mine)} | - | - | 0 / {len(mine)} |")
            continue
        counts = [len(mine), 0, 0, 0]
        for vector in mine:
            prefix = _template_prefix(row["text"], row["variables"], row["derived"], vector["prompt_suffix"])
            ours = _parse(row["derived"].response_template, vector, prefix)
            inside = _in_dialect(row["text"], row["variables"], row["derived"], vector)
            good = not isinstance(ours, str) and matches(ours, vector["expected"],
                                                         exact_whitespace=whitespace_is_exact(vector["note"]))
            counts[1] += inside
            counts[2] += inside and good
            counts[3] += good
            if inside and not good:
                misses.append(f"- `{vector['id']}` ({row['template'].removesuffix('.jinja')}): derived "
                              f"{_short(ours)}, expected {_short(vector['expected'])}")
        totals = [total + count for total, count in zip(totals, counts, strict=True)]
        lines.append(f"| {row['template'].removesuffix('.jinja')} | {row['family']} | "
                     f"{'yes' if row['verified'] else 'no'} | {counts[0]} | {counts[1]} | "
                     f"{_rate(counts[2], counts[1])} | {_rate(counts[3], counts[0])} |")
    lines.append(f"| **all** | | | {totals[0]} | {totals[1]} | **{_rate(totals[2], totals[1])}** | "
                 f"{_rate(totals[3], totals[0])} |")
    if misses:
        lines += ["", "In-dialect vectors the derived template reads otherwise:", "", *misses]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="the directory holding the listed template files")
    parser.add_argument("--sources", type=Path, default=SOURCES,
                        help="the sources file listing the set (default: the first external set; "
                             "bench/derive_externalN_sources.json is the N-th, N = 2 to 5)")
    parser.add_argument("--reasons", action="store_true", help="print the reason of every label not verified")
    parser.add_argument("--peers", action="store_true",
                        help="also parse the peer vectors of each template's family")
    parser.add_argument("--write", metavar="MARKDOWN", type=Path,
                        help="replace a measured section of this file")
    parser.add_argument("--section", default="external after",
                        help="the section to replace: SECTION summary and SECTION templates")
    parser.add_argument("--check", action="store_true",
                        help="only check the listed files (present, SHA-256, not in the corpus or "
                             "another set); derive nothing")
    args = parser.parse_args()
    loaded = load_sources(args.directory, args.sources)
    if args.check:
        print(f"{len(loaded)} templates of {args.sources.name} checked: present, SHA-256 as listed, "
              f"in neither the corpus nor another set")
        return 0
    rows = measure(loaded)
    stats = summary(rows)
    sections = {f"{args.section} summary": summary_lines(stats), f"{args.section} templates": table(rows)}
    if args.peers:
        sections[f"{args.section} peer vectors"] = peers(rows)
    print(json.dumps(stats))
    for title, body in sections.items():
        print(f"\n## {title}\n" + "\n".join(body))
    if args.reasons:
        for row in rows:
            for cap in CAPABILITIES:
                label = row["labels"][cap]
                if label["status"] != "verified" and label["applicable"]:
                    print(f"- {row['template']} {cap}: {label['status']}: {label['reason'][:300]}")
    if args.write:
        write(args.write, sections)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
