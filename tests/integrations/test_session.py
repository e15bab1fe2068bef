"""One request's parse inside an engine (``chatcodec.integrations.session``) and the engines' records
of what was streamed (``chatcodec.integrations.bookkeeping``); pure Python, no engine needed."""

from __future__ import annotations

import itertools
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatcodec import ResponseParser, load_response_template, profiles
from chatcodec.integrations import bookkeeping
from chatcodec.integrations.discovery import ServingTemplate
from chatcodec.integrations.session import RawText, Session, Step, assemble

QWEN3 = ServingTemplate(
    load_response_template(profiles.load("qwen3").response_template), "profile:qwen3", "m", "qwen3"
)
PROMPT = "<|im_start|>assistant\n"
OUTPUT = (
    'Hi <think>\nwhy\n</think>\n\nChecking.<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n'
    "</tool_call><think>more</think>Done."
)
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def _pieces(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({cut % (len(text) + 1) for cut in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _run(pieces: list[str], **options: Any) -> tuple[list[Any], Session]:
    session = Session(QWEN3, PROMPT, TOOLS, **options)
    steps = [session.feed(piece) for piece in pieces]
    return [*steps, session.finish()], session


def test_the_text_outside_reasoning_as_written() -> None:
    steps, _ = _run([OUTPUT], track_outside=True)
    assert "".join(step.outside for step in steps) == (
        'Hi \n\nChecking.<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
        "<think>more</think>Done."
    )


@given(st.lists(st.integers(0, len(OUTPUT)), max_size=12))
def test_any_chunking_gives_the_same_message_and_outside_text(cuts: list[int]) -> None:
    whole, _ = _run([OUTPUT], track_outside=True)
    steps, _ = _run(_pieces(OUTPUT, cuts), track_outside=True)
    assert "".join(step.outside for step in steps) == "".join(step.outside for step in whole)
    message, reference = assemble(steps), assemble(whole)
    assert [call.pop("id")[:5] for call in message["tool_calls"] + reference["tool_calls"]] == ["call_"] * 2
    assert (
        message
        == reference
        == {
            "reasoning": "\nwhy\n",  # the reasoning opens once: a later <think> is content
            "content": "Hi \n\nChecking.<think>more</think>Done.",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        }
    )


def test_where_reasoning_ends_and_other_regions_begin() -> None:
    session = Session(QWEN3, PROMPT + "<think>\n", TOOLS)
    assert session.in_reasoning
    first = session.feed("why")
    assert (first.reasoning, first.reasoning_end, first.other_start) == ("why", None, None)
    second = session.feed("</think>\n\nOK")
    assert (second.reasoning_end, second.other_start, session.in_reasoning) == (11, 11, False)
    assert session.raw.slice(second.reasoning_end) == "\n\nOK"


def test_raw_text_is_read_by_offsets_and_forgotten_before_a_point() -> None:
    raw = RawText()
    for piece in ("abc", "", "def", "g"):
        raw.append(piece)
    assert (raw.slice(2, 5), raw.slice(4), raw.length) == ("cde", "efg", 7)
    raw.drop_before(3)
    assert (raw.slice(0), raw.slice(3, 4), raw.slice(5)) == ("defg", "d", "fg")


def test_raw_text_handed_out_piece_by_piece() -> None:
    # the plugins' usual pattern: each piece is read whole and forgotten right after
    raw = RawText()
    raw.append("ab")
    assert (raw.slice(0), raw.slice(0, 9)) == ("ab", "ab")
    raw.drop_before(2)
    raw.append("cd")
    assert (raw.slice(1), raw.slice(2, 4), raw.slice(3), raw.length) == ("cd", "cd", "d", 4)
    raw.drop_before(9)
    assert (raw.slice(0), raw.length) == ("", 4)
    raw.append("e")
    raw.append("f")
    assert (raw.slice(0), raw.slice(4, 5)) == ("ef", "e")


class Records:
    pass


def test_the_records_hold_exactly_what_was_sent() -> None:
    records = Records()
    bookkeeping.reset(records)
    bookkeeping.record(
        records,
        [
            {"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}},
            {"index": 0, "function": {"arguments": '{"x": '}},
        ],
    )
    bookkeeping.record(
        records,
        [
            {"index": 0, "function": {"arguments": "1}"}},
            {"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": ""}},
            {"index": 1, "function": {"arguments": "{}"}},
        ],
    )
    assert records.prev_tool_call_arr == [
        {"name": "f", "arguments": '{"x": 1}'},  # type: ignore[attr-defined]
        {"name": "g", "arguments": "{}"},
    ]
    assert records.streamed_args_for_tool == ['{"x": 1}', "{}"]  # type: ignore[attr-defined]
    assert (records.current_tool_id, records.current_tool_name_sent) == (1, True)  # type: ignore[attr-defined]


def test_no_warning_whether_or_not_the_prompt_has_the_start_anchor() -> None:
    # short prompts (checked once per template) and long ones (silenced around the parser) alike;
    # a prompt without the anchor is parsed whole, as the start of the message
    import warnings

    cases = [
        ("Hi ", {"reasoning": None, "content": "Hi a</think>b", "tool_calls": []}),
        ("Hi " * 200, {"reasoning": None, "content": "Hi " * 200 + "a</think>b", "tool_calls": []}),
        (PROMPT + "<think>", {"reasoning": "a", "content": "b", "tool_calls": []}),
        ("Hi " * 200 + PROMPT + "<think>", {"reasoning": "a", "content": "b", "tool_calls": []}),
    ]
    for prompt, expected in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            session = Session(QWEN3, prompt, None)
            steps = [session.feed("a</think>b"), session.finish()]
        assert assemble(steps) == expected, prompt[-20:]


CUT_OFF = 'Checking.<tool_call>\n{"name": "f", "arguments": {"a": 1'


def test_a_call_the_unsent_last_feed_started_is_taken_back_when_the_end_shows_it_broken() -> None:
    session = Session(QWEN3, PROMPT, TOOLS)
    first = session.calls_started
    fed = session.feed(CUT_OFF)
    assert [entry["function"] for entry in fed.tool_calls] == [
        {"name": "f", "arguments": ""}, {"arguments": "{"}
    ]
    end = session.finish(unsent_from=first)
    assert (end.taken_back, end.content, end.tool_calls, end.finish_reason) == (
        0, '<tool_call>\n{"name": "f", "arguments": {"a": 1', [], "stop"
    )
    assert session.calls_started == 0


def test_without_unsent_from_a_call_sent_earlier_stays() -> None:
    session = Session(QWEN3, PROMPT, TOOLS)
    session.feed(CUT_OFF)
    end = session.finish()
    assert (end.taken_back, end.content, end.finish_reason) == (
        None, '<tool_call>\n{"name": "f", "arguments": {"a": 1', "stop"
    )
    assert session.calls_started == 1


def test_a_completed_call_before_the_unsent_feed_stays_and_counts() -> None:
    session = Session(QWEN3, PROMPT, TOOLS)
    session.feed('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>')
    first = session.calls_started
    session.feed(CUT_OFF)
    end = session.finish(unsent_from=first)
    assert (first, end.taken_back, end.finish_reason) == (1, 1, "tool_calls")


def test_tools_given_after_the_start_type_the_arguments_as_tools_at_the_start_do() -> None:
    typed = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}}}}}]
    output = [
        "Hi <think>\nwhy\n</think>\n\nChecking.",
        '<tool_call>\n{"name": "f", "arguments": {"a": "1"}}\n</tool_call>',
    ]
    late = Session(QWEN3, PROMPT, None, track_outside=True)
    steps = [late.feed(output[0])]
    assert late.adopt_tools(typed)
    steps += [late.feed(output[1]), late.finish()]
    early = Session(QWEN3, PROMPT, typed, track_outside=True)
    reference = [early.feed(output[0]), early.feed(output[1]), early.finish()]
    for step in steps + reference:  # ids are random
        for entry in step.tool_calls:
            assert entry.pop("id", "call_").startswith("call_")
    assert steps == reference
    arguments = [entry["function"].get("arguments") for step in steps for entry in step.tool_calls]
    assert arguments == ["", '{"a": 1}']
    assert not late.adopt_tools(TOOLS)  # a call's region opened (and the session finished): too late


