"""``chatcodec parse``: turn a model output into an assistant message with a response template.

``chatcodec parse TEMPLATE OUTPUT (--prefix FILE | --no-prefix) [--tools FILE] [--errors keep]
[--events | --openai chat|responses] [--stream] [--chunk-size N] [--delay SECONDS]``
(``--chunk-size`` and ``--delay`` imply ``--stream``; their bad values are usage errors, exit 2).
stdout carries the data only: one JSON message, or JSON Lines with ``--events``; ``--openai``
prints OpenAI's wire format instead (:mod:`chatcodec.cli.openai_output`). ``--stream`` feeds the
output chunk by chunk through the same parser and shows the regions as they arrive. With
``--stream`` and ``OUTPUT`` ``-``, standard input is read as it arrives (a live generation piped
in is parsed live, each read fed as it comes unless ``--chunk-size`` is given), decoded
incrementally so a character split across reads is fed once complete, and
:data:`~chatcodec.cli.io.MAX_OUTPUT_BYTES` is checked at
every read. Output that cannot be parsed goes through the one error path of
:func:`chatcodec.cli.main` (``chatcodec: ResponseParseError: ...`` with its caret excerpt on
stderr, exit code 1; ``--errors keep`` records the problems in the message instead). Without
``--prefix FILE`` or ``--no-prefix`` the usage error says why the prompt matters and gives both
command lines.

Every TEMPLATE gives the same kind of parser (:class:`~chatcodec.model.responses.ModelResponseParser`,
the protocol :class:`~chatcodec.cli.protocols.StreamingParser`), and a model directory is read once.

When ``TEMPLATE`` is a bundled profile name, a model directory or a file named
``tokenizer_config.json`` (read as its directory), the output is parsed exactly as
``ChatCodec.from_pretrained(TEMPLATE).get_response_parser`` parses it: generation ends at the first
end-of-sequence token (``eos_token`` and ``generation_config.json``'s ids), which never reaches the
message; with a response template file, every character of the output is parsed.

On a terminal, model output never drives it: control characters in streamed text are shown as
``\\xNN`` and JSON writes DEL and C1 controls as ``\\u00NN`` escapes (the same JSON value), bidi
controls and U+2028/U+2029 as ``\\uNNNN`` in both; a pipe or a file gets every character exactly
(:mod:`chatcodec.cli.view`).
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys
from collections.abc import Iterator

from chatcodec.cli.io import read_text, read_tools
from chatcodec.cli.options import positive_int, seconds
from chatcodec.cli.sources import (
    TOKENIZER_CONFIG_WITHOUT_TEMPLATE,
    end_of_sequence_text,
    local_path,
    model_path,
    no_response_template,
    read_response_template,
    resolve_source,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from chatcodec.model.codec import ChatCodec
    from chatcodec.model.responses import ModelResponseParser
    from chatcodec.response_templates.template import ResponseTemplate

__all__ = ["CHUNK_SIZE", "READ_SIZE", "TemplateSource", "add_arguments", "run", "stdin_pieces"]

#: Characters per chunk with ``--stream`` unless ``--chunk-size`` says otherwise.
CHUNK_SIZE = 4

#: Most bytes taken from standard input per read when it is streamed.
READ_SIZE = 65536


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``chatcodec parse``'s arguments."""
    parser.add_argument("template", metavar="TEMPLATE",
                        help="the response template: a JSON file, a model directory whose "
                             "tokenizer_config.json has a response_template (or that file: "
                             "generation ends at its eos token either way), a Hub model id (org/name, "
                             "with chatcodec[hub]), or a bundled profile name (see `chatcodec profiles`)")
    parser.add_argument("output", metavar="OUTPUT", help="the generated text: a UTF-8 file, or - for stdin")
    parser.set_defaults(usage_error=parser.error)  # run() explains a missing --prefix / --no-prefix
    prefix = parser.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", metavar="FILE",
                        help="the prompt the output continues (read exactly; needed when the prompt "
                             "pre-opens a region such as <think>)")
    prefix.add_argument("--no-prefix", action="store_true",
                        help="the output holds the whole assistant message (no prompt context)")
    parser.add_argument("--tools", metavar="FILE",
                        help="a JSON list of tool schemas; tool-call arguments are typed with them")
    parser.add_argument("--errors", choices=("strict", "keep"), default="strict",
                        help="strict: unparsable output is an error (default); keep: record problems "
                             "under parse_errors and keep going")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--events", action="store_true",
                       help="print the events as JSON Lines, then a final {\"type\": \"message\"} line")
    shape.add_argument("--openai", choices=("chat", "responses"), default=None,
                       help="print the OpenAI Chat Completions message (chat) or Responses object "
                            "(responses); with --stream, one chat.completion.chunk or Responses event "
                            "per line")
    parser.add_argument("--stream", action="store_true",
                        help="feed the output chunk by chunk and show regions as they arrive (with OUTPUT "
                             "-, stdin is read as it arrives)")
    parser.add_argument("--chunk-size", type=positive_int, default=None, metavar="N",
                        help=f"characters per chunk when streaming (default {CHUNK_SIZE}; from stdin, what "
                             "each read brings); implies --stream")
    parser.add_argument("--delay", type=seconds, default=None, metavar="SECONDS",
                        help="pause after each chunk, to watch the live view; implies --stream")


