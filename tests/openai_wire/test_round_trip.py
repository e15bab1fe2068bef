"""A parsed message, converted with ``to_chat_message`` and sent back, renders with the same template.

For every bundled profile whose chat template is bundled (its demo: a real output after the demo
conversation) or in the corpus (the assistant messages of ``tests/profiles/test_round_trip.py``
rendered and parsed back), the output is parsed, converted with the profile's id form
(``ToolCallIds.for_profile``), appended to the conversation with one tool result per call, and
the conversation is rendered again with a generation prompt: no template error. Mistral-Nemo's
template, which demands 9-alphanumeric ids, refuses OpenAI's default ids, so the form matters.

The message goes back as a client following transformers 5.24 sends it: arguments as the mapping
templates iterate (``json.loads`` of the wire text), except to the templates that concatenate them
as text (``Spec.arguments_as_text``: DeepSeek, functionary, FireFunction, Apertus), which get the
wire text itself; and ``content: null`` as ``""``, since a ``None`` key is dropped before rendering
(SPEC 2.2, as in the reference) and many templates read ``message['content']`` on a tool-call turn.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import chatcodec
from chatcodec import profiles
from chatcodec.chat_templates.errors import ChatTemplateError
from chatcodec.chat_templates.render import render_chat_template
from chatcodec.openai import ToolCallIds, to_chat_message
from tests.conftest import corpus_template
from tests.openai_wire.helpers import check_message
from tests.profiles.test_round_trip import MESSAGES, SPECS, TOOLS, USER, split_output

BUNDLED = [name for name in profiles.names() if profiles.load(name).chat_template is not None]

#: The ids each family's chat template accepts (``profile.json``'s ``tool_call_id``), as regexes
#: (``NAME`` stands for the called function): 9 alphanumerics for Mistral's families, Kimi's
#: ``functions.NAME:INDEX``, else OpenAI's ``call_`` and 24 alphanumerics.
ID_FORMS = {
    "mistral": r"[A-Za-z0-9]{9}", "mistral_args": r"[A-Za-z0-9]{9}", "mistral_reasoning": r"[A-Za-z0-9]{9}",
    "mistral_v11": r"[A-Za-z0-9]{9}", "kimi_k2": r"functions\.NAME:[0-9]+",
}


def check_ids(name: str, parsed: dict[str, Any], chat: dict[str, Any]) -> None:
    """The id the model wrote is kept; any other is generated in the family's form."""
    form = ID_FORMS.get(name, r"call_[A-Za-z0-9]{24}")
    for call, sent in zip(parsed.get("tool_calls", []), chat.get("tool_calls", []), strict=True):
        if call.get("id") is not None:
            assert sent["id"] == call["id"], "the model's own id is kept"
        else:
            assert re.fullmatch(form.replace("NAME", re.escape(call["function"]["name"])), sent["id"]), sent


def sent_back(chat: dict[str, Any], arguments_as_text: bool) -> list[dict[str, Any]]:
    """The converted message as the next request carries it, with one tool result per call."""
    message = json.loads(json.dumps(chat))
    if message["content"] is None:
        message["content"] = ""
    results = []
    for call in message.get("tool_calls", []):
        if not arguments_as_text:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        results.append({"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"],
                        "content": '{"temperature": 21}'})
    return [message, *results]


def render_back(template: str, profile: profiles.Profile, conversation: list[dict[str, Any]],
                tools: Any, variables: dict[str, Any]) -> str:
    return render_chat_template(template, conversation, tools=tools, add_generation_prompt=True,
                                **profile.special_tokens, **variables)


