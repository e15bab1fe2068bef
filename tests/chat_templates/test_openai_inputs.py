"""OpenAI Chat Completions messages and tools, as chat templates read them (``openai_inputs``).

Unit rules first, with exact dicts; then the corpus: every golden render, given in the OpenAI wire
form (content as text parts, images as ``image_url``, arguments as JSON strings, tool messages
without ``name``) through ``ChatCodec.apply_chat_template``, gives the reference's prompt or error.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import datetime
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import (
    ChatCompletionFunctionTool,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
)
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.shared import FunctionDefinition

from chatcodec import ChatCodec
from chatcodec.chat_templates.errors import ChatTemplateError
from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.chat_templates.openai_inputs import TemplateReads, template_messages, template_tools
from chatcodec.chat_templates.render import render_chat_template
from tests.chat_templates.test_template_reads import ARGUMENTS_AS_TEXT_TEMPLATES, PARTS_TEMPLATES
from tests.conftest import corpus_template, golden_renders, load_json

CLOCK = datetime(2026, 1, 15, 12, 0, 0)
PARTS = TemplateReads(content_parts=True)
TEXT = TemplateReads(content_parts=False)


def convert(messages: list[Any], reads: TemplateReads = PARTS) -> list[Any]:
    return list(template_messages(messages, reads))


class TestContentParts:
    def test_media_parts_become_the_parts_templates_read(self) -> None:
        content = [
            {"type": "image_url", "image_url": {"url": "https://x/cat.png", "detail": "high"}},
            {"type": "image_url", "image_url": "https://x/dog.png"},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg=="}},
            {"type": "video_url", "video_url": {"url": "https://x/clip.mp4"}},
            {"type": "audio_url", "audio_url": {"url": "https://x/a.mp3"}},
            {"type": "input_image", "image_url": "https://x/r.png"},
            {"type": "text", "text": "What is this?"},
            {"type": "image", "url": "https://x/hf.png"},
        ]
        assert convert([{"role": "user", "content": content}]) == [
            {
                "role": "user",
                "content": [
                    {"type": "image", "url": "https://x/cat.png"},
                    {"type": "image", "url": "https://x/dog.png"},
                    {"type": "audio", "url": "data:audio/wav;base64,UklGRg=="},
                    {"type": "audio", "url": "UklGRg=="},
                    {"type": "video", "url": "https://x/clip.mp4"},
                    {"type": "audio", "url": "https://x/a.mp3"},
                    {"type": "image", "url": "https://x/r.png"},
                    {"type": "text", "text": "What is this?"},
                    {"type": "image", "url": "https://x/hf.png"},
                ],
            }
        ]

    @pytest.mark.parametrize("reads", [PARTS, TEXT])
    def test_text_parts_become_text_joined_by_a_space(self, reads: TemplateReads) -> None:
        content = [
            {"type": "text", "text": "Hello"},
            {"type": "input_text", "text": "world"},
            {"type": "refusal", "refusal": "no."},
        ]
        assert convert([{"role": "user", "content": content}], reads) == [
            {"role": "user", "content": "Hello world no."}
        ]
        assert convert([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}], reads) == [
            {"role": "user", "content": "Hi"}
        ]

    def test_a_media_part_for_a_text_only_template_is_an_error(self) -> None:
        content = [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://x/cat.png"}},
        ]
        with pytest.raises(ConversationError) as caught:
            convert([{"role": "system", "content": "S"}, {"role": "user", "content": content}], TEXT)
        assert str(caught.value) == (
            "messages[1].content[1]: this chat template reads a message's content as text only, so it cannot "
            "show the 'image_url' part (a text-only model?); send text parts only, or use the model's "
            "multimodal template"
        )

    @pytest.mark.parametrize(
        ("part", "message"),
        [
            (
                {"type": "file", "file": {"file_id": "f1"}},
                "messages[0].content[0]: 'file' parts are not supported: no chat template reads them",
            ),
            (
                {"type": "image_url", "image_url": {"detail": "low"}},
                "messages[0].content[0]: this 'image_url' part needs image_url.url (a string), got "
                '{"detail": "low"}',
            ),
            (
                {"type": "input_audio", "input_audio": {"format": "wav"}},
                "messages[0].content[0]: this 'input_audio' part needs input_audio.data (base64 text)",
            ),
            ({"type": "text"}, "messages[0].content[0]: this 'text' part needs 'text' (a string)"),
            # templates that read parts fail on these with a bare TypeError (Qwen3-Coder: "argument of
            # type 'NoneType' is not iterable") or a misleading "Unexpected item type in content"
            (
                None,
                'messages[0].content[0]: a content part is a dict such as {"type": "text", "text": ...}, '
                "got NoneType null",
            ),
            (
                "Hi",
                'messages[0].content[0]: a content part is a dict such as {"type": "text", "text": ...}, '
                'got str "Hi"',
            ),
            (
                {"type": "refusal", "text": "no"},
                "messages[0].content[0]: this 'refusal' part needs 'refusal' (a string)",
            ),
        ],
    )
    @pytest.mark.parametrize("reads", [PARTS, TEXT])
    def test_malformed_parts_name_the_message_and_part(
        self, part: Any, message: str, reads: TemplateReads
    ) -> None:
        with pytest.raises(ConversationError) as caught:
            convert([{"role": "user", "content": [part]}], reads)
        assert str(caught.value) == message

    def test_string_content_and_other_values_are_kept(self) -> None:
        messages = [{"role": "user", "content": "Hi"}, {"role": "tool", "content": None}]
        assert convert(messages, TEXT) == messages


class TestToolCalls:
    CALL: ClassVar[dict[str, Any]] = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Lisbon"}'},
    }

    def test_json_string_arguments_become_a_mapping(self) -> None:
        message = {"role": "assistant", "content": None, "tool_calls": [self.CALL]}
        assert convert([message]) == [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    }
                ],
            }
        ]

    def test_a_template_that_reads_text_keeps_the_string_and_gets_json_for_a_mapping(self) -> None:
        reads = TemplateReads(arguments_as_text=True)
        given = [
            self.CALL,
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "get_time", "arguments": {"zone": "Asia/Tokyo", "é": 1}},
            },
        ]
        converted = convert([{"role": "assistant", "tool_calls": given}], reads)
        assert [call["function"]["arguments"] for call in converted[0]["tool_calls"]] == [
            '{"city":"Lisbon"}',
            '{"zone": "Asia/Tokyo", "é": 1}',
        ]

    def test_flat_calls_and_empty_arguments(self) -> None:
        calls = [
            {"name": "a", "arguments": '{"x": 1}'},
            {"id": "c", "function": {"name": "b", "arguments": ""}},
        ]
        assert convert([{"role": "assistant", "tool_calls": calls}])[0]["tool_calls"] == [
            {"name": "a", "arguments": {"x": 1}},
            {"id": "c", "function": {"name": "b", "arguments": {}}},
        ]
        converted = convert(
            [{"role": "assistant", "tool_calls": calls}], TemplateReads(arguments_as_text=True)
        )
        assert converted[0]["tool_calls"][1]["function"]["arguments"] == "{}"

    def test_null_arguments_are_an_empty_object(self) -> None:
        # a client that sends "arguments": null for a call without arguments: {} as for "", never
        # null written into the prompt by |tojson
        calls = [{"id": "c", "type": "function", "function": {"name": "b", "arguments": None}}]
        assert convert([{"role": "assistant", "tool_calls": calls}])[0]["tool_calls"] == [
            {"id": "c", "type": "function", "function": {"name": "b", "arguments": {}}}
        ]
        converted = convert(
            [{"role": "assistant", "tool_calls": calls}], TemplateReads(arguments_as_text=True)
        )
        assert converted[0]["tool_calls"][0]["function"]["arguments"] == "{}"

    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            (
                "{'city': 'Lisbon'}",
                "messages[1].tool_calls[1].function.arguments: not JSON (Expecting property name "
                "enclosed in double quotes at character 1): \"{'city': 'Lisbon'}\"; tool-call arguments "
                "are a JSON object, as a string (the OpenAI wire form) or as a mapping",
            ),
            (
                '["Lisbon"]',
                "messages[1].tool_calls[1].function.arguments: expected a JSON object, got list "
                "'[\"Lisbon\"]'",
            ),
            # neither a mapping nor text: |tojson would write 5 or [1, 2] into the prompt as the arguments
            (
                5,
                "messages[1].tool_calls[1].function.arguments: expected a JSON object (a mapping, or its "
                "JSON text as the OpenAI wire form sends it), got int 5",
            ),
            (
                ["Lisbon", 2],
                "messages[1].tool_calls[1].function.arguments: expected a JSON object (a mapping, or its "
                "JSON text as the OpenAI wire form sends it), got list [\"Lisbon\", 2]",
            ),
        ],
    )
    def test_arguments_that_are_not_a_json_object_name_the_message_and_call(
        self, arguments: Any, message: str
    ) -> None:
        calls = [
            self.CALL,
            {"id": "c2", "type": "function", "function": {"name": "f", "arguments": arguments}},
        ]
        with pytest.raises(ConversationError) as caught:
            convert([{"role": "user", "content": "Hi"}, {"role": "assistant", "tool_calls": calls}])
        assert str(caught.value) == message

    @pytest.mark.parametrize(
        ("calls", "message"),
        [
            # a template iterated the string's letters: "Object of type Undefined is not JSON serializable"
            ("get_weather", 'messages[1].tool_calls: expected a list of tool calls, got str "get_weather"'),
            ({"name": "f"}, 'messages[1].tool_calls: expected a list of tool calls, got dict {"name": "f"}'),
            ([1], 'messages[1].tool_calls[0]: expected a tool call, an object such as {"type": "function", '
                  '"function": {"name": ..., "arguments": ...}}, got int 1'),
            (["f"], 'messages[1].tool_calls[0]: expected a tool call, an object such as {"type": "function", '
                    '"function": {"name": ..., "arguments": ...}}, got str "f"'),
        ],
    )
    def test_tool_calls_that_are_not_a_list_of_calls(self, calls: Any, message: str) -> None:
        with pytest.raises(ConversationError) as caught:
            convert([{"role": "user", "content": "Hi"}, {"role": "assistant", "tool_calls": calls}])
        assert str(caught.value) == message

    def test_null_tool_calls_and_a_tuple_of_calls(self) -> None:
        # the SDK dumps tool_calls: None for a turn without calls
        assert convert([{"role": "assistant", "content": "x", "tool_calls": None}]) == [
            {"role": "assistant", "content": "x", "tool_calls": None}]
        calls = ({"id": "c", "type": "function", "function": {"name": "b", "arguments": "{}"}},)
        assert convert([{"role": "assistant", "content": "", "tool_calls": calls}])[0]["tool_calls"] == [
            {"id": "c", "type": "function", "function": {"name": "b", "arguments": {}}}]

    @pytest.mark.parametrize("reads", [PARTS, TemplateReads(arguments_as_text=True)])
    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            (
                '{"city": "Lisbon", "city": "Porto"}',
                "messages[1].tool_calls[0].function.arguments: the key 'city' is given twice, so one "
                "value would be lost: '{\"city\": \"Lisbon\", \"city\": \"Porto\"}'",
            ),
            (
                '{"a": {"b": 1, "b": 2}}',
                "messages[1].tool_calls[0].function.arguments: the key 'b' is given twice, so one "
                "value would be lost: '{\"a\": {\"b\": 1, \"b\": 2}}'",
            ),
            (
                '{"n": NaN}',
                "messages[1].tool_calls[0].function.arguments: not JSON (NaN is no JSON number): "
                "'{\"n\": NaN}'",
            ),
            (
                '{"n": -Infinity}',
                "messages[1].tool_calls[0].function.arguments: not JSON (-Infinity is no JSON number): "
                "'{\"n\": -Infinity}'",
            ),
            (
                '{"n": 1e400}',
                "messages[1].tool_calls[0].function.arguments: the number 1e400 is beyond the range of a "
                "float, so it would be written as Infinity: '{\"n\": 1e400}'",
            ),
            (  # QA: a bare ValueError from json.loads, naming no message
                '{"n": ' + "9" * 5000 + "}",
                "messages[1].tool_calls[0].function.arguments: Exceeds the limit (4300 digits) for integer "
                "string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase the "
                "limit: '{\"n\": " + "9" * 74 + "'",
            ),
        ],
    )
    def test_arguments_that_would_change_as_a_mapping_are_refused(
        self, arguments: str, message: str, reads: TemplateReads
    ) -> None:
        # json.loads keeps the last of two values, reads NaN and Infinity, and turns 1e400 into inf,
        # which |tojson then writes as Infinity: a prompt that is not what the client sent
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
        with pytest.raises(ConversationError) as caught:
            convert([{"role": "user", "content": "Hi"}, {"role": "assistant", "tool_calls": [call]}], reads)
        assert str(caught.value) == message

    def test_content_beside_calls_is_kept(self) -> None:
        message = {
            "role": "assistant",
            "content": "Let me check.",
            "reasoning_content": "Weather tool.",
            "tool_calls": [self.CALL],
        }
        assert convert([message]) == [
            {
                "role": "assistant",
                "content": "Let me check.",
                "reasoning_content": "Weather tool.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    }
                ],
            }
        ]

    def test_an_empty_list_of_calls_is_no_calls(self) -> None:
        assert convert([{"role": "assistant", "content": "Hi", "tool_calls": []}]) == [
            {"role": "assistant", "content": "Hi"}
        ]

    def test_a_tool_message_gets_the_name_of_the_call_it_answers(self) -> None:
        messages = [
            {
                "role": "assistant",
                "tool_calls": [self.CALL, {"id": "c2", "function": {"name": "f", "arguments": {}}}],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "2"},
            {"role": "tool", "tool_call_id": "c1", "content": "1", "name": "mine"},
            {"role": "tool", "tool_call_id": "unknown", "content": "?"},
        ]
        assert convert(messages)[1:] == [
            {"role": "tool", "tool_call_id": "c2", "content": "2", "name": "f"},
            {"role": "tool", "tool_call_id": "c1", "content": "1", "name": "mine"},
            {"role": "tool", "tool_call_id": "unknown", "content": "?"},
        ]


def test_a_developer_message_is_a_system_message_for_a_template_without_that_role() -> None:
    messages = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert convert(messages, TemplateReads(developer_role=False))[0] == {
        "role": "system",
        "content": "Be brief.",
    }
    assert convert(messages, TemplateReads(developer_role=True))[0] == {
        "role": "developer",
        "content": "Be brief.",
    }


def test_the_callers_messages_are_never_changed() -> None:
    messages = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "u"}}, {"type": "text", "text": "t"}],
        },
        {"role": "assistant", "tool_calls": [TestToolCalls.CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
    ]
    before = copy.deepcopy(messages)
    convert(messages)
    assert messages == before


def test_sdk_and_dataclass_objects_become_dicts() -> None:
    @dataclasses.dataclass
    class Message:
        role: str
        content: Any

    call = ChatCompletionMessageFunctionToolCall(
        id="c1", type="function", function=Function(name="get_weather", arguments='{"city":"Lisbon"}')
    )
    converted = convert(
        [
            Message("user", [{"type": "text", "text": "Hi"}]),
            ChatCompletionMessage(role="assistant", content=None, tool_calls=[call]),
        ]
    )
    assert converted == [
        {"role": "user", "content": "Hi"},
        {
            "content": "",
            "refusal": None,
            "role": "assistant",
            "annotations": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "function": {"arguments": {"city": "Lisbon"}, "name": "get_weather"},
                    "type": "function",
                }
            ],
        },
    ]  # the None values go when the conversation is prepared for the template, as in the reference
    # an SDK call inside a dict message is converted too
    assert convert([{"role": "assistant", "tool_calls": [call]}]) == [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    "type": "function",
                }
            ],
            "content": "",
        }
    ]


def test_a_conversation_object_is_its_messages() -> None:
    @dataclasses.dataclass
    class Conversation:
        messages: list[dict[str, Any]]

    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    chat = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    codec = ChatCodec(template)
    assert codec.apply_chat_template(Conversation(chat), tokenize=False) == "<user>Hi"
    assert codec.apply_chat_template([Conversation(chat), chat], tokenize=False) == ["<user>Hi", "<user>Hi"]


def test_tools() -> None:
    schema = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    sdk_tool = ChatCompletionFunctionTool(
        type="function",
        function=FunctionDefinition(
            name="f", parameters={"type": "object", "properties": {"x": {"default": None}}}
        ),
    )
    assert template_tools([]) is None
    assert template_tools(None) is None
    assert template_tools([schema]) == [schema]
    assert template_tools([sdk_tool]) == [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"x": {"default": None}}},
            },
        }
    ]


# -- the corpus -------------------------------------------------------------------------------


def wire_form(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A corpus conversation as an OpenAI client sends it."""
    sent = []
    for message in copy.deepcopy(messages):
        if isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        elif isinstance(message.get("content"), list):
            message["content"] = [
                {"type": "image_url", "image_url": {"url": part["url"]}}
                if part.get("type") == "image"
                else part
                for part in message["content"]
            ]
        for call in message.get("tool_calls") or ():
            call["function"]["arguments"] = json.dumps(call["function"]["arguments"], separators=(",", ":"))
        if message["role"] == "tool":
            del message["name"]
        sent.append(message)
    return sent


