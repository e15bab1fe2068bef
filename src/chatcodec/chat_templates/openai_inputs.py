"""OpenAI Chat Completions messages and tools, turned into what chat templates read.

Clients and the ``openai`` SDK send conversations in the Chat Completions shape; chat templates
were written for the shape transformers hands them. :func:`template_messages` and
:func:`template_tools` bridge the two, following transformers 5.24 wherever it has a rule:

* message objects (pydantic models such as the SDK's ``ChatCompletionMessage``, dataclasses) become
  plain dicts and top-level ``None`` values are dropped (``_normalize_chat_messages``);
* content parts (``ProcessorMixin._normalize_conversations`` and ``transformers serve``'s
  ``get_processor_inputs_from_messages``): ``image_url`` → ``{"type": "image", "url": ...}``,
  ``input_audio`` → ``{"type": "audio", "url": "data:audio/<format>;base64,..."}``, ``video_url`` →
  ``{"type": "video", "url": ...}`` (and ``audio_url``, ``input_image``, ``input_text``,
  ``output_text`` as ``serve`` maps them). For a template that reads content only as text
  (:func:`~chatcodec.chat_templates.template_reads.reads_content_parts` is false), text parts are
  joined with a space, as ``serve`` does for a text-only model;
* an assistant turn's ``content: null`` (or no ``content``) is the empty text ``""``, as ``serve``
  (``message.get("content") or []``) and vLLM read it: the SDK and every OpenAI-compatible server
  send a tool-call turn that way, and the tokenizer path, which drops the ``None``, makes most
  templates that print ``message.content`` fail on it (Qwen3, Phi, Granite 3, DeepSeek, ...);
* ``tool_calls[].function.arguments`` given as a JSON string (the wire form) is parsed to a
  mapping, as ``serve`` does, and an empty ``tool_calls`` list is treated as absent (``serve``'s
  ``if message.get("tool_calls")``); ``tools=[]`` means no tools.

Beyond the reference, because it would lose or garble something (docs/compatibility.md):
a part a text-only template cannot show (an image for a text model), a part of an unknown OpenAI
type (``file``) and an ``arguments`` string that is not a JSON object are errors naming the message
and the part or call (``serve`` drops the part, or raises a bare ``JSONDecodeError``); an empty
``arguments`` string is ``{}``; a ``refusal`` part is text; ``content`` next to ``tool_calls`` and
every other message key (``name``, ``reasoning_content``, ...) are kept (``serve`` keeps only
``role``, ``content``, ``tool_calls`` and ``tool_call_id``, and drops the content of a turn with
calls); a ``tool`` message without ``name`` gets the name of the call its ``tool_call_id`` answers;
a ``developer`` message is a ``system`` message for a template that never names the developer role.

The caller's objects are never changed: the messages are rebuilt from plain data first.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatcodec.chat_templates.inputs import ConversationError, plain_input, plain_template_data

__all__ = ["TEMPLATE_TEXT_SEPARATOR", "TemplateReads", "template_messages", "template_tools"]

#: What joins the text parts of a message for a template that reads content as text
#: (transformers 5.24 ``serve``: ``" ".join(...)`` for a text-only model).
TEMPLATE_TEXT_SEPARATOR = " "

#: OpenAI part types that are text, and the key that holds it.
_TEXT_PARTS = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal"}

#: OpenAI part types no chat template reads, refused rather than passed on to be dropped.
_UNSUPPORTED_PARTS = frozenset({"file", "input_file"})


@dataclass(frozen=True)
class TemplateReads:
    """What the chat template that will render the messages reads.

    Attributes:
        content_parts: it reads ``content`` as a list of parts (else only as text).
        arguments_as_text: it reads tool-call ``arguments`` only as a JSON string (else as a mapping).
        developer_role: it names the ``developer`` role (else a developer message becomes ``system``).
    """

    content_parts: bool = True
    arguments_as_text: bool = False
    developer_role: bool = True

    @classmethod
    def of(cls, chat_template: str) -> TemplateReads:
        """What ``chat_template`` reads (its syntax tree; see :mod:`.template_reads`), cached per text.

        Raises:
            ChatTemplateError: the template cannot be compiled.
        """
        return _template_reads(chat_template)


@functools.lru_cache(maxsize=128)
def _template_reads(chat_template: str) -> TemplateReads:
    from chatcodec.chat_templates.template_reads import reads_arguments_as_text, reads_content_parts

    return TemplateReads(content_parts=reads_content_parts(chat_template),
                         arguments_as_text=reads_arguments_as_text(chat_template),
                         developer_role="developer" in chat_template)


def _url_of(part: Mapping[str, Any], key: str, where: str) -> Any:
    """``part[key]["url"]`` (or ``part[key]`` itself when it is a string), as ``serve`` reads it."""
    value = part.get(key)
    if isinstance(value, Mapping) and isinstance(value.get("url"), str):
        return value["url"]
    if isinstance(value, str):
        return value
    raise ConversationError(f"{where}: this {part.get('type')!r} part needs {key}.url (a string), got "
                            f"{json.dumps(value, default=repr)[:80]}")


def _audio_url(part: Mapping[str, Any], where: str) -> Any:
    """An ``input_audio`` part's data as a URL: ``data:audio/<format>;base64,<data>`` (``serve``'s)."""
    audio = part.get("input_audio")
    if isinstance(audio, str):
        return audio
    if isinstance(audio, Mapping) and isinstance(audio.get("data"), str):
        kind = audio.get("format")
        return f"data:audio/{kind};base64,{audio['data']}" if kind else audio["data"]
    raise ConversationError(f"{where}: this 'input_audio' part needs input_audio.data (base64 text)")


def _template_part(part: Any, where: str) -> Any:
    """One content part in the shape templates read; parts already in that shape pass unchanged.

    Raises:
        ConversationError: the part is not a dict (templates test ``'image' in item`` and fail on a
            ``None`` with a bare ``TypeError``, or print a bare string as if it were a part).
    """
    if not isinstance(part, Mapping):
        raise ConversationError(f"{where}: a content part is a dict such as {{\"type\": \"text\", \"text\": "
                                f"...}}, got {type(part).__name__} {json.dumps(part, default=repr)[:80]}")
    kind = part.get("type")
    if kind in ("image_url", "input_image"):
        return {"type": "image", "url": _url_of(part, "image_url", where)}
    if kind == "input_audio":
        return {"type": "audio", "url": _audio_url(part, where)}
    if kind == "video_url":
        return {"type": "video", "url": _url_of(part, "video_url", where)}
    if kind == "audio_url":
        return {"type": "audio", "url": _url_of(part, "audio_url", where)}
    if kind in _TEXT_PARTS:
        text = part.get(_TEXT_PARTS[kind])
        if not isinstance(text, str):
            raise ConversationError(f"{where}: this {kind!r} part needs {_TEXT_PARTS[kind]!r} (a string)")
        return part if kind == "text" else {"type": "text", "text": text}
    if kind in _UNSUPPORTED_PARTS:
        raise ConversationError(f"{where}: {kind!r} parts are not supported: no chat template reads them")
    return part


def _is_text(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str)


def _content(content: list[Any], reads: TemplateReads, where: str) -> Any:
    """A message's content for the template: text parts joined into text, other parts converted."""
    parts = [_template_part(part, f"{where}[{index}]") for index, part in enumerate(content)]
    if all(_is_text(part) for part in parts):
        return TEMPLATE_TEXT_SEPARATOR.join(part["text"] for part in parts)
    if reads.content_parts:
        return parts
    index = next(index for index, part in enumerate(parts) if not _is_text(part))
    original = content[index]
    kind = original.get("type") if isinstance(original, Mapping) else None
    shown = f"the {kind!r} part" if kind is not None else f"a {type(original).__name__}"
    raise ConversationError(
        f"{where}[{index}]: this chat template reads a message's content as text only, so it cannot show "
        f"{shown} (a text-only model?); send text parts only, or use the model's multimodal template")