def run(args: argparse.Namespace) -> int:
    """Parse the output and print the message (or the events); returns the exit code, 0.

    Output the response template cannot parse raises ``ResponseParseError``, which
    :func:`chatcodec.cli.main` reports as every other error (exit 1, the message with its caret
    excerpt), after the stream view was closed.

    Raises:
        OSError, ValueError: an input cannot be read, or the options contradict each other.
        ResponseTemplateError: the response template is invalid (the message names TEMPLATE first).
        ResponseParseError: (strict) the output, or a region the prefix closes, cannot be parsed.
    """
    from chatcodec.cli import view as views
    from chatcodec.cli.view import EventLines, choose_view, chunks, format_message, play

    if not args.no_prefix and args.prefix is None:
        args.usage_error(_missing_prefix(args))
    if args.prefix == "":  # an empty prompt is --no-prefix; an empty name is no file at all
        args.usage_error("--prefix takes a FILE holding the prompt (or - for stdin), not the prompt's text; "
                         "an output with no prompt before it: --no-prefix")
    stream = args.stream or args.chunk_size is not None or args.delay is not None
    size = args.chunk_size or CHUNK_SIZE
    from_stdin = [name for name, value in (("OUTPUT", args.output), ("--prefix", args.prefix),
                                           ("--tools", args.tools)) if value == "-"]
    if len(from_stdin) > 1:  # the first would read all of stdin, the next an empty one
        raise ValueError(f"{' and '.join(from_stdin)} cannot both be read from stdin" if len(from_stdin) == 2
                         else f"only one of {', '.join(from_stdin)} can be read from stdin")
    source = TemplateSource.open(args.template)
    live = stream and args.output == "-"
    keep = args.errors == "keep"
    output = "" if live else read_text(args.output, limit="MAX_OUTPUT_BYTES", replace=keep)
    prefix = "" if args.no_prefix else read_text(args.prefix)
    tools = read_tools(args.tools)
    if tools is not None:
        _check_tool_schemas(args.tools, tools)
    # parses the prefix: a region it closes can fail
    parser = source.parser(prefix, tools, args.errors, value_deltas=bool(args.openai))
    if args.openai:
        return _openai(args, parser, output, live, size, keep, source.codec)
    if not stream and not args.events:
        parser.feed(output)
        message, _ = parser.finalize()
        text = format_message(message)
        sys.stdout.write(views.terminal_json(text) if views.is_terminal(sys.stdout) else text)
        return 0
    view = EventLines(sys.stdout) if args.events else choose_view(sys.stdout, sys.stderr)
    if live:
        pieces: Iterator[str] = stdin_pieces(sys.stdin.buffer, args.chunk_size, replace=keep)
    else:
        pieces = chunks(output, size if stream else max(1, len(output)))
    play(parser, pieces, view, args.delay or 0.0)
    return 0


