"""Side by side inside vLLM and SGLang: each engine's own parser, its response-template parser, chatcodec.

For each family where the engines ship parsers of their own, every corpus output of that family
(``../shared/corpus/peer_vectors.json``) is streamed one token per delta through each engine's
serving parser with three choices of parser:

* the engine's own parsers for the family (vLLM ``--tool-call-parser`` / ``--reasoning-parser``
  names, SGLang detector names, as their docs pair them with the models);
* the engine's response-template parser (vLLM ``hf``, SGLang ``response_template``), given the
  bundled profile's template with the reasoning field renamed ``thinking`` (the only name they accept);
* ``chatcodec``.

"Right" is the corpus's own rule for the output (its ``expected`` message, compared as the corpus
README says: arguments exactly, text without surrounding whitespace unless the vector says it is
exact). Outputs where chatcodec deliberately differs from the peer that wrote the vector (it keeps
text the peer drops, ``tests/profiles/test_peer_vectors.py`` lists them; or a call that started
streaming and then failed stays in the stream, ``docs/openai.md``) count as wrong for chatcodec
here too, and are counted separately. "µs/delta" is the CPU time (process time) of the
engine's parse call per delta, over all outputs of the family, the engine's own plumbing included.

Run it in the engine environment (``bash scripts/engines_env.sh``)::

    .engines-venv/bin/python bench/bench_engines.py            # writes the table in docs/serving.md
    .engines-venv/bin/python bench/bench_engines.py --no-write
    .engines-venv/bin/python bench/bench_engines.py --calls --family deepseek_v31   # Python calls

``--calls`` counts, instead of timing, the Python calls (functions and builtins, as ``cProfile``
counts them) of chatcodec's streams, per engine call the bench makes (a delta's, the parsers'
construction, the end of the stream), split into the parsing core's (``response_templates``: its
functions and the builtins they call) and the rest (the engine's wrappers, the plugins, the step
writer, the engine's result objects). Unlike the times these counts do not move with the load.
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DOC = ROOT / "docs" / "serving.md"
START, END = "<!-- bench_engines:start -->", "<!-- bench_engines:end -->"

#: family -> (vLLM tool parser, vLLM reasoning parser, SGLang tool parser, SGLang reasoning parser)
FAMILIES: dict[str, tuple[str, str | None, str, str | None]] = {
    "hermes": ("hermes", "qwen3", "hermes", "qwen3"),
    "qwen3": ("hermes", "qwen3", "qwen25", "qwen3"),
    "qwen3_coder": ("qwen3_coder", "qwen3", "qwen3_coder", "qwen3"),
    "llama3_json": ("llama3_json", None, "llama3", None),
    "mistral": ("mistral", None, "mistral", None),
    "deepseek_r1": ("deepseek_v3", "deepseek_r1", "deepseekv3", "deepseek-r1"),
    "deepseek_v3": ("deepseek_v3", "deepseek_v3", "deepseekv3", "deepseek-v3"),
    "deepseek_v31": ("deepseek_v31", "deepseek_v3", "deepseekv31", "deepseek-v3"),
    "kimi_k2": ("kimi_k2", "kimi_k2", "kimi_k2", "kimi_k2"),
    "glm45": ("glm45", "glm45", "glm45", "glm45"),
    "minimax_m2": ("minimax_m2", "minimax_m2", "minimax-m2", "minimax"),
    "gpt_oss": ("openai", "openai_gptoss", "gpt-oss", "gpt-oss"),
}


class Result:
    """Counts for one parser on one family."""

    def __init__(self) -> None:
        self.right = self.total = self.deltas = self.deliberate = 0
        self.cpu = 0.0
        self.refused: str | None = None

    def cell(self) -> str:
        if self.refused is not None:
            return f"refused ({self.refused})"
        if not self.deltas:
            return f"{self.right}/{self.total} (raised on every output)"
        return f"{self.right}/{self.total} · {self.per_delta():.0f} µs"

    def per_delta(self) -> float:
        """CPU µs per delta (``nan`` when nothing ran)."""
        return 1e6 * self.cpu / self.deltas if self.deltas else float("nan")


def ratio(row: dict[str, Result]) -> str:
    """chatcodec's cost per delta over the engine's own parser's (``—`` when either did not run)."""
    own, ours = row["own"].per_delta(), row["chatcodec"].per_delta()
    return "—" if own != own or ours != ours else f"{ours / own:.2f}×"


