"""Model output as the model-level ``parse_response`` / ``get_response_parser`` receive it.

What lives here (the shapes of the input are :mod:`chatcodec.model.sequences`'s): the
end of generation (:class:`EndOfSequence`, built for a model by :func:`end_of_sequence`), a
response as text (:func:`response_text`), and :class:`ModelResponseParser`, a
:class:`~chatcodec.ResponseParser` that accepts text or token ids at every step.

Rule kept (SPEC §1.8a): an end-of-sequence token is a delimiter, not text. Generation ends at the
first end-of-sequence token, as an id or as its text; it is never fed to the response parser (so
it can never end up in ``reasoning_content`` or ``content``), and what follows it (padding, in a
batch) is not part of the output. Regions still open are closed at the end of generation, as
they are for truncated output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

from chatcodec.errors import ParserStateError, TokenizerUnavailableError
from chatcodec.model.sequences import as_id_list, split_sequences, to_python, token_id

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `chatcodec parse` with a template file never loads a tokenizer
    from typing import Any

    from chatcodec.model.incremental import IncrementalDecoder
    from chatcodec.model.tokenizer import TokenizerHandle

__all__ = [
    "JOIN_PIECES",
    "EndOfSequence",
    "ModelResponseParser",
    "ResponseDecoding",
    "parse_sequences",
    "response_text",
]

#: Pieces of generated text :class:`ModelResponseParser` keeps before joining them into one string.
JOIN_PIECES = 1024


def _no_tokenizer() -> IncrementalDecoder:
    raise TokenizerUnavailableError(
        "feed: this parser reads text only (a bare response template has no tokenizer); decode the ids "
        "first, or use ChatCodec.get_response_parser")


class EndOfSequence:
    """Finds the end of generation in ids and in text, holding back text that may be its start.

    Args:
        token_ids: the end-of-sequence ids.
        texts: the end-of-sequence tokens' texts.
    """

    __slots__ = ("_held", "_starts", "ended", "texts", "token_ids")

    def __init__(self, token_ids: Iterable[int], texts: Iterable[str]) -> None:
        #: the characters an end text starts with: text without any of them passes at once
        self.token_ids, self.texts, self._starts = _end_rule(frozenset(token_ids), tuple(texts))
        self.ended = False
        self._held = ""

    def cut_ids(self, ids: Sequence[int]) -> tuple[list[int], bool]:
        """The ids before the first end-of-sequence id, and whether there was one.

        Call :meth:`end` once the text of those ids has gone through :meth:`cut_text`.

        Args:
            ids: the new ids.

        Returns:
            ``(ids before the first end-of-sequence id, whether there was one)``.
        """
        for index, item in enumerate(ids):
            if item in self.token_ids:
                return list(ids[:index]), True
        return list(ids), False

    def end(self) -> None:
        """Mark the generation as ended: later text is not output."""
        self.ended = True
        self._held = ""

    def cut_text(self, text: str, *, final: bool = False) -> str:
        """The text that is surely output: up to an end-of-sequence text, minus a possible start of one.

        Args:
            text: new text.
            final: no more text follows (release what was held back).

        Returns:
            The text to output now (``""`` once the generation has ended).
        """
        if self.ended:
            return ""
        if not self._held and self._starts.isdisjoint(text):
            return text  # no end text can start in it (the common case, and always without end texts)
        text, self._held = self._held + text, ""
        ends = [index for index in (text.find(eos) for eos in self.texts) if index >= 0]
        if ends:
            self.end()
            return text[: min(ends)]
        if not final:
            hold = self._partial_length(text)
            if hold:
                text, self._held = text[:-hold], text[-hold:]
        return text

    def _partial_length(self, text: str) -> int:
        """Length of the longest suffix of ``text`` that is a proper prefix of an end text."""
        longest = 0
        for eos in self.texts:
            index = text.find(eos[0], max(len(text) - len(eos) + 1, 0))
            while index != -1 and len(text) - index > longest:
                if eos.startswith(text[index:]):
                    longest = len(text) - index
                    break
                index = text.find(eos[0], index + 1)
        return longest


@functools.lru_cache(maxsize=64)
def _end_rule(token_ids: frozenset[int], texts: tuple[str, ...]) -> tuple[frozenset[int], tuple[str, ...],
                                                                          frozenset[str]]:
    """The end ids, the end texts longest first and their first characters: made once per model and
    shared by its parsers (a server keeps thousands alive)."""
    ordered = tuple(sorted({text for text in texts if text}, key=len, reverse=True))
    return token_ids, ordered, frozenset(text[0] for text in ordered)


class ResponseDecoding:
    """What a model gives the parsing of its output: its tokenizer, where generation ends, its padding.

    Built by ``ChatCodec`` from its current state for each call, so the helpers here never see
    the model object.

    Attributes:
        tokenizer: the tokenizer (or why there is none), for ids.
        eos_token_ids: the ids that end generation (``eos_token``'s and ``generation_config.json``'s).
        eos_texts: the texts of those tokens, which end generation in text output too.
        pad_ids: the pad ids dropped from both ends of a prompt given as ids without a mask.
    """

    __slots__ = ("eos_texts", "eos_token_ids", "pad_ids", "tokenizer")

    def __init__(self, tokenizer: TokenizerHandle, eos_token_ids: frozenset[int] = frozenset(),
                 eos_texts: tuple[str, ...] = (), pad_ids: frozenset[int] = frozenset()) -> None:
        self.tokenizer = tokenizer
        self.eos_token_ids = eos_token_ids
        self.eos_texts = eos_texts
        self.pad_ids = pad_ids

    def end_of_sequence(self) -> EndOfSequence:
        """A fresh :class:`EndOfSequence` (it holds per-generation state)."""
        return EndOfSequence(self.eos_token_ids, self.eos_texts)


def response_text(sequence: str | list[int], decoding: ResponseDecoding, what: str = "response") -> str:
    """Generated output as text: ids decoded with special tokens kept, up to the end of generation.

    Ids are decoded as a stream would decode them (``Tokenizer.decode_generated``), so a one-shot
    parse and a streamed one always agree.

    Args:
        sequence: text, or one sequence of ids.
        decoding: the model's tokenizer and end of generation.
        what: the argument the sequence came from (``"response"``, ``"response[1]"``), for messages.

    Returns:
        The text before the first end-of-sequence id or text.

    Raises:
        TokenizerUnavailableError: ids were given and the model has no tokenizer.
        ValueError: an id outside the vocabulary.
    """
    end = decoding.end_of_sequence()
    if not isinstance(sequence, str):
        before, _ = end.cut_ids(sequence)
        sequence = decoding.tokenizer.require().decode_generated(before, what=what)
    return end.cut_text(sequence, final=True)


def _step_ids(value: Any) -> list[int]:
    """The ids of one ``feed`` step (not text), or a ``TypeError`` saying what a step may be."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(row, (list, tuple)) for row in value):
        raise TypeError("feed: got a batch of sequences; a parser follows one sequence, so create one "
                        "parser per sequence (or use parse_response for a whole batch)")
    try:
        return as_id_list(value, "feed")
    except TypeError:
        raise TypeError("feed: expected text, a token id or a sequence of token ids (a list, tuple or "
                        f"1-D array), got {type(value).__name__}") from None