#: The reference's error on a turn whose ``content: null`` it dropped.
LOST_CONTENT = "UndefinedError: 'dict object' has no attribute 'content'"


def _same_as_the_reference(line: dict[str, Any]) -> bool:
    """Whether chatcodec gives this golden line's result in the wire form (the differences are below)."""
    if line["conversation"] == "multimodal" and line["template"] not in PARTS_TEMPLATES:
        return False  # an image for a text-only template is an error
    tool_calls = line["conversation"] in ("tool_call_roundtrip", "parallel_tool_calls")
    if tool_calls and line["template"] in ARGUMENTS_AS_TEXT_TEMPLATES:
        return False  # renders; the reference fails
    # the reference dropped the assistant turn's null content and failed; chatcodec gives it empty
    # text (TestAssistantTurnsWithoutContent)
    return line.get("error") != LOST_CONTENT


WIRE_CASES = [
    pytest.param(
        line,
        id=f"{line['template'].removesuffix('.jinja')}|{line['conversation']}|"
        f"agp={line['add_generation_prompt']}|{index}",
    )
    for index, line in enumerate(golden_renders())
    if _same_as_the_reference(line)
]


def render_wire_form(line: dict[str, Any]) -> str:
    conversation = load_json("conversations.json")[line["conversation"]]
    codec = ChatCodec(corpus_template(line["template"]))
    result: str = codec.apply_chat_template(
        wire_form(conversation["messages"]),
        tools=conversation["tools"],
        documents=conversation["documents"],
        add_generation_prompt=line["add_generation_prompt"],
        tokenize=False,
        now=CLOCK,
        **line["kwargs"],
    )
    return result


