"""``chatcodec parse`` through ``main([...])``: exact stdout bytes, stderr lines and exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatcodec.cli import main
from chatcodec.cli.view import LIVE_VIEW_HINT, PlainView, RichView, choose_view
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "qwen3-coder"
TEMPLATE = str(EXAMPLE / "response_template.json")
OUTPUT = str(EXAMPLE / "output.txt")
TOOLS = str(EXAMPLE / "tools.json")

TYPED_MESSAGE = """{
  "role": "assistant",
  "content": "Let me calculate that area for you.",
  "tool_calls": [
    {
      "type": "function",
      "function": {
        "name": "calculate_area",
        "arguments": {
          "shape": "circle",
          "dimensions": {
            "radius": 15.5
          },
          "precision": 3
        }
      }
    }
  ]
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["parse", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def test_the_readme_example_prints_the_typed_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS) == (0, TYPED_MESSAGE, "")


def test_without_tools_arguments_stay_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, TEMPLATE, OUTPUT, "--no-prefix")
    assert code == 0
    assert json.loads(out)["tool_calls"][0]["function"]["arguments"] == {
        "shape": "circle",
        "dimensions": '{"radius": 15.5}',
        "precision": "3",
    }


def test_a_prefix_file_continues_a_region(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.json", QWEN)
    prefix = write(tmp_path, "prefix.txt", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n")
    output = write(tmp_path, "out.txt", "Greet back.</think>Hello!<|im_end|>")
    assert run(capsys, template, output, "--prefix", prefix) == (
        0,
        ('{\n  "role": "assistant",\n  "reasoning_content": "Greet back.",\n  "content": "Hello!"\n}\n'),
        "",
    )


def test_events_are_json_lines_then_the_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", "<think>hm</think>Hi")
    code, out, err = run(capsys, template, output, "--no-prefix", "--events")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        '{"type": "region_open", "field": "reasoning_content"}',
        '{"type": "region_chunk", "field": "reasoning_content", "text": "hm", "dirty": false}',
        '{"type": "region_close", "field": "reasoning_content", "value": "hm"}',
        '{"type": "region_open", "field": "content"}',
        '{"type": "region_chunk", "field": "content", "text": "Hi", "dirty": false}',
        '{"type": "region_close", "field": "content", "value": "Hi"}',
        '{"type": "message", "message": {"role": "assistant", "reasoning_content": "hm", "content": "Hi"}}',
    ]


def test_streamed_events_use_the_chunk_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", "Hello")
    code, out, _ = run(capsys, template, output, "--no-prefix", "--events", "--stream", "--chunk-size", "2")
    assert code == 0
    assert [json.loads(line).get("text") for line in out.splitlines()[:4]] == [None, "He", "ll", "o"]


def test_stream_without_a_terminal_prints_the_plain_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS, "--stream")
    assert code == 0
    assert err == ""  # plain text is what a pipe or a file wants: nothing to say
    assert out == (  # a structured region shows its parsed value, not its raw text
        "[content]\nLet me calculate that area for you.\n[tool_calls]\n"
        '=> {"type": "function", "function": {"name": "calculate_area", "arguments": {"shape": "circle", '
        '"dimensions": {"radius": 15.5}, "precision": 3}}}\n\n' + TYPED_MESSAGE
    )


def test_the_plain_view_shows_no_whitespace_only_region() -> None:
    out = io.StringIO()
    view = PlainView(out)
    for event in [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "\n", "dirty": False},
        {"type": "region_chunk", "field": "reasoning_content", "text": "hm\n", "dirty": False},
        {"type": "region_close", "field": "reasoning_content", "value": "hm"},
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "\n\n", "dirty": False},
        {"type": "region_close", "field": "content", "value": ""},
        {"type": "region_open", "field": "tool_calls"},
        {"type": "region_chunk", "field": "tool_calls", "text": '{"name": ', "dirty": True},
        {"type": "region_chunk", "field": "tool_calls", "text": '"f"}', "dirty": True},
        {"type": "region_close", "field": "tool_calls", "value": {"name": "f"}},
        {"type": "region_open", "field": "tool_calls"},
        {"type": "region_chunk", "field": "tool_calls", "text": "{bad", "dirty": True},
        {"type": "region_close", "field": "tool_calls", "value": None, "error": {"error": "no JSON"}},
    ]:
        view.on_event(event)
    view.close({"reasoning_content": "hm"})
    assert out.getvalue() == (
        "[reasoning_content]\nhm\n[tool_calls]\n=> {\"name\": \"f\"}\n[tool_calls]\n!! no JSON\n"
        '\n{\n  "reasoning_content": "hm"\n}\n'
    )