@pytest.mark.parametrize("name", BUNDLED)
def test_a_bundled_templates_demo_output_renders_back(name: str) -> None:
    profile = profiles.load(name)
    demo = profile.demo
    assert demo is not None and profile.chat_template is not None
    variables = {**profile.template_kwargs, **demo.template_kwargs}
    prompt = render_back(profile.chat_template, profile, demo.messages, demo.tools, variables)
    parsed = chatcodec.parse_response(demo.output, profile.response_template, prefix=prompt, tools=demo.tools)
    chat = to_chat_message(parsed, ids=ToolCallIds.for_profile(name, seed=0))
    check_message(chat, ["reasoning_content", "builtin_tool_calls"])
    check_ids(name, parsed, chat)
    source = profile.chat_template_source
    assert source is not None
    as_text = SPECS[source["corpus_file"]].arguments_as_text
    rendered = render_back(profile.chat_template, profile, [*demo.messages, *sent_back(chat, as_text)],
                           demo.tools, variables)
    assert rendered.startswith(prompt[: len(prompt) // 2])


CORPUS_CASES = [
    (file, kind)
    for file, spec in sorted(SPECS.items())
    for kind in ("calls", "one_call", "reasoning")
    if kind not in spec.unrenderable
]


#: Cases where the template cannot render what its own model wrote: Command A Reasoning drops the
#: text beside calls when it renders them (``Spec.drops``), and indexes ``content[0]`` of a tool-call
#: turn without text (as for ``one_call`` in ``Spec.unrenderable``).
CANNOT_RENDER_BACK = {
    ("CohereLabs--command-a-reasoning-08-2025.jinja", "calls"): "str object has no element 0",
}


@pytest.mark.parametrize(("file", "kind"), CORPUS_CASES,
                         ids=[f"{file[:-6]}:{kind}" for file, kind in CORPUS_CASES])
def test_a_corpus_templates_parsed_calls_render_back(file: str, kind: str) -> None:
    spec = SPECS[file]
    profile = profiles.load(spec.profile)
    prefix, output, _ = split_output(spec, file, MESSAGES[kind])
    parsed = chatcodec.parse_response(output, profile.response_template, prefix=prefix, tools=TOOLS)
    if kind != "reasoning" and "tool_calls" not in spec.drops.get(kind, ()):
        assert parsed.get("tool_calls"), "the rendered calls parse back"
    chat = to_chat_message(parsed, ids=ToolCallIds.for_profile(spec.profile, seed=0))
    check_ids(spec.profile, parsed, chat)
    tools = [tool["function"] for tool in TOOLS] if spec.tools_as_functions else TOOLS
    variables = {**profile.template_kwargs, **spec.variables}
    conversation = [*USER, *sent_back(chat, spec.arguments_as_text)]
    if (file, kind) in CANNOT_RENDER_BACK:
        with pytest.raises(ChatTemplateError, match=CANNOT_RENDER_BACK[file, kind]):
            render_back(corpus_template(file), profile, conversation, tools, variables)
        return
    rendered = render_back(corpus_template(file), profile, conversation, tools, variables)
    written = [call["id"] for call in MESSAGES[kind].get("tool_calls", []) if call["id"] in prefix + output]
    if written:  # the template writes ids: the ones sent back are there, the model's own among them
        assert all(call["id"] in rendered for call in chat["tool_calls"])


def test_mistral_nemo_refuses_ids_of_another_form() -> None:
    file = "mistralai--Mistral-Nemo-Instruct-2407.jinja"
    spec = SPECS[file]
    profile = profiles.load("mistral")
    prefix, output, _ = split_output(spec, file, MESSAGES["one_call"])
    parsed = chatcodec.parse_response(output, profile.response_template, prefix=prefix, tools=TOOLS)
    del parsed["tool_calls"][0]["id"]  # the model wrote none: the id is generated
    chat = to_chat_message(parsed, ids=ToolCallIds())
    with pytest.raises(ChatTemplateError, match="Tool call IDs should be alphanumeric strings with length 9"):
        render_back(corpus_template(file), profile, [*USER, *sent_back(chat, False)], TOOLS, {})
    chat = to_chat_message(parsed, ids=ToolCallIds.for_profile("mistral"))
    render_back(corpus_template(file), profile, [*USER, *sent_back(chat, False)], TOOLS, {})
