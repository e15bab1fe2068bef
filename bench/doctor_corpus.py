"""Measure ``chatcodec doctor`` on every corpus chat template: seconds per template, findings by severity.

Run from the repository root (the corpus is read from ``../shared/corpus`` or ``CHATCODEC_CORPUS``)::

    python bench/doctor_corpus.py                 # every check (hf-jinja runs where Node.js and
                                                  # @huggingface/jinja are installed)
    python bench/doctor_corpus.py --check round-trip

Each template is examined as ``chatcodec doctor`` examines its model's directory: with the special
tokens and required variables the corpus manifest gives the model, and the response template of the
bundled profile detected from the template.
The seconds are wall-clock time on this machine, whatever else runs on it; nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.analysis.corpus_split import corpus_template_names  # noqa: E402
from tests.analysis.helpers import template_and_variables  # noqa: E402

from chatcodec import profiles  # noqa: E402
from chatcodec.analysis.doctor import DoctorTarget, run_doctor  # noqa: E402
from chatcodec.analysis.findings import CHECKS  # noqa: E402


def target(name: str) -> DoctorTarget:
    """The corpus template ``name`` as ``chatcodec doctor FILE`` sees it."""
    template, variables = template_and_variables(name)
    profile = profiles.detect(template)
    return DoctorTarget(name, {"default": template}, variables,
                        profiles.load(profile).response_template if profile else None,
                        f"profile:{profile}" if profile else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="append", choices=CHECKS, help="run only this check (repeatable)")
    args = parser.parse_args()
    checks = tuple(args.check) if args.check else CHECKS
    print("| template | s | errors | warnings | info |")
    print("|---|---|---|---|---|")
    seconds = []
    for name in corpus_template_names():
        start = time.perf_counter()
        findings = run_doctor(target(name), checks)
        elapsed = time.perf_counter() - start
        seconds.append(elapsed)
        count = Counter(finding.severity for finding in findings)
        print(f"| {name.removesuffix('.jinja')} | {elapsed:.1f} | {count['error']} | {count['warning']} "
              f"| {count['info']} |", flush=True)
    seconds.sort()
    median = seconds[len(seconds) // 2]
    print(f"\n{len(seconds)} templates, checks {', '.join(checks)}: median {median:.1f} s, "
          f"slowest {seconds[-1]:.1f} s, total {sum(seconds):.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