def test_tools_are_taken_after_a_call_opened_until_its_arguments_stream() -> None:
    opened = Session(QWEN3, PROMPT, None)
    opened.feed('<tool_call>\n{"name"')
    assert opened.adopt_tools(TOOLS)  # nothing typed yet: exact
    streamed = Session(QWEN3, PROMPT, None)
    streamed.feed('<tool_call>\n{"name": "f", "arguments": {"a": "1')
    assert not streamed.adopt_tools(TOOLS)  # an argument streamed untyped: too late
    closed = Session(QWEN3, PROMPT, None, stream_values=False)
    closed.feed('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>Then')
    assert not closed.adopt_tools(TOOLS)  # a call's region closed: too late


def test_a_stream_ends_without_building_the_message_and_sends_the_same_steps() -> None:
    # the engines never read the message of a stream: finish() leaves it unbuilt
    # (ResponseParser.finalize(message=False)); the steps, the end's events and the checks are those
    # of finish(message=True)
    pieces = [OUTPUT[:40], OUTPUT[40:]]
    streamed, session = _run(pieces)
    built = Session(QWEN3, PROMPT, TOOLS)
    reference = [built.feed(piece) for piece in pieces] + [built.finish(message=True)]
    for step in streamed + reference:  # ids are random
        for entry in step.tool_calls:
            assert entry.pop("id", "call_").startswith("call_")
    assert streamed == reference
    assert session.message is None
    message = built.message
    assert message is not None
    assert message["tool_calls"][0].pop("id").startswith("call_")
    assert message == {
        "role": "assistant",
        "content": "Hi \n\nChecking.<think>more</think>Done.",
        "reasoning_content": "\nwhy\n",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
    }
    parser = ResponseParser(QWEN3.template, prefix=PROMPT, errors="keep")
    parser.feed("Hi <tool_call>{bad")
    assert parser.finalize(message=False) == ({}, [
        {"type": "region_close", "field": "tool_calls", "value": None, "error": parser.parse_errors[0]},
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "<tool_call>{bad", "dirty": False},
        {"type": "region_close", "field": "content", "value": "<tool_call>{bad"},
    ])
    assert parser.parse_errors[0]["raw"] == "<tool_call>{bad"