def test_output_from_stdin(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("<think>ü</think>ok".encode())))
    code, out, _ = run(capsys, write(tmp_path, "t.json", QWEN), "-", "--no-prefix")
    assert (code, json.loads(out)) == (0, {"role": "assistant", "reasoning_content": "ü", "content": "ok"})


def test_a_model_directory_supplies_its_response_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"eos_token": "<|im_end|>", "response_template": QWEN})
    )
    output = write(tmp_path, "out.txt", "Hi<|im_end|>")
    assert run(capsys, str(tmp_path), output, "--no-prefix") == (
        0,
        '{\n  "role": "assistant",\n  "content": "Hi"\n}\n',
        "",
    )
    config_file = str(tmp_path / "tokenizer_config.json")
    assert (
        run(capsys, config_file, output, "--no-prefix")[1]
        == '{\n  "role": "assistant",\n  "content": "Hi"\n}\n'
    )


def test_a_tokenizer_config_without_a_response_template_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """QA: it was read as a response template: 'Unknown keys in response_template: [...]'."""
    config = write(tmp_path, "tokenizer_config.json", {"eos_token": "<|im_end|>", "chat_template": "{{ x }}"})
    output = write(tmp_path, "out.txt", "Hi")
    assert run(capsys, config, output, "--no-prefix") == (
        1, "", f"chatcodec: ValueError: {config}: a tokenizer configuration without a 'response_template' "
        "key; pass its model directory (a bundled profile may match its chat template) or a bundled "
        "profile name (chatcodec profiles lists them)\n")


