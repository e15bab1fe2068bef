"""The engine's state machine: every row of TRANSITIONS, the lifecycle, errors and bookkeeping."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from chatcodec import (
    MissingFieldError,
    ParserStateError,
    ResponseParseError,
    ResponseParser,
    parse_response,
    parse_response_batch,
)
from chatcodec.errors import UnknownPlaceholderError
from chatcodec.response_templates import matcher as matcher_module
from chatcodec.response_templates.buffer import TRIM_THRESHOLD
from chatcodec.response_templates.content import get_parser
from chatcodec.response_templates.engine import LOOKBEHIND_CONTEXT, TRANSITIONS, Lifecycle
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN
from tests.response_templates.helpers import IGNORE_NO_ANCHOR, check_stream

pytestmark = IGNORE_NO_ANCHOR

NO_IMPLICIT: dict[str, Any] = {"start_anchor": "x", "fields": {"r": {"open": "<r>", "close": "</r>"}}}
#: A reasoning field whose open is plain text once it has closed (``opens_once``).
ONCE: dict[str, Any] = {"start_anchor": "x", "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>", "opens_once": True},
    "content": {"close": "<end>"}}}


def open_(field: str) -> dict[str, Any]:
    return {"type": "region_open", "field": field}


def chunk(field: str, text: str, dirty: bool = False) -> dict[str, Any]:
    return {"type": "region_chunk", "field": field, "text": text, "dirty": dirty}


def close(field: str, value: Any) -> dict[str, Any]:
    return {"type": "region_close", "field": field, "value": value}


# Each row of TRANSITIONS, driven by one scenario: (template, prefix, feeds, events of the last feed).
SCENARIOS: dict[tuple[str, str], tuple[dict[str, Any], str, list[str], list[dict[str, Any]]]] = {
    ("OUTSIDE", "text"): (QWEN, "", ["Hi"], [open_("content"), chunk("content", "Hi")]),
    ("OUTSIDE", "open(f) committed"): (
        QWEN,
        "",
        ["Hi", "<think>"],
        [close("content", "Hi"), open_("reasoning_content")],
    ),
    ("OUTSIDE", "implicit close committed"): (QWEN, "", ["Hi", "<|im_end|>"], [close("content", "Hi")]),
    ("INSIDE(f)", "text"): (QWEN, "", ["<think>", "hm"], [chunk("reasoning_content", "hm")]),
    ("INSIDE(f)", "close(f) committed"): (
        QWEN,
        "",
        ["<think>hm", "</think>"],
        [close("reasoning_content", "hm")],
    ),
    ("INSIDE(f)", "close(f) committed, f opens_once"): (
        ONCE,
        "",
        ["<think>hm</think>", "a <think> b</think><end>"],
        [open_("content"), chunk("content", "a <think> b</think>"), close("content", "a <think> b</think>")],
    ),
}


@pytest.mark.parametrize("row", TRANSITIONS, ids=lambda row: f"{row[0]}-{row[1]}")
def test_every_transition_row(row: tuple[str, str, str, str]) -> None:
    state, event, _, _ = row
    if state == "any":
        parser = ResponseParser(QWEN, prefix="")
        assert parser.feed("<think>unfinished") == [
            open_("reasoning_content"),
            chunk("reasoning_content", "unfinished"),
        ]
        _, events = parser.finalize()
        assert events == [close("reasoning_content", "unfinished")]
        assert parser.lifecycle is Lifecycle.FINISHED
        return
    template, prefix, feeds, expected = SCENARIOS[(state, event)]
    parser = ResponseParser(template, prefix=prefix)
    for text in feeds[:-1]:
        parser.feed(text)
    assert parser.feed(feeds[-1]) == expected


def test_text_outside_regions_without_an_implicit_field_is_discarded() -> None:
    parser = ResponseParser(NO_IMPLICIT, prefix="")
    assert parser.feed("lost <r>kept</r> lost") == [open_("r"), chunk("r", "kept"), close("r", "kept")]
    assert parser.finalize() == ({"r": "kept"}, [])


def test_an_implicit_close_with_nothing_open_emits_nothing() -> None:
    parser = ResponseParser(QWEN, prefix="")
    assert parser.feed("<|im_end|>") == []
    assert parser.finalize() == ({"role": "assistant"}, [])


def test_the_prefix_continues_a_region_and_replays_its_events() -> None:
    prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    parser = ResponseParser(QWEN, prefix=prefix)
    assert parser.initial_events == [open_("reasoning_content"), chunk("reasoning_content", "\n")]
    assert parser.feed("ok</think>done") == [
        chunk("reasoning_content", "ok"),
        close("reasoning_content", "ok"),
        open_("content"),
        chunk("content", "done"),
    ]
    assert parser.finalize()[0] == {"role": "assistant", "reasoning_content": "ok", "content": "done"}


def test_finalize_twice_and_feed_after_finalize_raise_and_change_nothing() -> None:
    parser = ResponseParser(QWEN, prefix="")
    parser.feed("Hi")
    message, _ = parser.finalize()
    for call in (lambda: parser.feed("more"), parser.finalize):
        with pytest.raises(ParserStateError, match="already finalized") as raised:
            call()
        assert isinstance(raised.value, RuntimeError)
    assert parser.lifecycle is Lifecycle.FINISHED
    assert message == {"role": "assistant", "content": "Hi"}


def test_a_strict_error_fails_the_parser_and_keeps_what_was_parsed() -> None:
    parser = ResponseParser(QWEN, prefix="")
    parser.feed("<think>fine</think>Before. ")
    with pytest.raises(ResponseParseError) as raised:
        parser.feed('<tool_call>{"name": "f", "arguments": {</tool_call>after')
    error = raised.value
    assert (error.field, error.parser, error.text) == ("tool_calls", "json", '{"name": "f", "arguments": {')
    assert error.offset == 66  # where JSON decoding stopped, counted from the first generated character
    assert error.partial_message == {"role": "assistant", "reasoning_content": "fine", "content": "Before."}
    assert str(error).splitlines()[0] == (
        "field 'tool_calls' (content parser 'json') at offset 66 of the output: could not parse region as "
        "JSON: Expecting property name enclosed in double quotes (line 1, column 29, char 28)"
    )
    assert str(error).splitlines()[1:] == [
        '    {"name": "f", "arguments": {',
        "                                ^",
    ]
    assert parser.lifecycle is Lifecycle.FAILED
    with pytest.raises(ParserStateError, match=r"failed earlier \(ResponseParseError: field 'tool_calls'"):
        parser.feed("x")
    with pytest.raises(ParserStateError):
        parser.finalize()
    assert parser.lifecycle is Lifecycle.FAILED


def test_errors_pickle_with_their_attributes() -> None:
    with pytest.raises(ResponseParseError) as raised:
        parse_response("<tool_call>nope</tool_call>", QWEN, prefix="")
    copy = pickle.loads(pickle.dumps(raised.value))
    assert (copy.field, copy.text, copy.partial_message, str(copy)) == (
        "tool_calls",
        "nope",
        {"role": "assistant"},
        str(raised.value),
    )


def test_an_unknown_placeholder_is_a_key_error_with_a_plain_message() -> None:
    template = {"start_anchor": "x", "fields": {"x": {"open": "<x>", "close": "</x>", "transform": "{nope}"}}}
    with pytest.raises(UnknownPlaceholderError) as raised:
        parse_response("<x>1</x>", template, prefix="")
    assert isinstance(raised.value, KeyError) and isinstance(raised.value, ResponseParseError)
    assert str(raised.value).startswith(
        "field 'x' (content parser 'text') at offset 3 of the output: transform placeholder '{nope}' is not "
        "defined. Available: ['content']"
    )


def test_missing_required_fields_are_listed_in_template_order() -> None:
    template = {
        "start_anchor": "x",
        "fields": {"b": {"open": "<b>", "optional": False}, "a": {"open": "<a>", "optional": False}, "c": {}},
    }
    parser = ResponseParser(template, prefix="")
    parser.feed("text")
    with pytest.raises(MissingFieldError) as raised:
        parser.finalize()
    assert raised.value.fields == ["b", "a"]
    assert raised.value.partial_message == {"c": "text"}
    assert "required response_template fields missing from parsed output: ['b', 'a']" in str(raised.value)
    assert parser.lifecycle is Lifecycle.FAILED


def test_region_close_values_are_copies_of_the_message_values() -> None:
    parser = ResponseParser(QWEN, prefix="")
    events = parser.feed('<tool_call>{"name": "f", "arguments": {"x": [1]}}</tool_call>')
    events[-1]["value"]["function"]["arguments"]["x"].append(2)
    message, _ = parser.finalize()
    assert message["tool_calls"] == [{"type": "function", "function": {"name": "f", "arguments": {"x": [1]}}}]
    message["tool_calls"][0]["function"]["name"] = "changed"
    assert events[-1]["value"]["function"]["name"] == "f"


def test_json_close_inside_a_string_is_text() -> None:
    output = 'Hi<tool_call>{"name": "a", "arguments": {"s": "</tool_call>"}}</tool_call> bye'
    expected = {
        "role": "assistant",
        "content": "Hi bye",
        "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": {"s": "</tool_call>"}}}],
    }
    assert parse_response(output, QWEN, prefix="") == expected
    parser = ResponseParser(QWEN, prefix="")
    for char in output:
        parser.feed(char)
    assert parser.finalize()[0] == expected


X_JSON_CALLS: dict[str, Any] = {
    "start_anchor": "A",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "x-json-calls",
                       "content_args": {"single": True}},
        "content": {},
    },
}


def test_a_string_aware_extension_close_inside_a_string_is_text() -> None:
    output = '<tool_call>{"name": "f", "arguments": {"t": "a</tool_call>b"}}</tool_call>'
    expected = {"tool_calls": {"name": "f", "arguments": {"t": "a</tool_call>b"}}}
    assert parse_response(output, X_JSON_CALLS, prefix="") == expected
    parser = ResponseParser(X_JSON_CALLS, prefix="")
    for char in output:
        parser.feed(char)
    assert parser.finalize()[0] == expected


def test_string_awareness_is_a_property_of_the_content_parser() -> None:
    assert [name for name in ("text", "int", "float", "bool", "json", "xml-inline", "kv-lines",
                              "x-json-calls", "x-bare-object", "x-pythonic", "x-findall", "x-first",
                              "x-xml-tree") if get_parser(name).string_aware] == [
        "json", "x-json-calls", "x-bare-object"]


def test_keep_mode_never_raises_and_records_each_problem() -> None:
    output = ("Use the <tool_call> tag.<|im_end|>", '<tool_call>{"broken": </tool_call>Done.<|im_end|>')
    first = parse_response(output[0], QWEN, prefix="", errors="keep")
    assert first == {
        "role": "assistant",
        "content": "Use the <tool_call> tag.<|im_end|>",
        "parse_errors": [
            {
                "field": "tool_calls",
                "parser": "json",
                "offset": 20,
                "error": "field 'tool_calls' (content parser 'json'): could not parse region as JSON: "
                "Expecting value (line 1, column 2, char 1)",
                "text": " tag.<|im_end|>",
                "raw": "<tool_call> tag.<|im_end|>",
                "span": [8, 34],
            }
        ],
    }
    parser = ResponseParser(QWEN, prefix="", errors="keep")
    events = parser.feed(output[1])
    record = {
        "field": "tool_calls",
        "parser": "json",
        "offset": 22,
        "error": "field 'tool_calls' (content parser 'json'): could not parse region as JSON: "
        "Expecting value (line 1, column 12, char 11)",
        "text": '{"broken": ',
        "raw": '<tool_call>{"broken": </tool_call>',
        "span": [0, 34],
    }
    assert events == [
        open_("tool_calls"),
        chunk("tool_calls", '{"broken": ', True),
        {"type": "region_close", "field": "tool_calls", "value": None, "error": record},
        open_("content"),
        chunk("content", '<tool_call>{"broken": </tool_call>'),
        close("content", '<tool_call>{"broken": </tool_call>'),
        open_("content"),
        chunk("content", "Done."),
        close("content", "Done."),
    ]
    assert parser.parse_errors == [record]
    assert parser.finalize()[0] == {
        "role": "assistant", "content": '<tool_call>{"broken": </tool_call>Done.', "parse_errors": [record]}


def test_keep_mode_puts_a_failed_region_back_into_the_text_verbatim() -> None:
    """A tag mentioned in prose: nothing is lost from the message, and every chunking agrees."""
    output = "To call a tool, the model writes <tool_call> tag. Done."
    joined = check_stream(QWEN, output, errors="keep")
    assert joined == {"content": output, "tool_calls": " tag. Done."}
    message = parse_response(output, QWEN, prefix="", errors="keep")
    assert message["content"] == output
    assert [(r["text"], r["raw"], r["span"], r["offset"]) for r in message["parse_errors"]] == [
        (" tag. Done.", "<tool_call> tag. Done.", [33, 55], 45)]


def test_keep_mode_without_an_implicit_text_field_records_the_raw_region_only() -> None:
    template = {"start_anchor": "x", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}}}
    assert parse_response("a <n>x</n> b", template, prefix="", errors="keep") == {"parse_errors": [{
        "field": "n", "parser": "int", "offset": 5,
        "error": "field 'n' (content parser 'int'): invalid literal for int: 'x' (expected ASCII digits)",
        "text": "x", "raw": "<n>x</n>", "span": [2, 10]}]}


@pytest.mark.parametrize(
    ("prefix", "output", "where"),
    [
        ("", "Hi <tool_call>{broken</tool_call>", "at offset 15 of the output"),
        ("<|im_start|>assistant\n<tool_call>{x", "bad</tool_call>", "at offset 34 of the prefix"),
        ("<|im_start|>assistant\n<tool_call>", '{"a": }</tool_call>',
         "at offset 6 of the output (the region began at offset 22 of the prefix)"),
    ],
)
def test_a_strict_error_gives_the_offset_in_the_output_or_the_prefix(prefix: str, output: str,
                                                                     where: str) -> None:
    with pytest.raises(ResponseParseError) as raised:
        parse_response(output, QWEN, prefix=prefix)
    first, *excerpt = str(raised.value).splitlines()
    assert first.startswith(f"field 'tool_calls' (content parser 'json') {where}: could not parse region")
    assert len(excerpt) == 2 and excerpt[1].strip() == "^"  # the caret excerpt of the region stays


def test_a_strict_error_carries_the_raw_region_and_its_span() -> None:
    with pytest.raises(ResponseParseError) as raised:
        parse_response("Hi <tool_call>{bad</tool_call>", QWEN, prefix="")
    assert (raised.value.text, raised.value.raw, raised.value.span) == (
        "{bad", "<tool_call>{bad</tool_call>", (3, 30))
    with pytest.raises(ResponseParseError) as raised:
        parse_response("bad</tool_call>", QWEN, prefix="<|im_start|>assistant\n<tool_call>{")
    assert (raised.value.text, raised.value.raw, raised.value.span) == (
        "{bad", "<tool_call>{bad</tool_call>", (-12, 15))


def test_keep_mode_records_missing_required_fields() -> None:
    template = {"start_anchor": "x", "fields": {"a": {"open": "<a>", "optional": False}, "c": {}}}
    assert parse_response("hi", template, prefix="", errors="keep") == {
        "c": "hi",
        "parse_errors": [
            {
                "field": "a",
                "parser": None,
                "offset": None,
                "error": "required field never matched",
                "text": "",
                "raw": "",
                "span": None,
            }
        ],
    }


def test_keep_mode_refuses_a_template_that_uses_the_parse_errors_key() -> None:
    template = {"start_anchor": "x", "fields": {"parse_errors": {}}}
    with pytest.raises(ValueError, match="records problems under 'parse_errors'"):
        ResponseParser(template, prefix="", errors="keep")
    assert parse_response("a", template, prefix="") == {"parse_errors": "a"}


@pytest.mark.parametrize(
    ("chunk", "kind"), [(5, "int"), (None, "NoneType"), ([1, 2], "list"), (b"Hi", "bytes")]
)
def test_feed_refuses_anything_but_text_and_says_where_ids_go(chunk: Any, kind: str) -> None:
    parser = ResponseParser(QWEN, prefix="")
    with pytest.raises(TypeError) as raised:
        parser.feed(chunk)
    assert str(raised.value) == (
        f"ResponseParser.feed: expected the generated text (str), got {kind}. Token ids go through "
        "ChatCodec.get_response_parser(), whose parser decodes them"
    )
    assert parser.lifecycle is Lifecycle.FEEDING
    parser.feed("Hi")
    assert parser.finalize()[0] == {"role": "assistant", "content": "Hi"}


@pytest.mark.parametrize(("output", "kind"), [([1, 2], "list"), (b"Hi", "bytes"), (None, "NoneType")])
def test_parse_response_refuses_anything_but_text_with_feeds_message(output: Any, kind: str) -> None:
    # parse_response runs the engine's step itself (one pass, the end known), not feed: same refusal
    with pytest.raises(TypeError) as raised:
        parse_response(output, QWEN, prefix="")
    assert str(raised.value) == (
        f"ResponseParser.feed: expected the generated text (str), got {kind}. Token ids go through "
        "ChatCodec.get_response_parser(), whose parser decodes them"
    )


def test_prefix_and_errors_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="requires `prefix`"):
        ResponseParser(QWEN)
    with pytest.raises(ValueError, match="errors: expected 'strict' or 'keep', got 'ignore'"):
        ResponseParser(QWEN, prefix="", errors="ignore")
    with pytest.raises(TypeError, match="decode token ids first"):
        ResponseParser(QWEN, prefix=[1, 2])  # type: ignore[arg-type]
    assert ResponseParser(QWEN, prefix=[]).initial_events == []  # type: ignore[arg-type]


def test_batch_prefixes_broadcast_or_pair_up() -> None:
    outputs = ["a", "<think>b</think>c"]
    assert parse_response_batch(outputs, QWEN, prefix="<|im_start|>assistant\n<think>") == [
        {"role": "assistant", "reasoning_content": "a"},
        {"role": "assistant", "reasoning_content": "<think>b", "content": "c"},
    ]
    assert parse_response_batch(outputs, QWEN, prefix=["", "no anchor: all of it is fed "]) == [
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "no anchor: all of it is fed c", "reasoning_content": "b"},
    ]
    with pytest.raises(ValueError, match=r"got 2 response\(s\) but 1 prefix\(es\)"):
        parse_response_batch(outputs, QWEN, prefix=["x"])
    with pytest.raises(ValueError, match="requires `prefix`"):
        parse_response_batch(outputs, QWEN, prefix=None)


def test_the_buffer_keeps_only_the_unresolved_tail() -> None:
    parser = ResponseParser(QWEN, prefix="")
    for _ in range(5000):
        parser.feed("word ")
    assert len(parser._buffer.text) <= TRIM_THRESHOLD + 5
    parser.feed("<tool_")
    assert parser._buffer.text.endswith("<tool_") and len(parser._buffer.text) <= TRIM_THRESHOLD + 11
    assert LOOKBEHIND_CONTEXT < TRIM_THRESHOLD


@pytest.mark.parametrize(
    ("open_pattern", "output", "expected"),
    [
        # a look-behind spanning exactly LOOKBEHIND_CONTEXT characters, far into a long output
        ("(?<=B[^#]{255})#", "B" + "a" * 1500 + "#x!", {"content": "B" + "a" * 1500 + "#x!"}),
        ("(?<=B[^#]{255})#", "a" * 1500 + "B" + "a" * 255 + "#x!rest",
         {"content": "a" * 1500 + "B" + "a" * 255 + "rest", "f": "x"}),
        ("(?<=[^#]{1,256})#", "a" * 3000 + "#x!", {"content": "a" * 3000, "f": "x"}),
    ],
)
def test_a_look_behind_within_the_kept_context_streams_as_one_shot(
    open_pattern: str, output: str, expected: dict[str, str]
) -> None:
    """QA round 4: a look-behind reaching further back than LOOKBEHIND_CONTEXT is refused at load
    (test_template_loading.py); one that stays within it sees the same text whatever the chunking."""
    template = {"start_anchor": "QQ", "fields": {
        "f": {"open_pattern": open_pattern, "close": "!"}, "content": {}}}
    check_stream(template, output, expected)


def test_a_long_whitespace_run_is_not_rescanned(monkeypatch: pytest.MonkeyPatch) -> None:
    template = {"start_anchor": "x", "fields": {"r": {"open": "<r>", "close_pattern": r"\s*</r>"}, "c": {}}}
    calls: list[int] = []
    original = matcher_module.RegexMatcher.scan

    def counting(self: Any, buf: str, *args: Any) -> Any:
        calls.append(len(buf))
        return original(self, buf, *args)

    monkeypatch.setattr(matcher_module.RegexMatcher, "scan", counting)
    parser = ResponseParser(template, prefix="")
    parser.feed("<r>x")
    for _ in range(40_000):
        assert parser.feed(" ") == []
    assert len(calls) < 5  # the held run is checked once, not once per space
    assert parser.feed("</r>") == []  # a regex match reaching the buffer edge waits for one more character
    assert parser.feed("!") == [close("r", "x"), open_("c"), chunk("c", "!")]
    assert parser.finalize()[0] == {"r": "x", "c": "!"}


def test_scanned_text_stays_linear_in_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[int] = []
    original = matcher_module.LiteralMatcher.scan

    def counting(self: Any, buf: str, pos: int, *args: Any) -> Any:
        scanned.append(len(buf) - pos)
        return original(self, buf, pos, *args)

    monkeypatch.setattr(matcher_module.LiteralMatcher, "scan", counting)
    output = 'text <think>thoughts</think> <tool_call>{"name": "f", "arguments": {}}</tool_call> ' * 400
    parser = ResponseParser(QWEN, prefix="")
    for start in range(0, len(output), 3):
        parser.feed(output[start : start + 3])
    parser.finalize()
    assert sum(scanned) < 4 * len(output)


@pytest.mark.parametrize(
    ("source", "final"),
    [
        (r"</tool_call>|(?=<tool_call>|<\|im_end\|>)", {"</tool_call>"}),
        (r"\[/THINK\]|</think>|(?=\[TOOL_CALLS\])", {"[/THINK]", "</think>"}),
        (r"<a>|<a>b", {"<a>b"}),  # a literal another one extends may still grow
        (r"</function>(?:\s*</tool_call>)?|</tool_call>", set()),  # a quantifier: anything may grow
        (r"\n</think>", set()),  # an escape of a letter is no plain character here
        (r"(?=</s>)", set()),
    ],
)
def test_final_literals_of_a_regex_delimiter(source: str, final: set[str]) -> None:
    from chatcodec.response_templates.delimiters import final_literals

    assert final_literals(source) == final


def test_a_regex_close_that_is_a_final_literal_commits_at_the_buffer_edge() -> None:
    """``</tool_call>|(?=<tool_call>)``: once ``</tool_call>`` is there, more input cannot change the
    match, so the region closes in the same feed (as the literal close did), not one chunk later."""
    template = {"start_anchor": "A", "fields": {
        "calls": {"open": "<tool_call>", "close_pattern": r"</tool_call>|(?=<tool_call>)", "content": "json"},
        "content": {}}}
    parser = ResponseParser(template, prefix="")
    events = parser.feed('<tool_call>{"a": 1}</tool_call>')
    assert events[-1] == {"type": "region_close", "field": "calls", "value": {"a": 1}}