def _openai(args: argparse.Namespace, parser: ModelResponseParser, output: str, live: bool, size: int,
            keep: bool, codec: ChatCodec | None) -> int:
    """``--openai chat|responses``: the same parse as OpenAI's wire format (ids in the form of the
    model's profile, when it has one)."""
    from chatcodec.cli.openai_output import tool_call_ids, write_openai
    from chatcodec.cli.view import chunks

    stream = args.stream or args.chunk_size is not None or args.delay is not None
    pieces: Iterator[str]
    if live:
        pieces = stdin_pieces(sys.stdin.buffer, args.chunk_size, replace=keep)
    else:
        pieces = chunks(output, size if stream else max(1, len(output)))
    write_openai(args.openai, parser, pieces, sys.stdout, stream=stream, ids=tool_call_ids(codec),
                 delay=args.delay or 0.0)
    return 0


def _check_tool_schemas(source: str, tools: list[Any]) -> None:
    """Refuse a parameter schema tool-argument typing cannot read, naming the tools file.

    Raises:
        ValueError: ``{source}: tools[i] (name): parameter 'key': ...``.
    """
    from chatcodec.response_templates.arguments import tool_parameters

    try:
        tool_parameters(tools)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None


def _missing_prefix(args: argparse.Namespace) -> str:
    """Why ``--prefix`` or ``--no-prefix`` is required, with the exact command lines to use."""
    command = f"chatcodec parse {args.template} {args.output}"
    return ("say what the output continues: --prefix FILE (the prompt that was sent) or --no-prefix.\n"
            "The response template parses the output as the continuation of the prompt: a prompt ending "
            "in an assistant header that opens <think> makes the output's first words reasoning, and a "
            "prefill is part of the message. So there is no safe default.\n"
            f"  {command} --prefix PROMPT.txt   (the rendered prompt, e.g. from chatcodec render)\n"
            f"  {command} --no-prefix           (the output holds the whole assistant message)")


class TemplateSource:
    """What TEMPLATE names, read once: a response template file, or a model (a profile name, a model
    directory, a ``tokenizer_config.json`` read as its directory) whose generation ends at its
    end-of-sequence tokens.

    Attributes:
        template: the compiled response template.
        codec: the model, or ``None`` for a response template file.
        end_texts: for a file that holds an ``eos_token`` beside its ``response_template`` (what
            ``chatcodec profiles NAME --response-template`` prints), that token: generation ends
            there, as for the profile.
    """

    __slots__ = ("codec", "end_texts", "template")

    def __init__(self, template: ResponseTemplate, codec: ChatCodec | None,
                 end_texts: tuple[str, ...] = ()) -> None:
        self.template = template
        self.codec = codec
        self.end_texts = end_texts

    @classmethod
    def open(cls, source: str) -> TemplateSource:
        """Read TEMPLATE (a model directory once, whatever it holds).

        Raises:
            OSError, ValueError: it cannot be read, or it holds no response template.
            ResponseTemplateError: the response template is invalid; the message names ``source`` first.
        """
        from chatcodec.errors import ResponseTemplateError
        from chatcodec.response_templates.template import load_response_template

        model = _model_source(source)
        try:
            if model is None:
                eos = end_of_sequence_text(source) if source != "-" else None
                return cls(load_response_template(read_response_template(source)), None,
                           (eos,) if eos else ())
            from chatcodec.model.codec import ChatCodec

            codec = ChatCodec.from_pretrained(model)
            if codec.response_template is None:
                raise ValueError(no_response_template(model) if model != _parent(source)
                                 else f"{source}: {TOKENIZER_CONFIG_WITHOUT_TEMPLATE}")
            return cls(load_response_template(codec.response_template), codec)
        except ResponseTemplateError as error:
            message = str(error)
            named = message if message.startswith(f"{source}:") else f"{source}: {message}"
            raise ResponseTemplateError(named, field=error.field, key=error.key, path=error.path) from None

    def parser(self, prefix: str, tools: list[Any] | None, errors: str,
               value_deltas: bool = False) -> ModelResponseParser:
        """A fresh parser for one output: the model's (ending at its end-of-sequence tokens), or the
        engine's for a response template file; both behind the same protocol. ``value_deltas`` for
        ``--openai``: tool-call arguments reported as they are written.

        Raises:
            ResponseParseError: (strict) a region the prefix closes cannot be parsed.
        """
        from chatcodec.model.responses import ModelResponseParser
        from chatcodec.response_templates.engine import ResponseParser

        if self.codec is not None:
            return self.codec.get_response_parser(self.template.spec, prefix=prefix, tools=tools,
                                                  errors=errors, value_deltas=value_deltas)
        return ModelResponseParser.for_text(ResponseParser(self.template, prefix=prefix, tools=tools,
                                                           errors=errors, value_deltas=value_deltas),
                                               self.end_texts)


