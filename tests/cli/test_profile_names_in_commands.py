"""``chatcodec render`` and ``parse`` take a bundled profile name where they take a model directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatcodec.chat_templates.render import render_chat_template
from chatcodec.cli import main
from tests.conftest import corpus_path

MESSAGES = [{"role": "user", "content": "Hello there"}]


def test_render_with_a_profile_name_uses_its_bundled_template(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "deepseek-v3.1", str(conversation), "--generation-prompt"]) == 0
    template = corpus_path("chat_templates", "deepseek-ai--DeepSeek-V3.1.jinja").read_text(encoding="utf-8")
    expected = render_chat_template(
        template,
        MESSAGES,
        add_generation_prompt=True,
        bos_token="<｜begin▁of▁sentence｜>",
        eos_token="<｜end▁of▁sentence｜>",
    )
    assert capsysbinary.readouterr().out == expected.encode("utf-8")
    assert expected == "<｜begin▁of▁sentence｜><｜User｜>Hello there<｜Assistant｜></think>"


def test_render_with_a_profile_that_bundles_no_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "llama3_json", str(conversation)]) == 1
    assert capsys.readouterr().err == (
        "chatcodec: ValueError: llama3_json: profile 'llama3_json' bundles no chat template "
        "(Llama 3.1 Community License); pass a model directory or a template file\n"
    )


def test_a_file_named_like_a_profile_does_not_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """As ``ChatCodec.from_pretrained``: a directory, else a profile name, else a file."""
    monkeypatch.chdir(tmp_path)
    Path("qwen3").write_text("{{ messages[0]['content'] }}!", encoding="utf-8")
    Path("conversation.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "qwen3", "conversation.json"]) == 0
    assert capsysbinary.readouterr().out == b"<|im_start|>user\nHello there<|im_end|>\n"
    assert main(["render", "./qwen3", "conversation.json"]) == 0
    assert capsysbinary.readouterr().out == b"Hello there!"
    Path("out.txt").write_text("Hi<|im_end|>", encoding="utf-8")
    assert main(["parse", "qwen3", "out.txt", "--no-prefix"]) == 0
    assert capsysbinary.readouterr().out == b'{\n  "role": "assistant",\n  "content": "Hi"\n}\n'
    assert main(["parse", "./qwen3", "out.txt", "--no-prefix"]) == 1  # the file is a chat template
    assert capsysbinary.readouterr().err == (
        b"chatcodec: ValueError: ./qwen3: this is a chat template (Jinja: it has {% ... %} or {{ ... }}), "
        b"not a response template. A response template is JSON that says how to read the model's output "
        b"(`chatcodec profiles NAME --response-template` prints one); pass it, or the model directory or "
        b"bundled profile name, which bring their own\n")


def test_a_directory_named_like_a_profile_hides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("qwen3").mkdir()
    Path("qwen3", "chat_template.jinja").write_text("{{ messages[0]['content'] }}?", encoding="utf-8")
    Path("conversation.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    assert main(["render", "qwen3", "conversation.json"]) == 0
    assert capsysbinary.readouterr().out == b"Hello there?"


def test_parse_with_a_profile_name_uses_its_response_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "output.txt"
    output.write_text("I'm\nthinking</think>Hello, world!", encoding="utf-8")
    prefix = tmp_path / "prompt.txt"
    prefix.write_text("<｜User｜>Hi<｜Assistant｜><think>", encoding="utf-8")
    assert main(["parse", "DeepSeek-V3.1", str(output), "--prefix", str(prefix)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "role": "assistant",
        "reasoning_content": "I'm\nthinking",
        "content": "Hello, world!",
    }


def test_parse_with_an_unknown_name_says_what_was_expected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "no-such-profile", "-", "--no-prefix"]) == 1
    assert capsys.readouterr().err.startswith(
        "chatcodec: OSError: no-such-profile: no such file or directory"
    )


def test_lint_takes_a_profile_name(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: lint read 'qwen3' as a file name."""
    assert main(["lint", "qwen3"]) == 0  # warnings and notes only
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("profile qwen3[default]:") for line in lines)
    assert any(line.startswith("profile qwen3[response_template]: warning RT012") for line in lines)


@pytest.mark.parametrize(("argv", "expected"), [
    (["render", "qwen33", "c.json"], "a chat template file, a model directory"),
    (["lint", "qwen33"], "a template file, a model directory"),
    (["parse", "qwen33", "out.txt", "--no-prefix"], "a response template JSON file, a model directory"),
])
def test_a_typo_in_a_profile_name_gets_did_you_mean(argv: list[str], expected: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"chatcodec: OSError: qwen33: no such file or directory, nor a bundled profile (expected {expected} "
        "or a profile name). Did you mean 'qwen3'?\n")


def test_load_chat_templates_takes_a_profile_name() -> None:
    import chatcodec
    from chatcodec.errors import ChatTemplateNotFoundError

    assert chatcodec.load_chat_templates("qwen3") == chatcodec.profiles.load("qwen3").chat_template
    with pytest.raises(ChatTemplateNotFoundError, match="profile 'llama3_json' bundles no chat template"):
        chatcodec.load_chat_templates("llama3_json")


def test_a_chat_template_where_a_response_template_is_expected_says_so() -> None:
    import chatcodec
    from chatcodec.errors import ResponseTemplateError

    with pytest.raises(ResponseTemplateError, match="this string is a chat template \\(Jinja\\), not a "
                                                    "response template"):
        chatcodec.parse_response("Hi", "{{ messages[0].content }}", prefix="")


#: Outputs that end with the model's end-of-sequence token, or go on after it, or stop before it.
EXPORT_OUTPUTS = ["Hello there.{eos}", "Hello.{eos}\nUser: more text after the end", "Cut off mid-sen",
                  "<think>plan</think>Answer.{eos}trailing"]


@pytest.mark.parametrize("name", ["gemma4", "apertus", "jamba", "kimi_k2", "qwen3", "glm45"])
def test_an_exported_response_template_parses_as_the_profile_name(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: only the profile stopped at its end-of-sequence token (gemma4's content got
    'Hello<eos>' from the exported file)."""
    from chatcodec import profiles

    assert main(["profiles", name, "--response-template"]) == 0
    exported = tmp_path / "exported.json"
    exported.write_text(capsys.readouterr().out, encoding="utf-8")
    eos = profiles.load(name).special_tokens["eos_token"]
    for index, text in enumerate(EXPORT_OUTPUTS):
        output = tmp_path / f"out{index}.txt"
        output.write_text(text.format(eos=eos), encoding="utf-8")
        for mode in ([], ["--stream"], ["--errors", "keep"]):
            results = []
            for source in (name, str(exported)):
                code = main(["parse", source, str(output), "--no-prefix", "--events", *mode])
                results.append((code, capsys.readouterr()))
            assert results[0] == results[1], (text, mode)
