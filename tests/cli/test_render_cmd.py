"""``chatcodec render``: exact prompt bytes on stdout, for template files and model directories.

Expected prompts are the corpus's golden renders (made by the reference).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatcodec.cli import main
from tests.conftest import corpus_path, golden_renders, load_json

LLAMA = "meta-llama--Llama-3.1-8B-Instruct.jinja"
VISION = "meta-llama--Llama-3.2-11B-Vision-Instruct.jinja"


def golden(template: str, conversation: str, agp: bool, **extra: Any) -> dict[str, Any]:
    for line in golden_renders():
        if (line["template"], line["conversation"], line["add_generation_prompt"]) != (
            template,
            conversation,
            agp,
        ):
            continue
        if all(line["kwargs"].get(key) == value for key, value in extra.items()) and (
            set(line["kwargs"]) - {"bos_token", "eos_token", "pad_token", "unk_token"} <= set(extra)
        ):
            return line
    raise LookupError((template, conversation, agp, extra))


def conversation_file(tmp_path: Path, name: str, *, as_object: bool) -> Path:
    conversation = load_json("conversations.json")[name]
    data: Any = conversation["messages"]
    if as_object:
        data = {"messages": conversation["messages"], "tools": conversation["tools"]}
        if conversation["documents"] is not None:
            data["documents"] = conversation["documents"]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def model_dir(tmp_path: Path, template: str, special_tokens: dict[str, str]) -> Path:
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "chat_template.jinja").write_text(
        corpus_path("chat_templates", template).read_text(encoding="utf-8"), encoding="utf-8"
    )
    config = {key: {"content": value, "special": True} for key, value in special_tokens.items()}
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, str]:
    code = main(list(argv))
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode("utf-8")


class TestRender:
    def test_template_file_and_message_list(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        line = golden(LLAMA, "unicode", True)
        conversation = conversation_file(tmp_path, "unicode", as_object=False)
        code, out, err = run(
            capsysbinary,
            "render",
            str(corpus_path("chat_templates", LLAMA)),
            str(conversation),
            "--generation-prompt",
            "--var",
            "bos_token=<|begin_of_text|>",
            "--var",
            "eos_token=<|eot_id|>",
        )
        assert (code, err) == (0, "")
        assert out == line["rendered"].encode("utf-8")

    def test_model_directory_with_special_tokens(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        line = golden(LLAMA, "tools_offered", False)
        directory = model_dir(tmp_path, LLAMA, {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})
        conversation = conversation_file(tmp_path, "tools_offered", as_object=True)
        code, out, _ = run(capsysbinary, "render", str(directory), str(conversation))
        assert code == 0
        assert out == line["rendered"].encode("utf-8")

    def test_variables_are_json_or_strings(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        line = golden(LLAMA, "tools_offered", True, date_string="01 Feb 2026", tools_in_user_message=False)
        directory = model_dir(tmp_path, LLAMA, {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})
        conversation = conversation_file(tmp_path, "tools_offered", as_object=True)
        code, out, _ = run(
            capsysbinary, "render", str(directory), str(conversation), "--generation-prompt",
            "--var", "date_string=01 Feb 2026", "--var", "tools_in_user_message=false",
        )  # fmt: skip
        assert code == 0
        assert out == line["rendered"].encode("utf-8")

    def test_tools_file_overrides_the_conversation(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        line = golden(LLAMA, "tools_offered", True)
        directory = model_dir(tmp_path, LLAMA, {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})
        conversation = conversation_file(tmp_path, "tools_offered", as_object=False)
        tools = tmp_path / "tools.json"
        tools.write_text(
            json.dumps(load_json("conversations.json")["tools_offered"]["tools"]), encoding="utf-8"
        )
        code, out, _ = run(capsysbinary, "render", str(directory), str(conversation), "--tools", str(tools),
                           "--generation-prompt")  # fmt: skip
        assert code == 0
        assert out == line["rendered"].encode("utf-8")

    def test_now(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        line = golden(VISION, "single_user", True)
        assert line["clock"] == "2026-01-15T12:00:00"
        directory = model_dir(tmp_path, VISION, {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})
        conversation = conversation_file(tmp_path, "single_user", as_object=False)
        code, out, _ = run(capsysbinary, "render", str(directory), str(conversation), "--generation-prompt",
                           "--now", line["clock"])  # fmt: skip
        assert code == 0
        assert out == line["rendered"].encode("utf-8")

    def test_documents_and_stdin(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsysbinary: pytest.CaptureFixture[bytes]) -> None:  # fmt: skip
        template = tmp_path / "rag.jinja"
        template.write_text("{% for d in documents %}[{{ d.title }}]{% endfor %}{{ messages[0].content }}")
        documents = tmp_path / "docs.json"
        documents.write_text(json.dumps([{"title": "A", "text": "a"}, {"title": "B", "text": "b"}]))
        stdin = io.TextIOWrapper(io.BytesIO(json.dumps([{"role": "user", "content": "q ✓"}]).encode()))
        monkeypatch.setattr(sys, "stdin", stdin)
        code, out, _ = run(capsysbinary, "render", str(template), "-", "--documents", str(documents))
        assert (code, out) == (0, "[A][B]q ✓".encode())

    def test_continue_final_message(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{% for m in messages %}<{{ m.role }}>{{ m.reasoning_content }}|{{ m.content }}"
                            "</{{ m.role }}>{% endfor %}")  # fmt: skip
        conversation = tmp_path / "c.json"
        conversation.write_text(
            json.dumps([{"role": "assistant", "reasoning_content": "hmm", "content": "ok"}])
        )
        code, out, _ = run(
            capsysbinary, "render", str(template), str(conversation), "--continue-final-message"
        )
        assert (code, out) == (0, b"<assistant>hmm|ok")
        code, out, _ = run(
            capsysbinary,
            "render",
            str(template),
            str(conversation),
            "--continue-final-message",
            "reasoning_content",
        )
        assert (code, out) == (0, b"<assistant>hmm")

    def test_named_templates(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        (tmp_path / "additional_chat_templates").mkdir()
        (tmp_path / "chat_template.jinja").write_text("default:{{ messages[0].content }}")
        (tmp_path / "additional_chat_templates" / "tool_use.jinja").write_text("tools:{{ tools|length }}")
        conversation = tmp_path / "c.json"
        conversation.write_text(
            json.dumps({"messages": [{"role": "user", "content": "x"}], "tools": [{}, {}]})
        )
        assert run(capsysbinary, "render", str(tmp_path), str(conversation))[:2] == (0, b"tools:2")
        named = run(capsysbinary, "render", str(tmp_path), str(conversation), "--template-name", "default")
        assert named[:2] == (0, b"default:x")
        code, out, err = run(
            capsysbinary, "render", str(tmp_path), str(conversation), "--template-name", "rag"
        )
        assert (code, out) == (1, b"")
        assert err == (
            "chatcodec: ChatTemplateNotFoundError: chat template: no template named 'rag'. "
            "Available template names are ['default', 'tool_use'].\n"
        )


class TestErrors:
    def test_template_error_names_the_line(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text(
            "{% for m in messages %}\n{{ raise_exception('no ' + m.role + ' here') }}\n{% endfor %}"
        )
        conversation = tmp_path / "c.json"
        conversation.write_text(json.dumps([{"role": "tool", "content": "x"}]))
        code, out, err = run(capsysbinary, "render", str(template), str(conversation))
        assert (code, out) == (1, b"")
        assert err == (
            "chatcodec: ChatTemplateError: no tool here\n  line 2 of the chat template:\n"
            "    {{ raise_exception('no ' + m.role + ' here') }}\n"
        )

    @pytest.mark.parametrize(
        ("content", "message"),
        [
            ('{"messages": 3}', "a conversation file holds a list of messages"),
            ('{"messages": [], "extra": 1}', "unknown keys ['extra'] in the conversation"),
            ("[", "invalid conversation (line 1, column 2)"),
        ],
    )
    def test_bad_conversation_files(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], content: str, message: str
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text(content)
        code, _, err = run(capsysbinary, "render", str(template), str(conversation))
        assert code == 1
        assert err.startswith("chatcodec: ValueError: ") and message in err

    @pytest.mark.parametrize(
        ("args", "message"),
        [(["--var", "no-equals"], "expected key=value"), (["--now", "yesterday"], "expected an ISO date")],
    )
    def test_bad_options(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], args: list[str], message: str
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text("[]")
        code, _, err = run(capsysbinary, "render", str(template), str(conversation), *args)
        assert code == 1
        assert message in err

    def test_empty_conversation(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text("[]")
        code, _, err = run(capsysbinary, "render", str(template), str(conversation))
        assert code == 1
        assert "ConversationError: messages: cannot apply a chat template to an empty conversation" in err


def test_installed_console_script(tmp_path: Path) -> None:
    line = golden(LLAMA, "multi_turn", True)
    conversation = conversation_file(tmp_path, "multi_turn", as_object=False)
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        [str(bin_dir / "chatcodec"), "render", str(corpus_path("chat_templates", LLAMA)), str(conversation),
         "--generation-prompt", "--var", "bos_token=<|begin_of_text|>", "--var", "eos_token=<|eot_id|>"],
        capture_output=True, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == line["rendered"].encode("utf-8")