def _model_source(source: str) -> str | None:
    """What ``ChatCodec.from_pretrained`` loads for ``source``: the profile name or directory itself,
    the directory of a file named ``tokenizer_config.json`` (its eos token ends generation, as for
    the directory), or ``None`` for a response template file."""
    kind = resolve_source(source)
    if kind in ("directory", "profile"):
        return source
    if kind == "hub":
        return model_path(source)
    if kind == "file" and os.path.basename(local_path(source)) == "tokenizer_config.json":
        return _parent(source)
    return None


def _parent(source: str) -> str:
    """The folder ``source`` is in, as ``str(pathlib.Path(source).parent)`` names it."""
    return os.path.dirname(local_path(source)) or "."


def stdin_pieces(stream: BinaryIO, size: int | None = None, replace: bool = False) -> Iterator[str]:
    """The text of ``stream`` as it arrives: each read, decoded (in pieces of at most ``size``
    characters when ``size`` is given), then an empty piece: the input may pause there, so
    :func:`~chatcodec.cli.view.play` shows everything before reading on.

    Args:
        stream: standard input's binary buffer (``read1`` returns what is available).
        size: the most characters per piece (``--chunk-size``); ``None``: each read is one piece, so a
            fast pipe is parsed in large pieces (time and memory per character stay small) and a
            live generation in the pieces it is written in.
        replace: bytes that are not UTF-8 become U+FFFD, with one ``UserWarning`` naming the first
            (``--errors keep``), instead of an error.

    Yields:
        Text pieces, in order; a UTF-8 character split across reads comes out once complete.

    Raises:
        ValueError: the bytes are not UTF-8 (the message names the byte offset; not with
            ``replace``), or there are more than :data:`chatcodec.cli.io.MAX_OUTPUT_BYTES`.
    """
    from chatcodec.cli import io as cli_io
    from chatcodec.cli.view import chunks

    decoder = codecs.getincrementaldecoder("utf-8")()
    read = getattr(stream, "read1", stream.read)
    offset = 0  # of the first byte the decoder has not turned into text yet
    total = 0
    while True:
        data = read(READ_SIZE)
        total += len(data)
        if total > cli_io.MAX_OUTPUT_BYTES:
            raise cli_io.too_large("<stdin>", "MAX_OUTPUT_BYTES")
        pending = decoder.getstate()[0]
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as error:
            problem = cli_io.not_utf8("<stdin>", offset + error.start, error.reason)
            if not replace:
                raise ValueError(problem) from None
            cli_io.warn_replaced(problem)  # once: from here on, invalid bytes are replaced silently
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            text = decoder.decode(pending + data, final=not data)
        offset += len(pending) + len(data) - len(decoder.getstate()[0])
        if size is None:
            if text:
                yield text
        else:
            yield from chunks(text, size)
        yield ""
        if not data:
            return
