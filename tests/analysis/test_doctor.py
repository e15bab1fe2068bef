"""``chatcodec doctor`` on the real corpus templates: it runs on every one, and finds exactly the
known problems (``../shared/research/portability.md`` for the engines; the corpus goldens and the
bundled profiles for the rest). The @huggingface/jinja part needs Node.js and the package that
``scripts/setup_hf_jinja.sh`` installs (CI runs it); without them the test fails, naming the script.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

from chatcodec import profiles
from chatcodec.analysis import cross_engine
from chatcodec.analysis.doctor import DoctorTarget, run_doctor
from chatcodec.analysis.doctor_probes import Outcome, render_probe
from chatcodec.analysis.findings import Finding
from tests.conftest import corpus_template, load_json

TEMPLATES = sorted(entry["file"] for entry in load_json("chat_templates", "MANIFEST.json"))
IN_PROCESS = ("lint", "round-trip", "prefix-stability", "tool-call-forms", "cross-engine:minijinja")


def special_tokens(file: str) -> dict[str, Any]:
    entry = next(entry for entry in load_json("chat_templates", "MANIFEST.json") if entry["file"] == file)
    return dict(entry["special_tokens"])


def target(file: str) -> DoctorTarget:
    """The corpus template with its special tokens and the bundled profile detected from it (what
    `chatcodec doctor FILE` uses)."""
    template = corpus_template(file)
    name = profiles.detect(template)
    return DoctorTarget(file, {"default": template}, special_tokens(file),
                        profiles.load(name).response_template if name else None,
                        f"profile:{name}" if name else None)


#: Per template with a known problem: the (check, severity, line) of every error, and of every
#: MiniJinja divergence (portability.md: {% generation %} in SmolLM3 and Phi-4-reasoning, `none is
#: iterable` in Qwen3-Coder and Nemotron-3-Nano, `|indent` in Command-R+). Every other template has
#: none.
KNOWN = {
    "CohereForAI--c4ai-command-r-plus-tool_use.jinja": [("cross-engine:minijinja", "warning", 195)],
    "HuggingFaceTB--SmolLM3-3B.jinja": [("cross-engine:minijinja", "warning", 76)],
    "Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja": [("cross-engine:minijinja", "warning", 27)],
    "deepseek-ai--DeepSeek-R1.jinja": [("tool-call-forms", "error", 1)],
    "deepseek-ai--DeepSeek-V3.1.jinja": [("tool-call-forms", "error", 3)],
    "meetkai--functionary-medium-v3.1.jinja": [("tool-call-forms", "error", 47)],
    "microsoft--Phi-4-reasoning.jinja": [("cross-engine:minijinja", "warning", 1)],
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": [("cross-engine:minijinja", "warning", 47)],
}


@cache
def findings(file: str) -> tuple[Finding, ...]:
    return tuple(run_doctor(target(file), IN_PROCESS))


def test_content_a_template_renders_as_reasoning_is_the_template_at_odds_with_itself() -> None:
    # Nemotron-Nano-9B-v2 renders the final turn after the <think> its prompt opens and never closes
    # it; gpt-oss renders the content of a tool-call turn in its analysis channel. Neither shows the
    # bundled profile wrong, so neither is an error.
    nemotron = [finding for finding in findings("nvidia--NVIDIA-Nemotron-Nano-9B-v2.jinja")
                if finding.check == "round-trip" and finding.severity != "info"]
    assert [(finding.severity, finding.message) for finding in nemotron] == [(
        "warning",
        "content: the chat template is at odds with itself: the template renders this turn's content where a "
        "model writes its reasoning (a reasoning channel, or after a reasoning block the generation prompt "
        "opens and the turn never closes), so the render cannot say where a model writes its answer: "
        "content/content/single: content: expected 'It is sunny in Paris today.', parsed None")]
    assert nemotron[0].conversation is not None
    assert nemotron[0].conversation["messages"][-1] == {"role": "assistant",
                                                        "content": "It is sunny in Paris today."}
    gpt_oss = [finding.message for finding in findings("openai--gpt-oss-120b.jinja")
               if finding.check == "round-trip"]
    assert gpt_oss == ["parallel_calls: the chat template does not render it: parallel_calls/two_calls/"
                       "single: the template does not render the tool_calls of this turn"]


@pytest.mark.parametrize("file", TEMPLATES)
def test_doctor_runs_on_every_corpus_template(file: str) -> None:
    found = [(finding.check, finding.severity, finding.line) for finding in findings(file)
             if finding.severity == "error"
             or (finding.check, finding.severity) == ("cross-engine:minijinja", "warning")]
    assert found == KNOWN.get(file, [])
    for finding in findings(file):
        assert json.loads(json.dumps(finding.to_json())) == finding.to_json()


def message(file: str, check: str, severity: str = "error") -> str:
    return next(finding.message for finding in findings(file)
                if (finding.check, finding.severity) == (check, severity))


def test_a_template_that_refuses_mapping_arguments() -> None:
    assert message("deepseek-ai--DeepSeek-V3.1.jinja", "tool-call-forms") == (
        "a tool call whose arguments are a mapping (the form transformers documents and passes) raises: "
        'ChatTemplateTypeError: can only concatenate str (not "dict") to str; accept a mapping (print it '
        "with |tojson), and a JSON string too")


def test_nested_arguments_printed_as_python_repr_round_trip() -> None:
    # Seed-OSS and Qwen3-Coder write object arguments with Python's str(); the object- and
    # array-typed parameters read that text back as the Python literal it is
    for file in ("ByteDance-Seed--Seed-OSS-36B-Instruct.jinja", "Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja"):
        assert [finding.message for finding in findings(file)
                if finding.check == "round-trip" and finding.severity != "info"] == []


def test_the_generation_tag_on_minijinja() -> None:
    finding = next(finding for finding in findings("HuggingFaceTB--SmolLM3-3B.jinja")
                   if finding.check == "cross-engine:minijinja")
    assert finding.message == (
        "this engine fails: syntax error: unknown statement generation (in <string>:76) ({% generation %} "
        "is a transformers tag this engine does not know, so the template does not parse; keep it only if "
        "assistant masks are needed) (12 of the 12 probe prompts the reference renders)")
    assert finding.conversation == {
        "messages": [{"role": "user", "content": "What is the capital of France?"}], "tools": None,
        "add_generation_prompt": False, "kwargs": special_tokens("HuggingFaceTB--SmolLM3-3B.jinja")}


def test_prefix_stability_finds_reasoning_stripped_from_earlier_turns() -> None:
    found = [finding for finding in findings("Qwen--Qwen3-0.6B.jinja")
             if finding.check == "prefix-stability"]
    assert [(finding.severity, finding.line) for finding in found] == [("warning", 36), ("warning", 36)]
    assert found[1].message == (
        "reasoning conversation: adding a user turn changes the text of the earlier turns (first difference "
        "at character 80: '<think>\\nThe user asks for a capital city' became 'The capital of France is "
        "Paris.<|im_end|'); the reasoning of an earlier assistant turn is dropped once a later user turn "
        "exists; keep it (render reasoning_content for every assistant turn) if the model was trained so. "
        "Servers cannot reuse the KV cache of the earlier prompt past that point")


def test_prefix_stability_finds_the_date() -> None:
    found = [finding for finding in findings("meta-llama--Llama-3.2-11B-Vision-Instruct.jinja")
             if finding.check == "prefix-stability"]
    assert [(finding.severity, finding.line, finding.message[:60]) for finding in found] == [
        ("info", 9, "the prompt holds the date (strftime_now; character 112, 'r 2")]


def test_tools_empty_list_renders_a_tools_block() -> None:
    found = [finding for finding in findings("meta-llama--Llama-3.1-8B-Instruct.jinja")
             if finding.check == "tool-call-forms" and finding.message.startswith("no tools")]
    assert [(finding.severity, finding.line) for finding in found] == [("warning", 26)]
    assert found[0].conversation is not None and found[0].conversation["tools"] == []


#: Per template: the first words of each @huggingface/jinja divergence the reference renders
#: (portability.md: int-keyed dict literal, filters on non-strings, string iteration, containers
#: printed as JSON, CRLF, the missing .format()).
HF_KNOWN = {
    "ByteDance-Seed--Seed-OSS-36B-Instruct": ["this engine fails: Error: Object keys must be strings"],
    "HuggingFaceTB--SmolLM3-3B": ["this engine fails: Error: Unknown ObjectValue filter: string"],
    "Qwen--Qwen3-Coder-30B-A3B-Instruct": ["a list or dict printed without |tojson"],
    "THUDM--glm-4-9b-chat": ["a list or dict printed without |tojson"],
    "meetkai--functionary-medium-v3.1": ['this engine fails: Error: Cannot apply filter "selectattr"'],
    "meta-llama--Llama-3.1-8B-Instruct": ["this engine fails: Error: Unknown ArrayValue filter: trim"],
    "meta-llama--Llama-3.2-11B-Vision-Instruct": ["this engine fails: Error: Expected iterable"],
    "meta-llama--Llama-Guard-3-11B-Vision": ["this engine fails: Error: Unknown StringValue filter: select"],
    "nvidia--Llama-3.1-Nemotron-70B-Instruct": ["this engine fails: Error: Unknown ArrayValue filter: trim"],
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": ["the template has CRLF line ends"],
    "tencent--Hy3": ["this engine fails: Error: Cannot call something that is not a function"],
}


def test_hf_jinja_divergences_on_every_corpus_template() -> None:
    """One Node.js run for all 59 templates (the doctor CLI runs one per template)."""
    jobs, inputs = [], []
    for file in TEMPLATES:
        template = corpus_template(file)
        probes = cross_engine.cross_engine_probes(special_tokens(file))
        jobs.append((template, [cross_engine.engine_context(probe) for probe in probes]))
        inputs.append((file, template, probes))
    outcomes = cross_engine.render_hf_jinja(jobs)
    assert not isinstance(outcomes, str), f"{outcomes} (CI runs scripts/setup_hf_jinja.sh before the tests)"
    found = {}
    for (file, template, probes), engine in zip(inputs, outcomes, strict=True):
        reference = [render_probe(template, probe) for probe in probes]
        warnings = [finding.message for finding in cross_engine.divergence_findings(
            template, "cross-engine:hf-jinja", probes, reference, engine) if finding.severity == "warning"]
        if warnings:
            found[file.removesuffix(".jinja")] = warnings
    assert {name: len(messages) for name, messages in found.items()} == {name: 1 for name in HF_KNOWN}
    for name, starts in HF_KNOWN.items():
        assert [text[:len(start)] for text, start in zip(found[name], starts, strict=True)] == starts, name


def test_a_template_that_runs_on_in_hf_jinja_is_a_reason_not_an_internal_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cross_engine, "NODE_TIMEOUT", 1)
    endless = "{% for i in range(1000000000) %}{{ i }}{% endfor %}"  # no range limit in that engine
    assert cross_engine.render_hf_jinja([(endless, [{"messages": []}])]) == (
        "Node.js did not finish within 1 s (NODE_TIMEOUT per template): @huggingface/jinja has no limits "
        "on loops or sizes, so a template that runs long runs on there")


def test_node_running_out_of_memory_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    crash = ("\n<--- Last few GCs --->\n\nFATAL ERROR: Reached heap limit Allocation failed - "
             "JavaScript heap out of memory\n----- Native stack trace -----\n\n"
             " 1: 0xb8ced1 node::OOMErrorHandler\n"
             " 7: 0x7f8f4669a476\n")
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess(
        args, 134, stdout="", stderr=crash))
    assert cross_engine.render_hf_jinja([("x", [{"messages": []}])]) == (
        "Node.js failed: FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory")
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess(
        args, 1, stdout="", stderr="Error: first\n    at x\nError: the last line\n"))
    assert cross_engine.render_hf_jinja([("x", [{"messages": []}])]) == "Node.js failed: Error: the last line"


def test_an_engine_that_is_missing_is_an_info_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "minijinja", None)
    monkeypatch.setenv("CHATCODEC_HF_JINJA", "/nonexistent")
    found = run_doctor(target("Qwen--Qwen2.5-7B-Instruct.jinja"),
                       ("cross-engine:minijinja", "cross-engine:hf-jinja"))
    assert [(finding.check, finding.severity, finding.message) for finding in found] == [
        ("cross-engine:minijinja", "info", "not run: the minijinja package is not installed; install it with "
         "`pip install 'chatcodec[minijinja]'`"),
        ("cross-engine:hf-jinja", "info", "not run: @huggingface/jinja is not installed; run "
         "scripts/setup_hf_jinja.sh (npm install @huggingface/jinja@0.5.11 into "
         "~/.cache/chatcodec/hf-jinja), or set CHATCODEC_HF_JINJA to its package folder")]


def test_a_template_that_renders_no_conversation_is_an_error() -> None:
    broken = DoctorTarget("r.jinja", {"default": '{{ raise_exception("boom") }}'})
    found = [finding for finding in run_doctor(broken, ("prefix-stability",))]
    assert [(finding.severity, finding.line, finding.message) for finding in found] == [(
        "error", 1,
        "the chat template renders none of the probe conversations: the plain conversation cannot be "
        "rendered, so its prefix stability is not checked: ChatTemplateError: boom (the same in the system "
        "prompt, reasoning, tool call conversations)")]


def test_minijinja_that_runs_out_of_memory_is_an_info_finding() -> None:
    """QA: MiniJinja rendered in the doctor's own process, without limits; a template that doubles a
    string in a loop made it ask for 4 GiB and abort the process (SIGABRT: Rust aborts when an
    allocation fails), so `chatcodec doctor` died with a Rust backtrace instead of reporting.
    (``run_doctor`` itself now stops before: the template hits chatcodec's MAX_STRING_LENGTH on the
    plain conversation; the engine check, which a template hitting no limit of chatcodec's but one
    of MiniJinja's reaches, is called directly.)"""
    template = '{{ ("a" * 100000000)|replace("a", "abcdefghijklmnopqrstuvwxyz") }}'
    found = cross_engine.check_cross_engines(template, {}, ("minijinja",))
    assert [(finding.check, finding.severity) for finding in found] == [("cross-engine:minijinja", "info")]
    assert re.fullmatch(
        r"not run: MiniJinja failed: memory allocation of \d+ bytes failed \(it renders within "
        r"MINIJINJA_MEMORY, 2,147,483,648 bytes: it has no limits on sizes, so a template that allocates "
        r"without end fails there\)",
        found[0].message), found[0].message


def test_minijinja_that_runs_too_long_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: `'hi' * 100000000` in a loop kept MiniJinja (and so `chatcodec doctor`) busy for minutes."""
    monkeypatch.setattr(cross_engine, "MINIJINJA_TIMEOUT", 1)
    endless = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x"
    contexts = [cross_engine.engine_context(probe) for probe in cross_engine.cross_engine_probes({})[:1]]
    assert cross_engine._render_minijinja(endless, contexts) == (
        "MiniJinja did not finish within 1 s (MINIJINJA_TIMEOUT): it has no limits on loops or sizes, "
        "so a template that runs long runs on there")


def test_minijinja_stopped_by_its_cpu_limit_reads_as_out_of_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: the child's CPU limit is the timeout in whole seconds, so it can fire before the wall clock
    (exit -SIGXCPU); that read "MiniJinja failed: exit -24 ... MINIJINJA_MEMORY", blaming memory."""
    monkeypatch.setattr(cross_engine, "MINIJINJA_TIMEOUT", 1.9)  # CPU limit 1 s, wall clock 1.9 s
    endless = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x"
    contexts = [cross_engine.engine_context(probe) for probe in cross_engine.cross_engine_probes({})[:1]]
    assert cross_engine._render_minijinja(endless, contexts) == (
        "MiniJinja did not finish within 1.9 s (MINIJINJA_TIMEOUT): it has no limits on loops or sizes, "
        "so a template that runs long runs on there")


def test_minijinja_renders_in_its_child_process_as_it_did_in_process() -> None:
    template = ('{{ raise_exception("no system") if messages[0].role == "system" }}'
                "{% for m in messages %}{{ m.content|tojson }} {{ strftime_now('%Y') }}{% endfor %}")
    contexts = [cross_engine.engine_context(probe) for probe in cross_engine.cross_engine_probes({})[:4]]
    assert cross_engine._render_minijinja(template, contexts) == [
        Outcome('"What is the capital of France?" 2026'), Outcome('"What is the capital of France?" 2026'),
        Outcome(None, "TemplateError: no system"), Outcome(None, "TemplateError: no system")]


def test_a_template_that_runs_out_of_time_is_rendered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: an endless loop ran into MAX_RENDER_SECONDS once per probe conversation, so `chatcodec
    doctor` took over ten minutes for the cross-engine check alone and far longer for all of them."""
    from chatcodec.chat_templates import limits

    monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 1.0)
    endless = DoctorTarget("endless.jinja", {
        "default": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x"})
    found = run_doctor(endless)
    assert [finding.to_json() for finding in found] == [{
        "check": "round-trip", "severity": "error",
        "message": "the chat template runs out of time on the plain conversation: chat template sandbox: the "
                   "render time exceeds MAX_RENDER_SECONDS (1.0). if the template is trusted, raise "
                   "chatcodec.chat_templates.limits.MAX_RENDER_SECONDS; the checks that render it were not "
                   "run (each renders dozens of conversations)",
        "line": 1,
        "conversation": {"messages": [{"role": "user", "content": "What is the capital of France?"}],
                         "tools": None, "add_generation_prompt": True, "kwargs": {}}}]


def test_a_template_that_hits_any_sandbox_limit_is_rendered_once() -> None:
    """QA: a string doubled up to MAX_STRING_LENGTH took a fraction of a second a render, and
    `chatcodec doctor` 97 s over all its probe renders; now the plain render's limit stops it."""
    doubling = DoctorTarget("doubling.jinja", {"default": (
        "{% set ns = namespace(x='a') %}{% for i in range(100) %}{% set ns.x = ns.x ~ ns.x %}"
        "{% endfor %}{{ ns.x }}")})
    assert [finding.to_json() for finding in run_doctor(doubling)] == [{
        "check": "round-trip", "severity": "error",
        "message": "the chat template hits the sandbox limit MAX_STRING_LENGTH on the plain conversation: "
                   "chat template sandbox: a concatenated string of 67,108,864 characters exceeds "
                   "MAX_STRING_LENGTH (50,000,000). if the template is trusted, raise "
                   "chatcodec.chat_templates.limits.MAX_STRING_LENGTH; the checks that render it were not "
                   "run (each renders dozens of conversations)",
        "line": 1,
        "conversation": {"messages": [{"role": "user", "content": "What is the capital of France?"}],
                         "tools": None, "add_generation_prompt": True, "kwargs": {}}}]
