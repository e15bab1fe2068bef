"""``ChatCompletionStream``: the exact chunks, the finish reasons, failures, and token ids.

The exact-value tests use small templates written here (``chatml``), so that each whitespace rule
(``strip``: true, false, ``"blank"``) is pinned on its own; every bundled profile is covered on
real outputs by ``test_stream_properties.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import chatcodec
from chatcodec import ResponseParser, profiles
from chatcodec.errors import ParserStateError, ResponseParseError
from chatcodec.model.codec import ChatCodec
from chatcodec.openai import ChatCompletionStream, ToolCallIds, to_chat_message
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.model.helpers import chatml_tokenizer, make_model_dir
from tests.openai_wire.helpers import check_chunks, run_chat

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def chatml(strip: bool | str = True) -> dict[str, Any]:
    """ChatML with ``<think>`` reasoning and JSON tool calls; text fields with ``strip``."""
    text = {"content": "text", "content_args": {"strip": strip}}
    return {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>", **text},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                           "transform": {"type": "function", "function": "{content}"}},
            "content": {"close": "<|im_end|>", **text},
        },
    }


def hermes(errors: str = "strict") -> ResponseParser:
    """Content stripped (``strip: true``), JSON calls."""
    return ResponseParser(chatml(), prefix="", errors=errors)


def index_ids(name: str, index: int) -> str:
    return f"call_{index}"


def deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [chunk["choices"][0]["delta"] for chunk in chunks]


def test_the_canonical_sequence() -> None:
    stream = ChatCompletionStream(hermes(), model="hermes-3", id="chatcmpl-7", created=1700000000,
                                  ids=index_ids)
    first = stream.feed("Let me check. ")
    assert first == [{
        "id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1700000000, "model": "hermes-3",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me check."},
                     "logprobs": None, "finish_reason": None}],
    }]
    chunks = first + stream.feed(CALL) + stream.feed(CALL.replace("Paris", "Tokyo"))
    last = stream.finish()
    assert deltas(chunks[1:]) == [
        {"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                         "function": {"name": "get_weather", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]},
        {"tool_calls": [{"index": 1, "id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": ""}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": '{"city": "Tokyo"}'}}]},
    ]
    assert [(chunk["choices"][0]["delta"], chunk["choices"][0]["finish_reason"]) for chunk in last] == [
        ({}, "tool_calls")]
    assert check_chunks(chunks + last) == to_chat_message(stream.message, ids=index_ids)


def test_the_first_feed_always_gives_the_role() -> None:
    stream = ChatCompletionStream(hermes(), ids=index_ids)
    assert deltas(stream.feed("<tool_")) == [{"role": "assistant"}]
    assert stream.feed("") == []


def test_an_empty_generation_is_role_then_stop() -> None:
    stream = ChatCompletionStream(hermes())
    chunks = stream.finish()
    assert [(chunk["choices"][0]["delta"], chunk["choices"][0]["finish_reason"]) for chunk in chunks] == [
        ({"role": "assistant"}, None), ({}, "stop")]


def test_whitespace_the_message_strips_is_held_back_not_sent() -> None:
    """hermes strips content: leading whitespace waits for text, trailing whitespace for more text."""
    chunks, stream = run_chat(hermes, ["  \n", " Hi", "  ", "\n", "there  ", " \n"])
    assert [delta.get("content") for delta in deltas(chunks)] == [None, "Hi", "  \nthere", None]
    assert stream.message == {"role": "assistant", "content": "Hi  \nthere"}


def test_streams_over_one_template_hold_their_own_whitespace() -> None:
    """The template's text fields are read once per template; each stream still holds its own
    whitespace (one stream's held text never leaks into another's)."""
    parser = hermes()
    first = ChatCompletionStream(parser)
    second = ChatCompletionStream(ResponseParser(parser.template, prefix=""))
    assert [delta.get("content") for delta in deltas(first.feed("Hi  "))] == ["Hi"]
    assert [delta.get("content") for delta in deltas(second.feed("  Yo"))] == ["Yo"]
    assert [delta.get("content") for delta in deltas(first.feed("there"))] == ["  there"]
    assert [delta.get("content") for delta in deltas(second.finish())] == [None]
    assert second.message == {"role": "assistant", "content": "Yo"}


def test_text_around_calls_is_one_content() -> None:
    chunks, stream = run_chat(hermes, ["Let me check. ", CALL, " Done."], ids=index_ids)
    assert [delta.get("content") for delta in deltas(chunks)] == [
        "Let me check.", None, None, "  Done.", None]
    assert stream.message is not None and stream.message["content"] == "Let me check.  Done."


@pytest.mark.parametrize(("strip", "join", "reasoning"), [
    (True, "\n", "First.\n\nThird."), ("blank", "\n", " First. \n\nThird."),
    (True, "", "First.Third."), ("blank", "", " First. Third."),  # an empty separator is a join too
])
def test_a_join_field_writes_its_separator_between_regions(strip: bool | str, join: str,
                                                           reasoning: str) -> None:
    template = {"start_anchor": "S", "fields": {
        "reasoning_content": {"open": "<r>", "close": "</r>", "repeats": True, "join": join,
                              "content_args": {"strip": strip}},
        "content": {}}}

    def parser() -> ResponseParser:
        return ResponseParser(template, prefix="")

    chunks, stream = run_chat(parser, list("<r> First. </r><r> \n </r><r>Third.</r>Hi"))
    assert "".join(delta.get("reasoning_content", "") for delta in deltas(chunks)) == reasoning
    assert stream.message == {"reasoning_content": reasoning, "content": "Hi"}
    assert check_chunks(chunks) == to_chat_message(stream.message)


def test_blank_keeps_text_as_written_but_not_a_region_of_only_whitespace() -> None:
    pieces = ["  \n", "<think>", " Hm ", "</think>", "\n\n", CALL, "\n", " Done. ", " "]
    chunks, stream = run_chat(lambda: ResponseParser(chatml("blank"), prefix=""), pieces, ids=index_ids)
    assert [(delta.get("reasoning_content"), delta.get("content")) for delta in deltas(chunks)] == [
        (None, None), (" Hm ", None), (None, None), (None, None), (None, "\n Done. "), (None, " "),
        (None, None)]
    assert stream.message == {"role": "assistant", "reasoning_content": " Hm ", "content": "\n Done.  ",
                              "tool_calls": [{"type": "function", "function": {
                                  "name": "get_weather", "arguments": {"city": "Paris"}}}]}
    assert check_chunks(chunks) == to_chat_message(stream.message, ids=index_ids)


def test_keys_openai_has_no_field_for_go_in_the_last_chunk() -> None:
    gpt_oss = profiles.load("gpt_oss")
    output = ('<|channel|>analysis to=browser.search<|message|>{"query": "weather"}<|call|>')
    chunks, stream = run_chat(lambda: ResponseParser(gpt_oss.response_template, prefix=""), [output])
    assert deltas(chunks)[-1] == {"builtin_tool_calls": [{"recipient": "browser.search",
                                                           "content": '{"query": "weather"}'}]}
    assert check_chunks(chunks, extra=["builtin_tool_calls"]) == to_chat_message(stream.message)


@pytest.mark.parametrize("key", ["reasoning", None])
def test_the_reasoning_key(key: str | None) -> None:
    def parser() -> ResponseParser:
        return ResponseParser(chatml(False), prefix="<|im_start|>assistant\n<think>\n")

    chunks, stream = run_chat(parser, ["Hm.</think>Hi"], reasoning_key=key)
    expected = [{"role": "assistant", "reasoning": "\nHm."}, {"content": "Hi"}, {}] if key else \
        [{"role": "assistant", "content": "Hi"}, {}]
    assert deltas(chunks) == expected
    assert check_chunks(chunks, reasoning_key=key) == to_chat_message(stream.message, reasoning_key=key)


@pytest.mark.parametrize(("strip", "first"), [(False, "\nA"), ("blank", "A")])
def test_text_the_prompt_opened_goes_out_with_the_first_feed(strip: bool | str, first: str) -> None:
    """The generation prompt pre-opens ``<think>\\n``: the reasoning region starts in the prompt. As
    written, its newline is reasoning; with ``"blank"``, whitespace the prompt wrote is layout."""
    parser = ResponseParser(chatml(strip), prefix="<|im_start|>assistant\n<think>\n")
    assert parser.initial_events  # the prompt opened the reasoning region and wrote "\n" in it
    stream = ChatCompletionStream(parser)
    assert deltas(stream.feed("A")) == [{"role": "assistant", "reasoning_content": first}]
    assert stream.finish()[-1]["choices"][0]["finish_reason"] == "stop"
    assert stream.message == {"role": "assistant", "reasoning_content": first}


@pytest.mark.parametrize(
    ("requested", "reported"),
    [(None, "tool_calls"), ("stop", "tool_calls"), ("length", "length"),
     ("content_filter", "content_filter")],
)
def test_finish_reasons_with_calls(requested: str | None, reported: str) -> None:
    chunks, _ = run_chat(hermes, [CALL], requested)
    assert chunks[-1]["choices"][0]["finish_reason"] == reported


def test_finish_reason_stop_without_calls_and_bad_reasons() -> None:
    chunks, _ = run_chat(hermes, ["Hi"], "tool_calls")
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    stream = ChatCompletionStream(hermes())
    with pytest.raises(ValueError, match="finish_reason: expected one of"):
        stream.finish("eos")
    assert stream.message is None  # nothing ended: the right reason can still be given
    assert stream.finish()[-1]["choices"][0]["finish_reason"] == "stop"


def test_a_malformed_call_is_content_with_errors_keep() -> None:
    broken = '<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>'
    chunks, stream = run_chat(lambda: hermes("keep"), ["Hi ", broken])
    assert [delta.get("content") for delta in deltas(chunks)] == ["Hi", " " + broken, None]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert check_chunks(chunks) == to_chat_message(stream.message) == {"role": "assistant",
                                                                       "content": "Hi " + broken}


def test_strict_errors_raise_from_the_stream() -> None:
    stream = ChatCompletionStream(hermes())
    with pytest.raises(ResponseParseError):
        stream.feed('<tool_call>{"name": </tool_call>')


def test_a_finished_stream_refuses_more() -> None:
    stream = ChatCompletionStream(hermes())
    stream.finish()
    with pytest.raises(ParserStateError, match="already finalized"):
        stream.feed("x")
    with pytest.raises(ParserStateError, match="already finalized"):
        stream.finish()


def test_what_is_not_a_parser_or_not_text_is_refused() -> None:
    with pytest.raises(TypeError, match="expected a ResponseParser"):
        ChatCompletionStream(object())
    template = {"start_anchor": "x", "fields": {"content": {"content": "int"}}}
    with pytest.raises(ValueError, match="field 'content' \\(content parser 'int'\\): the OpenAI streams"):
        ChatCompletionStream(ResponseParser(template, prefix=""))


def test_token_ids_through_chatcodecs_parser(tmp_path: Any) -> None:
    directory = make_model_dir(tmp_path, chat_template="{{ messages }}",
                               response_template=QWEN_RESPONSE_TEMPLATE,
                               special_tokens={"eos_token": "<|im_end|>"}, tokenizer=chatml_tokenizer())
    codec = ChatCodec.from_pretrained(directory)
    output = 'Hi <tool_call>{"name": "f", "arguments": {"a": "é"}}</tool_call>'
    ids = [*codec.encode(output, add_special_tokens=False), 2]  # then <|im_end|>
    stream = ChatCompletionStream(codec.get_response_parser(prefix=""), ids=index_ids)
    chunks = [chunk for token_id in ids for chunk in stream.feed(token_id)] + stream.finish()
    assert check_chunks(chunks) == {
        "role": "assistant", "content": "Hi",
        "tool_calls": [{"id": "call_0", "type": "function",
                        "function": {"name": "f", "arguments": '{"a": "é"}'}}],
    }


def test_chunks_are_json_ready() -> None:
    chunks, _ = run_chat(hermes, ["Hi ", CALL])
    assert [json.loads(json.dumps(chunk)) for chunk in chunks] == chunks


def test_parse_response_and_the_stream_agree_on_seeded_ids() -> None:
    output = "Hi " + CALL
    parsed = chatcodec.parse_response(output, chatml(), prefix="")
    chunks, _ = run_chat(hermes, list(output), ids=ToolCallIds(seed=3))
    assert check_chunks(chunks) == to_chat_message(parsed, ids=ToolCallIds(seed=3))


def test_a_number_past_the_float_range_streams_as_its_text() -> None:
    # the JSON content parser used to read 1e999 as inf, which json.dumps wrote as Infinity: arguments no
    # strict client (JSON.parse) reads; the parser now keeps the number's text, as vLLM and SGLang do,
    # and the stream writes the same valid JSON as the whole message
    output = '<tool_call>\n{"name": "f", "arguments": {"x": 1e999, "y": [-1e999, "Infinity"]}}\n</tool_call>'
    whole = '{"x": "1e999", "y": ["-1e999", "Infinity"]}'
    for size in (1, 3, len(output)):
        parser = ResponseParser(chatml(), prefix="", errors="keep", value_deltas=True)
        chunks, stream = run_chat(lambda parser=parser: parser,
                                  [output[start:start + size] for start in range(0, len(output), size)],
                                  ids=index_ids)
        message = check_chunks(chunks)
        assert message["tool_calls"] == [{"id": "call_0", "type": "function",
                                          "function": {"name": "f", "arguments": whole}}]
        assert message == to_chat_message(stream.message, ids=index_ids)


def test_an_infinite_float_value_is_written_as_a_json_number() -> None:
    # a float content parser can still give inf; the writer keeps the arguments valid JSON
    message = {"role": "assistant", "tool_calls": [{"type": "function", "function": {
        "name": "f", "arguments": {"x": float("inf"), "y": [-float("inf")]}}}]}
    converted = to_chat_message(message, ids=index_ids)
    assert converted["tool_calls"][0]["function"]["arguments"] == '{"x": 1e999, "y": [-1e999]}'


@pytest.mark.parametrize("key", ["content", "role", "tool_calls", ""])
def test_a_reasoning_key_the_delta_already_has_is_refused(key: str) -> None:
    # "role" made the first delta {"role": "<the reasoning>"}; "content" sent the reasoning as the answer
    error = (f"reasoning_key: {key!r} is a key of the message itself; name the reasoning's own key "
             '("reasoning_content", or "reasoning" as vLLM writes it)')
    with pytest.raises(ValueError) as caught:
        ChatCompletionStream(hermes(), reasoning_key=key)
    assert str(caught.value) == error
    with pytest.raises(ValueError) as caught:
        to_chat_message({"reasoning_content": "a", "content": "b"}, reasoning_key=key)
    assert str(caught.value) == error


@pytest.mark.parametrize("made", [5, "", None])
def test_an_id_factory_that_gives_no_string_is_a_clear_error(made: Any) -> None:
    # the id went out as 5 or "" (no client can answer the call), or None (the chunk fails the SDK type)
    error = f"ids('get_weather', 0): a tool-call id factory must return a non-empty string, got {made!r}"
    stream = ChatCompletionStream(hermes(), ids=lambda name, index: made)
    with pytest.raises(TypeError) as caught:
        stream.feed(CALL)
    assert str(caught.value) == error
    message = {"tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {}}}]}
    with pytest.raises(TypeError) as caught:
        to_chat_message(message, ids=lambda name, index: made)
    assert str(caught.value) == error