def test_the_wire_form_cases() -> None:
    assert len(WIRE_CASES) == 1528  # and the 52 lines of TestAssistantTurnsWithoutContent


@pytest.mark.parametrize("line", WIRE_CASES)
def test_the_wire_form_gives_the_reference_prompt(line: dict[str, Any]) -> None:
    if "rendered" in line:
        assert render_wire_form(line) == line["rendered"]
        return
    with pytest.raises(ChatTemplateError) as caught:
        render_wire_form(line)
    assert f"{caught.value.original_type}: {caught.value.message}" == line["error"]


@pytest.mark.parametrize(
    "template", sorted({line["template"] for line in golden_renders()} - set(PARTS_TEMPLATES))
)
def test_an_image_for_a_text_only_template_is_an_error(template: str) -> None:
    # the reference fails inside the template, prints the list, or drops the whole message text
    line = next(
        line
        for line in golden_renders()
        if line["template"] == template and line["conversation"] == "multimodal"
    )
    with pytest.raises(
        ConversationError,
        match=r"^messages\[0\]\.content\[0\]: this chat template reads a "
        r"message's content as text only, so it cannot show the "
        r"'image_url' part",
    ):
        render_wire_form(line)


class TestTemplatesThatReadArgumentsAsText:
    """DeepSeek R1 / V3.1, functionary v3.1, firefunction v2, Apertus join ``arguments`` to text."""

    def test_the_string_is_written_as_sent(self) -> None:
        line = next(
            line
            for line in golden_renders()
            if line["template"] == "deepseek-ai--DeepSeek-V3.1.jinja"
            and line["conversation"] == "parallel_tool_calls"
            and not line["add_generation_prompt"]
        )
        assert line["error"] == 'TypeError: can only concatenate str (not "dict") to str'  # the reference
        prompt = ChatCodec(corpus_template("deepseek-ai--DeepSeek-V3.1.jinja")).apply_chat_template(
            [
                wire_form(load_json("conversations.json")["tool_call_roundtrip"]["messages"])[0],
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "Ab3dE6gH9",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"city":"Lisbon","unit":"celsius"}',
                            },
                        }
                    ],
                },
            ],
            tokenize=False,
            **line["kwargs"],
        )
        assert prompt == (
            "<｜begin▁of▁sentence｜><｜User｜>What's the weather in Lisbon in celsius?<｜Assistant｜></think>"
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
            '{"city":"Lisbon","unit":"celsius"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
        )

    def test_a_mapping_is_written_as_json(self) -> None:
        messages = [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}}}
                ],
            },
        ]
        template = corpus_template("meetkai--functionary-medium-v3.1.jinja")
        with pytest.raises(TypeError, match="can only concatenate str"):  # as the reference
            render_chat_template(template, messages, bos_token="<|begin_of_text|>")
        prompt = ChatCodec(template, special_tokens={"bos_token": "<|begin_of_text|>"}).apply_chat_template(
            messages, tokenize=False
        )
        assert prompt.endswith(
            "<|start_header_id|>assistant<|end_header_id|>\n\n"
            '<function=get_weather>{"city": "Lisbon"}</function><|eom_id|>'
        )