def test_unparsable_output_is_reported_with_its_caret_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: parse had its own error path, which printed the first line only (no caret)."""
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", "Hi<tool_call>{broken</tool_call>")
    assert run(capsys, template, output, "--no-prefix") == (
        1,
        "",
        (
            "chatcodec: ResponseParseError: field 'tool_calls' (content parser 'json') at offset 14 of the "
            "output: could not parse region as "
            "JSON: Expecting property name enclosed in double quotes (line 1, column 2, char 1)\n"
            "    {broken\n"
            "     ^\n"
        ),
    )
    code, out, err = run(capsys, template, output, "--no-prefix", "--stream")
    assert (code, out) == (1, "[content]\nHi\n[tool_calls]\n")  # raw text is not repeated
    assert err.splitlines()[-3].startswith("chatcodec: ResponseParseError: field 'tool_calls'")
    assert err.splitlines()[-2:] == ["    {broken", "     ^"]


def test_keep_mode_records_the_problem_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", "Hi<tool_call>{broken</tool_call>")
    code, out, _ = run(capsys, template, output, "--no-prefix", "--errors", "keep")
    assert code == 0
    assert json.loads(out)["parse_errors"][0]["text"] == "{broken"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["missing.json", "out.txt", "--no-prefix"],
            "chatcodec: OSError: missing.json: no such file or directory, nor a bundled profile (expected a "
            "response template JSON file, a model directory or a profile name; `chatcodec profiles` lists "
            "them)\n",
        ),
        (
            ["t.json", "nothing.txt", "--no-prefix"],
            "chatcodec: OSError: nothing.txt: cannot read: No such file or directory\n",
        ),
        (
            ["bad.json", "out.txt", "--no-prefix"],
            "chatcodec: ResponseTemplateError: bad.json: fields.x.close_pattern: "
            "invalid close_pattern regex: missing ) at position 1\n",
        ),
        (
            ["t.json", "out.txt", "--no-prefix", "--tools", "t.json"],
            "chatcodec: ValueError: t.json: tools must be a JSON list of tool schemas, got dict\n",
        ),
        (
            ["t.json", "out.txt", "--no-prefix", "--tools", "badtools.json"],
            "chatcodec: ValueError: badtools.json: tools[0] (f): parameter 'a': type must be a type name "
            "or a list of them, got int\n",
        ),
        (
            ["t.json", "-", "--prefix", "-"],
            "chatcodec: ValueError: OUTPUT and --prefix cannot both be read from stdin\n",
        ),
        (
            ["t.json", "-", "--no-prefix", "--tools", "-"],
            "chatcodec: ValueError: OUTPUT and --tools cannot both be read from stdin\n",
        ),
        (
            ["t.json", "-", "--prefix", "-", "--tools", "-"],
            "chatcodec: ValueError: only one of OUTPUT, --prefix, --tools can be read from stdin\n",
        ),
    ],
)
def test_input_errors_are_one_line(
    argv: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "t.json", QWEN)
    write(tmp_path, "bad.json", {"start_anchor": "x", "fields": {"x": {"open": "<x>", "close_pattern": "("}}})
    write(tmp_path, "out.txt", "hi")
    write(tmp_path, "badtools.json", [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}}}])
    assert run(capsys, *argv) == (1, "", message)


@pytest.mark.parametrize(
    "argv", [["t.json", "out.txt"], ["t.json", "out.txt", "--no-prefix", "--prefix", "p"]]
)
def test_the_prefix_choice_is_required_and_exclusive(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["parse", *argv])
    assert raised.value.code == 2
    assert "--prefix" in capsys.readouterr().err


def test_rich_view_draws_regions_and_prints_the_message() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    view = RichView(console)
    for event in [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "Hello", "dirty": False},
        {"type": "region_close", "field": "content", "value": "Hello"},
        {"type": "region_open", "field": "tool_calls"},
        {"type": "region_chunk", "field": "tool_calls", "text": "{", "dirty": True},
        {"type": "region_close", "field": "tool_calls", "value": {"name": "f"}},
    ]:
        view.on_event(event)
    view.close({"content": "Hello"})
    drawn = console.file.getvalue()  # type: ignore[attr-defined]
    assert "content" in drawn and "tool_calls" in drawn and "=> {" in drawn and '"name": "f"' in drawn
    assert drawn.rstrip().endswith('{\n  "content": "Hello"\n}')


def test_rich_view_dims_raw_structured_text_and_skips_whitespace_only_regions() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=60, color_system="standard")
    view = RichView(console)
    for event in [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "\n\n", "dirty": False},
        {"type": "region_close", "field": "content", "value": ""},
        {"type": "region_open", "field": "tool_calls"},
        {"type": "region_chunk", "field": "tool_calls", "text": "RAWTEXT", "dirty": True},
    ]:
        view.on_event(event)
    view.flush()  # chunks are drawn at most REFRESH_PER_SECOND times a second, and at each flush
    drawn = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[2mRAWTEXT" in drawn  # streamed raw text is dim
    assert " content " not in drawn  # no panel for the whitespace-only region
    view.abort()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_choose_view_is_plain_and_silent_without_a_terminal() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert isinstance(choose_view(out, err), PlainView)
    assert err.getvalue() == ""


def test_choose_view_draws_live_on_a_terminal() -> None:
    out, err = _Terminal(), io.StringIO()
    view = choose_view(out, err)
    assert isinstance(view, RichView)
    view.abort()
    assert err.getvalue() == ""


def test_choose_view_names_the_missing_package_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == "rich" or name.startswith("rich.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "rich", None)  # import rich raises ImportError
    out, err = _Terminal(), io.StringIO()
    assert isinstance(choose_view(out, err), PlainView)
    assert err.getvalue() == LIVE_VIEW_HINT + "\n"
    assert LIVE_VIEW_HINT == (
        "chatcodec: plain output; the live view needs rich (pip install 'chatcodec[rich]')")


def test_the_installed_console_script_runs() -> None:
    script = Path(sys.executable).parent / "chatcodec"
    result = subprocess.run(
        [str(script), "parse", TEMPLATE, OUTPUT, "--no-prefix", "--tools", TOOLS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, TYPED_MESSAGE, "")


_SURROGATE_OUTPUT = 'Hi<tool_call>{"name": "f", "arguments": {"s": "a\\ud800b"}}</tool_call>'


@pytest.mark.parametrize("mode", [[], ["--events"], ["--stream"], ["--errors", "keep"]])
def test_a_lone_surrogate_in_a_value_is_written_as_a_json_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", _SURROGATE_OUTPUT)
    code, out, _ = run(capsys, template, output, "--no-prefix", *mode)
    assert code == 0
    assert '"a\\ud800b"' in out
    if mode == ["--events"]:
        message = json.loads(out.splitlines()[-1])["message"]
    else:
        message = json.loads(out[out.index("{\n") :])
    assert message["tool_calls"][0]["function"]["arguments"] == {"s": "a\ud800b"}


def test_a_lone_surrogate_reaches_a_real_stdout(tmp_path: Path) -> None:
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", _SURROGATE_OUTPUT)
    done = subprocess.run([sys.executable, "-m", "chatcodec", "parse", template, output, "--no-prefix"],
                          capture_output=True, check=False)
    assert (done.returncode, done.stderr) == (0, b"")
    assert json.loads(done.stdout)["tool_calls"][0]["function"]["arguments"] == {"s": "a\ud800b"}


def _read_line(stream: Any, seconds: float = 20.0) -> bytes:
    import select

    ready, _, _ = select.select([stream], [], [], seconds)
    assert ready, "no output arrived while the input was still open"
    return bytes(stream.readline())


def test_stream_from_a_pipe_is_parsed_while_the_input_is_still_open(tmp_path: Path) -> None:
    template = write(tmp_path, "t.json", QWEN)
    process = subprocess.Popen(
        [sys.executable, "-m", "chatcodec", "parse", template, "-", "--no-prefix", "--events", "--stream"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: select() then sees every byte not yet read
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("<think>hm ü".encode()[:-1])  # ends inside the two bytes of ü
        process.stdin.flush()
        assert json.loads(_read_line(process.stdout)) == {"type": "region_open", "field": "reasoning_content"}
        live = ""
        while live != "hm ":  # every byte before the split character, while stdin is still open
            event = json.loads(_read_line(process.stdout))
            assert (event["type"], event["field"]) == ("region_chunk", "reasoning_content")
            live += event["text"]
        process.stdin.write("ü".encode()[1:] + b"</think>Hi")
        process.stdin.close()
        rest = [json.loads(line) for line in process.stdout.read().splitlines()]
    finally:
        process.kill() if process.poll() is None else None
        process.wait(timeout=20)
    assert process.returncode == 0
    assert rest[-1] == {"type": "message", "message": {
        "role": "assistant", "reasoning_content": "hm ü", "content": "Hi"}}
    assert "".join(e.get("text", "") for e in rest if e.get("field") == "reasoning_content") == "ü"


def test_a_profile_stream_ends_at_the_eos_token_while_the_input_is_still_open() -> None:
    """QA: the message waited for stdin to close although the model's end token had arrived."""
    process = subprocess.Popen(
        [sys.executable, "-m", "chatcodec", "parse", "qwen3", "-", "--no-prefix", "--events", "--stream"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b"Hi<|im_end|>")
        process.stdin.flush()
        lines = [json.loads(_read_line(process.stdout))]
        while lines[-1]["type"] != "message":  # all of it while stdin is still open
            lines.append(json.loads(_read_line(process.stdout)))
    finally:
        process.kill() if process.poll() is None else None
        process.wait(timeout=20)
    assert lines == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "Hi", "dirty": False},
        {"type": "region_close", "field": "content", "value": "Hi"},
        {"type": "message", "message": {"role": "assistant", "content": "Hi"}},
    ]


