"""``chatcodec doctor``: findings on stdout, --json, exit 1 on an error-level finding."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chatcodec.cli import main
from tests.conftest import ROOT, corpus_path


def test_an_error_exits_1_and_json_has_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_path("chat_templates", "deepseek-ai--DeepSeek-V3.1.jinja"))
    assert main(["doctor", path, "--json", "--check", "tool-call-forms"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [sorted(finding) for finding in findings] == [
        ["check", "conversation", "line", "message", "severity"]]
    first = findings[0]
    assert (first["check"], first["severity"], first["line"]) == ("tool-call-forms", "error", 3)
    call = first["conversation"]["messages"][1]["tool_calls"][0]
    assert call["function"]["arguments"] == {"city": "Paris"}


def test_text_report_hides_info_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_path("chat_templates", "Qwen--Qwen2.5-7B-Instruct.jinja"))
    assert main(["doctor", path, "--check", "lint", "--check", "tool-call-forms"]) == 0
    lines = capsys.readouterr().out.splitlines()
    forms = next(n for n, line in enumerate(lines) if line.startswith("warning [tool-call-forms]"))
    assert lines[forms].startswith(
        "warning [tool-call-forms] line 36: a tool call whose arguments are a JSON string")
    assert lines[forms + 1].startswith('  conversation: {"messages": [')
    # the detected hermes profile's response template: look-aheads and chatcodec extensions (lint)
    assert [line.split()[2] for line in lines[:forms]] == ["RT001"] * 5 + ["RT012"] * 6
    assert lines[-1] == f"{path}: 0 error(s), 12 warning(s), 0 info"


def test_a_profile_without_a_chat_template_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from chatcodec import profiles

    name = next(name for name in profiles.names() if profiles.load(name).chat_template is None)
    assert main(["doctor", name]) == 1
    assert capsys.readouterr().err.endswith("bundles no chat template; doctor examines a chat template\n")


def test_the_readme_example_prints_what_the_readme_shows(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```console\n$ chatcodec doctor ", 1)[1].split("```", 1)[0]
    argument, *shown = block.splitlines()
    assert argument == "../shared/corpus/chat_templates/deepseek-ai--DeepSeek-V3.1.jinja"
    monkeypatch.chdir(ROOT)  # the README runs it from the checkout, beside the corpus
    assert main(["doctor", argument]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(shown) == 12
    for line, expected in zip(printed, shown, strict=True):  # "[...]" in the README: JSON cut short
        pattern = ".*".join(re.escape(part) for part in expected.split("[...]"))
        assert re.fullmatch(pattern, line), (line, expected)


def test_timeout_sets_the_render_limit_of_the_plain_conversation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """QA: doctor waited 60 s on an endless loop before reporting it; ``--timeout`` shortens that."""
    from chatcodec.chat_templates import limits

    template = tmp_path / "loop.jinja"
    template.write_text("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                        encoding="utf-8")
    assert main(["doctor", str(template), "--json", "--timeout", "0.2", "--check", "round-trip"]) == 1
    assert [finding["message"] for finding in json.loads(capsys.readouterr().out)["findings"]] == [
        "the chat template runs out of time on the plain conversation: chat template sandbox: the render "
        "time exceeds MAX_RENDER_SECONDS (0.2). if the template is trusted, give each render more time with "
        "--timeout SECONDS; the checks that render it were not run (each "
        "renders dozens of conversations)"]
    assert limits.MAX_RENDER_SECONDS == 60.0


def _config_with_response_template(tmp_path: Path, response_template: object) -> Path:
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({
        "chat_template": corpus_path("chat_templates", "Qwen--Qwen3-0.6B.jinja").read_text(encoding="utf-8"),
        "eos_token": "<|im_end|>", "response_template": response_template}), encoding="utf-8")
    return config


def test_a_tokenizer_config_file_is_checked_against_its_own_response_template(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """QA: the file's own response template was ignored for the bundled profile its chat template
    matches (0 errors), while its directory gave these four."""
    own = {"start_anchor": "<|im_start|>assistant\n",
           "fields": {"tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True},
                      "content": {"close": "<|im_end|>"}}}
    config = _config_with_response_template(tmp_path, own)
    assert main(["doctor", str(config), "--json", "--check", "round-trip"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [finding["message"].split(":", 1)[0] for finding in findings] == [
        "content", "reasoning", "one_call", "parallel_calls"]
    assert all(finding["message"].endswith(f"fix the response template ({config}) or the chat template so "
                                           "that they agree") for finding in findings)
    assert main(["doctor", str(tmp_path), "--json", "--check", "round-trip"]) == 1
    assert len(json.loads(capsys.readouterr().out)["findings"]) == 4


@pytest.mark.parametrize("from_option", [False, True])
def test_an_invalid_response_template_file_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], from_option: bool) -> None:
    if from_option:
        source = tmp_path / "response_template.json"
        source.write_text('{"fields": {"content": {}}}', encoding="utf-8")
        argv = ["doctor", "qwen3", "--response-template", str(source)]
    else:
        source = _config_with_response_template(tmp_path, {"fields": {"content": {}}})
        argv = ["doctor", str(source)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (  # the file was not named
        f"chatcodec: ResponseTemplateError: {source}: start_anchor: a response template needs start_anchor "
        '(or start_anchor_pattern): where the assistant message starts in the prompt, e.g. '
        '"<|im_start|>assistant\\n". It is required even when parsing without a prompt (prefix="", '
        'chatcodec parse --no-prefix)\n')
