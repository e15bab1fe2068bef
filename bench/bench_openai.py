"""OpenAI streams: their cost per fed chunk against the bare parser, and how early arguments arrive.

1. **Cost per chunk.** A tool-heavy output (reasoning, a sentence, then tool calls with string,
   number and nested arguments making up most of the text) is streamed in 1- and 4-character
   chunks through the bare ``ResponseParser.feed``, ``ChatCompletionStream.feed`` and
   ``ResponsesStream.feed`` over a parser of the same template, in the same process; the ratio is
   the stream's cost per chunk over the bare parser's (target: at most 1.5x for Chat Completions).
   Two templates: JSON calls read by the ``json`` parser (ChatML, ``<tool_call>{...}</tool_call>``)
   and XML parameters (the ``qwen3_coder`` profile: ``<parameter=k>v</parameter>``).
2. **Time to the first argument fragment.** One ``write_file`` call whose ``content`` argument is
   17,500 characters (the size of the vLLM report where a client waited 32 s for one delta),
   streamed 4 characters per feed: the feed that delivers the argument's first character against
   the feed whose chunks first carry it (target: the same feed), and how many argument deltas the
   call takes. JSON calls, and the formats whose value group stands in a regex alternation or
   behind ``x-first`` (DeepSeek V3.2's DSML parameters, MiniCPM5's ``<param>``, LongCat's tagged
   calls, LFM2's JSON call in its Python-call markers).

3. **A long parameter.** MiniCPM5's plain ``<param>`` value streams; its CDATA value is set whole
   (until ``]]>`` it could still be a plain value: ``docs/profiles.md``). One 17,500-character
   parameter of each kind in 4-character feeds, through the parser without value events, with them,
   and through ``ChatCompletionStream``: the cost per chunk must not grow with the parameter.

Parsers are created with ``value_deltas=True`` when the engine has it (arguments streamed as
written); without it, arguments go out whole when the call's region closes. The results replace
the "OpenAI streams" section of ``docs/performance.md`` (between its markers).

Usage::

    python bench/bench_openai.py               # writes docs/performance.md
    python bench/bench_openai.py --no-write    # print only
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import QWEN3_TEMPLATE, write_section

ROOT = Path(__file__).resolve().parent.parent

_REASONING = "The user wants the files updated and the weather checked; several calls are needed. "
_TEXT = "I will update the files and check the weather now."
_ARGUMENTS = [
    {"path": "src/app/main.py", "content": "def main() -> None:\n    print(\"hello\")\n" * 6},
    {"city": "Paris", "days": 3, "units": "metric"},
    {"query": "open issues about streaming", "filters": {"state": "open", "labels": ["bug", "api"]}},
]
_NAMES = ["write_file", "get_weather", "search_issues"]


def json_call(name: str, arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>\n"


def xml_call(name: str, arguments: dict[str, Any]) -> str:
    parameters = "".join(
        f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value)}\n</parameter>\n"
        for key, value in arguments.items())
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>\n"


#: ChatML with ``<think>`` reasoning and JSON tool calls read by the standard ``json`` parser.
JSON_TEMPLATE = QWEN3_TEMPLATE

#: name -> (the response template: a dict, or a bundled profile's name; how it writes one call)
CASES: dict[str, tuple[Any, Any]] = {
    "json": (JSON_TEMPLATE, json_call),
    "qwen3_coder": ("qwen3_coder", xml_call),
}


def tool_heavy_output(profile: str, size: int) -> str:
    """About ``size`` characters: reasoning, a sentence, then rounds of three calls."""
    call = CASES[profile][1]
    calls = "".join(call(name, arguments) for name, arguments in zip(_NAMES, _ARGUMENTS, strict=True))
    rounds = max(1, (size - len(_REASONING) * 4) // len(calls))
    return f"<think>\n{_REASONING * 4}\n</think>\n\n{_TEXT}\n" + calls * rounds


def new_parser(case: str) -> Any:
    from chatcodec import ResponseParser, profiles

    template = CASES[case][0]
    if isinstance(template, str):
        template = profiles.load(template).response_template
    options = {"value_deltas": True} if value_deltas() else {}
    return ResponseParser(template, prefix="", errors="keep", **options)


def value_deltas() -> bool:
    from chatcodec import ResponseParser

    return "value_deltas" in inspect.signature(ResponseParser).parameters


def time_feeds(make: Any, chunks: list[str]) -> float:
    """CPU time of one ``feed`` call, in microseconds (``finish`` / ``finalize`` not included).

    CPU time of this process, not wall time: on a machine shared with other work, wall time
    mostly measures the others.
    """
    target = make()
    feed = target.feed
    gc.collect()
    gc.disable()
    start = time.process_time()
    for piece in chunks:
        feed(piece)
    elapsed = time.process_time() - start
    gc.enable()
    return elapsed / len(chunks) * 1e6


def calls_per_chunk(make: Any, chunks: list[str]) -> float:
    """Python function calls per ``feed`` (cProfile's count): a measure the machine's load cannot move."""
    import cProfile
    import pstats

    target = make()
    profile = cProfile.Profile()
    profile.enable()
    for piece in chunks:
        target.feed(piece)
    profile.disable()
    return float(pstats.Stats(profile).total_calls) / len(chunks)  # type: ignore[attr-defined]


def per_chunk(size: int, repeats: int) -> list[dict[str, Any]]:
    """The three implementations timed in turn, ``repeats`` rounds; the best round of each counts."""
    from chatcodec.openai import ChatCompletionStream, ResponsesStream

    rows = []
    for profile in CASES:
        text = tool_heavy_output(profile, size)
        makers = {
            "bare": lambda profile=profile: new_parser(profile),
            "chat": lambda profile=profile: ChatCompletionStream(new_parser(profile)),
            "responses": lambda profile=profile: ResponsesStream(new_parser(profile)),
        }
        for chunk in (1, 4):
            chunks = [text[start : start + chunk] for start in range(0, len(text), chunk)]
            best = {name: float("inf") for name in makers}
            ratios: dict[str, list[float]] = {"chat_ratio": [], "responses_ratio": []}
            for _ in range(repeats):
                times = {name: time_feeds(make, chunks) for name, make in makers.items()}
                for name, spent in times.items():
                    best[name] = min(best[name], spent)
                ratios["chat_ratio"].append(times["chat"] / times["bare"])
                ratios["responses_ratio"].append(times["responses"] / times["bare"])
            counted = {f"{name}_calls": calls_per_chunk(make, chunks) for name, make in makers.items()}
            medians = {name: statistics.median(values) for name, values in ratios.items()}
            rows.append({"profile": profile, "chars": len(text), "chunk": chunk, **best, **counted,
                         **medians})
    return rows


_DSML = "｜DSML｜"

#: format -> (response template: a dict or a bundled profile's name; ``arguments -> output``)
FIRST_FRAGMENT: dict[str, tuple[Any, Any]] = {
    "json": (JSON_TEMPLATE, lambda arguments: json_call("write_file", arguments)),
    "deepseek_v32": ("deepseek_v32", lambda arguments: (
        f'<{_DSML}function_calls>\n<{_DSML}invoke name="write_file">\n' + "".join(
            f'<{_DSML}parameter name="{key}" string="true">{value}</{_DSML}parameter>\n'
            for key, value in arguments.items()) + f"</{_DSML}invoke>\n</{_DSML}function_calls>")),
    "minicpm5": ("minicpm5", lambda arguments: '<function name="write_file">' + "".join(
        f'<param name="{key}">{value}</param>' for key, value in arguments.items()) + "</function>"),
    "longcat": ("longcat", lambda arguments: "<longcat_tool_call>write_file\n" + "".join(
        f"<longcat_arg_key>{key}</longcat_arg_key>\n<longcat_arg_value>{value}</longcat_arg_value>\n"
        for key, value in arguments.items()) + "</longcat_tool_call>"),
    "lfm2 (JSON)": ("lfm2", lambda arguments: "<|tool_call_start|>" + json.dumps(
        [{"name": "write_file", "arguments": arguments}], ensure_ascii=False) + "<|tool_call_end|>"),
}


def first_fragments(length: int = 17_500, chunk: int = 4) -> list[dict[str, Any]]:
    """:func:`first_fragment` of every format of :data:`FIRST_FRAGMENT`."""
    return [first_fragment(name, length, chunk) for name in FIRST_FRAGMENT]


def first_fragment(name: str = "json", length: int = 17_500, chunk: int = 4) -> dict[str, Any]:
    """Which feed first carries the long argument, against the feed that delivers its first character."""
    from chatcodec import ResponseParser, profiles
    from chatcodec.openai import ChatCompletionStream

    content = ("Lorem ipsum dolor sit amet, \"quoted\" and\nnew lines. " * (length // 50 + 1))[:length]
    arguments = {"path": "notes.md", "content": content}
    template, write = FIRST_FRAGMENT[name]
    if isinstance(template, str):
        template = profiles.load(template).response_template
    text = write(arguments)
    first_char = text.index("Lorem")
    whole = json.dumps(arguments, ensure_ascii=False)
    in_arguments = whole.index('"content": "') + len('"content": "')  # where it starts in the arguments
    options = {"value_deltas": True} if value_deltas() else {}
    stream = ChatCompletionStream(ResponseParser(template, prefix="", errors="keep", **options))
    arrived = None
    deltas = 0
    sent = 0
    pieces = [text[start : start + chunk] for start in range(0, len(text), chunk)]
    outputs = [stream.feed(piece) for piece in pieces]
    for number, chunks in enumerate([*outputs, stream.finish()]):
        for out in chunks:
            for call in out["choices"][0]["delta"].get("tool_calls", []):
                fragment = call.get("function", {}).get("arguments", "")
                deltas += bool(fragment)
                sent += len(fragment)
        if arrived is None and sent > in_arguments:
            arrived = number
    return {"name": name, "length": length, "chunk": chunk, "delivered": first_char // chunk,
            "arrived": arrived, "feeds": len(pieces), "deltas": deltas}


def long_parameter(cdata: bool, length: int = 17_500, chunk: int = 4, repeats: int = 3) -> dict[str, float]:
    """CPU µs per chunk of one long MiniCPM5 parameter (plain: streamed; CDATA: set whole), three ways."""
    from chatcodec import ResponseParser, profiles
    from chatcodec.openai import ChatCompletionStream

    template = profiles.load("minicpm5").response_template
    content = ("Lorem ipsum dolor sit amet consectetur " * (length // 39 + 1))[:length]
    value = f"<![CDATA[{content}]]>" if cdata else content
    text = f'<function name="write_file"><param name="content">{value}</param></function>'
    chunks = [text[start : start + chunk] for start in range(0, len(text), chunk)]
    makers = {
        "plain": lambda: ResponseParser(template, prefix=""),
        "value_deltas": lambda: ResponseParser(template, prefix="", value_deltas=True),
        "chat": lambda: ChatCompletionStream(ResponseParser(template, prefix="", value_deltas=True)),
    }
    return {name: min(time_feeds(make, chunks) for _ in range(repeats)) for name, make in makers.items()}


def render(rows: list[dict[str, Any]], early: list[dict[str, Any]], long: dict[str, dict[str, float]]) -> str:
    mode = "streamed as written (`value_deltas=True`)" if value_deltas() else \
        "whole at the region's close (this engine has no `value_deltas`)"
    lines = [
        "## OpenAI streams",
        "",
        "Written by `python bench/bench_openai.py` (do not edit by hand). Cost of one `feed` call while "
        "a tool-heavy output streams (reasoning, a sentence, then rounds of three tool calls with string, "
        "number and nested arguments), best of several interleaved runs (CPU time of the process): the "
        "bare `ResponseParser`, and `ChatCompletionStream` / `ResponsesStream` over the same parser. "
        "The ratios are the median over the runs of each run's ratio (the three are timed back to back "
        f"in a run, so a change of the machine's load between runs cancels out). Arguments are {mode}.",
        "",
        f"Machine: Python {platform.python_version()} on {platform.machine()}.",
        "",
        "| template | chars | chunk | parser µs/chunk | chat µs/chunk | chat / parser | responses µs/chunk "
        "| responses / parser | Python calls/chunk (parser, chat, responses) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        chat, responses = row["chat_ratio"], row["responses_ratio"]
        lines.append(
            f"| {row['profile']} | {row['chars']:,} | {row['chunk']} | {row['bare']:.2f} | {row['chat']:.2f} "
            f"| {chat:.2f}x | {row['responses']:.2f} | {responses:.2f}x "
            f"| {row['bare_calls']:.1f}, {row['chat_calls']:.1f}, {row['responses_calls']:.1f} |")
    worst = max(row["chat_ratio"] for row in rows)
    calls = max(row["chat_calls"] / row["bare_calls"] for row in rows)
    lines += ["", f"Largest Chat Completions / parser ratio: {worst:.2f}x in CPU time, {calls:.2f}x in "
              "Python calls per chunk (target <= 1.5x). Single CPU times move by up to 2x between runs on "
              "the shared machine; the calls do not.", ""]
    first = early[0]
    lines += [
        f"Time to the first argument fragment: a `write_file` call whose `content` is {first['length']:,} "
        f"characters, fed {first['chunk']} characters at a time, through `ChatCompletionStream`: the feed "
        "that delivers the argument's first character, the feed whose chunks first carry it (target: the "
        "same feed), and how many argument deltas the call takes.",
        "",
        "| format | feeds | first character delivered in feed | first reaches the client in feed "
        "| feeds later | argument deltas |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in early:
        lines.append(f"| {row['name']} | {row['feeds']:,} | {row['delivered']:,} | {row['arrived']:,} "
                     f"| {row['arrived'] - row['delivered']:,} | {row['deltas']:,} |")
    lines += ["", "A long parameter (MiniCPM5, one 17,500-character `<param>` value, 4-character feeds), "
              "µs/chunk for the parser without value events, with them, and through `ChatCompletionStream`: "
              + "; ".join(f"{kind}: {cost['plain']:.2f}, {cost['value_deltas']:.2f}, {cost['chat']:.2f}"
                          for kind, cost in long.items()) + "."]
    return "\n".join(lines) + "\n"




def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000, help="characters of the tool-heavy output")
    parser.add_argument("--repeats", type=int, default=11, help="rounds per measurement (the best counts)")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave the docs alone")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    long = {"plain (streamed)": long_parameter(False), "CDATA (set whole)": long_parameter(True)}
    section = render(per_chunk(args.size, args.repeats), first_fragments(), long)
    print(section)
    if not args.no_write:
        write_section("bench_openai", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