class _EventWalk(Session):
    """A session whose every delta takes the general path (all events through the step writer's
    ``events``, then ``_step``): the reference for :meth:`Session.feed`'s short paths."""

    def feed(self, text: str) -> Any:
        self.calls_before_feed = self._writer.calls
        if not text:
            return Session.feed(self, text)
        if self.keep_raw:
            self.raw.append(text)
        events = self._parser.feed(text)
        batch, self._initial = [*self._initial, *events], []
        return self._step(self._events(batch), events, None, text)


#: corpus-like outputs whose deltas take every short path: reasoning text, content text, a call
#: region's raw text, argument fragments inside a string, and the deltas around them
SHORT_PATH_OUTPUTS = [
    ("qwen3", PROMPT, OUTPUT),
    ("qwen3", PROMPT + "<think>\n", 'The user wants Paris.\n</think>\n\nChecking.<tool_call>\n{"name": "f", '
     '"arguments": {"city": "Par\\"is", "n": [1, 2.5], "o": {"k": "v w"}}}\n</tool_call>'),
    ("deepseek_v3", "<｜Assistant｜>",
     "Let me see.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n"
     '```json\n{"city": "Tokyo", "unit": "c"}\n```<｜tool▁call▁end｜>'
     "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n"
     '```json\n{"q": "two words"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> after'),
    # one- and two-token values: most deltas inside a call open or end a value (argument_values)
    ("qwen3_coder", PROMPT, "Checking.\n<tool_call>\n<function=f>\n<parameter=city>\nTokyo\n</parameter>\n"
     "<parameter=unit>\nc\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=f>\n"
     "<parameter=q>\ntwo words\n</parameter>\n</function>\n</tool_call>"),
    ("glm45", "<|assistant|>", "<tool_call>f\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
     "<arg_key>n</arg_key>\n<arg_value>2</arg_value>\n</tool_call><tool_call>f\n<arg_key>q</arg_key>\n"
     "<arg_value>a b</arg_value>\n</tool_call>"),
    ("kimi_k2", "<|im_assistant|>assistant<|im_middle|>",
     "Reasoning. <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
     '{"city": "Tokyo", "n": 10, "o": {"k": [true, "v"]}}<|tool_call_end|><|tool_call_begin|>functions.f:1'
     '<|tool_call_argument_begin|>{"q": "a b"}<|tool_call_end|><|tool_calls_section_end|>'),
    # a call cut off inside its arguments: the end settles it
    ("kimi_k2", "<|im_assistant|>assistant<|im_middle|>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
     '{"city": "Tok'),
]


