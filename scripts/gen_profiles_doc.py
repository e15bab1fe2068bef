"""Write ``docs/profiles.md`` and ``src/chatcodec/profiles/coverage.json`` from the profiles and the corpus.

Run from the repository root (the corpus is read from ``../shared/corpus`` or ``CHATCODEC_CORPUS``)::

    python scripts/gen_profiles_doc.py

Every number in the generated files is measured here: each peer vector is parsed with its family's
profile and compared as the corpus README says (the same comparison the test suite uses, imported
from ``tests/profiles/helpers.py``). The known differences and the round-trip notes are read from
the test modules that assert them. The files are never edited by hand; the test suite checks that
``coverage.json`` matches the suite's own results.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.conftest import load_json  # noqa: E402
from tests.profiles import test_peer_vectors, test_round_trip, test_variants  # noqa: E402
from tests.profiles.helpers import matches, peer_view, whitespace_is_exact  # noqa: E402

import chatcodec  # noqa: E402
from chatcodec import profiles  # noqa: E402
from chatcodec.response_templates import (  # noqa: E402
    ext_bare_object,
    ext_findall,
    ext_json_calls,
    ext_named_call,
    ext_python_literal,
    ext_pythonic,
    ext_switch,
    ext_wrap,
    ext_xml_tree,
)

DOC = ROOT / "docs" / "profiles.md"
COVERAGE = ROOT / "src" / "chatcodec" / "profiles" / profiles.COVERAGE_FILE


def measure() -> dict[str, dict[str, int]]:
    """Parse every vector of every profiled family; count the vectors that match the peer's parse."""
    counts: dict[str, dict[str, int]] = {}
    for vector in load_json("peer_vectors.json")["vectors"]:
        family = counts.setdefault(vector["family"], {"vectors": 0, "passed": 0})
        family["vectors"] += 1
        if vector["family"] in profiles.names() and _passes(vector):
            family["passed"] += 1
    return counts


def _passes(vector: dict[str, Any]) -> bool:
    """Parsed as a server would: strict, and errors="keep" where strict raises (the test suite's rule)."""
    profile = profiles.load(vector["family"])
    prefix = profile.generation_prompt_ending(vector["prompt_suffix"])
    template, text, tools = profile.response_template, vector["output"], vector["tools"]
    try:
        message = chatcodec.parse_response(text, template, prefix=prefix, tools=tools)
    except chatcodec.ResponseParseError:
        message = chatcodec.parse_response(text, template, prefix=prefix, tools=tools, errors="keep")
    return matches(
        peer_view(message), vector["expected"], exact_whitespace=whitespace_is_exact(vector["note"])
    )


def _corpus_templates() -> dict[str, list[str]]:
    detected: dict[str, list[str]] = {}
    for file, name in sorted(test_round_trip.SPECS.items()):
        detected.setdefault(name.profile, []).append(file.removesuffix(".jinja"))
    return detected


