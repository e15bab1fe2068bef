"""``cross-engine:minijinja`` / ``cross-engine:hf-jinja``: the same prompts from other Jinja engines.

Servers render chat templates with engines that are not Jinja2: MiniJinja (Rust; the PyPI
``minijinja`` binding, ``chatcodec[minijinja]``) and ``@huggingface/jinja`` (JavaScript;
transformers.js and the Hub, run with Node.js). Each probe conversation is rendered by chatcodec
(the reference's behaviour) and by each engine with the same inputs, configured as
``../shared/research/portability.md`` measured them (MiniJinja: ``trim_blocks``, ``lstrip_blocks``,
lenient undefined, ``pycompat``, a ``json.dumps`` ``tojson``, ``raise_exception`` and a pinned
``strftime_now``; @huggingface/jinja: its only configuration, the clock pinned through ``Date``).
Divergences are grouped by cause, one finding each, with the first conversation that shows it:

* the reference renders and the engine fails or renders other text: ``warning`` (not portable);
* the reference raises and the engine renders anyway: ``info`` (the engine is more lenient).

An engine that is not installed gives one ``info`` finding saying how to install it; nothing is
skipped silently. @huggingface/jinja is looked up in ``$CHATCODEC_HF_JINJA`` (the package folder)
or ``~/.cache/chatcodec/hf-jinja/node_modules/@huggingface/jinja``, where
``scripts/setup_hf_jinja.sh`` installs the measured version (0.5.11).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from chatcodec.analysis.doctor_probes import (
    PROBE_TIME,
    WEATHER_TOOL,
    Outcome,
    Probe,
    find_line,
    first_difference,
    render_probe,
    tool_call,
)
from chatcodec.analysis.findings import Finding

__all__ = [
    "HF_JINJA_VERSION",
    "check_cross_engines",
    "cross_engine_probes",
    "divergence_findings",
    "engine_context",
    "hf_jinja_package",
    "render_hf_jinja",
]

#: The @huggingface/jinja version the portability research measured and the setup script installs.
HF_JINJA_VERSION = "0.5.11"

#: Seconds one Node.js run (every probe of one template) may take.
NODE_TIMEOUT = 60
#: Seconds (wall clock and CPU) one MiniJinja run (every probe of one template) may take (real
#: templates take milliseconds).
MINIJINJA_TIMEOUT = 20
#: Bytes of address space the MiniJinja process may use (``RLIMIT_AS``, where the platform has it).
MINIJINJA_MEMORY = 2 * 1024**3


def cross_engine_probes(kwargs: dict[str, Any]) -> list[Probe]:
    """The conversations rendered by every engine: plain, system, multi-turn, reasoning, a tool call
    and its result, multimodal content; each with and without the generation prompt."""
    question = {"role": "user", "content": "What is the capital of France?"}
    answer = {"role": "assistant", "content": "Paris."}
    call = {"role": "assistant", "content": "", "tool_calls": [tool_call("get_weather", {"city": "Paris"})]}
    result = {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
              "content": '{"temperature": 21}'}
    conversations: list[tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = [
        ([question], None),
        ([{"role": "system", "content": "You are concise."}, question], None),
        ([question, answer, {"role": "user", "content": "And Italy?"}], None),
        ([question, {**answer, "reasoning_content": "Easy: Paris."}, {"role": "user", "content": "Italy?"}],
         None),
        ([{"role": "user", "content": "Weather in Paris?"}, call, result], [WEATHER_TOOL]),
        ([{"role": "user", "content": [{"type": "text", "text": "Describe this."}]}], None),
    ]
    return [Probe(messages, tools, generation, kwargs)
            for messages, tools in conversations for generation in (False, True)]


def check_cross_engines(template: str, kwargs: dict[str, Any],
                        engines: tuple[str, ...] = ("minijinja", "hf-jinja")) -> list[Finding]:
    """Render the probes with chatcodec and each engine; report the divergences by cause.

    Args:
        template: the chat template text.
        kwargs: the template variables every render gets.
        engines: which engines to run (``"minijinja"``, ``"hf-jinja"``).

    Returns:
        Per engine: one finding per cause of divergence, or one ``info`` when it is not installed.
    """
    probes = cross_engine_probes(kwargs)
    reference = [render_probe(template, probe) for probe in probes]
    contexts = [engine_context(probe) for probe in probes]
    findings: list[Finding] = []
    runners: dict[str, Callable[[str, list[dict[str, Any]]], list[Outcome] | str]] = {
        "minijinja": _render_minijinja,
        "hf-jinja": lambda text, items: _first(render_hf_jinja([(text, items)]))}
    for engine in engines:
        outcomes = runners[engine](template, contexts)
        check = f"cross-engine:{engine}"
        if isinstance(outcomes, str):
            findings.append(Finding(check, "info", f"not run: {outcomes}"))
            continue
        findings += divergence_findings(template, check, probes, reference, outcomes)
    return findings


def engine_context(probe: Probe) -> dict[str, Any]:
    """The template variables chatcodec's renderer builds for ``probe`` (plain JSON data), as every
    engine gets them."""
    from chatcodec.chat_templates.inputs import plain_input, prepare_messages, prepare_tools

    context = {name: plain_input(value, name) for name, value in probe.kwargs.items()}
    context.update(messages=prepare_messages(probe.messages), tools=prepare_tools(probe.tools),
                   documents=None, add_generation_prompt=probe.add_generation_prompt)
    return context


# --- the engines -----------------------------------------------------------------------------------

#: The signal a process gets past its CPU-time limit (``RLIMIT_CPU``); 24 on Linux and macOS.
_SIGXCPU = int(getattr(signal, "SIGXCPU", 24))


def _minijinja_out_of_time() -> str:
    return (f"MiniJinja did not finish within {MINIJINJA_TIMEOUT:g} s (MINIJINJA_TIMEOUT): it has no "
            "limits on loops or sizes, so a template that runs long runs on there")


def _render_minijinja(template: str, contexts: list[dict[str, Any]]) -> list[Outcome] | str:
    """Render with MiniJinja in a child process (:mod:`chatcodec.analysis.minijinja_runner`), within
    ``MINIJINJA_MEMORY`` bytes and ``MINIJINJA_TIMEOUT`` seconds: it has no limits of its own and
    aborts the whole process when an allocation fails."""
    try:
        import minijinja  # noqa: F401  (only whether it is installed: the child renders)
    except ImportError:
        return "the minijinja package is not installed; install it with `pip install 'chatcodec[minijinja]'`"
    request = {"template": template, "contexts": contexts, "memory": MINIJINJA_MEMORY,
               "seconds": MINIJINJA_TIMEOUT,
               "now": [PROBE_TIME.year, PROBE_TIME.month, PROBE_TIME.day, PROBE_TIME.hour, PROBE_TIME.minute,
                       PROBE_TIME.second]}
    runner = resources.files("chatcodec.analysis").joinpath("minijinja_runner.py")
    with resources.as_file(runner) as script:
        try:
            done = subprocess.run([sys.executable, str(script)], input=json.dumps(request),
                                  capture_output=True, text=True, timeout=MINIJINJA_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return _minijinja_out_of_time()
    if done.returncode == -_SIGXCPU:  # its CPU limit (RLIMIT_CPU) can fire before the wall clock
        return _minijinja_out_of_time()
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        return (f"MiniJinja failed: {lines[0] if lines else f'exit {done.returncode}'} (it renders within "
                f"MINIJINJA_MEMORY, {MINIJINJA_MEMORY:,} bytes: it has no limits on sizes, so a template "
                "that allocates without end fails there)")
    return [Outcome(result.get("text"), result.get("error"), result.get("line"))
            for result in json.loads(done.stdout)]


def hf_jinja_package() -> Path | None:
    """The installed ``@huggingface/jinja`` package folder, or ``None``.

    ``$CHATCODEC_HF_JINJA`` when set (the folder holding its ``package.json``), else
    ``~/.cache/chatcodec/hf-jinja/node_modules/@huggingface/jinja`` (``scripts/setup_hf_jinja.sh``).
    """
    configured = os.environ.get("CHATCODEC_HF_JINJA")
    folder = Path(configured) if configured else (
        Path.home() / ".cache" / "chatcodec" / "hf-jinja" / "node_modules" / "@huggingface" / "jinja")
    return folder if (folder / "package.json").is_file() else None


def _first(outcomes: list[list[Outcome]] | str) -> list[Outcome] | str:
    return outcomes if isinstance(outcomes, str) else outcomes[0]


def render_hf_jinja(jobs: list[tuple[str, list[dict[str, Any]]]]) -> list[list[Outcome]] | str:
    """Render templates with @huggingface/jinja in one Node.js run.

    Args:
        jobs: ``(template, contexts)`` pairs (contexts as :func:`engine_context` builds them).

    Returns:
        Per job, one :class:`Outcome` per context; or, when the engine cannot run, why (Node.js or
        the package missing, Node.js failing, or not finishing within ``NODE_TIMEOUT`` seconds per
        template), with how to fix it.
    """
    node = shutil.which("node")
    package = hf_jinja_package()
    if node is None:
        return "Node.js (node) is not on PATH; @huggingface/jinja runs on it"
    if package is None:
        return (f"@huggingface/jinja is not installed; run scripts/setup_hf_jinja.sh (npm install "
                f"@huggingface/jinja@{HF_JINJA_VERSION} into ~/.cache/chatcodec/hf-jinja), or set "
                "CHATCODEC_HF_JINJA to its package folder")
    request = {"package": str(package),
               "jobs": [{"template": template, "contexts": contexts} for template, contexts in jobs],
               "now": [PROBE_TIME.year, PROBE_TIME.month, PROBE_TIME.day, PROBE_TIME.hour, PROBE_TIME.minute,
                       PROBE_TIME.second]}
    runner = resources.files("chatcodec.analysis").joinpath("hf_jinja_runner.mjs")
    timeout = NODE_TIMEOUT * max(1, len(jobs))
    with resources.as_file(runner) as script:
        try:
            done = subprocess.run([node, str(script)], input=json.dumps(request), capture_output=True,
                                  text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:  # the engine has no sandbox limits: a template may loop on
            return (f"Node.js did not finish within {timeout:g} s (NODE_TIMEOUT per template): "
                    "@huggingface/jinja has no limits on loops or sizes, so a template that runs long "
                    "runs on there")
    if done.returncode != 0:
        return f"Node.js failed: {_node_failure(done.stderr, done.returncode)}"
    return [[Outcome(result.get("text"), result.get("error")) for result in results]
            for results in json.loads(done.stdout)]


def _node_failure(stderr: str, returncode: int) -> str:
    """The line of Node.js's stderr that says why it failed: V8's ``FATAL ERROR: ...`` (out of
    memory, followed by a native stack trace whose last line says nothing), else the last line."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    fatal = next((line for line in lines if "FATAL ERROR" in line), None)
    return fatal or (lines[-1] if lines else f"exit {returncode}")