#: runs per output; the least CPU time counts (other processes share the machine)
REPEATS = 7
#: seconds one stream may take before it counts as hung
LIMIT = 30


def _timed(run: Callable[[], Any]) -> tuple[Any, float]:
    """``run()``'s result and its least CPU time over :data:`REPEATS` runs; a run longer than
    :data:`LIMIT` seconds raises ``TimeoutError``."""
    import signal

    def expire(*_: Any) -> None:
        raise TimeoutError(f"more than {LIMIT} s")

    if COUNTER is not None:
        return COUNTER.run(run), 0.0
    previous = signal.signal(signal.SIGALRM, expire)
    best, value = float("inf"), None
    try:
        for _ in range(REPEATS):
            signal.alarm(LIMIT)
            start = time.process_time()
            value = run()
            best = min(best, time.process_time() - start)
            signal.alarm(0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return value, best


#: set by ``--calls``: a :class:`CallCounter` that each chatcodec stream runs under instead of timing
COUNTER: CallCounter | None = None


class CallCounter:
    """Python calls per engine call, as ``sys.setprofile`` sees them (``cProfile``'s counts).

    An *entry* is a call the bench's code makes into the engine (a parser built, a delta parsed,
    the stream ended); everything it calls until it returns is counted for it: each Python
    function by the file that defines it, each builtin by the file of the function calling it, as
    ``core`` (``chatcodec/response_templates/``), ``engine`` (the engine's own code: its wrappers
    around the plugin, its result objects' validators; the entry call itself counts here) or
    ``plugin`` (everything else: the plugins, the step writer, the result objects built from
    their data).
    """

    CORE = os.sep + os.path.join("chatcodec", "response_templates") + os.sep
    ENGINES = (os.sep + "vllm" + os.sep, os.sep + "sglang" + os.sep)

    def __init__(self) -> None:
        #: one list per stream of ``(entry name, (core, plugin, engine) calls, entry's return value)``
        self.streams: list[list[tuple[str, list[int], Any]]] = []
        self._entry: Any = None
        self._counts = [0, 0, 0]
        self._where: dict[str, int] = {}

    def _bucket(self, filename: str) -> int:
        known = self._where.get(filename)
        if known is None:
            known = 0 if self.CORE in filename else 2 if any(part in filename for part in self.ENGINES) else 1
            self._where[filename] = known
        return known

    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        if self._entry is None:
            caller = frame.f_back  # an entry: called from the bench's code, defined elsewhere
            here = frame.f_code.co_filename
            if event == "call" and caller is not None and caller.f_code.co_filename == __file__ != here:
                self._entry, self._counts = frame, [0, 0, 1]
            return
        if event == "call" or event == "c_call":
            self._counts[self._bucket(frame.f_code.co_filename)] += 1
        elif event == "return" and frame is self._entry:
            self.streams[-1].append((frame.f_code.co_name, self._counts, arg))
            self._entry = None

    def run(self, stream: Callable[[], Any]) -> Any:
        """Run one stream once (warmed up by a run before it) and record its entries' counts."""
        stream()
        self.streams.append([])
        sys.setprofile(self._hook)
        try:
            return stream()
        finally:
            sys.setprofile(None)


def _thinking_template(family: str) -> dict[str, Any]:
    from chatcodec import profiles

    template = copy.deepcopy(profiles.load(family).response_template)
    fields = template["fields"]
    if "reasoning_content" in fields:
        template["fields"] = {
            ("thinking" if name == "reasoning_content" else name): spec for name, spec in fields.items()
        }
    return template


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return (text[:90] + "…") if len(text) > 90 else text


def _right(got: dict[str, Any], vector: dict[str, Any]) -> bool:
    from tests.profiles.helpers import matches, whitespace_is_exact

    return matches(got, vector["expected"], exact_whitespace=whitespace_is_exact(vector["note"]))


def _view(reasoning: str, content: str, calls: dict[int, list[str]]) -> dict[str, Any]:
    import json

    tool_calls = []
    for index in sorted(calls):
        name, arguments = calls[index]
        try:
            parsed = json.loads(arguments) if arguments else {}
        except ValueError:
            parsed = arguments
        tool_calls.append({"name": name, "arguments": parsed})
    return {"content": content or None, "reasoning_content": reasoning or None, "tool_calls": tool_calls}


def run_vllm(
    family: str,
    names: tuple[str | None, str | None],
    vectors: list[dict[str, Any]],
    tokenizer: Any,
    result: Result,
) -> None:
    from tests_engines.harness import deltas, prefix, tools
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager

    tool, reasoning = names
    try:
        parser_cls = ParserManager.get_parser(
            tool_parser_name=tool,
            reasoning_parser_name=reasoning,
            enable_auto_tools=True,
            model_name=family,
            tokenizer=tokenizer,
        )
    except Exception as error:  # the engine refuses this parser for this model at startup
        result.refused = _short(error)
        return
    for vector in vectors:
        result.total += 1
        request = ChatCompletionRequest(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=tools(vector), tool_choice="auto"
        )
        pieces = deltas(tokenizer, vector["output"], 1)
        prompt = tokenizer.encode(prefix(vector), add_special_tokens=False)
        reasoning_text, content = "", ""
        calls: dict[int, list[str]] = {}

        def one_stream(request: Any = request, pieces: Any = pieces, prompt: Any = prompt) -> list[Any]:
            parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
            return [
                parser.parse_delta(
                    text,
                    ids,
                    request,
                    prompt_token_ids=prompt if n == 0 else None,
                    finished=n == len(pieces) - 1,
                )
                for n, (text, ids) in enumerate(pieces)
            ]

        try:
            sent, cpu = _timed(one_stream)
        except Exception:  # a parser that crashes (or hangs) on an output gets it wrong
            continue
        result.cpu += cpu
        result.deltas += len(pieces)
        for delta in sent:
            if delta is None:
                continue
            reasoning_text += delta.reasoning or ""
            content += delta.content or ""
            for call in delta.tool_calls:
                entry = calls.setdefault(call.index, ["", ""])
                if call.function is not None:
                    entry[0] = call.function.name or entry[0]
                    entry[1] += call.function.arguments or ""
        result.right += _right(_view(reasoning_text, content, calls), vector)


def run_sglang(
    family: str,
    names: tuple[str | None, str | None],
    vectors: list[dict[str, Any]],
    tokenizer: Any,
    result: Result,
) -> None:
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from tests_engines.harness import deltas, prefix, tools

    from chatcodec.integrations.discovery import serving_template
    from chatcodec.integrations.session import Session

    tool, reasoning = names
    try:  # what SGLang builds per request; a parser that cannot be built for this model is refused
        if reasoning:
            ReasoningParser(reasoning, stream_reasoning=True, tokenizer=tokenizer)
        FunctionCallParser(
            [Tool(**spec) for spec in tools(vectors[0])], tool, tokenizer=tokenizer, prefix=prefix(vectors[0])
        )
    except Exception as error:
        result.refused = _short(error)
        return
    for vector in vectors:
        result.total += 1
        sgl_tools = [Tool(**spec) for spec in tools(vector)]
        pieces = deltas(tokenizer, vector["output"], 1)
        prompt = prefix(vector)  # the test harness's work, not the engine's: outside the timing
        force = Session(serving_template(tokenizer), prompt, None).in_reasoning
        calls: dict[int, list[str]] = {}

        def one_stream(
            prompt: str = prompt, pieces: Any = pieces, force: bool = force, sgl_tools: Any = sgl_tools
        ) -> tuple[str, str, list[Any]]:
            reasoning_text, content = "", ""
            reasoning_parser = (
                ReasoningParser(
                    reasoning,
                    stream_reasoning=True,
                    force_reasoning=force,
                    tokenizer=tokenizer,
                    prefix=prompt,
                )
                if reasoning
                else None
            )
            tool_parser = FunctionCallParser(sgl_tools, tool, tokenizer=tokenizer, prefix=prompt)
            items: list[Any] = []
            for number, (text, _) in enumerate(pieces):
                last = number == len(pieces) - 1
                normal = text
                if reasoning_parser is not None:
                    found, normal = reasoning_parser.parse_stream_chunk(text)
                    if last:
                        end_found, end_normal = reasoning_parser.parse_stream_end()
                        found, normal = (found or "") + (end_found or ""), (normal or "") + (end_normal or "")
                    reasoning_text += found or ""
                normal_text, new = tool_parser.parse_stream_chunk(normal or "")
                content += normal_text
                items += new
                if last:
                    normal_text, new = tool_parser.parse_stream_end()
                    content += normal_text
                    items += new
            return reasoning_text, content, items

        try:
            (reasoning_text, content, items), cpu = _timed(one_stream)
            result.cpu += cpu
        except Exception:  # a parser that crashes (or hangs) on an output gets it wrong
            continue
        result.deltas += len(pieces)
        for item in items:
            entry = calls.setdefault(item.tool_index, ["", ""])
            entry[0] = item.name or entry[0]
            entry[1] += item.parameters
        result.right += _right(_view(reasoning_text, content, calls), vector)


def measure(families: list[str]) -> dict[str, dict[str, dict[str, Result]]]:
    """``{engine: {family: {"own" | "template" | "chatcodec": Result}}}``."""
    from tests.profiles.test_peer_vectors import KNOWN_DIFFERENCES
    from tests_engines.harness import reference, streamed_reference, tokenizer, vectors

    from chatcodec.integrations.discovery import ENV_VAR

    runners: dict[str, Callable[..., None]] = {"vLLM": run_vllm, "SGLang": run_sglang}
    table: dict[str, dict[str, dict[str, Result]]] = {engine: {} for engine in runners}
    for family in families:
        vllm_tool, vllm_reasoning, sgl_tool, sgl_reasoning = FAMILIES[family]
        family_vectors = vectors(family)
        tok = tokenizer(family)
        os.environ[ENV_VAR] = family  # the family's profile, whatever its chat template says
        for engine, runner in runners.items():
            own = (vllm_tool, vllm_reasoning) if engine == "vLLM" else (sgl_tool, sgl_reasoning)
            template_name = "hf" if engine == "vLLM" else "response_template"
            row = table[engine][family] = {"own": Result(), "template": Result(), "chatcodec": Result()}
            runner(family, own, family_vectors, tok, row["own"])
            tok.response_template = _thinking_template(family)
            try:
                runner(family, (template_name, template_name), family_vectors, tok, row["template"])
            finally:
                del tok.response_template
            runner(family, ("chatcodec", "chatcodec"), family_vectors, tok, row["chatcodec"])
            row["chatcodec"].deliberate = sum(
                vector["id"] in KNOWN_DIFFERENCES or streamed_reference(vector, 1) != reference(vector)
                for vector in family_vectors
            )
        print(f"{family}: done", file=sys.stderr)
    os.environ.pop(ENV_VAR, None)
    return table


def _delta_kind(engine: str, returned: list[Any]) -> str:
    """What one delta sent the client: ``"call"`` (a call starts), ``"text"`` (reasoning, content or
    argument text only) or ``"none"``."""
    if engine == "vLLM":
        delta = returned[0]
        if delta is None:
            return "none"
        if any(call.id or (call.function is not None and call.function.name) for call in delta.tool_calls):
            return "call"
        return "text" if delta.reasoning or delta.content or delta.tool_calls else "none"
    sent: list[Any] = []
    for value in returned:  # reasoning stage: (reasoning, normal); tool stage: (normal, call items)
        if isinstance(value[1], list):
            if any(item.name for item in value[1]):
                return "call"
            sent += [value[0], *(item.parameters for item in value[1])]
        else:
            sent.append(value[0])
    return "text" if any(sent) else "none"


Counts = tuple[int, float, float, float]


def call_counts(engine: str, counter: CallCounter) -> dict[str, Counts]:
    """``{kind: (deltas, core, plugin, engine calls per delta)}`` over a counter's streams: the
    parsers' construction per request (``start``), the first and last delta of each stream, the
    deltas between by what they sent (:func:`_delta_kind`), and ``all`` deltas (the construction
    counted in)."""
    groups: dict[str, list[list[int]]] = {}
    deltas = 0
    for stream in counter.streams:
        start = [0, 0, 0]
        per_delta: list[list[tuple[str, list[int], Any]]] = []
        for entry in stream:
            if entry[0] == "__init__":
                start = [a + b for a, b in zip(start, entry[1], strict=True)]
                continue
            # SGLang: a delta ends with its tool stage's chunk (and the stream with its end calls)
            last = per_delta[-1][-1] if per_delta else None
            if engine == "vLLM" or last is None or (
                last[0] == entry[0] == "parse_stream_chunk" and isinstance(last[2][1], list)
            ):
                per_delta.append([])
            per_delta[-1].append(entry)
        groups.setdefault("start", []).append(start)
        deltas += len(per_delta)
        for number, entries in enumerate(per_delta):
            if number == 0:
                kind = "first"
            elif number == len(per_delta) - 1:
                kind = "last"
            else:
                kind = _delta_kind(engine, [entry[2] for entry in entries])
            groups.setdefault(kind, []).append([sum(entry[1][at] for entry in entries) for at in range(3)])
    table: dict[str, Counts] = {}
    for kind, rows in groups.items():
        core, plugin, own = (sum(row[at] for row in rows) / len(rows) for at in range(3))
        table[kind] = (len(rows), core, plugin, own)
        if kind == "text":  # most text deltas are alike; a few open or end an argument value
            medians = (float(statistics.median(row[at] for row in rows)) for at in range(3))
            table["text, median"] = (len(rows), *medians)
    everything = [row for rows in groups.values() for row in rows]
    core, plugin, own = (sum(row[at] for row in everything) / deltas for at in range(3))
    table["all"] = (deltas, core, plugin, own)
    return table


def render_calls(counted: dict[str, dict[str, dict[str, Counts]]]) -> str:
    """The ``--calls`` table: per engine and family, Python calls per delta: core + plugin + engine."""
    kinds = ("all", "text", "text, median", "none", "call", "first", "last", "start")
    lines = [
        "Python calls of chatcodec's streams, core + plugin + engine (see CallCounter; deltas in "
        "parentheses): all = per delta, everything counted; text / none / call = deltas between the "
        "first and the last that sent only text (reasoning, content, arguments) / nothing / a call's "
        "start (means; the median of each count for text); start = building the parsers, per request.",
        "",
        "| engine | family | " + " | ".join(kinds) + " |",
        "|---|---|" + "---|" * len(kinds),
    ]
    for engine, rows in counted.items():
        for family, table in rows.items():
            cells = []
            for kind in kinds:
                if kind not in table:
                    cells.append("—")
                    continue
                count, core, plugin, own = table[kind]
                cells.append(f"{core:.1f} + {plugin:.1f} + {own:.1f} ({count})")
            lines.append(f"| {engine} | {family} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def count_calls(families: list[str]) -> dict[str, dict[str, dict[str, Counts]]]:
    """``{engine: {family: call_counts(...)}}`` for chatcodec's streams of each family."""
    from tests_engines.harness import tokenizer, vectors

    from chatcodec.integrations.discovery import ENV_VAR

    global COUNTER
    runners: dict[str, Callable[..., None]] = {"vLLM": run_vllm, "SGLang": run_sglang}
    counted: dict[str, dict[str, dict[str, Counts]]] = {engine: {} for engine in runners}
    try:
        for family in families:
            os.environ[ENV_VAR] = family
            for engine, runner in runners.items():
                COUNTER = CallCounter()
                runner(family, ("chatcodec", "chatcodec"), vectors(family), tokenizer(family), Result())
                counted[engine][family] = call_counts(engine, COUNTER)
    finally:
        COUNTER = None
        os.environ.pop(ENV_VAR, None)
    return counted


def render(table: dict[str, dict[str, dict[str, Result]]]) -> str:
    from importlib.metadata import version

    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with vLLM {version('vllm')} and SGLang {version('sglang')} "
        f"on {platform.machine()}, Python {platform.python_version()}, CPU only; one token per delta. "
        f"Each cell: outputs parsed right / outputs, then CPU time per delta (the least of {REPEATS} runs).",
        "",
    ]
    for engine, rows in table.items():
        template_name = "`hf`" if engine == "vLLM" else "`response_template`"
        lines += [
            f"**{engine}**",
            "",
            f"| family | engine's own parsers | {template_name} | chatcodec | chatcodec ÷ own, per delta "
            "| chatcodec differs on purpose |",
            "|---|---|---|---|---|---|",
        ]
        for family, row in rows.items():
            own = FAMILIES[family][0 if engine == "vLLM" else 2]
            lines.append(
                f"| {family} | `{own}`: {row['own'].cell()} | {row['template'].cell()} | "
                f"{row['chatcodec'].cell()} | {ratio(row)} | {row['chatcodec'].deliberate} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--no-write", action="store_true", help="print the table, leave docs/serving.md alone"
    )
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES), help="only these families")
    parser.add_argument(
        "--calls", action="store_true", help="count chatcodec's Python calls per delta instead (no timing)"
    )
    options = parser.parse_args()
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    from sglang.srt.plugins import load_plugins
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    load_plugins()
    if options.calls:
        print(render_calls(count_calls(options.family or list(FAMILIES))))
        return 0
    text = render(measure(options.family or list(FAMILIES)))
    print(text)
    if not options.no_write:
        doc = DOC.read_text(encoding="utf-8")
        head, rest = doc.split(START, 1)
        DOC.write_text(f"{head}{START}\n{text}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