class ModelResponseParser:
    """A streaming response parser fed text or token ids, one generation step at a time.

    Wraps :class:`~chatcodec.ResponseParser` (same events, same final message) with incremental
    decoding of token ids (:class:`~chatcodec.model.tokenizer.IncrementalDecoder`) and the end of
    generation (:class:`EndOfSequence`). Made by :meth:`chatcodec.ChatCodec.get_response_parser`.

    Attributes:
        parser: the wrapped :class:`~chatcodec.ResponseParser`.
        ended: an end-of-sequence token was seen; later steps are not output and are ignored.
    """

    __slots__ = ("_decoder", "_end", "_finished", "_joined", "_new_decoder", "_parts", "finalize_hook",
                 "parser")

    def __init__(self, parser: Any, end: EndOfSequence,
                 decoder: Callable[[], IncrementalDecoder]) -> None:
        self.parser = parser
        self._end = end
        self._new_decoder = decoder
        self._decoder: IncrementalDecoder | None = None
        #: called with the final message when :meth:`finalize` returns it (``None``: nothing)
        self.finalize_hook: Callable[[dict[str, Any]], None] | None = None
        self._finished = False
        self._parts: list[str] = []
        self._joined: list[str] = []

    @classmethod
    def for_text(cls, parser: Any, end_texts: Iterable[str] = ()) -> ModelResponseParser:
        """A parser of text steps only (a response template file), ending at ``end_texts``.

        The command line drives every parser through this one class, so a response template file,
        a model directory and a profile are fed, ended and reported the same way.

        Args:
            parser: the :class:`~chatcodec.ResponseParser` to wrap.
            end_texts: end-of-sequence texts (the file's ``eos_token``); none: every character is
                parsed.

        Returns:
            The wrapper; feeding it token ids raises ``TokenizerUnavailableError``.
        """
        return cls(parser, EndOfSequence((), end_texts), _no_tokenizer)

    @property
    def text(self) -> str:
        """The generated text fed to the response parser so far (end-of-sequence excluded)."""
        return "".join(self._joined) + "".join(self._parts)

    def _keep(self, text: str) -> None:
        """Remember ``text`` for :attr:`text`. Every :data:`JOIN_PIECES` pieces are joined into one
        string, so the memory kept stays close to the text's own size whatever the step size (a list
        of one-character strings costs about 60 bytes per character), in linear time."""
        parts = self._parts
        parts.append(text)
        if len(parts) >= JOIN_PIECES:
            self._joined.append("".join(parts))
            parts.clear()

    @property
    def ended(self) -> bool:
        """Whether an end-of-sequence token was seen (later steps are ignored)."""
        return self._end.ended

    @property
    def initial_events(self) -> list[dict[str, Any]]:
        """Events the prefix produced (replay them before the first ``feed``)."""
        return list(self.parser.initial_events)

    def _decode(self, step: Any) -> tuple[str, bool]:
        """The text of a step of ids, and whether an end-of-sequence id ended it."""
        value = to_python(step)
        ids = _step_ids(value)
        if self._decoder is None:
            self._decoder = self._new_decoder()  # raises TokenizerUnavailableError without one
        before, found = self._end.cut_ids(ids)
        single = token_id(value) is not None
        text = self._decoder.step(before[0] if single and before else before, what="feed")
        return (text + self._decoder.flush(), True) if found else (text, False)

    def _pending(self) -> str:
        return self._decoder.flush() if self._decoder is not None else ""

    def feed(self, step: str | int | Sequence[int] | Any) -> list[dict[str, Any]]:
        """Feed one step of output: text, one token id, or several ids (a list or 1-D array).

        Returns:
            The events this step produced.

        Raises:
            ParserStateError: the parser was finalized.
            TokenizerUnavailableError: ids were fed and the model has no tokenizer.
            ResponseParseError: the output cannot be parsed (strict mode).
        """
        end = self._end
        if type(step) is int and not end.ended and not self._finished and step not in end.token_ids:
            # one id: the per-token path of a server
            decoder = self._decoder
            if decoder is None:
                decoder = self._decoder = self._new_decoder()  # raises TokenizerUnavailableError
            text = decoder.push(step) if 0 <= step < decoder.limit else decoder.step_id(step, what="feed")
            if end._held or not end._starts.isdisjoint(text):  # cut_text's own test, inlined
                text = end.cut_text(text)
            if not text:
                return []
            parts = self._parts  # _keep, inlined
            parts.append(text)
            if len(parts) >= JOIN_PIECES:
                self._joined.append("".join(parts))
                parts.clear()
            return self.parser.feed(text)  # type: ignore[no-any-return]
        if self._finished:
            raise ParserStateError("feed: the parser was finalized; create a new one per sequence")
        if end.ended:
            return []
        if type(step) is str and self._decoder is None:  # text, and no ids were ever fed
            text = end.cut_text(step)
        else:
            text, found = (self._pending() + step, False) if isinstance(step, str) else self._decode(step)
            text = end.cut_text(text, final=found)
            if found:
                end.end()
        if not text:
            return []
        self._keep(text)
        return self.parser.feed(text)  # type: ignore[no-any-return]

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """End the generation: release held-back text, close open regions, return the message.

        Returns:
            ``(message, events)``: the final message and the events produced while finishing.

        Raises:
            ParserStateError: the parser was already finalized.
            ResponseParseError: the output cannot be parsed (strict mode).
        """
        if self._finished:
            raise ParserStateError("finalize: the parser was already finalized")
        self._finished = True
        events: list[dict[str, Any]] = []
        text = self._end.cut_text(self._pending(), final=True)
        if text:
            self._keep(text)
            events.extend(self.parser.feed(text))
        message, final_events = self.parser.finalize()
        if self.finalize_hook is not None:
            self.finalize_hook(message)
        return message, events + list(final_events)