@given(
    st.sampled_from(SHORT_PATH_OUTPUTS),
    st.lists(st.integers(0, 400), max_size=40),
    st.booleans(),
)
def test_the_short_paths_give_the_steps_of_the_event_walk(
    case: tuple[str, str, str], cuts: list[int], track_outside: bool
) -> None:
    family, prompt, output = case
    serving = ServingTemplate(
        load_response_template(profiles.load(family).response_template), f"profile:{family}", "m", family
    )
    sessions = [kind(serving, prompt, TOOLS, track_outside=track_outside) for kind in (Session, _EventWalk)]
    for piece in _pieces(output, cuts):
        short, walked = (session.feed(piece) for session in sessions)
        assert _same_ids(short) == _same_ids(walked)
        assert sessions[0].position == sessions[1].position
        assert sessions[0].calls_before_feed == sessions[1].calls_before_feed
    assert _same_ids(sessions[0].finish()) == _same_ids(sessions[1].finish())


def _same_ids(step: Any) -> str:
    """The step's repr with each generated call id (random) written as ``call_ID``."""
    text = repr(step)
    assert len(re.findall(r"'call_", text)) == len(re.findall(r"'call_[A-Za-z0-9]{24}'", text))
    return re.sub(r"'call_[A-Za-z0-9]{24}'", "'call_ID'", text)


def test_an_argument_fragment_is_recorded_as_record_records_it() -> None:
    class Parser:
        pass

    short, full = Parser(), Parser()
    for parser in (short, full):
        bookkeeping.reset(parser)
        bookkeeping.record(parser, [{"index": 0, "id": "a", "type": "function",
                                     "function": {"name": "f", "arguments": ""}}])
    bookkeeping.add_arguments(short, 0, '{"a": ')
    bookkeeping.record(full, [{"index": 0, "function": {"arguments": '{"a": '}}])
    bookkeeping.add_arguments(short, 1, "{")  # a call recorded nowhere yet
    bookkeeping.record(full, [{"index": 1, "function": {"arguments": "{"}}])
    assert vars(short) == vars(full) == {
        "prev_tool_call_arr": [{"name": "f", "arguments": '{"a": '}, {"name": None, "arguments": "{"}],
        "streamed_args_for_tool": ['{"a": ', "{"],
        "current_tool_id": 0,
        "current_tool_name_sent": True,
    }


def test_a_call_start_is_recorded_as_record_records_it() -> None:
    class Parser:
        pass

    short, full = Parser(), Parser()
    for parser in (short, full):
        bookkeeping.reset(parser)
    bookkeeping.start_call(short, 0, "f", "{")
    bookkeeping.start_call(short, 1, "g", "")  # no arguments in the call's first delta
    bookkeeping.start_call(short, 3, "h", '{"a"')  # a call skipped: record's own way
    for index, name, fragment in ((0, "f", "{"), (1, "g", ""), (3, "h", '{"a"')):
        bookkeeping.record(full, [{"index": index, "id": "x", "type": "function",
                                   "function": {"name": name, "arguments": ""}},
                                  {"index": index, "function": {"arguments": fragment}}])
    assert vars(short) == vars(full) == {
        "prev_tool_call_arr": [{"name": "f", "arguments": "{"}, {"name": "g", "arguments": ""},
                               {"name": None, "arguments": ""}, {"name": "h", "arguments": '{"a"'}],
        "streamed_args_for_tool": ["{", "", "", '{"a"'],
        "current_tool_id": 3,
        "current_tool_name_sent": True,
    }


def test_the_step_that_starts_a_call_gives_its_parts() -> None:
    start = {"index": 2, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
    more = {"index": 2, "function": {"arguments": "{"}}
    assert Step(tool_calls=[start, more]).call_start() == (2, "call_1", "f", "{")
    assert Step(tool_calls=[start]).call_start() == (2, "call_1", "f", "")
    assert Step(tool_calls=[more]).call_start() is None
    assert Step(tool_calls=[start, more, more]).call_start() is None
    assert Step(tool_calls=[start, {**start, "index": 3}]).call_start() is None
    assert Step(tool_calls=[start, {"index": 3, "function": {"arguments": "{"}}]).call_start() is None
    assert Step().call_start() is None