class TestEmptyToolsAndCalls:
    def test_tools_empty_is_no_tools(self) -> None:
        template = corpus_template("meta-llama--Llama-3.1-8B-Instruct.jinja")
        line = next(
            line
            for line in golden_renders()
            if line["template"] == "meta-llama--Llama-3.1-8B-Instruct.jinja"
            and line["conversation"] == "single_user"
            and line["add_generation_prompt"]
        )
        messages = load_json("conversations.json")["single_user"]["messages"]
        reference = render_chat_template(
            template, messages, tools=[], add_generation_prompt=True, now=CLOCK, **line["kwargs"]
        )
        assert "Environment: ipython" in reference and "Environment: ipython" not in line["rendered"]
        assert (
            ChatCodec(template).apply_chat_template(
                messages, tools=[], add_generation_prompt=True, tokenize=False, now=CLOCK, **line["kwargs"]
            )
            == line["rendered"]
        )

    def test_tools_empty_does_not_select_the_tool_use_template(self) -> None:
        codec = ChatCodec(
            {
                "default": corpus_template("Qwen--Qwen2.5-7B-Instruct.jinja"),
                "tool_use": corpus_template("NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja"),
            }
        )
        assert codec.get_chat_template(tools=[]) == corpus_template("Qwen--Qwen2.5-7B-Instruct.jinja")
        messages = load_json("conversations.json")["system_user"]["messages"]
        expected = next(
            line["rendered"]
            for line in golden_renders()
            if line["template"] == "Qwen--Qwen2.5-7B-Instruct.jinja"
            and line["conversation"] == "system_user"
            and line["add_generation_prompt"]
        )
        assert (
            codec.apply_chat_template(messages, tools=[], add_generation_prompt=True, tokenize=False)
            == expected
        )

    def test_an_empty_list_of_calls_renders_as_no_calls(self) -> None:
        template = corpus_template("meta-llama--Llama-3.1-8B-Instruct.jinja")
        line = next(
            line
            for line in golden_renders()
            if line["template"] == "meta-llama--Llama-3.1-8B-Instruct.jinja"
            and line["conversation"] == "multi_turn"
            and line["add_generation_prompt"]
        )
        messages = [
            {**message, "tool_calls": []} if message["role"] == "assistant" else message
            for message in load_json("conversations.json")["multi_turn"]["messages"]
        ]
        with pytest.raises(ChatTemplateError, match="This model only supports single tool-calls at once!"):
            render_chat_template(template, messages, add_generation_prompt=True, now=CLOCK, **line["kwargs"])
        assert (
            ChatCodec(template).apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False, now=CLOCK, **line["kwargs"]
            )
            == line["rendered"]
        )