def family_table(counts: dict[str, dict[str, int]]) -> list[str]:
    corpus = _corpus_templates()
    lines = [
        "| family (profile) | vectors | passed | rate | chat template bundled | corpus templates detected "
        "| needs chatcodec | license |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for name in profiles.names():
        profile, count = profiles.load(name), counts[name]
        rate = count["passed"] / count["vectors"]
        mark = "" if rate >= test_peer_vectors.THRESHOLD else " (partial)"
        bundled = (profile.chat_template_source or {}).get("model", "—")
        detected = ", ".join(corpus.get(name, [])) or "—"
        extensions = "yes" if profile.needs_chatcodec else "no"
        lines.append(
            f"| `{name}`{mark} | {count['vectors']} | {count['passed']} | {rate:.0%} | {bundled} "
            f"| {detected} | {extensions} | {profile.license} |"
        )
    return lines


def summary(counts: dict[str, dict[str, int]]) -> list[str]:
    profiled = {name: counts[name] for name in profiles.names()}
    verified = [
        name for name, c in profiled.items() if c["passed"] / c["vectors"] >= test_peer_vectors.THRESHOLD
    ]
    perfect = [name for name, c in profiled.items() if c["passed"] == c["vectors"]]
    passed = sum(c["passed"] for c in profiled.values())
    total = sum(c["vectors"] for c in profiled.values())
    missing = sorted(set(counts) - set(profiled))
    unprofiled = ", ".join(f"`{name}` ({counts[name]['vectors']} vectors)" for name in missing) or "none"
    partial = "; ".join(
        f"`{name}`: {_md(why)}" for name, why in sorted(test_peer_vectors.PARTIAL_FAMILIES.items())
    )
    return [
        f"- **{len(profiled)} profiles**; **{len(verified)} families pass >= 95 %** of their peer vectors "
        f"({len(perfect)} pass all of them); {passed} of {total} vectors of profiled families pass.",
        f"- Families without a profile: {unprofiled}.",
        f"- Partial families (below 95 %): {partial}.",
    ]


def _md(text: str) -> str:
    """Prose for a Markdown table or list: markers such as <think> must not read as HTML tags."""
    return text.replace("<", "&lt;").replace("|", "\\|")


def known_differences() -> list[str]:
    lines = ["| vector | why chatcodec differs |", "|---|---|"]
    for vector_id, difference in sorted(test_peer_vectors.KNOWN_DIFFERENCES.items()):
        lines.append(f"| `{vector_id}` | {_md(difference.reason)} |")
    return lines


def kept_as_content() -> list[str]:
    lines = ["| vector | strict parsing raises |", "|---|---|"]
    for vector_id, error in sorted(test_peer_vectors.KEPT_AS_CONTENT.items()):
        lines.append(f"| `{vector_id}` | {_md(error)} |")
    return lines


def round_trips() -> list[str]:
    lines = ["| corpus chat template | profile | fields the template drops or changes |", "|---|---|---|"]
    for file, spec in sorted(test_round_trip.SPECS.items()):
        notes = [f"{kind}: drops {', '.join(fields)}" for kind, fields in spec.drops.items()]
        notes += [f"{kind}: changes {', '.join(sorted(change))}" for kind, change in spec.changes.items()]
        reasons: dict[str, list[str]] = {}
        for kind, why in spec.unrenderable.items():
            reasons.setdefault(why, []).append(kind)
        notes += [f"{', '.join(kinds)}: cannot render ({why})" for why, kinds in reasons.items()]
        lines.append(
            f"| {file.removesuffix('.jinja')} | `{spec.profile}` | {_md('; '.join(notes)) or 'none'} |"
        )
    return lines


def profile_notes() -> list[str]:
    lines = []
    for name in profiles.names():
        profile = profiles.load(name)
        aliases = f" (aliases: {', '.join(f'`{a}`' for a in profile.aliases)})" if profile.aliases else ""
        lines.append(
            f"- **`{name}`**{aliases}: {_md(profile.description)}"
            + (f" {_md(profile.notes)}" if profile.notes else "")
        )
    return lines


def variants() -> list[str]:
    """Per family, each format variant its profile accepts, where it is documented, and its vector."""
    lines = []
    for name in profiles.names():
        vectors = test_variants.family_variants(name)
        if not vectors:
            continue
        lines += [f"### `{name}`", "", "| variant | source | vector |", "|---|---|---|"]
        for vector in vectors:
            lines.append(f"| {_md(vector['variant'])} | {_md(vector['source'])} | `{vector['id']}` |")
        lines.append("")
    return lines


def extension_docs() -> list[str]:
    sections = []
    for module in (ext_pythonic, ext_json_calls, ext_findall, ext_xml_tree, ext_bare_object,
                   ext_python_literal, ext_switch, ext_named_call, ext_wrap):
        doc = (module.__doc__ or "").strip().splitlines()
        sections += [f"### {doc[0].rstrip('.')}", "", *doc[1:], ""]
    return sections


INTRO = """\
# Bundled profiles

<!-- Generated by scripts/gen_profiles_doc.py from the profiles and ../shared/corpus; do not edit by hand. -->

A profile is a folder of data under `src/chatcodec/profiles/<family>/`: `response_template.json`,
`profile.json` and, where the model's license allows it, `chat_template.jinja`. Load one with
`chatcodec.profiles.load(name)`, find one with `chatcodec.profiles.detect(chat_template)`, and parse
with `chatcodec.parse_response(text, profile.response_template, prefix=prompt)`.

`detect` reads the markers of `profile.json` (`detect`: `all`, `any`, `none`, `priority`) as template
structure: markers inside Jinja comments never count, and markers in prose (`Never write <think>
tags.`) count only when no profile matches on structure (Granite 3 names `<|tool_call|>` only in
its instructions).

Vectors are the real outputs of `peer_vectors.json` (vLLM, SGLang and llama.cpp tests), compared as
the corpus README says, and parsed with the family's generation prompt that ends in the vector's
`prompt_suffix`: strictly, and with `errors="keep"` where strict parsing raises (as a server that
must answer would).
"""

MALFORMED = """\
No profile drops a malformed tool call (SPEC §1.5 "nothing is lost"). A call the format cannot read
(broken JSON, an object that is not a call or has a key no call has, a pythonic argument that is not
a literal, an element that is not a call), and text inside a tool-call section that is not a call,
make the `x-` parser raise `ValueError`: with `errors="strict"` (the default) parsing raises
`ResponseParseError`, whose `partial_message` is the message parsed so far and whose `text` is the
raw tool-call region; with `errors="keep"` the message has no value for that region and lists the
problem, with the raw text, under `parse_errors`. The other calls of the same region are in that raw
text, not in `tool_calls`.

The `skip_invalid` option the `x-` parsers once had (it dropped such calls silently, even in strict
mode) is removed; a template that sets it fails to load with a message saying so. Framing text that
belongs to a format is declared instead: as the tool-call field's `close` (an end-of-turn token, a
section end marker), as `x-json-calls` `separators`, or as `x-findall` `between` (Step3's per-call
markers, MiniMax-M3's namespace marker) or `xml-inline` `skip_tags` (the end tags that may stand
between argument tags; every profile sets it, to `[]`, so a stray or damaged end tag such as
`</seed:tool_QZcall>` is an error). Peer vectors whose expected parse drops such text are known
differences below; text after a tool-call section goes to `content`.

A call id the model writes is kept as the tool call's `id` (OpenAI shape `{"id", "type",
"function"}`, through the optional transform placeholder `"{id?}"`): the `id`, `tool_call_id` or
`call_id` key of a JSON call object (Cohere writes `tool_call_id`) and Mistral's `[CALL_ID]`
marker. A call without one has no `id`. DeepSeek R1/V3 write the call's type before its name; it is
the tool call's `type` (always `function` in the peers' outputs). No profile captures a named group
that its transform does not use (`tests/profiles/test_profiles_load.py`).
"""

RULES = """\
Every profile keeps the same four rules, so no family behaves differently from the others on
the same kind of output.

**Whitespace.** `content` and `reasoning_content` are the text exactly as the model wrote it
(`"strip": "blank"`): the newlines inside and around a think block and the space before a call
stay. A region holding only whitespace is layout, not content: the `"\\n\\n"` between `</think>`
and a call, the newline between two calls and the blank lines after an empty think block give no
`content`, so re-rendering the message never adds text the model did not write. Whitespace that
the prompt wrote where a region starts (the newline after a pre-opened `<think>\\n`, the blank
lines after the empty think block of a thinking-off prompt) is the template's, not the model's,
and is not part of the value either.

**Cut-off calls.** When generation stops (a length limit) inside a tool call, the call is a call
only if its text is complete: a JSON call whose value is closed (`{"name": ..., "arguments":
{...}}` with its last brace, even without the end marker), an XML-style call whose own end tag
(`</function>`, `</invoke>`) was written. Anything cut off earlier (inside a value, a name or a
tag) is a parse problem, never a call with what was there: `errors="strict"` raises
`ResponseParseError`, `errors="keep"` lists it under `parse_errors` and keeps its text in
`content`. Each family has one vector of each kind (`rule: cutoff-complete` / `cutoff-incomplete`
in `tests/profiles/variants/`). A call marker written with nothing after it (`hello<tool_call>`,
then the length limit) is a parse problem too, in every profile whose call field is not plain text.
Text cut off inside a call marker itself (`<tool_ca`) is content.

**Calls outside `tools=`.** A call to a function that is not among the tools passed is kept as
written and listed under the message's `parse_warnings` (`kind: "unknown_tool"`), never dropped.

**Calls without a close marker of their own.** Where a family writes its calls bare (Llama 3's
JSON objects, Mistral's `[TOOL_CALLS]` array or `name{...}`, Granite 3's `<|tool_call|>[...]`,
`functools[...]`, Python call lists), the tool-call region ends where the call's value ends
(`close_at_value_end`, `docs/response_templates.md`): the separators and whitespace right after
the calls are their layout, and any other text after them is `content` (vLLM drops it, SGLang keeps
it; nothing is lost). Families whose calls have an end marker (`</tool_call>`,
`<|tool_calls_section_end|>`) keep it as the region's end: text inside the marker that is not a
call is an error there, never content (Granite 3 and xLAM, whose calls come bare or in
`<tool_call>` tags, end both at the value). Profiles that end calls at their value's end: {value_end}.
"""

KEPT_INTRO = """\
Vectors are parsed as a server that must answer parses them: strictly, and with `errors="keep"`
where strict parsing raises. These vectors hold a call that cannot be read (broken JSON, a call cut
off before its end); strict parsing raises, and the kept text is the content the peer returns too:
"""

ROUND_TRIP_INTRO = """\
Each corpus chat template of a profiled family renders four assistant messages (content; reasoning;
one tool call; two calls with unicode, number and nested arguments), which are parsed back. What a
template does not render cannot come back:
"""

VARIANTS_INTRO = """\
What each family really emits, read from its chat template, its generation prompts and the peers'
parsers and tests, as one vector per variant in `tests/profiles/variants/<family>.json` (written
for this project from the format, not copied; each is parsed whole, one character at a time and
at random splits):
"""

EXTENSIONS_INTRO = """\
Templates that use these `x-` parsers need chatcodec (the reference does not know them), as do
templates that use `flatten`, `require_close`, `"strip": "blank"` or an optional placeholder
(`docs/response_templates.md`, "What only chatcodec reads"); `Profile.needs_chatcodec` says which,
and `chatcodec lint` reports each use (`RT012`). Their `content_args` are validated when a template
is loaded.
"""


def streaming() -> list[str]:
    """How each profile streams its tool calls' arguments (docs/streaming_values.md)."""
    from chatcodec.response_templates.scanners import granularity

    groups: dict[str, list[str]] = {}
    for name in profiles.names():
        field = profiles.load(name).response_template["fields"].get("tool_calls")
        if field is not None:
            how = granularity(field.get("content", "text"), field.get("content_args", {}))
            groups.setdefault(how, []).append(f"`{name}`")
    lines = [
        "With `value_deltas=True` (and in the `chatcodec.openai` streams), a tool call's arguments "
        "stream as the model writes them when the profile's tool-call parser has a value scanner "
        "(`docs/streaming_values.md`); otherwise they arrive whole when the call ends. A regex whose "
        "value group stands in an alternation streams the branch that the text after the match's head "
        "opens: DeepSeek V3.2's `string=\"true\"` / `\"false\"` parameters, MiniCPM5's plain "
        "parameters, LongCat's tagged calls (whose arguments run to the region's end). MiniCPM5's CDATA "
        "parameters are the exception: each arrives whole once `]]>` closes it, since until then the "
        "same text may be a plain value that begins with `<![CDATA[`. A profile that tries several "
        "parsers (`x-first`) streams what those still possible read alike, and then the one left: "
        "JSON is told from DSML parameters or LongCat's tagged calls by its first character, Python calls "
        "stream as `python-call-list` and `x-pythonic` read them alike, and the JSON calls LFM2 and Llama 4 "
        "sometimes write in their "
        "Python-call markers as `x-json-calls` and `x-pythonic` (which reads a call written as a dict) "
        "read them alike; where two read a text differently (an escape Python reads otherwise than "
        "JSON) the rest of that call waits until one of them is ruled out. "
        "*Each match whole*: the regex that reads a call or a parameter has no place to split around its "
        "value, so each arrives whole once its match completes. A profile is listed under the coarsest "
        "way any of its formats streams, MiniCPM5's CDATA aside. `tests/openai_wire/test_long_arguments.py` "
        "checks each line on real outputs with a 2,000-character argument.",
        "",
    ]
    for how in ("as written", "each match whole", "as its parsers agree", "whole at close"):
        names = groups.get(how, [])
        lines.append(f"- {how[0].upper()}{how[1:]} ({len(names)}): {', '.join(names) or 'none'}.")
    return lines


def value_end_profiles() -> str:
    """The profiles whose tool-call field closes at its value's end, as a Markdown list of names."""
    fields = {name: profiles.load(name).response_template["fields"] for name in profiles.names()}
    names = [f"`{name}`" for name, spec in fields.items()
             if spec.get("tool_calls", {}).get("close_at_value_end")]
    return ", ".join(names) or "none"


def render(counts: dict[str, dict[str, int]]) -> str:
    sections = [
        ("", [INTRO]),
        ("## Summary", summary(counts)),
        ("## Families", family_table(counts)),
        ("## Rules every profile keeps", [RULES.replace("{value_end}", value_end_profiles())]),
        ("## Malformed tool calls", [MALFORMED]),
        ("## Arguments streamed as they are written", streaming()),
        ("## Known differences from the peers", known_differences()),
        ("## Calls the peers also give back as content", [KEPT_INTRO, *kept_as_content()]),
        ("## Round trips with the real chat templates", [ROUND_TRIP_INTRO, *round_trips()]),
        ("## Profiles", profile_notes()),
        ("## Format variants", [VARIANTS_INTRO, *variants()]),
        ("## Content-parser extensions", [EXTENSIONS_INTRO, *extension_docs()]),
    ]
    text = "\n\n".join(
        (f"{title}\n\n" if title else "") + "\n".join(lines).strip() for title, lines in sections
    )
    return text.rstrip() + "\n"


def main() -> int:
    counts = measure()
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(render(counts), encoding="utf-8")
    coverage = {
        "generated_by": "scripts/gen_profiles_doc.py",
        "families": {name: counts[name] for name in profiles.names()},
    }
    COVERAGE.write_text(json.dumps(coverage, indent=2) + "\n", encoding="utf-8")
    totals = Counter(
        {key: sum(c[key] for c in coverage["families"].values()) for key in ("passed", "vectors")}
    )
    print(
        f"wrote {DOC.relative_to(ROOT)} and {COVERAGE.relative_to(ROOT)}: "
        f"{totals['passed']}/{totals['vectors']} vectors of profiled families pass"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