class _Trickle(io.RawIOBase):
    """A stdin whose reads return one byte at a time (a multi-byte character arrives split)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._data:
            return 0
        buffer[0], self._data = self._data[0], self._data[1:]
        return 1


def test_stream_from_stdin_feeds_what_arrives_and_never_splits_a_character(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BufferedReader(_Trickle("<think>é€</think>ok".encode()), buffer_size=1))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = run(capsys, write(tmp_path, "t.json", QWEN), "-", "--no-prefix", "--events", "--stream")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [e["text"] for e in events if e["type"] == "region_chunk"] == ["é", "€", "o", "k"]
    assert events[-1]["message"] == {"role": "assistant", "reasoning_content": "é€", "content": "ok"}


def test_invalid_utf8_on_a_streamed_stdin_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Hi \xff there")))
    code, out, err = run(capsys, write(tmp_path, "t.json", QWEN), "-", "--no-prefix", "--events", "--stream")
    assert (code, out) == (1, "")
    assert err == "chatcodec: ValueError: <stdin>: not UTF-8 text (byte 3: invalid start byte)\n"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "live-stdin"])
def test_errors_keep_reads_bytes_that_are_not_utf8_as_replacement_characters(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], stream: bool
) -> None:
    """QA: with --errors keep one bad byte still failed the whole output; now it is U+FFFD, and
    said once (every bad sequence is replaced)."""
    data = b"Hi \xff th\xfeere"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(_Trickle(data) if stream else io.BytesIO(data)))
    options = ["--stream", "--events"] if stream else []
    code, out, err = run(capsys, write(tmp_path, "t.json", QWEN), "-", "--no-prefix", "--errors", "keep",
                         *options)
    last = json.loads(out.splitlines()[-1]) if stream else {"message": json.loads(out)}
    assert (code, last["message"]) == (0, {"role": "assistant", "content": "Hi \ufffd th\ufffdere"})
    assert err == ("chatcodec: warning: <stdin>: not UTF-8 text (byte 3: invalid start byte); every invalid "
                   "byte sequence is read as U+FFFD (--errors keep)\n")


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ({"start_anchor": "A", "fields": {"content": {"close": ""}}},
         "rt1.json: fields.content.close: 'close' literals cannot be empty strings"),
        ({"start_anchor": "A", "fields": {"content": {}}, "extra": 1},
         "rt1.json: Unknown keys in response_template: ['extra']. Allowed keys: defaults, fields, "
         "start_anchor, start_anchor_pattern, version"),
    ],
)
def test_template_errors_name_the_file(
    template: dict[str, Any], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "rt1.json", template)
    write(tmp_path, "out.txt", "hi")
    assert run(capsys, "rt1.json", "out.txt", "--no-prefix") == (
        1, "", f"chatcodec: ResponseTemplateError: {message}\n")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--chunk-size", "0", "argument --chunk-size: expected a whole number of at least 1, got '0'"),
        ("--chunk-size", "x", "argument --chunk-size: expected a whole number of at least 1, got 'x'"),
        ("--delay", "-1", "argument --delay: expected seconds, a finite number of at least 0, got '-1'"),
        ("--delay", "nan", "argument --delay: expected seconds, a finite number of at least 0, got 'nan'"),
        ("--delay", "inf", "argument --delay: expected seconds, a finite number of at least 0, got 'inf'"),
    ],
)
def test_bad_option_values_are_usage_errors(
    option: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["parse", write(tmp_path, "t.json", QWEN), write(tmp_path, "o.txt", "hi"), "--no-prefix",
              option, value])
    assert raised.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"chatcodec parse: error: {message}"


@pytest.mark.parametrize("option", [["--chunk-size", "2"], ["--delay", "0"]])
def test_chunk_size_and_delay_imply_streaming(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write(tmp_path, "t.json", QWEN)
    output = write(tmp_path, "out.txt", "Hello")
    code, out, err = run(capsys, template, output, "--no-prefix", *option)
    assert (code, err) == (0, "")
    assert out.startswith("[content]\nHel" if option[0] == "--chunk-size" else "[content]\nHello\n")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import chatcodec

    with pytest.raises(SystemExit) as raised:
        main(["--version"])
    assert (raised.value.code, capsys.readouterr().out) == (0, f"chatcodec {chatcodec.__version__}\n")


CLI_ANCHOR_WARNING = (
    "chatcodec: warning: the prefix does not contain the response template's start anchor "
    "'<|im_start|>assistant\\n', so the whole prompt is parsed as the start of the assistant message and "
    "ends up in it. Build the prompt with add_generation_prompt=True (chatcodec render --generation-prompt), "
    "or pass prefix='' (chatcodec parse --no-prefix) when there is no prompt.\n")


def test_a_prefix_without_the_start_anchor_is_one_warning_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.json", QWEN)
    prefix = write(tmp_path, "prefix.txt", "<|im_start|>user\nHi<|im_end|>\n")
    output = write(tmp_path, "out.txt", "Hello!<|im_end|>")
    assert run(capsys, template, output, "--prefix", prefix) == (
        0, '{\n  "role": "assistant",\n  "content": "<|im_start|>user\\nHi\\nHello!"\n}\n',
        CLI_ANCHOR_WARNING)
    assert run(capsys, template, output, "--prefix", prefix, "--events")[2] == CLI_ANCHOR_WARNING


def test_an_error_inside_a_prefix_without_the_anchor_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.json", QWEN)
    prefix = write(tmp_path, "prefix.txt", "<|im_start|>system\nExample: <tool_call></tool_call><|im_end|>\n")
    output = write(tmp_path, "out.txt", "Hello!<|im_end|>")
    assert run(capsys, template, output, "--prefix", prefix) == (1, "", CLI_ANCHOR_WARNING + (
        "chatcodec: ResponseParseError: field 'tool_calls' (content parser 'json') at offset 39 of the "
        "prefix (the prefix has no start anchor, so all of it is parsed as the assistant message: was it "
        "rendered without add_generation_prompt?): could not parse region as JSON: Expecting value (line 1, "
        "column 1, char 0)\n    \n    ^\n"))


class TestEndOfGeneration:
    """With a profile name or a model directory, the CLI parses as ``ChatCodec`` does: generation
    ends at the first end-of-sequence token; with a bare response template file, as the engine does."""

    AFTER_EOS = "Hello.<|im_end|>\n<|im_start|>user\nNext question"

    @staticmethod
    def message(content: str) -> str:
        return json.dumps({"role": "assistant", "content": content}, indent=2) + "\n"

    @pytest.mark.parametrize("mode", [[], ["--stream"]])
    def test_a_profile_stops_at_the_eos_token(
            self, mode: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        output = write(tmp_path, "out.txt", self.AFTER_EOS)
        code, out, err = run(capsys, "qwen3", output, "--no-prefix", *mode)
        assert (code, err) == (0, "")
        if not mode:
            assert out == self.message("Hello.")
        code, out, _ = run(capsys, "qwen3", output, "--no-prefix", "--events")
        assert json.loads(out.splitlines()[-1]) == {
            "type": "message", "message": {"role": "assistant", "content": "Hello."}}

    def test_a_model_directory_stops_at_its_eos_token(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        from tests.model.helpers import make_model_dir

        directory = make_model_dir(tmp_path / "model", chat_template="{{ messages }}", response_template=QWEN,
                                   special_tokens={"eos_token": "<|im_end|>"})
        output = write(tmp_path, "out.txt", self.AFTER_EOS)
        assert run(capsys, str(directory), output, "--no-prefix") == (0, self.message("Hello."), "")

    @pytest.mark.parametrize("mode", [[], ["--stream"], ["--errors", "keep"]])
    def test_a_tokenizer_config_file_stops_at_its_directory_eos_token(
            self, mode: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """QA: the file was parsed as a bare response template, past the eos its own config names."""
        config = tmp_path / "model" / "tokenizer_config.json"
        config.parent.mkdir()
        config.write_text(json.dumps({"eos_token": "<|im_end|>", "response_template": QWEN}))
        output = write(tmp_path, "out.txt", self.AFTER_EOS)
        code, out, err = run(capsys, str(config), output, "--no-prefix", *mode)
        assert (code, err) == (0, "")
        if "--stream" not in mode:
            assert out == self.message("Hello.")
        code, out, _ = run(capsys, str(config), output, "--no-prefix", "--events", *mode)
        assert json.loads(out.splitlines()[-1]) == {
            "type": "message", "message": {"role": "assistant", "content": "Hello."}}

    def test_errors_keep_never_puts_the_eos_token_in_content(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        output = write(tmp_path, "out.txt", "To call a tool, write <tool_call> tags.<|im_end|>")
        code, out, _ = run(capsys, "qwen3", output, "--no-prefix", "--errors", "keep")
        assert code == 0
        assert json.loads(out)["content"] == "To call a tool, write <tool_call> tags."

    def test_a_template_file_parses_as_the_engine_does(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        template = write(tmp_path, "t.json", QWEN)
        output = write(tmp_path, "out.txt", self.AFTER_EOS)
        assert run(capsys, template, output, "--no-prefix") == (
            0, self.message("Hello.\n<|im_start|>user\nNext question"), "")


class TestSizeLimits:
    """Inputs are read incrementally up to a documented cap, so a device or a pipe cannot grow
    without bound; the error names the constant."""

    @pytest.fixture(autouse=True)
    def small_limits(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from chatcodec.cli import io as cli_io

        monkeypatch.setattr(cli_io, "MAX_OUTPUT_BYTES", 10)
        monkeypatch.setattr(cli_io, "MAX_INPUT_BYTES", 20)

    def test_an_endless_output(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert run(capsys, "qwen3", "/dev/zero", "--no-prefix") == (1, "", (
            "chatcodec: ValueError: /dev/zero: larger than 10 bytes, more than a model output holds "
            "(chatcodec.cli.io.MAX_OUTPUT_BYTES)\n"))

    def test_an_endless_prefix_or_tools_file(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        output = write(tmp_path, "out.txt", "Hi")
        expected = ("chatcodec: ValueError: /dev/zero: larger than 20 bytes, more than a conversation, "
                    "tools, documents or prompt file holds (chatcodec.cli.io.MAX_INPUT_BYTES)\n")
        assert run(capsys, "qwen3", output, "--prefix", "/dev/zero") == (1, "", expected)
        assert run(capsys, "qwen3", output, "--no-prefix", "--tools", "/dev/zero") == (1, "", expected)

    def test_a_device_as_template_names_the_real_problem(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert run(capsys, "/dev/zero", "out.txt", "--no-prefix") == (1, "", (
            "chatcodec: ValueError: /dev/zero: larger than 20 bytes, more than a conversation, tools, "
            "documents or prompt file holds (chatcodec.cli.io.MAX_INPUT_BYTES)\n"))
        assert run(capsys, "/dev/null", "out.txt", "--no-prefix") == (1, "", (
            "chatcodec: ValueError: /dev/null: the file is empty; expected a response template (JSON)\n"))

    def test_a_live_stream_is_bounded(self, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 25)))
        assert run(capsys, "qwen3", "-", "--no-prefix", "--events", "--stream")[::2] == (1, (
            "chatcodec: ValueError: <stdin>: larger than 10 bytes, more than a model output holds "
            "(chatcodec.cli.io.MAX_OUTPUT_BYTES)\n"))


def test_the_default_size_limits() -> None:
    from chatcodec.cli import io as cli_io

    assert (cli_io.MAX_OUTPUT_BYTES, cli_io.MAX_INPUT_BYTES) == (256 * 1024 * 1024, 64 * 1024 * 1024)
