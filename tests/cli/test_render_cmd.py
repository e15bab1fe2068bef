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
from chatcodec.cli.io import MAX_CHAT_TEMPLATE_BYTES
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

    def test_python_spellings_of_true_false_and_none(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{{ a is false }} {{ b is true }} {{ c is none }} {{ d }}")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        code, out, _ = run(capsysbinary, "render", str(template), str(conversation), "--var", "a=False",
                           "--var", "b=True", "--var", "c=None", "--var", "d=Falsey")
        assert (code, out) == (0, b"True True True Falsey")

    def test_a_byte_order_mark_is_accepted(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{{ messages[0].content }}")
        conversation = tmp_path / "c.json"
        conversation.write_bytes(b'\xef\xbb\xbf[{"role": "user", "content": "hi"}]')
        assert run(capsysbinary, "render", str(template), str(conversation))[:2] == (0, b"hi")

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
            f"chatcodec: ChatTemplateError: no tool here\n  line 2 of the chat template {str(template)!r}:\n"
            "    {{ raise_exception('no ' + m.role + ' here') }}\n"
        )

    def test_template_error_names_the_named_template(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        model = tmp_path / "model"
        (model / "additional_chat_templates").mkdir(parents=True)
        (model / "chat_template.jinja").write_text("x")
        (model / "additional_chat_templates" / "rag.jinja").write_text("{{ 1 + 'a' }}")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        code, _, err = run(capsysbinary, "render", str(model), str(conversation), "--template-name", "rag")
        assert code == 1
        assert err.splitlines()[1] == f"  line 1 of the chat template '{model}[rag]' (TypeError):"

    @pytest.mark.parametrize(
        ("option", "instead"),
        [
            ("messages=[]", "the conversation file"),
            ("tools=1", "--tools FILE"),
            ("documents=[]", "--documents FILE"),
            ("add_generation_prompt=true", "--generation-prompt"),
            ("continue_final_message=true", "--continue-final-message [FIELD]"),
            ("now=1", "--now ISO"),
            ("chat_template=x", "the template argument (or --template-name NAME)"),
        ],
    )
    def test_reserved_variables_are_usage_errors(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, instead: str
    ) -> None:
        with pytest.raises(SystemExit) as raised:
            main(["render", "t.jinja", "c.json", "--var", option])
        assert raised.value.code == 2
        name = option.partition("=")[0]
        assert capsys.readouterr().err.splitlines()[-1] == (
            f"chatcodec render: error: argument --var: {name} is set by chatcodec render; use {instead}"
        )

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--var", "no-equals"], "argument --var: 'no-equals': expected key=value"),
            # was a bare RecursionError traceback (argparse lets it through its type function)
            (["--var", "x=" + "[" * 100_000 + "]" * 100_000],
             "chatcodec render: error: argument --var: x: the value is JSON nested too deeply\n"),
            (["--now", "yesterday"], "argument --now: 'yesterday': expected an ISO date and time"),
        ],
    )
    def test_bad_options_are_usage_errors(
        self, capsys: pytest.CaptureFixture[str], args: list[str], message: str
    ) -> None:
        with pytest.raises(SystemExit) as raised:
            main(["render", "t.jinja", "c.json", *args])
        assert raised.value.code == 2
        assert message in capsys.readouterr().err

    def test_tools_in_the_conversation_that_are_not_schemas(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text('{"messages": [{"role": "user", "content": "x"}], "tools": [1]}')
        code, _, err = run(capsysbinary, "render", str(template), str(conversation))
        assert code == 1
        assert err == (
            "chatcodec: ConversationError: tools[0]: expected a JSON schema dict or a Python function, got "
            "int. Tools should either be a JSON schema, or a function with type hints and a docstring "
            "suitable for conversion.\n"
        )

    def test_a_messages_file_given_as_tools(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        code, _, err = run(capsysbinary, "render", "--tools", str(conversation), str(template),
                           str(conversation))
        assert code == 1
        assert err == (
            f"chatcodec: ValueError: {conversation}: tools[0] is not a tool schema (an object with 'type', "
            "'function' or 'name'); it has 'role': is this a conversation file?\n"
        )

    def test_deeply_nested_json(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": ' + "[" * 100_000 + "]" * 100_000 + "}]")
        code, _, err = run(capsysbinary, "render", str(template), str(conversation))
        assert code == 1
        assert err == f"chatcodec: ValueError: {conversation}: invalid conversation: nested too deeply\n"

    def test_an_integer_past_4300_digits(self, tmp_path: Path,
                                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        """QA: json.loads raises a plain ValueError for it, and the message named no file."""
        template = tmp_path / "t.jinja"
        template.write_text("x")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": ' + "9" * 5000 + "}]")
        code, _, err = run(capsysbinary, "render", str(template), str(conversation))
        assert code == 1
        assert err == (f"chatcodec: ValueError: {conversation}: invalid conversation: Exceeds the limit "
                       "(4300 digits) for integer string conversion: value has 5000 digits; use "
                       "sys.set_int_max_str_digits() to increase the limit\n")

    def test_a_model_directory_with_a_deeply_nested_config(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        (tmp_path / "tokenizer_config.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        code, out, err = run(capsysbinary, "render", str(tmp_path), str(conversation))
        assert (code, out) == (1, b"")  # was: internal error (RecursionError)
        assert err == (f"chatcodec: ModelStorageError: {tmp_path / 'tokenizer_config.json'}: invalid JSON: "
                       "nested too deeply\n")

    def test_a_model_directory_whose_template_links_to_nothing(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        (tmp_path / "tokenizer_config.json").write_text('{"chat_template": "LEGACY"}', encoding="utf-8")
        (tmp_path / "chat_template.jinja").symlink_to("../blobs/0c1d")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        code, out, err = run(capsysbinary, "render", str(tmp_path), str(conversation))
        assert (code, out) == (1, b"")  # was: exit 0 and "LEGACY", the other template
        assert err == (f"chatcodec: ModelStorageError: {tmp_path / 'chat_template.jinja'}: a symbolic link "
                       "to ../blobs/0c1d, which does not exist\n")

    @pytest.mark.parametrize("command", ["render", "parse", "lint", "doctor", "derive"])
    def test_a_link_in_a_loop_is_no_missing_file(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], command: str
    ) -> None:
        link = tmp_path / "model"
        link.symlink_to("model")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        rest = {"render": [str(conversation)], "parse": [str(conversation), "--no-prefix"]}.get(command, [])
        code, out, err = run(capsysbinary, command, str(link), *rest)
        assert (code, out) == (1, b"")  # was: "no such file or directory, nor a bundled profile"
        assert err == f"chatcodec: OSError: {link}: cannot be read: Too many levels of symbolic links\n"

    def test_a_lone_surrogate(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
        conversation = tmp_path / "c.json"
        conversation.write_text(
            '[{"role": "user", "content": "ok"}, {"role": "user", "content": "a\\ud800b"}]'
        )
        code, out, err = run(capsysbinary, "render", str(template), str(conversation))
        assert (code, out) == (1, b"")
        assert err == (
            "chatcodec: ValueError: the prompt holds a lone surrogate (U+D800 at character 3), which UTF-8 "
            "cannot encode; it comes from messages[1] (a JSON \\ud800-style escape without its pair?)\n"
        )

    @pytest.mark.parametrize(("argv", "origin"), [
        (["--var", 'x="\\ud800"'], "--var x"),
        (["--var", 'x="a\\udfff"', "--var", "y=ok"], "--var x"),
        (["--var", 'x="ok"', "--var", 'x="\\ud800"'], "--var x"),
    ])
    def test_a_lone_surrogate_in_a_variable(self, argv: list[str], origin: str, tmp_path: Path,
                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{{ x }}")
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "ok"}]')
        code, out, err = run(capsysbinary, "render", str(template), str(conversation), *argv)
        assert (code, out) == (1, b"")
        assert err.endswith(f"; it comes from {origin} (a JSON \\ud800-style escape without its pair?)\n")

    def test_a_lone_surrogate_in_a_special_token_or_a_request_variable(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        model = tmp_path / "model"
        model.mkdir()
        (model / "chat_template.jinja").write_text("{{ bos_token }}{{ x }}")
        (model / "tokenizer_config.json").write_text('{"bos_token": "\\ud800"}')
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "ok"}]')
        code, _, err = run(capsysbinary, "render", str(model), str(conversation), "--var", "x=1")
        assert code == 1
        assert err == (
            "chatcodec: ValueError: the prompt holds a lone surrogate (U+D800 at character 0), which UTF-8 "
            f"cannot encode; it comes from {model}'s bos_token (a JSON \\ud800-style escape without its "
            "pair?)\n")
        request = tmp_path / "r.json"
        request.write_text('{"messages": [{"role": "user", "content": "ok"}], '
                           '"chat_template_kwargs": {"x": "\\udc00"}}')
        code, _, err = run(capsysbinary, "render", str(template_file(tmp_path)), str(request))
        assert code == 1
        assert err.endswith(
            "it comes from the conversation's x (a JSON \\ud800-style escape without its pair?)\n")

    def test_template_files_are_read_up_to_a_limit(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from chatcodec.cli import io as cli_io

        monkeypatch.setattr(cli_io, "MAX_CHAT_TEMPLATE_BYTES", 10)
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "x"}]')
        code, _, err = run(capsysbinary, "render", "/dev/zero", str(conversation))
        assert code == 1
        assert err == (
            "chatcodec: ValueError: /dev/zero: larger than 10 bytes, more than a chat template holds "
            "(chatcodec.cli.io.MAX_CHAT_TEMPLATE_BYTES)\n"
        )
        assert cli_io.MAX_CHAT_TEMPLATE_BYTES == 10 and MAX_CHAT_TEMPLATE_BYTES == 4 * 1024 * 1024

    def test_empty_stdin(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("x")
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
        code, _, err = run(capsysbinary, "render", str(template), "-")
        assert code == 1
        assert err == "chatcodec: ValueError: stdin is empty; expected a conversation (JSON)\n"

    @pytest.mark.parametrize(("argv", "message"), [
        (["-", "-"], "MODEL_DIR_OR_TEMPLATE and CONVERSATION.json cannot both be read from stdin"),
        (["qwen3", "-", "--tools", "-"], "CONVERSATION.json and --tools cannot both be read from stdin"),
        (["-", "c.json", "--tools", "-", "--documents", "-"],
         "only one of MODEL_DIR_OR_TEMPLATE, --tools, --documents can be read from stdin"),
    ])
    def test_stdin_read_twice(self, argv: list[str], message: str,
                              capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        assert run(capsysbinary, "render", *argv) == (1, b"", f"chatcodec: ValueError: {message}\n")

    def test_empty_stdin_for_tools(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        conversation = tmp_path / "c.json"
        conversation.write_text('[{"role": "user", "content": "hi"}]')
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
        assert run(capsysbinary, "render", "qwen3", str(conversation), "--tools", "-") == (
            1, b"", "chatcodec: ValueError: stdin is empty; expected tools (JSON)\n")

    @pytest.mark.parametrize(
        ("content", "message"),
        [
            ('{"messages": 3}', "a conversation file holds a list of messages"),
            ('{"messages": [], "extra": 1}',
             "unknown keys ['extra'] in the request; expected Chat Completions fields"),
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


def test_the_readme_example(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The encoding section's command, fed its heredoc on stdin, prints the text the README shows."""
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Encoding: rendering chat templates")[1]
    command = section.split("```bash\n", 1)[1].split("```", 1)[0]
    expected = section.split("```text\n", 1)[1].split("```", 1)[0]
    head, _, rest = command.partition(" <<'JSON'\n")
    stdin, _, _ = rest.partition("JSON\n")
    argv = head.replace("\\\n", " ").split()
    assert argv[:2] == ["chatcodec", "render"]
    argv[2] = str(corpus_path("chat_templates", Path(argv[2]).name))  # the corpus beside this checkout
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code, out, _ = run(capsysbinary, *argv[1:])
    assert (code, out.decode("utf-8")) == (0, expected)


class TestJsonTemplateFiles:
    """A legacy ``chat_template.json`` or a ``tokenizer_config.json`` is read as the model loader
    reads it (the ``chat_template`` key, named lists, special tokens), not rendered as text."""

    def files(self, tmp_path: Path, name: str, data: Any) -> tuple[str, str]:
        holder = tmp_path / name
        holder.write_text(json.dumps(data), encoding="utf-8")
        conversation = tmp_path / "conversation.json"
        conversation.write_text(json.dumps([{"role": "user", "content": "Hi"}]), encoding="utf-8")
        return str(holder), str(conversation)

    def test_a_legacy_chat_template_json(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        holder, conversation = self.files(tmp_path, "chat_template.json",
                                          {"chat_template": "{{ messages[0].content }}."})
        assert run(capsysbinary, "render", holder, conversation) == (0, b"Hi.", "")

    def test_a_tokenizer_config_with_special_tokens_and_named_templates(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        holder, conversation = self.files(tmp_path, "tokenizer_config.json", {
            "bos_token": {"content": "<s>", "special": True}, "eos_token": "</s>",
            "chat_template": [{"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}"},
                              {"name": "tool_use", "template": "T{{ eos_token }}"}]})
        assert run(capsysbinary, "render", holder, conversation) == (0, b"<s>Hi", "")
        assert run(capsysbinary, "render", holder, conversation, "--template-name", "tool_use") == (
            0, b"T</s>", "")

    def test_a_json_file_without_a_chat_template_is_a_clear_error(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        holder, conversation = self.files(tmp_path, "config.json", {"model_type": "qwen3"})
        assert run(capsysbinary, "render", holder, conversation) == (1, b"", (
            f"chatcodec: ValueError: {holder}: this JSON file holds no chat template (no 'chat_template' "
            "key); pass a chat template file (.jinja), a chat_template.json or tokenizer_config.json that "
            "has one, or a model directory\n"))
        holder, conversation = self.files(tmp_path, "response.json", {"fields": {"content": {}}})
        assert run(capsysbinary, "render", holder, conversation) == (1, b"", (
            f"chatcodec: ValueError: {holder}: this is a response template (chatcodec parse reads it), not "
            "a chat template\n"))


def test_an_endless_conversation_is_bounded(
        monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    from chatcodec.cli import io as cli_io

    monkeypatch.setattr(cli_io, "MAX_INPUT_BYTES", 20)
    assert run(capsysbinary, "render", "qwen3", "/dev/zero") == (1, b"", (
        "chatcodec: ValueError: /dev/zero: larger than 20 bytes, more than a conversation, tools, documents "
        "or prompt file holds (chatcodec.cli.io.MAX_INPUT_BYTES)\n"))


@pytest.mark.parametrize("text", ["", " \n"])
def test_an_empty_template_is_an_error_naming_the_file(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], text: str) -> None:
    template = tmp_path / "empty.txt"
    template.write_text(text)
    conversation = tmp_path / "conv.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]')
    code, out, err = run(capsysbinary, "render", str(template), str(conversation))
    assert (code, out) == (1, b"")
    assert err == (
        f"chatcodec: ChatTemplateNotFoundError: {template}: chat template: the template text is empty (or "
        "only whitespace), so every prompt would be too; check the file or the chat_template value it "
        "came from\n")


class TestUndefinedSpecialTokens:
    TEMPLATE = ("{{ bos_token }}{% set sep = sep_token %}{% for m in messages %}{{ m.content }}"
                "{{ eos_token }}{% endfor %}{% set my_token = '!' %}{{ my_token }}{{ name }}")
    WARNING = ("chatcodec: warning: {path}: the template uses {names}, which nothing defines (rendered as "
               "empty text); render with a model directory or a profile name (their special tokens), "
               "or pass --var {first}=...\n")

    def render(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], template: str,
               *options: str) -> tuple[int, bytes, str, Path]:
        path = tmp_path / "t.jinja"
        path.write_text(template)
        conversation = tmp_path / "conv.json"
        conversation.write_text('[{"role": "user", "content": "hi"}]')
        code, out, err = run(capsysbinary, "render", str(path), str(conversation), *options)
        return code, out, err, path

    def test_a_bare_template_file_names_the_undefined_tokens_once(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        code, out, err, path = self.render(tmp_path, capsysbinary, self.TEMPLATE)
        assert (code, out) == (0, b"hi!")
        names = "bos_token, eos_token, sep_token"
        assert err == self.WARNING.format(path=path, names=names, first="bos_token")

    @pytest.mark.parametrize(("template", "output"), [
        ('{{ eos_token|default("</s>") }}{{ messages[0].content }}', b"</s>hi"),
        ('{{ messages[0].content }}{{ eos_token | d("</s>", true) }}', b"hi</s>"),
        ("{% if bos_token is defined %}{{ bos_token }}{% endif %}{{ messages[0].content }}", b"hi"),
        ("{% if bos_token is not defined %}<s>{% else %}{{ bos_token }}{% endif %}{{ messages[0].content }}",
         b"<s>hi"),
        ("{{ bos_token if bos_token is not undefined }}{{ messages[0].content }}", b"hi"),
    ])
    def test_no_warning_for_a_guarded_token(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
                                            template: str, output: bytes) -> None:
        """QA: a token behind ``default`` or an ``is defined`` test was said to render as empty text."""
        assert self.render(tmp_path, capsysbinary, template)[:3] == (0, output, "")

    def test_only_the_unguarded_tokens_are_named(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = ("{{ bos_token|default('<s>') }}{{ messages[0].content }}{{ eos_token }}"
                    "{% if sep_token|length %}|{% endif %}{{ pad_token is string }}"
                    "{% if unk_token is not none %}{{ unk_token }}{% endif %}")
        code, out, err, path = self.render(tmp_path, capsysbinary, template)
        assert (code, out) == (0, b"<s>hiFalse")
        assert err == self.WARNING.format(path=path, names="eos_token, pad_token, sep_token, unk_token",
                                          first="eos_token")

    def test_a_none_test_is_no_guard(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        """An undefined variable is not none: behind ``is not none`` it still renders as empty text."""
        template = "{% if eos_token is not none %}[{{ eos_token }}]{% endif %}{{ messages[0].content }}"
        code, out, err, path = self.render(tmp_path, capsysbinary, template)
        assert (code, out) == (0, b"[]hi")
        assert err == self.WARNING.format(path=path, names="eos_token", first="eos_token")

    def test_var_defines_a_token(self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        code, out, err, path = self.render(tmp_path, capsysbinary, self.TEMPLATE,
                                           "--var", "bos_token=<s>", "--var", "sep_token=")
        assert (code, out) == (0, b"<s>hi!")
        assert err == self.WARNING.format(path=path, names="eos_token", first="eos_token")

    def test_no_warning_when_every_token_is_defined(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        code, out, err, _ = self.render(tmp_path, capsysbinary, self.TEMPLATE, "--var", "bos_token=<s>",
                                        "--var", "eos_token=</s>", "--var", "sep_token=|")
        assert (code, out, err) == (0, b"<s>hi</s>!", "")

    def test_no_warning_for_a_model_directory_with_its_tokens(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        directory = model_dir(tmp_path, LLAMA, {"bos_token": "<|begin_of_text|>"})
        conversation = tmp_path / "conv.json"
        conversation.write_text('[{"role": "user", "content": "hi"}]')
        code, out, err = run(capsysbinary, "render", str(directory), str(conversation))
        assert (code, err) == (0, "") and out.startswith(b"<|begin_of_text|>")

    def test_no_warning_for_a_profile(self, tmp_path: Path,
                                      capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        conversation = tmp_path / "conv.json"
        conversation.write_text('[{"role": "user", "content": "hi"}]')
        code, out, err = run(capsysbinary, "render", "mistral", str(conversation))  # Mistral-Nemo's
        assert (code, err) == (0, "") and out.startswith(b"<s>")

    def test_the_llama_template_file(self, tmp_path: Path,
                                     capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        path = corpus_path("chat_templates", LLAMA)
        conversation = tmp_path / "conv.json"
        conversation.write_text('[{"role": "user", "content": "hi"}]')
        code, out, err = run(capsysbinary, "render", str(path), str(conversation))
        assert code == 0 and not out.startswith(b"<|begin_of_text|>")
        assert err == self.WARNING.format(path=path, names="bos_token", first="bos_token")


@pytest.mark.parametrize("name", ["cfg", "cfg.jinja", "tokenizer_config.txt"])
def test_a_json_config_without_the_json_extension_is_read_as_one(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], name: str) -> None:
    """QA: a file holding {"chat_template": ...} but not named .json was rendered as Jinja text
    (the output was the JSON itself)."""
    path = tmp_path / name
    template = "{{ bos_token }}Z{{ messages[0].content }}"
    path.write_text(json.dumps({"bos_token": "<s>", "chat_template": template}))
    conversation = tmp_path / "conv.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]')
    assert run(capsysbinary, "render", str(path), str(conversation)) == (0, b"<s>Zhi", "")


@pytest.mark.parametrize("text", ['{"messages": 1}', '{"a": "b"}', '["chat_template"]', "{ x }"])
def test_other_template_text_that_looks_like_json_is_a_template(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], text: str) -> None:
    path = tmp_path / "t.jinja"
    path.write_text(text)
    conversation = tmp_path / "conv.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]')
    assert run(capsysbinary, "render", str(path), str(conversation)) == (0, text.encode(), "")


def test_a_json_config_without_the_extension_and_only_a_response_template_says_so(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "cfg"
    response = {"start_anchor": "A", "fields": {}}
    path.write_text(json.dumps({"eos_token": "</s>", "response_template": response}))
    conversation = tmp_path / "conv.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]')
    assert run(capsysbinary, "render", str(path), str(conversation)) == (1, b"", (
        f"chatcodec: ValueError: {path}: this JSON file holds no chat template (no 'chat_template' key); "
        "pass a chat template file (.jinja), a chat_template.json or tokenizer_config.json that has one, or "
        "a model directory\n"))


def template_file(tmp_path: Path) -> Path:
    path = tmp_path / "x.jinja"
    path.write_text("{{ x }}")
    return path


class TestRequestFiles:
    """A conversation file may be an OpenAI Chat Completions request, as a client sends it."""

    def write(self, tmp_path: Path, request: Any) -> str:
        path = tmp_path / "request.json"
        path.write_text(json.dumps(request), encoding="utf-8")
        return str(path)

    def test_reasoning_effort_and_text_parts(self, tmp_path: Path,
                                             capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = "Qwen--Qwen3-0.6B.jinja"
        line = golden(template, "multi_turn", True, enable_thinking=False)
        messages = [{**message, "content": [{"type": "text", "text": message["content"]}]}
                    for message in load_json("conversations.json")["multi_turn"]["messages"]]
        request = self.write(tmp_path, {"model": "qwen3", "messages": messages, "reasoning_effort": "none",
                                        "temperature": 0.7, "stream": True})
        argv = ["render", str(corpus_path("chat_templates", template)), request, "--generation-prompt"]
        argv += [f"--var={key}={value}" for key, value in line["kwargs"].items() if key != "enable_thinking"]
        assert run(capsysbinary, *argv) == (0, line["rendered"].encode("utf-8"), "")

    def test_the_files_own_generation_prompt_and_var_over_chat_template_kwargs(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{{ messages[0].content }}|{{ x }}{% if add_generation_prompt %}|A{% endif %}")
        request = self.write(tmp_path, {"messages": [{"role": "user", "content": "Hi"}],
                                        "add_generation_prompt": True, "chat_template_kwargs": {"x": 1}})
        assert run(capsysbinary, "render", str(template), request) == (0, b"Hi|1|A", "")
        assert run(capsysbinary, "render", str(template), request, "--var", "x=2") == (0, b"Hi|2|A", "")

    def test_a_generation_prompt_that_is_not_a_boolean_is_an_error(
            self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        template = tmp_path / "t.jinja"
        template.write_text("{{ messages[0].content }}{% if add_generation_prompt %}|A{% endif %}")
        request = self.write(tmp_path, {"messages": [{"role": "user", "content": "Hi"}],
                                        "add_generation_prompt": "false"})
        assert run(capsysbinary, "render", str(template), request) == (1, b"", (
            "chatcodec: ConversationError: add_generation_prompt: expected true or false, got str\n"))
        false = self.write(tmp_path, {"messages": [{"role": "user", "content": "Hi"}],
                                      "add_generation_prompt": False})
        assert run(capsysbinary, "render", str(template), false) == (0, b"Hi", "")
        assert run(capsysbinary, "render", str(template), false, "--generation-prompt") == (0, b"Hi|A", "")

    def test_image_url_parts_for_a_vision_template(self, tmp_path: Path,
                                                   capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        line = golden(VISION, "multimodal", True)
        request = self.write(tmp_path, {"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "https://example.com/images/cat.png"}},
            {"type": "text", "text": "What animal is in this picture?"}]}]})
        argv = ["render", str(corpus_path("chat_templates", VISION)), request, "--generation-prompt"]
        argv += [f"--var={key}={value}" for key, value in line["kwargs"].items()]
        assert run(capsysbinary, *argv, "--now", "2026-01-15T12:00:00") == (0, line["rendered"].encode(), "")

    def test_an_image_for_a_text_only_template(self, tmp_path: Path,
                                               capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        request = self.write(tmp_path, {"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}]})
        assert run(capsysbinary, "render", "qwen3", request) == (1, b"", (
            "chatcodec: ConversationError: messages[0].content[0]: this chat template reads a message's "
            "content as text only, so it cannot show the 'image_url' part (a text-only model?); send text "
            "parts only, or use the model's multimodal template\n"))


def test_timeout_stops_an_endless_template_after_that_many_seconds(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """QA: an endless loop waited the full MAX_RENDER_SECONDS (60 s); ``--timeout`` sets it for the
    command only."""
    from chatcodec.chat_templates import limits

    endless = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    template = tmp_path / "loop.jinja"
    template.write_text(endless, encoding="utf-8")
    conversation = tmp_path / "conversation.json"
    conversation.write_text('[{"role": "user", "content": "Hi"}]', encoding="utf-8")
    assert run(capsysbinary, "render", str(template), str(conversation), "--timeout", "0.2") == (1, b"", (
        "chatcodec: ChatTemplateLimitError: chat template sandbox: the render time exceeds "
        "MAX_RENDER_SECONDS (0.2). if the template is trusted, give each render more time with "
        f"--timeout SECONDS\n  line 1 of the chat template '{template}':\n"
        f"    {endless}\n"))
    assert limits.MAX_RENDER_SECONDS == 60.0
