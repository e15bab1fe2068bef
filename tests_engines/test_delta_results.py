"""The engines' result objects, delta by delta, exactly as their servers put them on the wire.

The plugins build the usual delta (reasoning or content text only, or one more fragment of a
call's arguments) on a short path (``Session.feed``, ``_Request.send``, the SGLang tool detector);
these pin, for one output cut into deltas by hand, every object vLLM's ``ChatStreamProcessor``
and SGLang's two parsers return: text-only deltas, the delta that starts a call, argument
fragments, the delta that ends the call, and the end of the stream; and for a Qwen3-Coder call
whose values are one or two tokens, the deltas that open or end a value (``StepWriter.argument_values``)
and the one that starts the call (``Step.call_start``). vLLM's JSON is what its chat server sends
(``model_dump_json(exclude_unset=True)``: the fields set, not only their values).
"""

from __future__ import annotations

import re
from typing import Any

from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

from tests_engines import drivers
from tests_engines.harness import prefix, tokenizer
from tests_engines.test_vllm_serving import THINKING

#: THINKING's output in deltas: reasoning, its close, content, the call's markup, its start, an
#: argument key, two fragments of a string, the string's and the arguments' end, the call's end
PIECES = [
    "The user wants Paris.", "\n</think>", "\n\nChecking.", "<tool_call>", '\n{"name": "get_weather", ',
    '"arguments": {', '"city": "', "Par", "is", '"}', "}\n", "</tool_call>",
]
_ID = re.compile(r'"id":"call_[A-Za-z0-9]{24}"')

def _vllm_deltas(
        family: str, conversation: Any, pieces: list[str]) -> tuple[list[tuple[str | None, str | None]], Any]:
    """Feed ``pieces`` through vLLM's chat stream processor as its server does; each entry: the
    delta's JSON on the wire (a generated call id written ``call_ID``; ``None``: nothing sent) and
    the finish reason; and the request's tool parser."""
    tok = tokenizer(family)
    parser_cls = drivers.vllm_parser_cls(family)
    request = drivers.chat_request(conversation)
    parser = parser_cls(tok, request.tools, chat_template_kwargs={}, model_config=None)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=parser_cls)
    prompt = tok.encode(prefix(conversation), add_special_tokens=False)
    sent: list[tuple[str | None, str | None]] = []
    for number, text in enumerate(pieces):
        last = number == len(pieces) - 1
        ids = tok.encode(text, add_special_tokens=False)
        step = processor.step(text, ids, "stop" if last else None, prompt if number == 0 else None)
        wire = None if step.delta is None else step.delta.model_dump_json(exclude_unset=True)
        if wire is not None:
            assert len(_ID.findall(wire)) == wire.count('"id":"')  # a generated id, or none
            wire = _ID.sub('"id":"call_ID"', wire)
        sent.append((wire, step.finish_reason))
    return sent, parser



def test_vllm_sends_these_deltas() -> None:
    assert "".join(PIECES) == THINKING["output"]
    sent, parser = _vllm_deltas("qwen3", THINKING, PIECES)
    no_text = '"content":null,"reasoning":null'
    fragment = no_text + (
        ',"tool_calls":[{"id":null,"type":null,"index":0,"function":{"name":null,"arguments":%s}}]'
    )
    assert sent == [
        ('{"content":null,"reasoning":"The user wants Paris."}', None),  # reasoning only
        ('{"reasoning":"\\n"}', None),  # reasoning ends (vLLM's own delta at its hand-off)
        ('{"content":"\\n\\nChecking.","reasoning":null}', None),  # content only
        (None, None),
        (None, None),  # the call's name is known; it starts with its arguments
        ("{" + no_text + ',"tool_calls":[{"id":"call_ID","type":"function","index":0,'
         '"function":{"name":"get_weather","arguments":"{"}}]}', None),
        ("{" + fragment % '"\\"city\\": \\""' + "}", None),
        ("{" + fragment % '"Par"' + "}", None),
        ("{" + fragment % '"is"' + "}", None),
        ("{" + fragment % '"\\"}"' + "}", None),  # the arguments end
        (None, None),
        (None, "tool_calls"),  # the call's region ends: nothing left to send
    ]
    tool_parser = parser._tool_parser
    assert tool_parser.prev_tool_call_arr == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
    assert tool_parser.streamed_args_for_tool == ['{"city": "Paris"}']


def _items(calls: list[Any]) -> list[str]:
    return [item.model_dump_json(exclude_unset=True) for item in calls]

def _sglang_results(family: str, conversation: Any, pieces: list[str]) -> tuple[list[Any], Any]:
    """Feed ``pieces`` through SGLang's reasoning stage and tool stage as its server does; each
    entry: (reasoning, normal text, content, call items as JSON), the last one the stream's end."""
    tok = tokenizer(family)
    force = drivers.prompt_opens_reasoning(conversation)
    reasoning_parser = ReasoningParser(
        "chatcodec", stream_reasoning=True, force_reasoning=force, tokenizer=tok
    )
    tool_parser = FunctionCallParser(drivers.sglang_tools(conversation), "chatcodec", tokenizer=tok)
    returned = []
    for text in pieces:
        reasoning, normal = reasoning_parser.parse_stream_chunk(text)
        content, calls = tool_parser.parse_stream_chunk(normal)
        returned.append((reasoning, normal, content, _items(calls)))
    reasoning, normal = reasoning_parser.parse_stream_end()
    content, calls = tool_parser.parse_stream_chunk(normal)
    end, end_calls = tool_parser.parse_stream_end()
    returned.append((reasoning, normal, content + end, _items(calls + end_calls)))
    return returned, tool_parser