def parse_sequences(response: Any, template: Any, decoding: ResponseDecoding, *, prefix: Any, tools: Any,
                    errors: str) -> dict[str, Any] | list[dict[str, Any]]:
    """The model-level ``parse_response``: one sequence or a batch, text or ids.

    Args:
        response: text, ids, a batch of either, or a 1-D/2-D array.
        template: the response template (a dict or a loaded template).
        decoding: the model's tokenizer, end of generation and padding.
        prefix: the prompt(s) (:func:`chatcodec.model.prefixes.split_prompts`); ``None`` is an error
            (the reference's), ``""`` or ``[]`` opt out.
        tools: passed to :func:`chatcodec.parse_response`.
        errors: passed to :func:`chatcodec.parse_response`.

    Returns:
        One message, or a list of messages for a batch.
    """
    from chatcodec.model.prefixes import prompt_text, prompts_for
    from chatcodec.response_templates.api import parse_response
    from chatcodec.response_templates.prefix import require_prefix
    from chatcodec.response_templates.template import load_response_template

    compiled = load_response_template(template)
    require_prefix(prefix)
    responses, batched = split_sequences(response, "response")
    prompts = [prompt_text(prompt, decoding.tokenizer, decoding.pad_ids)
               for prompt in prompts_for(prefix, len(responses))]
    parsed = [
        parse_response(response_text(text, decoding, f"response[{index}]" if batched else "response"),
                       compiled, prefix=prompt, tools=tools, errors=errors)
        for index, (text, prompt) in enumerate(zip(responses, prompts, strict=True))
    ]
    return parsed if batched else parsed[0]