# --- comparing ---------------------------------------------------------------------------------------

def divergence_findings(template: str, check: str, probes: list[Probe], reference: list[Outcome],
                        outcomes: list[Outcome]) -> list[Finding]:
    """One finding per cause, for the renders where the engine and the reference disagree.

    Args:
        template: the chat template text (for the lines).
        check: ``cross-engine:<engine>``.
        probes: the probes rendered.
        reference: chatcodec's outcome of each probe.
        outcomes: the engine's outcome of each probe.

    Returns:
        The findings, in the order their first probe comes.
    """
    groups: dict[tuple[str, str], list[tuple[int, int | None, str]]] = {}
    for index, (ours, theirs) in enumerate(zip(reference, outcomes, strict=True)):
        if ours.text == theirs.text:  # the same prompt, or both raise
            continue
        severity, cause, line = _cause(template, ours, theirs)
        why = cause.partition(": first difference")[0]
        groups.setdefault((severity, _IN_STRING.sub("", why)), []).append((index, line, cause))
    rendered = sum(outcome.text is not None for outcome in reference)
    findings = []
    for (severity, _), cases in groups.items():
        index, line, cause = cases[0]
        count = (f"{len(cases)} of the {rendered} probe prompts the reference renders"
                 if severity == "warning" else f"{len(cases)} probe conversations the reference refuses")
        findings.append(Finding(check, severity, f"{cause} ({count})", line, probes[index].conversation()))
    return findings


