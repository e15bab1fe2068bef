"""What the engine tests share: tokenizers built from corpus data, deltas, and the reference parse.

No model is downloaded. For a profiled family, :func:`tokenizer` trains a small byte-level BPE on
that family's corpus outputs (so text tokenizes into real multi-character pieces), with the family's
delimiters and special tokens as special tokens (single tokens, as in the real vocabularies), and
wraps it as a transformers tokenizer carrying the family's real chat template from the corpus, so
the plugins find the bundled profile the way they do for a real model.

:func:`deltas` cuts an output into engine deltas of N tokens, decoded incrementally as the engines'
detokenizers do (a character split across byte tokens waits for its last byte).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import regex
from tests.conftest import corpus_template, load_json
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from chatcodec import ResponseParser, parse_response, profiles
from chatcodec.openai import ChatCompletionStream, to_chat_message

VECTORS: list[dict[str, Any]] = load_json("peer_vectors.json")["vectors"]
#: Token-like delimiters become special tokens; prose delimiters ("Here is my response:") do not.
_TOKEN_LIKE = regex.compile(
    r"<[^<>\s]{1,40}>|\[[A-Z_/]{2,30}\]|<\|[^|]{1,40}\|>|<\|[^>]{1,40}>|\|[^|\s]{1,20}\|"
    r"|◁/?think▷|<[^<>\s]{1,40}\|>"
)


_MARKERS = regex.compile(r"<｜[^｜<>]{1,40}｜>|<\|[^|<>\s]{1,40}\|>|\[[A-Z][A-Z_]{1,30}\]")


def families() -> list[str]:
    """Profiled families that have peer vectors and a corpus chat template, sorted."""
    named = {vector["family"] for vector in VECTORS}
    return [
        name
        for name in profiles.names()
        if name in named and (profiles.load(name).chat_template_source or {}).get("corpus_file")
    ]


def vectors(family: str) -> list[dict[str, Any]]:
    return [vector for vector in VECTORS if vector["family"] == family]


def _delimiter_literals(template: dict[str, Any]) -> list[str]:
    found: list[str] = []
    anchors = template.get("start_anchor")
    found += anchors if isinstance(anchors, list) else [anchors] if isinstance(anchors, str) else []
    for spec in template["fields"].values():
        for key in ("open", "close"):
            value = spec.get(key)
            found += value if isinstance(value, list) else [value] if isinstance(value, str) else []
        for key in ("open_pattern", "close_pattern"):
            found += [m.group(0) for m in _TOKEN_LIKE.finditer(regex.sub(r"\\(.)", r"\1", spec.get(key, "")))]
    return found


@cache
def tokenizer(family: str) -> Any:
    """A transformers tokenizer for ``family`` (see the module docstring)."""
    profile = profiles.load(family)
    found = {text for text in _delimiter_literals(profile.response_template) if _TOKEN_LIKE.fullmatch(text)}
    # marker tokens written inside content parsers' patterns (DeepSeek's <｜tool▁call▁begin｜>, Kimi's
    # <|tool_call_begin|>) are special tokens of those vocabularies too -- but only markers the model's
    # chat template or outputs write: a pattern may also read a later tokenizer version's markers (the
    # mistral profile reads v11's [ARGS] / [CALL_ID]), which the family's own vocabulary does not hold,
    # and vLLM's mistral parser picks its format from the vocabulary
    source = profile.chat_template_source or {}
    chat_template = (
        corpus_template(source["corpus_file"]) if source.get("corpus_file") else profile.chat_template
    )
    texts = [vector["output"] for vector in vectors(family)] + list(profile.generation_prompts)
    written = "\n".join([chat_template or "", *texts])
    spec_text = regex.sub(r"\\(.)", r"\1", json.dumps(profile.response_template, ensure_ascii=False))
    found |= {marker for marker in _MARKERS.findall(spec_text) if marker in written}
    specials = sorted(found | {text for text in profile.special_tokens.values() if text})
    model = Tokenizer(models.BPE())
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    model.train_from_iterator(texts, trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=model,
        chat_template=chat_template or "{{ messages }}",
        **{key: value for key, value in profile.special_tokens.items() if value},
    )
    wrapped.name_or_path = str(source.get("model", family))
    return wrapped


def prefix(vector: dict[str, Any]) -> str:
    """The end of the prompt the vector's output continues (the family's generation prompt)."""
    return profiles.load(vector["family"]).generation_prompt_ending(vector["prompt_suffix"])


def deltas(tok: Any, output: str, size: int | list[int]) -> list[tuple[str, list[int]]]:
    """The output as engine deltas: ``(text, ids)`` each.

    Args:
        size: tokens per delta (``0``: all at once), or the sizes of successive deltas (cycled).
    """
    ids = tok.encode(output, add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=False) == output, "the test tokenizer must round-trip"
    sizes = size if isinstance(size, list) else [size or max(len(ids), 1)]
    result: list[tuple[str, list[int]]] = []
    sent, start, turn = "", 0, 0
    while start < len(ids) or not result:
        end = min(len(ids), start + max(sizes[turn % len(sizes)], 1))
        turn += 1
        text = tok.decode(ids[:end], skip_special_tokens=False)
        if end < len(ids):
            text = text.rstrip("\ufffd")  # a character whose bytes are not all there yet
        result.append((text[len(sent) :], ids[start:end]))
        sent, start = text, end
    return result


def tools(vector: dict[str, Any]) -> list[dict[str, Any]]:
    """The vector's tools, or schema-less functions named after the calls it expects (the engines
    only parse tool calls for requests with tools)."""
    if vector["tools"]:
        return list(vector["tools"])
    names = dict.fromkeys(call["name"] for call in vector["expected"]["tool_calls"]) or {"noop": None}
    return [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}} for name in names
    ]


def reference(vector: dict[str, Any], prompt: str | None = None) -> dict[str, Any]:
    """chatcodec's own parse of the vector (errors kept as content) as an OpenAI message
    (:func:`chatcodec.openai.to_chat_message`), in the form :func:`normal` gives.

    Args:
        prompt: the prompt the output continues (default: the vector's generation prompt).
    """
    template = profiles.load(vector["family"]).response_template
    prompt = prefix(vector) if prompt is None else prompt
    parsed = parse_response(vector["output"], template, prefix=prompt, tools=tools(vector), errors="keep")
    message = to_chat_message(parsed)
    calls = [
        (call["function"]["name"], call["function"]["arguments"]) for call in message.get("tool_calls") or []
    ]
    return normal(message.get("reasoning_content"), message.get("content"), calls)


class _LastFeedAtEnd:
    """A parser whose last feed's events come with ``finalize``'s: a stream over it sees the last
    delta and the end as one feed (an engine that completes its last delta in place)."""

    def __init__(self, parser: ResponseParser) -> None:
        self.parser = parser
        self.feed = parser.feed
        self.initial_events = parser.initial_events
        self.held: list[dict[str, Any]] = []

    def hold(self, text: str) -> None:
        self.held = self.parser.feed(text)

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        message, events = self.parser.finalize()
        return message, self.held + events


def streamed_reference(
    vector: dict[str, Any], size: int | list[int], prompt: str | None = None, *, last_at_end: bool = False
) -> dict[str, Any]:
    """What chatcodec's own Chat Completions stream gives for the output fed in the engine's deltas
    (``deltas(..., size)``), folded: ``reference`` but for the one documented difference of streams
    (``docs/openai.md``: a call whose region failed after the call was sent, in an earlier feed,
    stays in the stream, with the arguments written so far).

    Args:
        last_at_end: the last delta is fed together with the end (vLLM's Chat Completions path
            completes its last delta in place): a call that delta starts and the end shows broken
            was never sent.
    """
    template = profiles.load(vector["family"]).response_template
    prompt = prefix(vector) if prompt is None else prompt
    parser = _LastFeedAtEnd(
        ResponseParser(template, prefix=prompt, tools=tools(vector), errors="keep", value_deltas=True)
    )
    stream = ChatCompletionStream(parser)
    chunks = []
    pieces = deltas(tokenizer(vector["family"]), vector["output"], size)
    for number, (text, _) in enumerate(pieces):
        if last_at_end and number == len(pieces) - 1:
            parser.hold(text)
        else:
            chunks += stream.feed(text)
    chunks += stream.finish()
    reasoning, content, calls = "", "", {}
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"]
        reasoning += delta.get("reasoning_content") or ""
        content += delta.get("content") or ""
        for call in delta.get("tool_calls") or ():
            entry = calls.setdefault(call["index"], ["", ""])
            entry[0] = call.get("function", {}).get("name") or entry[0]
            entry[1] += call.get("function", {}).get("arguments") or ""
    return normal(reasoning, content, [(name, args) for name, args in (calls[i] for i in sorted(calls))])


def normal(reasoning: Any, content: Any, calls: list[tuple[str, Any]]) -> dict[str, Any]:
    """A message to compare: text exactly as sent (``None`` and ``""`` alike, as the engines drop
    empty fields), arguments as JSON values (ids are random, formatting is the JSON's); arguments
    that are not JSON (a call cut short by a failed region) as the text sent."""

    def value(arguments: Any) -> Any:
        if not isinstance(arguments, str):
            return arguments
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments

    return {"reasoning": reasoning or "", "content": content or "",
            "tool_calls": [(name, value(args)) for name, args in calls]}