class _ChangedValue(ValueError):
    """JSON text that ``json.loads`` would read as a different value than the text says."""


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice is refused (``json.loads`` would keep only the last value)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _ChangedValue(f"the key {key!r} is given twice, so one value would be lost")
            seen.add(key)
    return value


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity``, ``-Infinity``: Python's JSON reads them, JSON has no such numbers."""
    raise _ChangedValue(f"not JSON ({name} is no JSON number)")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent; one past a float's range (``1e400``) is refused, as
    ``|tojson`` would write it as ``Infinity``."""
    value = float(text)
    if math.isinf(value):
        raise _ChangedValue(f"the number {text} is beyond the range of a float, so it would be written as "
                            "Infinity")
    return value


def _arguments(arguments: Any, as_text: bool, where: str) -> Any:
    """Tool-call arguments as the template reads them: a mapping, or (``as_text``) a JSON string.

    A string is checked to be a JSON object (empty or blank text is ``{}``) that reads back as
    written: a key given twice, ``NaN``/``Infinity`` and numbers past a float's range are refused,
    since the mapping would drop or change a value; a template that reads
    text gets the string as given, one that reads a mapping gets it parsed. A mapping is given to a
    template that reads text as JSON (``json.dumps``, as ``|tojson`` writes it). ``None`` is ``{}``,
    as an empty string is; any other value (a number, a list) is refused, since no template can
    show it as a call's arguments (``|tojson`` would write ``5`` or ``null`` into the prompt).
    """
    if isinstance(arguments, Mapping):
        return json.dumps(arguments, ensure_ascii=False) if as_text else arguments
    if arguments is None:
        return "{}" if as_text else {}
    if not isinstance(arguments, str):
        raise ConversationError(
            f"{where}: expected a JSON object (a mapping, or its JSON text as the OpenAI wire form "
            f"sends it), got {type(arguments).__name__} {json.dumps(arguments, default=repr)[:80]}")
    if not arguments.strip():
        return "{}" if as_text else {}
    try:
        value = json.loads(arguments, object_pairs_hook=_object_without_repeats, parse_constant=_no_constant,
                           parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise ConversationError(
            f"{where}: not JSON ({error.msg} at character {error.pos}): {arguments[:80]!r}; tool-call "
            "arguments are a JSON object, as a string (the OpenAI wire form) or as a mapping") from None
    except _ChangedValue as error:
        raise ConversationError(f"{where}: {error}: {arguments[:80]!r}") from None
    except ValueError as error:  # an integer past Python's conversion limit (4,300 digits): a bare ValueError
        raise ConversationError(f"{where}: {error}: {arguments[:80]!r}") from None
    if not isinstance(value, dict):
        raise ConversationError(f"{where}: expected a JSON object, got {type(value).__name__} "
                                f"{arguments[:80]!r}")
    return arguments if as_text else value


def _tool_calls(calls: Sequence[Any], as_text: bool, where: str) -> list[Any]:
    """The calls with their ``arguments`` as the template reads them (``function.arguments``, or
    ``arguments`` of a flat call as ``serve`` accepts it) and ``function.name`` first; a call that
    needs no change is kept."""
    converted = []
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise ConversationError(
                f"{where}[{index}]: expected a tool call, an object such as {{\"type\": \"function\", "
                f"\"function\": {{\"name\": ..., \"arguments\": ...}}}}, got {type(call).__name__} "
                f"{json.dumps(call, default=repr)[:80]}")
        if isinstance(call.get("function"), Mapping):
            function = call["function"]
            arguments = function.get("arguments")
            if "arguments" in function:  # a call without the key is left to the template
                arguments = _arguments(arguments, as_text, f"{where}[{index}].function.arguments")
            if arguments is not function.get("arguments") or next(iter(function), "name") != "name":
                # name first, as the OpenAI documents write it (the SDK's objects dump arguments first)
                call = {**call, "function": {**({"name": function["name"]} if "name" in function else {}),
                                             **function, "arguments": arguments}}
        elif "arguments" in call:
            arguments = _arguments(call["arguments"], as_text, f"{where}[{index}].arguments")
            if arguments is not call["arguments"]:
                call = {**call, "arguments": arguments}
        converted.append(call)
    return converted


def _call_names(calls: Any) -> dict[str, str]:
    """``{call id: function name}`` of an assistant message's calls."""
    names: dict[str, str] = {}
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            continue
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else call.get("name")
        if isinstance(name, str):
            names[call["id"]] = name
    return names