#: MiniJinja's "(in <string>:N)": the line goes to the finding's ``line``, not into its grouping.
_IN_STRING = re.compile(r" \(in <string>:\d+\)")

#: Engine error texts with what they mean, for the message (first match wins).
_KNOWN_ERRORS = (
    (re.compile(r"unknown statement generation|generation"), "{% generation %} is a transformers tag this "
     "engine does not know, so the template does not parse; keep it only if assistant masks are needed"),
    (re.compile(r"Object keys must be strings"),
     "a dict literal with non-string keys is refused; use string keys"),
    (re.compile(r"Unknown (\w+)Value filter: (\w+)|Cannot apply filter \"(\w+)\" to type: (\w+)"),
     "a filter is applied to a value type this engine does not accept (Jinja2 converts it to text first)"),
    (re.compile(r"Expected iterable"), "a loop over a string, which this engine refuses"),
    (re.compile(r"has no method named|is not a function|Unknown (?:String|Object)Value method"),
     "a Python method this engine does not implement; use a filter"),
)


def _cause(template: str, ours: Outcome, theirs: Outcome) -> tuple[str, str, int | None]:
    """``(severity, cause, line)`` of one divergence."""
    if ours.text is None:
        return ("info", f"the reference raises ({ours.error}) where this engine renders a prompt: it is more "
                "lenient, so a conversation Jinja2 refuses is rendered silently", ours.line)
    if theirs.text is None:
        error = theirs.error or ""
        meaning = next((text for pattern, text in _KNOWN_ERRORS if pattern.search(error)), None)
        cause = f"this engine fails: {error}" + (f" ({meaning})" if meaning else "")
        line = theirs.line or (_first_line(template, "generation") if "generation" in error else None)
        return "warning", cause, line
    text, other = ours.text, theirs.text
    index = first_difference(text, other)
    mine, yours = text[index:index + 30], other[index:index + 30]
    if "\r" in other and "\r\n" in template:
        why = "the template has CRLF line ends: Jinja2 reads them as \\n, this engine keeps the \\r"
    elif mine.startswith("None") and not yours.startswith("None"):
        why = "{{ none }} prints 'None' in Jinja2 and something else here; test for none before printing"
    elif (mine[:1] in "[{" and yours[:1] in "[{") or (mine[:1], yours[:1]) == ("'", '"'):
        why = "a list or dict printed without |tojson (Python's repr in Jinja2)"
    else:
        why = "the engine renders other text"
    return ("warning", f"{why}: first difference at character {index}, {mine!r} (Jinja2) vs {yours!r}",
            find_line(template, mine) or find_line(template, yours))


def _first_line(template: str, word: str) -> int | None:
    return next((number for number, text in enumerate(template.splitlines(), 1) if word in text), None)
