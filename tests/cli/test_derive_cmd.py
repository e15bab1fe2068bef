"""``chatcodec derive MODEL``: the response template on stdout (or the JSON report), labels on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec.cli import main
from tests.analysis.corpus_split import is_held_out
from tests.conftest import ROOT, corpus_path, corpus_template
from tests.hub_cache import make_hub_cache
from tests.model.helpers import make_model_dir

QWEN25 = "Qwen--Qwen2.5-7B-Instruct.jinja"


def test_qwen25_is_a_development_template() -> None:
    assert not is_held_out(QWEN25)


def test_a_model_directory_prints_the_template_and_the_labels(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    directory = make_model_dir(tmp_path / "model", chat_template=corpus_template(QWEN25),
                               special_tokens={"eos_token": "<|im_end|>"})
    assert main(["derive", str(directory)]) == 0
    captured = capsys.readouterr()
    template = json.loads(captured.out)
    assert template["start_anchor"] == "<|im_start|>assistant\n"
    assert template["fields"]["content"] == {"close": ["<|im_end|>"], "content_args": {"strip": "blank"}}
    assert captured.err.splitlines() == [
        f"chatcodec: derived from {directory}: verified: every capability the template renders round-trips",
        "  content         verified",
        "  reasoning       unsupported  the template does not render it (reasoning/reasoning/single: the "
        "template does not render the reasoning_content of this turn)",
        "  one_call        verified",
        "  parallel_calls  verified",
        "  note: message shape: the standard message shape",
        "  note: tool calls: JSON object per call",
    ]


def test_a_hub_id_is_read_from_the_hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Offline (``tests/conftest.py`` sets ``HF_HUB_OFFLINE=1``): the snapshot in the Hub cache, with
    the special tokens of its tokenizer_config.json, as for a model directory."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    make_hub_cache(cache, "acme/tiny-qwen25", {
        "tokenizer_config.json": json.dumps({"chat_template": corpus_template(QWEN25),
                                             "eos_token": "<|im_end|>"})})
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    assert main(["derive", "acme/tiny-qwen25", "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["verified"] is True
    assert report["response_template"]["fields"]["content"] == {"close": ["<|im_end|>"],
                                                                 "content_args": {"strip": "blank"}}
    assert captured.err == ""


def test_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_path("chat_templates", QWEN25))
    assert main(["derive", path, "--json", "--var", "eos_token=<|im_end|>"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert set(report) == {"response_template", "capabilities", "verified", "notes"}
    assert report["verified"] is True
    assert {name: label["status"] for name, label in report["capabilities"].items()} == {
        "content": "verified", "reasoning": "unsupported", "one_call": "verified",
        "parallel_calls": "verified"}
    assert report["capabilities"]["reasoning"]["applicable"] is False
    assert captured.err == ""


def test_a_bare_template_file_without_eos_token_warns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", str(corpus_path("chat_templates", QWEN25)), "--json"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("chatcodec: warning: no eos_token is known (a bare template file)")


def test_a_bundled_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", "qwen3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["capabilities"]["reasoning"]["status"] == "verified"
    reasoning = report["response_template"]["fields"]["reasoning_content"]
    assert reasoning["close_pattern"] == r"(?:\n)?</think>(?:\n\n)?"


def test_a_template_that_does_not_compile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% for m in messages %}{{ m.content }}", encoding="utf-8")
    assert main(["derive", str(broken)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[-3].startswith("chatcodec: ChatTemplateSyntaxError: Unexpected end of template.")
    assert lines[-2:] == [f"  line 1 of the chat template '{broken}' (TemplateSyntaxError):",
                          "    {% for m in messages %}{{ m.content }}"]


def test_an_empty_template_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jinja"
    empty.write_text("\n", encoding="utf-8")
    assert main(["derive", str(empty)]) == 1
    assert "ChatTemplateNotFoundError: chat template: the template text is empty" in capsys.readouterr().err


def test_the_readme_example_prints_what_the_readme_shows(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```console\n$ chatcodec derive ", 1)[1].split("```", 1)[0]
    command, shown = block.split("$ cat response_template.json\n")
    lines = command.splitlines()
    assert lines[:2] == ["../shared/corpus/chat_templates/Qwen--Qwen3-Next-80B-A3B.jinja \\",
                         "    --var eos_token='<|im_end|>' > response_template.json"]
    monkeypatch.chdir(ROOT)  # the README runs it from the checkout, beside the corpus
    argument = lines[0].removesuffix(" \\")
    assert main(["derive", argument, "--var", "eos_token=<|im_end|>"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == lines[2:]
    assert captured.out == shown


def test_seed_oss_calls_are_verified(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_path("chat_templates", "ByteDance-Seed--Seed-OSS-36B-Instruct.jinja"))
    assert main(["derive", path, "--json", "--var", "eos_token=<seed:eos>"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["capabilities"]["one_call"]["status"] == "verified"
    tag_args = report["response_template"]["fields"]["tool_calls"]["content_args"]
    assert tag_args["value_parser"] == {"name": "x-python-literal"}


ENDLESS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_template_that_runs_out_of_time_is_one_error_naming_it_and_the_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], json_flag: list[str]) -> None:
    """QA: `chatcodec derive` ran for over ten minutes on an endless loop (60 s a probe render).
    ``--timeout`` sets the render limit; the plain conversation runs out of it and derive stops."""
    from chatcodec.chat_templates import limits

    template = tmp_path / "loop.jinja"
    template.write_text(ENDLESS, encoding="utf-8")
    assert main(["derive", str(template), "--timeout", "0.2", "--var", "eos_token=</s>", *json_flag]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "chatcodec: ChatTemplateLimitError: derive: the chat template runs out of time on the plain "
        "conversation: chat template sandbox: the render time exceeds MAX_RENDER_SECONDS (0.2). "
        "if the template is trusted, give each render more time with --timeout SECONDS; nothing was derived "
        "(the derivation renders dozens of conversations)",
        f"  line 1 of the chat template '{template}':",
        f"    {ENDLESS}",
    ]
    assert limits.MAX_RENDER_SECONDS == 60.0  # the option holds for the command only


def test_a_named_template_that_runs_out_of_time_is_named_with_its_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = make_model_dir(tmp_path / "model", special_tokens={"eos_token": "</s>"},
                               chat_template={"default": "{{ 'x' }}", "tool_use": ENDLESS})
    assert main(["derive", str(directory), "--timeout", "0.2"]) == 1
    assert capsys.readouterr().err.splitlines()[1] == (
        f"  line 1 of the chat template '{directory}[tool_use]':")


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_template_that_raises_on_every_probe_fails_naming_the_raise_and_the_conversation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], json_flag: list[str]) -> None:
    """QA: derive printed ``{"start_anchor": "\\n", "fields": {"content": {}}}`` and exited 0 for a
    template that renders nothing, while doctor reported an error: nothing can be derived then."""
    template = tmp_path / "t.jinja"
    template.write_text("{{ raise_exception('boom') }}", encoding="utf-8")
    assert main(["derive", str(template), "--var", "eos_token=</s>", *json_flag]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "chatcodec: ChatTemplateError: derive: the chat template raises on every probe conversation (33 "
        "tried) and on the plain one, so nothing can be derived; it raised 'boom' on {\"messages\": "
        "[{\"role\": \"user\", \"content\": \"What is the capital of France?\"}], \"tools\": null, "
        "\"add_generation_prompt\": true, \"kwargs\": {}}",
        f"  line 1 of the chat template '{template}':",
        "    {{ raise_exception('boom') }}",
    ]


@pytest.mark.parametrize("where", ["directory", "--var"])
def test_a_special_token_too_long_to_derive_with_is_an_error(tmp_path: Path, where: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """QA: a 100,000-character eos_token kept the derivation busy for minutes (10,000: 4 s)."""
    token = "x" * 100_000
    directory = make_model_dir(tmp_path / "model", chat_template=corpus_template(QWEN25),
                               special_tokens={"eos_token": token if where == "directory" else "<|im_end|>"})
    extra = [] if where == "directory" else ["--var", f"eos_token={token}"]
    assert main(["derive", str(directory), *extra]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"chatcodec: ValueError: derive: {directory}: nothing was derived: its special token eos_token is "
        "100,000 characters long, more than MAX_DERIVE_TOKEN_CHARS (1,000) allows deriving with (real "
        "special tokens are a few dozen characters)\n")
