"""An OpenAI Chat Completions request, turned into the prompt its chat template makes of it.

What lives here: :func:`read_chat_request` (a request dict → the messages, tools, documents and
template variables one render needs: :class:`ChatRequestInputs`) and :func:`render_chat_request`
(those, rendered). ``ChatCodec.apply_chat_request`` is the same for a model (its special tokens,
its named templates, token ids).

The fields that shape the prompt (everything else, such as ``model``, ``temperature`` or
``stream``, is about sampling and is left to the caller):

* ``messages`` (required) and ``tools``: as :mod:`chatcodec.chat_templates.openai_inputs` takes
  them (SDK objects, content parts, JSON-string tool-call arguments, ``tools=[]`` = no tools);
* ``reasoning_effort``: passed as the template variable ``reasoning_effort`` (gpt-oss and Hy3
  read it). A template that does not read it but reads a thinking switch gets that switch instead:
  ``enable_thinking`` (Qwen3, GLM-4.6, SmolLM3, Nemotron), ``thinking`` (DeepSeek-V3.1,
  Granite 3.3) or ``reasoning`` (Command A Reasoning), ``False`` for ``"none"`` and ``True`` for any
  other effort;
* ``tool_choice``, ``parallel_tool_calls``, ``response_format``: checked, and passed as template
  variables of those names (a template that reads them gets them; none of the corpus templates
  reads the first two). ``tool_choice`` does not remove the tools from the prompt (``"none"``
  included, as vLLM does by default);
* ``chat_template_kwargs``: more template variables, which win over all of the above (as in vLLM
  and transformers ``serve``);
* the vLLM extensions ``documents``, ``add_generation_prompt`` (default ``True``, or ``False`` when
  ``continue_final_message`` is set) and ``continue_final_message``.

Refused, because they would shape the prompt and chatcodec does not render them: the legacy
``functions`` / ``function_call`` (use ``tools``) and a request-level ``chat_template``.
transformers 5.24 ``serve`` refuses ``tool_choice``, ``parallel_tool_calls`` and
``reasoning_effort``; chatcodec accepts them as above (docs/compatibility.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chatcodec.chat_templates.inputs import ConversationError, plain_input
from chatcodec.chat_templates.openai_inputs import TemplateReads, template_messages, template_tools

__all__ = [
    "PROMPT_FIELDS",
    "REQUEST_VARIABLES",
    "SAMPLING_FIELDS",
    "THINKING_SWITCHES",
    "ChatRequestInputs",
    "read_chat_request",
    "render_chat_request",
    "request_tools",
]

#: The request fields that shape the prompt (:func:`read_chat_request` reads them).
PROMPT_FIELDS = ("messages", "tools", "tool_choice", "parallel_tool_calls", "reasoning_effort",
                 "response_format", "chat_template_kwargs", "documents", "add_generation_prompt",
                 "continue_final_message")

#: Chat Completions fields (OpenAI's, and the common vLLM / SGLang extensions) about sampling and
#: delivery: a request may hold them, the prompt does not depend on them.
SAMPLING_FIELDS = (
    "model", "audio", "frequency_penalty", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens",
    "metadata", "modalities", "n", "prediction", "presence_penalty", "prompt_cache_key", "safety_identifier",
    "seed", "service_tier", "stop", "store", "stream", "stream_options", "temperature", "top_logprobs",
    "top_p", "user", "verbosity", "web_search_options", "top_k", "min_p", "repetition_penalty",
    "min_tokens", "ignore_eos", "skip_special_tokens", "echo", "guided_json", "structured_outputs",
)

#: Request fields passed to the template as variables of the same name, when given.
REQUEST_VARIABLES = ("reasoning_effort", "tool_choice", "parallel_tool_calls", "response_format")

#: Template variables that switch thinking on or off, set from ``reasoning_effort`` for a template
#: that reads one of them and not ``reasoning_effort`` itself.
THINKING_SWITCHES = ("enable_thinking", "thinking", "reasoning")

#: Template variables a request sets itself, which ``chat_template_kwargs`` may not name.
_RESERVED_VARIABLES = ("messages", "tools", "documents", "add_generation_prompt", "continue_final_message")

#: Fields that would shape the prompt in other servers and are refused here, with the reason.
_REFUSED_FIELDS = {
    "functions": "the legacy 'functions' field is not supported; send the functions as 'tools'",
    "function_call": "the legacy 'function_call' field is not supported; use 'tool_choice'",
    "chat_template": "a request cannot bring its own chat template; chatcodec renders the model's",
}


@dataclass(frozen=True)
class ChatRequestInputs:
    """What one Chat Completions request gives its chat template.

    Attributes:
        messages: the messages, in the shape the template reads (:func:`template_messages`).
        tools: the tools, or ``None`` for none.
        documents: the documents, or ``None``.
        add_generation_prompt: append the header that starts the assistant's turn.
        continue_final_message: leave the final message open (``True`` or a field name).
        variables: the template variables the request sets (see the module docstring).
    """

    messages: Any
    tools: Any = None
    documents: Any = None
    add_generation_prompt: bool = True
    continue_final_message: bool | str = False
    variables: dict[str, Any] = field(default_factory=dict)


def _as_mapping(request: Any) -> Mapping[str, Any]:
    if isinstance(request, Mapping):
        return request
    plain = plain_input(request, "request")  # a pydantic or dataclass request model
    if not isinstance(plain, dict):
        raise ConversationError(
            "request: expected a Chat Completions request (a dict with 'messages'), got "
            f"{type(request).__name__}")
    return plain


def request_tools(request: Any) -> Any:
    """The tools of a request as templates take them (``[]`` and a missing field are ``None``).

    Args:
        request: the request dict (or object).

    Returns:
        ``None`` or a list of tools; select the template with it before :func:`read_chat_request`.

    Raises:
        ConversationError: ``request`` is not a request.
    """
    return template_tools(_as_mapping(request).get("tools"))


def _tool_names(tools: Any) -> list[str]:
    names = []
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else getattr(tool, "__name__", None)
        if isinstance(name, str):
            names.append(name)
    return names


def _check_tool_choice(choice: Any, tools: Any) -> None:
    """``tool_choice`` is ``"none"``, ``"auto"``, ``"required"`` or names one of the tools."""
    if choice is None or choice in ("none", "auto"):
        return
    if choice == "required":
        if not tools:
            raise ConversationError("tool_choice: 'required' needs tools, and the request has none")
        return
    named = isinstance(choice, Mapping) and choice.get("type") == "function"
    function = choice.get("function") if named else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str):
        raise ConversationError(
            "tool_choice: expected 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": "
            f"{{\"name\": ...}}}}, got {str(choice)[:80]}")
    names = _tool_names(tools)
    if name not in names:
        raise ConversationError(f"tool_choice: the function {name!r} is not among the request's tools "
                                f"({', '.join(map(repr, names)) or 'none'})")


def _check_type(request: Mapping[str, Any], name: str, kind: type | tuple[type, ...], expected: str) -> None:
    value = request.get(name)
    if value is not None and not isinstance(value, kind):
        raise ConversationError(f"{name}: expected {expected}, got {type(value).__name__}")


def _template_kwargs(request: Mapping[str, Any]) -> dict[str, Any]:
    kwargs = request.get("chat_template_kwargs")
    if kwargs is None:
        return {}
    if not isinstance(kwargs, Mapping) or not all(isinstance(key, str) for key in kwargs):
        raise ConversationError("chat_template_kwargs: expected an object of template variables")
    reserved = [key for key in _RESERVED_VARIABLES if key in kwargs]
    if reserved:
        raise ConversationError(f"chat_template_kwargs: {reserved[0]!r} is set by the request itself "
                                f"(use the request's {reserved[0]!r} field)")
    return dict(kwargs)


def _thinking_switches(effort: str, chat_template: str) -> dict[str, Any]:
    """The thinking switch a template reads in place of ``reasoning_effort`` (module docstring)."""
    from chatcodec.chat_templates.template_reads import template_variables

    variables = template_variables(chat_template)
    if "reasoning_effort" in variables:
        return {}
    return {name: effort != "none" for name in THINKING_SWITCHES if name in variables}


def read_chat_request(request: Any, chat_template: str) -> ChatRequestInputs:
    """Read a Chat Completions request for one chat template (see the module docstring).

    Args:
        request: the request: a dict (as JSON gives it, or the ``openai`` SDK's
            ``CompletionCreateParams``), or a pydantic / dataclass request object.
        chat_template: the template that will render it (already selected, e.g. with
            :func:`request_tools` for a model's named templates).

    Returns:
        The messages, tools, documents, prompt ending and template variables.

    Raises:
        ConversationError: no ``messages``, a refused field, a field of the wrong type, a
            ``tool_choice`` that names no tool of the request, a ``chat_template_kwargs`` name the
            request sets itself, or a message the template cannot take (the message names it).
        ChatTemplateError: the template cannot be compiled.
    """
    request = _as_mapping(request)
    for name, reason in _REFUSED_FIELDS.items():
        if request.get(name) is not None:
            raise ConversationError(f"{name}: {reason}")
    messages = request.get("messages")
    if messages is None:
        raise ConversationError("messages: a Chat Completions request needs 'messages' (a list of messages)")
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise ConversationError(f"messages: expected a list of messages, got {type(messages).__name__}")
    tools = template_tools(request.get("tools"))
    _check_tool_choice(request.get("tool_choice"), tools)
    _check_type(request, "parallel_tool_calls", bool, "true or false")
    _check_type(request, "reasoning_effort", str, "a string such as 'low', 'medium', 'high' or 'none'")
    _check_type(request, "add_generation_prompt", bool, "true or false")
    _check_type(request, "continue_final_message", (bool, str), "true, false or a field name")
    continue_final = request.get("continue_final_message") or False
    add_generation_prompt = request.get("add_generation_prompt")
    if add_generation_prompt is None:
        add_generation_prompt = not continue_final
    variables = {name: request[name] for name in REQUEST_VARIABLES if request.get(name) is not None}
    if "reasoning_effort" in variables:
        variables.update(_thinking_switches(variables["reasoning_effort"], chat_template))
    variables.update(_template_kwargs(request))
    converted = template_messages(messages, TemplateReads.of(chat_template))
    for index, message in enumerate(converted):
        if not isinstance(message, dict):
            raise ConversationError(f"messages[{index}]: expected a message object (role, content, ...), "
                                    f"got {type(message).__name__}")
    return ChatRequestInputs(
        messages=converted, tools=tools,
        documents=request.get("documents"), add_generation_prompt=add_generation_prompt,
        continue_final_message=continue_final, variables=variables)


def render_chat_request(chat_template: str, request: Any, *, now: datetime | Any = None,
                        **variables: Any) -> str:
    """Render a Chat Completions request with a chat template: the prompt a server would generate from.

    The request's messages and tools are taken as a client or the ``openai`` SDK sends them, its
    ``reasoning_effort`` and ``chat_template_kwargs`` become template variables the way the
    template reads them (:func:`read_chat_request`), and the generation prompt is added (unless
    the request says ``continue_final_message``).

    Args:
        chat_template: the template text (for a model's named templates, select it first with
            ``select_chat_template(templates, None, request_tools(request))``, or use
            ``ChatCodec.apply_chat_request``).
        request: the request (see :func:`read_chat_request`).
        now: the time ``strftime_now()`` reports (as for :func:`render_chat_template`).
        **variables: more template variables, such as the model's special tokens (``bos_token=...``);
            the request's own variables win over them.

    Returns:
        The prompt.

    Raises:
        ConversationError: the request is unusable (see :func:`read_chat_request`).
        ChatTemplateError, ChatTemplateNotFoundError: as for :func:`render_chat_template`.

    Example:
        >>> template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}" \\
        ...            "{% if add_generation_prompt %}<assistant>{% endif %}"
        >>> render_chat_request(template, {"model": "m", "messages": [
        ...     {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]})
        '<user>Hi<assistant>'
    """
    from chatcodec.chat_templates.render import render_chat_template

    inputs = read_chat_request(request, chat_template)
    return render_chat_template(
        chat_template, inputs.messages, tools=inputs.tools, documents=inputs.documents,
        add_generation_prompt=inputs.add_generation_prompt,
        continue_final_message=inputs.continue_final_message, now=now,
        **{**variables, **inputs.variables})
