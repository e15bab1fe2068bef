"""``chatcodec lint``: one finding per line on stdout with its severity; exit 1 on an error (with
``--strict``, on a warning too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec.cli import main
from tests.conftest import corpus_path

STRIP = ("info CT001 Python method .strip() (MiniJinja and @huggingface/jinja implement it too); use |trim "
         "for other engines")
NONE = ("info CT002 None is Python spelling (MiniJinja and @huggingface/jinja accept it too); write none for "
        "other engines")
RT010 = ('warning RT010 fields: no implicit field (a field without open/open_pattern), so text outside every '
         'region is discarded; add one (e.g. "content": {}) to keep that text')


def test_clean_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content|trim }}{% endfor %}")
    assert main(["lint", str(template)]) == 0
    assert capsys.readouterr().out == ""


def test_corpus_template(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_path("chat_templates", "Qwen--Qwen2.5-7B-Instruct.jinja"))
    assert main(["lint", path]) == 0
    path = str(corpus_path("chat_templates", "CohereLabs--command-a-reasoning-08-2025.jinja"))
    assert main(["lint", path]) == 0  # a warning: not portable, not wrong
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{path}:199: warning CT003 'json_schema' may be a dict or list printed with Python's "
                     "repr (@huggingface/jinja prints JSON-like text instead); print it with |tojson"]
    assert main(["lint", "--strict", path]) == 1


def test_response_template_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "response.json"
    template.write_text(
        json.dumps({"start_anchor": "<a>", "fields": {"content": {"close_pattern": "(?=<end>)"}}})
    )
    assert main(["lint", str(template)]) == 0
    assert capsys.readouterr().out == (
        f"{template}: warning RT001 fields.content.close_pattern: look-ahead (?=...) in '(?=<end>)'\n"
    )


def test_model_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "additional_chat_templates").mkdir()
    (tmp_path / "chat_template.jinja").write_text("{{ m.strip() }}")
    (tmp_path / "additional_chat_templates" / "tool_use.jinja").write_text("{% if x == None %}{% endif %}")
    config = {"response_template": {"start_anchor": "<a>", "fields": {"content": {"open_pattern": r"(a)\1"}}}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    assert main(["lint", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path}[default]:1: {STRIP}",
        f"{tmp_path}[tool_use]:1: {NONE}",
        f"{tmp_path / 'tokenizer_config.json'}[response_template]: warning RT002 "
        "fields.content.open_pattern: back-reference \\1 in '(a)\\\\1'",
        f"{tmp_path / 'tokenizer_config.json'}[response_template]: {RT010}",
    ]


def test_syntax_error_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("ok\n{% if %}")
    other = tmp_path / "u.jinja"
    other.write_text("{{ x.strip() }}")
    assert main(["lint", str(template), str(other)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{template}:2: error CT000 cannot compile: Expected an expression, got 'end of statement block'",
        f"{other}:1: {STRIP}",
    ]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "{% for x in [1] %}" * 25 + "{% endfor %}" * 25,
            "chat template sandbox: the nesting of {% for %} loops exceeds Python's nested-block limit (20). "
            "Nest fewer loops inside one another (a macro starts a new count)",
        ),
        (
            "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
            "chat template sandbox: the nesting depth of the template exceeds recursion limit",
        ),
    ],
    ids=["nested-loops", "parentheses"],
)
def test_a_template_that_cannot_compile_is_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    template = tmp_path / "t.jinja"
    template.write_text(source)
    assert main(["lint", str(template)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{template}: error CT000 cannot compile: {message}")
    assert captured.err == ""


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            {"fields": {"content": {}}, "bogus": 1},
            "error RT000 response_template: Unknown keys in response_template: ['bogus']. Allowed keys: "
            "defaults, fields, start_anchor, start_anchor_pattern, version",
        ),
        (
            {"start_anchor": "S", "fields": {"tool_calls": {"open_pattern": "("}, "content": {}}},
            "error RT000 fields.tool_calls.open_pattern: invalid open_pattern regex: missing ) at position 1",
        ),
    ],
    ids=["unknown-key", "invalid-regex"],
)
def test_a_response_template_that_does_not_load_is_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], template: dict[str, object], message: str
) -> None:
    path = tmp_path / "response.json"
    path.write_text(json.dumps(template))
    assert main(["lint", str(path)]) == 1
    assert capsys.readouterr().out == f"{path}: {message}\n"


def test_template_files_are_read_up_to_a_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatcodec.cli import io as cli_io

    monkeypatch.setattr(cli_io, "MAX_CHAT_TEMPLATE_BYTES", 10)
    assert main(["lint", "/dev/zero"]) == 1
    assert capsys.readouterr().err == (
        "chatcodec: ValueError: /dev/zero: larger than 10 bytes, more than a chat template holds "
        "(chatcodec.cli.io.MAX_CHAT_TEMPLATE_BYTES)\n"
    )


def test_a_tokenizer_config_file_is_read_as_the_model_loader_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = {"eos_token": "</s>", "chat_template": "{{ m.strip() }}",
              "response_template": {"start_anchor": "<a>", "fields": {"content": {"open_pattern": r"(a)\1"}}}}
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps(config))
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}[default]:1: {STRIP}",
        f"{path}[response_template]: warning RT002 fields.content.open_pattern: "
        "back-reference \\1 in '(a)\\\\1'",
        f"{path}[response_template]: {RT010}",
    ]


@pytest.mark.parametrize("name", ["cfg", "cfg.jinja"])
def test_a_config_without_the_json_extension_is_linted_as_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """QA: a file holding {"chat_template": ...} not named .json was linted as a response template."""
    path = tmp_path / name
    path.write_text(json.dumps({"eos_token": "</s>", "chat_template": "{{ m.strip() }}"}))
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr() == (
        f"{path}[default]:1: {STRIP}\n", "")


def test_a_legacy_chat_template_json_is_linted_as_a_chat_template(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat_template.json"
    path.write_text(json.dumps({"chat_template": [{"name": "tool_use", "template": "{{ x == None }}"}]}))
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}[tool_use]:1: {NONE}"]


def test_a_json_file_that_holds_no_template_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen3"}))
    assert main(["lint", str(path)]) == 1
    assert capsys.readouterr() == ("", (
        f"chatcodec: ValueError: {path}: this JSON file is neither a response template (no 'fields', "
        "'start_anchor' or 'start_anchor_pattern') nor a file holding templates (no 'chat_template' or "
        "'response_template' key)\n"))


@pytest.mark.parametrize("text", ["", "  \n"])
def test_an_empty_template_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        text: str) -> None:
    template = tmp_path / "empty.jinja"
    template.write_text(text)
    assert main(["lint", str(template)]) == 1
    assert capsys.readouterr().out == (
        f"{template}: error CT000 empty template: every prompt it renders is empty (or only whitespace)\n")


def test_an_empty_template_in_a_model_directory_is_a_finding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chat_template.jinja").write_text("")
    assert main(["lint", str(tmp_path)]) == 1
    assert capsys.readouterr().out == (
        f"{tmp_path}[default]: error CT000 empty template: every prompt it renders is empty (or only "
        "whitespace)\n")


def test_strict_fails_on_warnings_but_not_on_info(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    info = tmp_path / "info.jinja"
    info.write_text("{{ x.strip() }}{{ None }}")
    warning = tmp_path / "warning.jinja"
    warning.write_text("{{ '{}'.format(x) }}")
    assert main(["lint", "--strict", str(info)]) == 0
    assert main(["lint", "--strict", str(warning)]) == 1
    assert main(["lint", str(warning)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"{warning}:1: warning CT001 Python method .format() is not implemented by @huggingface/jinja; "
        "use |format(...)")


def test_corpus_templates_fail_only_where_they_cannot_be_used(capsys: pytest.CaptureFixture[str]) -> None:
    """The 59 corpus templates are real and render in transformers: none is an error; the warnings are
    the portability hazards the research measured (portability.md, "Reliable" table)."""
    paths = sorted(str(path) for path in corpus_path("chat_templates").glob("*.jinja"))
    assert main(["lint", *paths]) == 0
    warned = sorted({Path(line.split(":")[0]).name + " " + line.split(" ")[2]
                     for line in capsys.readouterr().out.splitlines() if " warning " in line})
    assert warned == [
        "ByteDance-Seed--Seed-OSS-36B-Instruct.jinja CT006",
        "CohereLabs--command-a-reasoning-08-2025.jinja CT003",
        "HuggingFaceTB--SmolLM3-3B.jinja CT004",
        "microsoft--Phi-4-reasoning.jinja CT004",
        "moonshotai--Kimi-K2-Instruct.jinja CT005",
        "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja CT005",
        "tencent--Hy3.jinja CT001",
    ]


def test_bundled_response_templates_have_no_errors(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Their look-arounds are warnings (not portable), never errors (lint used to fail every one)."""
    from chatcodec import profiles

    paths = []
    for name in profiles.names():
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(profiles.load(name).response_template))
    assert main(["lint", *map(str, paths)]) == 0
    severities = {line.split(" ")[1] for line in capsys.readouterr().out.splitlines()}
    assert severities == {"warning"}


def test_text_nested_past_the_recursion_limit_is_linted_as_a_chat_template(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """QA: an object nested 5,000 deep in a file not named .json escaped as 'internal error
    (RecursionError)' while lint looked for a configuration in it; it is text to Jinja, so a chat template."""
    path = tmp_path / "deep.txt"
    path.write_text('{"a": ' + "[" * 5000 + "]" * 5000 + "}")
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr() == ("", "")