def template_messages(messages: Any, reads: TemplateReads) -> Any:
    """Turn a Chat Completions conversation into the messages a chat template reads.

    See the module docstring for the rules. What is not a list of messages is returned as given
    (rendering reports it, as for any conversation).

    Args:
        messages: the conversation: dicts, TypedDicts, pydantic models (``openai`` SDK objects) or
            dataclasses, with ``content`` as text or a list of parts.
        reads: what the template that renders them reads (:meth:`TemplateReads.of`).

    Returns:
        A new list of new message dicts.

    Raises:
        ConversationError: a part the template cannot show or no template reads, a malformed part,
            ``tool_calls`` that are not a list (``None`` is none) of call objects, or tool-call
            ``arguments`` that are not a JSON object; the message names ``messages[i].content[j]``,
            ``messages[i].tool_calls[j]`` or ``messages[i].tool_calls[j].function.arguments``.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        return messages
    names: dict[str, str] = {}
    result = []
    index = 0
    try:  # around the loop: a try per message would slow every render down
        for index, message in enumerate(messages):
            # objects become dicts first, nested ones too (an SDK tool call inside a dict message), as
            # transformers 5.24's _message_objects_to_dicts does before anything else reads the chat
            plain = plain_template_data(message)
            if type(plain) is not dict:
                result.append(plain)  # rendering reports it
                continue
            role = plain.get("role")
            if (type(plain.get("content")) is not list and "tool_calls" not in plain
                    and role != "tool" and role != "developer"
                    and (role != "assistant" or plain.get("content") is not None)):
                result.append(plain)  # the common case: nothing to change
                continue
            result.append(_template_message(plain, reads, names, f"messages[{index}]"))
    except RecursionError:
        raise ConversationError(
            f"messages[{index}]: nested too deeply to copy for the template (past Python's recursion limit "
            f"of {sys.getrecursionlimit():,} levels)") from None
    return result


def _template_message(message: dict[str, Any], reads: TemplateReads, names: dict[str, str],
                      where: str) -> dict[str, Any]:
    """One message for the template (copied when it changes); ``names`` collects the calls' names."""
    changes: dict[str, Any] = {}
    content = message.get("content")
    role = message.get("role")
    if isinstance(content, list):
        changes["content"] = _content(content, reads, f"{where}.content")
    elif content is None and role == "assistant":
        changes["content"] = ""  # the wire form of a turn with no text (serve and vLLM read it so)
    calls = message.get("tool_calls")
    no_calls = calls == []  # an empty list of calls is no calls (transformers 5.24 serve)
    if calls is not None and not isinstance(calls, (list, tuple)):  # a template would iterate letters
        raise ConversationError(f"{where}.tool_calls: expected a list of tool calls, got "
                                f"{type(calls).__name__} {json.dumps(calls, default=repr)[:80]}")
    if calls:
        changes["tool_calls"] = _tool_calls(calls, reads.arguments_as_text, f"{where}.tool_calls")
        names.update(_call_names(changes["tool_calls"]))
    if role == "tool" and message.get("name") is None and message.get("tool_call_id") in names:
        changes["name"] = names[message["tool_call_id"]]
    if role == "developer" and not reads.developer_role:
        changes["role"] = "system"
    if not changes and not no_calls:
        return message
    changed = {**message, **changes}
    if no_calls:
        del changed["tool_calls"]
    return changed


def template_tools(tools: Any) -> Any:
    """Tools as a chat template takes them: ``[]`` means no tools (``None``); tool objects become dicts.

    A pydantic or dataclass tool (the SDK's ``ChatCompletionFunctionTool``, ...) becomes a dict
    without the ``None`` values of its unset fields (top level and ``function``); dicts and Python
    functions pass unchanged (:func:`~chatcodec.chat_templates.inputs.prepare_tools` converts
    functions when rendering).

    Args:
        tools: the request's tools, or ``None``.

    Returns:
        ``None`` for no tools, else a new list.
    """
    if tools is None or (isinstance(tools, (list, tuple)) and not tools):
        return None
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        return tools  # rendering reports it
    converted = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) and not callable(tool):
            tool = plain_input(tool, f"tools[{index}]")
            if isinstance(tool, dict):
                tool = {key: value for key, value in tool.items() if value is not None}
                if isinstance(tool.get("function"), dict):
                    tool["function"] = {key: value for key, value in tool["function"].items()
                                        if value is not None}
        converted.append(tool)
    return converted
