"""List every bundled profile's regex that the load-time judge does not prove linear.

Every regex of a response template that runs on model output (``open_pattern``, ``close_pattern``,
``start_anchor_pattern``, ``tag_pattern``, ``x-findall``'s ``pattern`` and ``between``, nested
value parsers included) is judged by :func:`chatcodec.response_templates.backtracking.judge`; a
pattern it cannot prove linear is searched under the regex clock on every feed. For the patterns a
streaming scanner splits around its streamed group (``xml-inline``'s ``value``, ``x-findall``'s
``arguments``), the head and the terminator the scanner searches are listed too, since those run
on every feed while a match is open.

Usage::

    PYTHONPATH=src python scripts/nonlinear_patterns.py            # every profile
    PYTHONPATH=src python scripts/nonlinear_patterns.py glm45 ling3  # some

Prints one line per pattern the judge does not prove linear: profile, JSON path, what the judge
found (``nested``: it repeats a repetition or overlapping alternatives, a candidate for a
catastrophe; ``overlap``: a repetition may be followed by a character it can also read), and the
pattern.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from chatcodec import profiles
from chatcodec.response_templates.backtracking import judge
from chatcodec.response_templates.delimiters import rewrite_dollar
from chatcodec.response_templates.scanners.pattern_split import split_pattern

#: Keys whose string value is a regex run on model output.
PATTERN_KEYS = ("open_pattern", "close_pattern", "start_anchor_pattern", "tag_pattern", "pattern", "between")
#: The groups a scanner streams, tried in this order when splitting a pattern.
STREAMED = ("value", "arguments")


def patterns(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """``(JSON path, regex)`` of every pattern in a template value, in document order."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{where}.{key}" if where else key
            if key in PATTERN_KEYS and isinstance(item, str):
                yield path, item
                if key in ("tag_pattern", "pattern"):
                    yield from split_parts(path, item)
            else:
                yield from patterns(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from patterns(item, f"{where}[{index}]")


def split_parts(path: str, source: str) -> Iterator[tuple[str, str]]:
    """The head and terminator a streaming scanner searches, when ``source`` splits."""
    for group in STREAMED:
        split = split_pattern(source, group)
        if split is not None:
            yield f"{path} (head before {group})", split.head
            yield f"{path} (terminator after {group})", split.terminator
            return


def nonlinear(names: list[str]) -> Iterator[tuple[str, str, str, str]]:
    """``(profile, path, finding, regex)`` for each pattern the judge does not prove linear."""
    for name in names:
        template = profiles.load(name).response_template
        for path, source in patterns(template, ""):
            verdict = judge(rewrite_dollar(source))
            if not verdict.linear:
                yield name, path, "nested" if verdict.nested else "overlap", source


def main(argv: list[str]) -> int:
    names = argv or profiles.names()
    found = list(nonlinear(names))
    for name, path, finding, source in found:
        print(f"{name}\t{path}\t{finding}\t{source}")
    print(f"{len(found)} patterns not proved linear in {len({f[0] for f in found})} of {len(names)} profiles",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