class TestAssistantTurnsWithoutContent:
    """``content: null`` (or no ``content``) on an assistant turn is empty text, as ``serve`` and vLLM
    read it: the OpenAI SDK and every OpenAI-compatible server send a tool-call turn that way."""

    CALL: ClassVar[dict[str, Any]] = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Lisbon"}'},
    }

    def test_an_assistant_turn_without_content_gets_empty_text(self) -> None:
        call = {**self.CALL, "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}}}
        messages = [
            {"role": "user", "content": None},
            {"role": "assistant", "content": None, "tool_calls": [self.CALL]},
            {"role": "assistant", "tool_calls": [self.CALL]},
            {"role": "assistant", "content": None, "reasoning_content": "Hm."},
        ]
        assert convert(messages) == [
            {"role": "user", "content": None},  # only an assistant turn may go without content
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "assistant", "tool_calls": [call], "content": ""},
            {"role": "assistant", "content": "", "reasoning_content": "Hm."},
        ]

    def test_an_sdk_tool_call_turn_renders_with_qwen3(self) -> None:
        # the reference's tokenizer path drops the None and Qwen3 fails ('dict object' has no attribute
        # 'content'); this is transformers 5.24 serve's prompt for the same request
        call = ChatCompletionMessageFunctionToolCall(
            id="call_1", type="function", function=Function(name="get_weather", arguments='{"city":"Lisbon"}')
        )
        messages = [
            {"role": "user", "content": "What's the weather in Lisbon?"},
            ChatCompletionMessage(role="assistant", content=None, tool_calls=[call]),
            {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"},
        ]
        prompt = ChatCodec(corpus_template("Qwen--Qwen3-0.6B.jinja")).apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )
        assert prompt == (
            "<|im_start|>user\nWhat's the weather in Lisbon?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n</tool_call><|im_end|>\n'
            "<|im_start|>user\n<tool_response>\n18 C, sunny\n</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n"
        )

    @pytest.mark.parametrize("line", [
        pytest.param(line, id=f"{line['template'].removesuffix('.jinja')}|{line['add_generation_prompt']}")
        for line in golden_renders()
        if line["conversation"] == "tool_call_roundtrip"
        and line.get("error") == LOST_CONTENT
    ])
    def test_the_wire_form_renders_where_the_reference_lost_the_content(self, line: dict[str, Any]) -> None:
        # the reference fails on the null content it dropped; chatcodec renders what the reference
        # renders for the same conversation with empty content
        conversation = load_json("conversations.json")["tool_call_roundtrip"]
        with_empty_content = [{**message, "content": message["content"] or ""}
                              for message in conversation["messages"]]
        if line["template"] in ARGUMENTS_AS_TEXT_TEMPLATES:  # they get the string as sent
            with_empty_content[1]["tool_calls"] = wire_form(with_empty_content)[1]["tool_calls"]
        try:
            expected = render_chat_template(
                corpus_template(line["template"]), with_empty_content, tools=conversation["tools"],
                add_generation_prompt=line["add_generation_prompt"], now=CLOCK, **line["kwargs"])
        except ChatTemplateError as error:  # a template that refuses empty content as well
            with pytest.raises(ChatTemplateError) as caught:
                render_wire_form(line)
            assert str(caught.value) == str(error)
            return
        assert render_wire_form(line) == expected


