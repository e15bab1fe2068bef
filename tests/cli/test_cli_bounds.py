"""Issue 13, the command line: one parser protocol and one error path, bounded streaming, usage
errors that explain themselves.

Linearity (a 10 MB output streamed through the plain and rich views) is measured by
``bench/bench_bounds.py``, not asserted here.
"""

from __future__ import annotations

import io
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from chatcodec import ResponseParser
from chatcodec.cli import main
from chatcodec.cli.parse import TemplateSource
from chatcodec.cli.view import EventLines, PlainView, chunks, play
from chatcodec.model.responses import ModelResponseParser
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def test_a_missing_prefix_choice_explains_why_and_gives_both_command_lines(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The first try, ``chatcodec parse qwen3 out.txt``, was a bare argparse error."""
    with pytest.raises(SystemExit) as raised:
        main(["parse", "qwen3", "out.txt"])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(
        "chatcodec parse: error: say what the output continues: --prefix FILE (the prompt that was sent) "
        "or --no-prefix.\n"
        "The response template parses the output as the continuation of the prompt: a prompt ending in an "
        "assistant header that opens <think> makes the output's first words reasoning, and a prefill is "
        "part of the message. So there is no safe default.\n"
        "  chatcodec parse qwen3 out.txt --prefix PROMPT.txt   (the rendered prompt, e.g. from chatcodec "
        "render)\n"
        "  chatcodec parse qwen3 out.txt --no-prefix           (the output holds the whole assistant "
        "message)\n")
    assert err.startswith("usage: chatcodec parse ")


def test_an_empty_prefix_name_points_to_no_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    """``--prefix ""`` (meaning "no prompt") said only ``: cannot read: No such file or directory``."""
    with pytest.raises(SystemExit) as raised:
        main(["parse", "qwen3", "out.txt", "--prefix", ""])
    assert raised.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "chatcodec parse: error: --prefix takes a FILE holding the prompt (or - for stdin), not the prompt's "
        "text; an output with no prompt before it: --no-prefix")


@pytest.mark.parametrize("delay", ["-1", "nan", "inf", "soon"])
def test_demo_delay_is_validated_as_parse_does(delay: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``demo --delay -1`` crashed in time.sleep, ``nan`` as an internal error."""
    with pytest.raises(SystemExit) as raised:
        main(["demo", "--delay", delay])
    assert raised.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"chatcodec demo: error: argument --delay: expected seconds, a finite number of at least 0, "
        f"got {delay!r}")


class TestOneParserProtocol:
    """``cli/parse.py`` returned ``Any`` and the view probed ``ended`` with ``getattr``."""

    def test_every_template_source_gives_the_same_parser_class(self, tmp_path: Path) -> None:
        from tests.model.helpers import make_model_dir

        directory = make_model_dir(tmp_path / "model", chat_template="{{ messages }}", response_template=QWEN,
                                   special_tokens={"eos_token": "<|im_end|>"})
        for source in (write(tmp_path, "t.json", QWEN), "qwen3", str(directory)):
            parser = TemplateSource.open(source).parser("", None, "strict")
            assert type(parser) is ModelResponseParser
            assert parser.ended is False
            assert parser.feed("Hi<|im_end|>")[:2] == [
                {"type": "region_open", "field": "content"},
                {"type": "region_chunk", "field": "content", "text": "Hi", "dirty": False},
            ]
            assert parser.ended is (source != str(tmp_path / "t.json"))
            assert parser.finalize()[0] == {"role": "assistant", "content": "Hi"}

    def test_a_model_directory_is_read_once(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from chatcodec.model import config
        from chatcodec.model.codec import ChatCodec
        from tests.model.helpers import make_model_dir

        directory = make_model_dir(tmp_path / "model", chat_template="{{ messages }}", response_template=QWEN,
                                   special_tokens={"eos_token": "<|im_end|>"})
        reads: list[str] = []
        original = config.read_json_file

        def counting(path: Path) -> Any:
            reads.append(Path(path).name)
            return original(path)

        monkeypatch.setattr(config, "read_json_file", counting)
        ChatCodec.from_pretrained(str(directory))
        loading = len(reads)
        output = write(tmp_path, "out.txt", "Hi<|im_end|>")
        assert main(["parse", str(directory), output, "--no-prefix"]) == 0
        assert len(reads) == 2 * loading  # what loading the model reads, and nothing more

    def test_a_text_only_parser_refuses_token_ids(self) -> None:
        from chatcodec.errors import TokenizerUnavailableError

        parser = ModelResponseParser.for_text(ResponseParser(QWEN, prefix=""))
        with pytest.raises(TokenizerUnavailableError, match="reads text only"):
            parser.feed([1, 2])


class _Endless(io.RawIOBase):
    """A stdin that never ends (``yes x``), counting what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer)
        buffer[:size] = b"x" * size
        self.read_bytes += size
        return size


class TestStreamingIsBounded:
    def test_an_endless_stdin_stops_at_the_cap(self, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
        from chatcodec.cli import io as cli_io
        from chatcodec.cli.parse import READ_SIZE

        monkeypatch.setattr(cli_io, "MAX_OUTPUT_BYTES", 1_000_000)
        endless = _Endless()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless)))
        assert main(["parse", "qwen3", "-", "--no-prefix", "--stream"]) == 1
        assert capsys.readouterr().err == (
            "chatcodec: ValueError: <stdin>: larger than 1,000,000 bytes, more than a model output holds "
            "(chatcodec.cli.io.MAX_OUTPUT_BYTES)\n")
        assert endless.read_bytes <= 1_000_000 + 2 * READ_SIZE + io.DEFAULT_BUFFER_SIZE

    @pytest.mark.parametrize("size", [None, 1])
    def test_memory_stays_close_to_the_text_size(self, size: int | None) -> None:
        """It grew about 40 bytes per input byte: every 4-character piece was kept as a string,
        twice (the engine's region and the model parser's text)."""
        from chatcodec.cli.parse import stdin_pieces
        from chatcodec.model.codec import ChatCodec

        parser = ChatCodec.from_pretrained("qwen3").get_response_parser(prefix="")
        stdin = io.BufferedReader(io.BytesIO(b"x" * 300_000), buffer_size=4096)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            message = play(parser, stdin_pieces(stdin, size), EventLines(_Null()))
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert message == {"role": "assistant", "content": "x" * 300_000}
        assert grown < 4 * 300_000


class _Null(io.StringIO):
    def write(self, text: str) -> int:
        return len(text)


def test_the_plain_view_shows_a_region_that_starts_with_a_long_whitespace_run() -> None:
    out = io.StringIO()
    parser = ModelResponseParser.for_text(ResponseParser(QWEN, prefix=""))
    play(parser, chunks(" " * 5000 + "\nHi there", 3), PlainView(out))
    assert out.getvalue() == '[content]\nHi there\n\n{\n  "role": "assistant",\n  "content": "Hi there"\n}\n'