def fragment(text: str) -> str:
    """An SGLang call item that adds ``text`` to the first call's arguments, as JSON."""
    return '{"tool_index":0,"name":null,"parameters":"' + text + '"}'



def test_sglang_returns_these_results() -> None:
    returned, tool_parser = _sglang_results("qwen3", THINKING, PIECES)

    assert returned == [
        ("The user wants Paris.", "", "", []),  # reasoning only
        ("\n", "", "", []),
        ("", "\n\nChecking.", "\n\nChecking.", []),  # content only
        ("", "", "", []),  # held: a delimiter may follow
        ("", '<tool_call>\n{"name": "get_weather", ', "", []),
        ("", '"arguments": {', "", ['{"tool_index":0,"name":"get_weather","parameters":""}', fragment("{")]),
        ("", '"city": "', "", [fragment('\\"city\\": \\"')]),
        ("", "Par", "", [fragment("Par")]),
        ("", "is", "", [fragment("is")]),
        ("", '"}', "", [fragment('\\"}')]),  # the arguments end
        ("", "}\n", "", []),
        ("", "", "", []),
        ("", "</tool_call>", "", []),  # the end of the stream
    ]
    detector = tool_parser.detector
    assert detector.prev_tool_call_arr == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
    assert detector.streamed_args_for_tool == ['{"city": "Paris"}']


#: a Qwen3-Coder call whose values are one or two tokens long: most of its deltas open or end a
#: value (``StepWriter.argument_values``) and one starts the call (``Step.call_start``)
CODER = {
    "id": "qwen3-coder-call", "family": "qwen3_coder", "prompt_suffix": "", "tools": None,
    "output": "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=unit>\nc\n</parameter>\n</function>\n</tool_call>",
    "expected": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}]},
}
#: CODER's output in deltas: content, the call's start, a value's key with its first text, more of
#: it, its end, the next value with all its text, the last value's and the call's end
CODER_PIECES = [
    "Checking.", "\n<tool_call>\n<function=get_weather>\n", "<parameter=city>\nPar", "is", "\n</parameter>\n",
    "<parameter=unit>\nc", "\n</parameter>\n</function>\n</tool_call>",
]


def test_vllm_sends_these_deltas_for_values_that_open_and_end() -> None:
    assert "".join(CODER_PIECES) == CODER["output"]
    sent, parser = _vllm_deltas("qwen3_coder", CODER, CODER_PIECES)
    fragment = (
        '{"content":null,"reasoning":null,"tool_calls":[{"id":null,"type":null,"index":0,'
        '"function":{"name":null,"arguments":%s}}]}'
    )
    assert sent == [
        ('{"content":"Checking.","reasoning":null}', None),
        ('{"content":"\\n","reasoning":null,"tool_calls":[{"id":"call_ID","type":"function","index":0,'
         '"function":{"name":"get_weather","arguments":"{"}}]}', None),  # the call starts
        (fragment % '"\\"city\\": \\"Par"', None),  # a value begins, with its first text
        (fragment % '"is"', None),
        (None, None),  # the value ends: its closing quote waits for what follows
        (fragment % '"\\", \\"unit\\": \\"c"', None),  # one value ends, the next begins
        (fragment % '"\\"}"', "tool_calls"),  # the last value, the arguments and the call end
    ]
    tool_parser = parser._tool_parser
    arguments = '{"city": "Paris", "unit": "c"}'
    assert tool_parser.prev_tool_call_arr == [{"name": "get_weather", "arguments": arguments}]
    assert tool_parser.streamed_args_for_tool == [arguments]


def test_sglang_returns_these_results_for_values_that_open_and_end() -> None:
    returned, tool_parser = _sglang_results("qwen3_coder", CODER, CODER_PIECES)

    assert returned == [
        ("", "Checking.", "Checking.", []),
        ("", "\n<tool_call>\n<function=get_weather>\n", "\n",
         ['{"tool_index":0,"name":"get_weather","parameters":""}', fragment("{")]),  # the call starts
        ("", "<parameter=city>\nPar", "", [fragment('\\"city\\": \\"Par')]),
        ("", "is", "", [fragment("is")]),
        ("", "\n", "", []),
        ("", "</parameter>\n<parameter=unit>\nc", "", [fragment('\\", \\"unit\\": \\"c')]),
        ("", "\n</parameter>\n", "", []),
        ("", "</function>\n</tool_call>", "", [fragment('\\"}')]),  # the end of the stream
    ]
    detector = tool_parser.detector
    arguments = '{"city": "Paris", "unit": "c"}'
    assert detector.prev_tool_call_arr == [{"name": "get_weather", "arguments": arguments}]
    assert detector.streamed_args_for_tool == [arguments]