@pytest.mark.parametrize(
    "template",
    [
        "Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja",
        "mistralai--Mistral-Nemo-Instruct-2407.jinja",
        "NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja",
    ],
)
def test_sdk_message_objects_give_the_reference_prompt(template: str) -> None:
    conversation = load_json("conversations.json")["tool_call_roundtrip"]
    line = next(
        line
        for line in golden_renders()
        if line["template"] == template
        and line["conversation"] == "tool_call_roundtrip"
        and not line["add_generation_prompt"]
    )
    user, assistant, tool, answer = conversation["messages"]
    sdk_call = ChatCompletionMessageFunctionToolCall(
        id="Ab3dE6gH9",
        type="function",
        function=Function(name="get_weather", arguments='{"city": "Lisbon", "unit": "celsius"}'),
    )
    messages = [
        user,
        ChatCompletionMessage(role="assistant", content=None, tool_calls=[sdk_call]),
        {"role": "tool", "tool_call_id": "Ab3dE6gH9", "content": tool["content"]},
        ChatCompletionMessage(role="assistant", content=answer["content"]),
    ]
    tools = [
        ChatCompletionFunctionTool(type="function", function=FunctionDefinition(**tool_schema["function"]))
        for tool_schema in conversation["tools"]
    ]
    assert assistant["tool_calls"][0]["function"]["arguments"] == {"city": "Lisbon", "unit": "celsius"}
    assert (
        ChatCodec(corpus_template(template)).apply_chat_template(
            messages, tools=tools, tokenize=False, now=CLOCK, **line["kwargs"]
        )
        == line["rendered"]
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(
    arguments=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4),
    separators=st.sampled_from([(",", ":"), (", ", ": ")]),
    ensure_ascii=st.booleans(),
)
def test_any_json_object_string_reaches_the_template_as_it_reads_it(
    arguments: dict[str, Any], separators: tuple[str, str], ensure_ascii: bool
) -> None:
    text = json.dumps(arguments, separators=separators, ensure_ascii=ensure_ascii)
    message = {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": text}}]}
    before = copy.deepcopy(message)
    as_mapping = convert([message])[0]["tool_calls"][0]["function"]["arguments"]
    as_text = convert([message], TemplateReads(arguments_as_text=True))[0]["tool_calls"][0]["function"]
    assert as_mapping == arguments
    assert as_text["arguments"] == text
    assert message == before


@given(texts=st.lists(st.text(), min_size=1, max_size=5), reads=st.sampled_from([PARTS, TEXT]))
def test_any_text_parts_become_their_text_joined_by_a_space(texts: list[str], reads: TemplateReads) -> None:
    content = [{"type": "text", "text": text} for text in texts]
    assert convert([{"role": "user", "content": content}], reads) == [
        {"role": "user", "content": " ".join(texts)}
    ]
