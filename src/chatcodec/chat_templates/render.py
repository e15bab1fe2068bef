"""Rendering a conversation with a chat template: ``render_chat_template`` and its spans variant.

The steps follow the reference (``apply_chat_template`` → ``render_jinja_template``): prepare the
inputs (:mod:`~chatcodec.chat_templates.inputs`), tag the final message for
``continue_final_message``, render in the sandbox (:mod:`~chatcodec.chat_templates.environment`),
then cut the prompt right after the final message's text. Errors raised inside the template
become :class:`~chatcodec.chat_templates.errors.ChatTemplateError` carrying the template line.
This module never touches files and never tokenizes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jinja2

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.environment import compile_chat_template, parse_chat_template
from chatcodec.chat_templates.errors import ChatTemplateError, error_from_exception
from chatcodec.chat_templates.generation import choose_span_markers, generation_is_direct, strip_span_markers
from chatcodec.chat_templates.inputs import (
    REASONING_FIELDS,
    ConversationError,
    check_prompt_ending,
    none_key_note,
    plain_input,
    prepare_documents,
    prepare_messages,
    prepare_tools,
)
from chatcodec.chat_templates.limits import RenderState, enter_render, exit_render
from chatcodec.errors import ChatTemplateNotFoundError

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "CONTINUE_FINAL_MESSAGE_TAG",
    "EMPTY_TEMPLATE_MESSAGE",
    "RenderedChat",
    "render_chat_template",
    "render_chat_template_with_spans",
]

#: Appended to the final message for ``continue_final_message``; the prompt is cut where it lands.
CONTINUE_FINAL_MESSAGE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "

Tool = dict[str, Any] | Callable[..., Any]

#: Why an empty (or whitespace-only) template is refused rather than rendered as the reference does.
EMPTY_TEMPLATE_MESSAGE = (
    "chat template: the template text is empty (or only whitespace), so every prompt would be too; "
    "check the file or the chat_template value it came from")


@dataclass(frozen=True, slots=True)
class RenderedChat:
    """A rendered prompt and the character spans of its ``{% generation %}`` blocks.

    Attributes:
        text: the prompt, exactly as :func:`render_chat_template` returns it.
        generation_spans: ``(start, end)`` character offsets into ``text`` (``text[start:end]`` is
            the output of one generation block), in order of their start. Empty when the template
            has no generation block.
    """

    text: str
    generation_spans: list[tuple[int, int]]


def render_chat_template(
    chat_template: str,
    messages: Sequence[Any],
    *,
    tools: Sequence[Tool] | None = None,
    documents: Sequence[dict[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    now: datetime | Any = None,
    **variables: Any,
) -> str:
    """Render a conversation into the exact prompt text the reference would produce.

    Behaves like ``tokenizer.apply_chat_template(..., tokenize=False)`` of transformers 5.24.
    Special tokens are ordinary variables: pass ``bos_token=...``, ``eos_token=...`` (a caller
    holding a model's special tokens passes ``**{**special_tokens, **kwargs}``).

    Args:
        chat_template: the Jinja template text (not a name; see ``select_chat_template``).
        messages: the conversation, a non-empty list of message dicts (``role``, ``content`` as a
            string or a list of typed blocks, ``tool_calls``, ``reasoning_content``, ...; dataclasses
            and pydantic models count as dicts), or an object whose ``messages`` attribute is one.
        tools: JSON schemas or Python functions (converted with ``get_json_schema``).
        documents: retrieval documents, dicts (typically with ``title`` and ``text``).
        add_generation_prompt: append the header that starts an assistant turn.
        continue_final_message: cut the prompt right after the final message's ``content`` (or,
            given a field name such as ``"reasoning_content"``, after that field) so the model
            continues it. Incompatible with ``add_generation_prompt``.
        now: when a ``datetime``, the time ``strftime_now()`` reports (default: the current local
            time). Like any keyword it is also the template variable ``now``, which the
            template sees as the reference shows it (``"<datetime>"`` for a datetime, as is
            for a string).
        **variables: more template variables (``enable_thinking=False``, special tokens, ...).

    Returns:
        The prompt.

    Raises:
        ConversationError: the inputs are unusable (empty conversation, a message that is not a
            dict, incompatible options, nothing to continue).
        ChatTemplateNotFoundError: the template text is empty or only whitespace (transformers
            5.24 renders it as an empty prompt; a ``ValueError`` too).
        ChatTemplateError: the template failed to compile or raised while rendering (its subclasses
            are also the original exception type: ``TypeError``, ``jinja2.UndefinedError``, ...);
            ``ChatTemplateLimitError`` when a sandbox limit was hit.
        TypeHintParsingException, DocstringParsingException: a tool function cannot be converted.
    """
    return _render(chat_template, messages, tools, documents, add_generation_prompt, continue_final_message,
                   now, variables, spans=False).text


def render_chat_template_with_spans(
    chat_template: str,
    messages: Sequence[Any],
    *,
    tools: Sequence[Tool] | None = None,
    documents: Sequence[dict[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    now: datetime | Any = None,
    **variables: Any,
) -> RenderedChat:
    """Render like :func:`render_chat_template` and return the ``{% generation %}`` spans too.

    The spans are exact character offsets into the returned text, also for blocks inside macros
    or ``{% set %}`` blocks (the reference's offsets are wrong there). ``continue_final_message``
    is not accepted, as in the reference's ``return_assistant_tokens_mask``.

    Args:
        chat_template, messages, tools, documents, add_generation_prompt, now, **variables: as for
            :func:`render_chat_template`.

    Returns:
        A :class:`RenderedChat` (``.text``, ``.generation_spans``).

    Raises:
        ConversationError, ChatTemplateError: as for :func:`render_chat_template`; also a
            ``ChatTemplateError`` when the template transforms the text of a generation block so
            that its span cannot be known.
    """
    if "continue_final_message" in variables:
        raise ConversationError(
            "continue_final_message is not compatible with generation spans (the reference's "
            "return_assistant_tokens_mask refuses it too)"
        )
    return _render(chat_template, messages, tools, documents, add_generation_prompt, False, now, variables,
                   spans=True)


def _render(chat_template: str, messages: Sequence[Any], tools: Sequence[Tool] | None,
            documents: Sequence[dict[str, Any]] | None, add_generation_prompt: bool,
            continue_final_message: bool | str, now: datetime | Any, variables: dict[str, Any],
            *, spans: bool) -> RenderedChat:
    if not isinstance(chat_template, str):
        raise ConversationError(
            f"chat_template: expected the template text, got {type(chat_template).__name__}"
        )
    if not chat_template.strip():  # the reference renders it: an empty (or blank) prompt, silently
        raise ChatTemplateNotFoundError(EMPTY_TEMPLATE_MESSAGE)
    if now is not None:  # a template variable like any other, as in the reference ...
        from datetime import datetime  # here: importing datetime costs a cold start that needs no clock

        variables = {**variables, "now": now}
        if not isinstance(now, datetime):
            now = None  # ... and, when a datetime, also the clock of strftime_now()
    check_prompt_ending(add_generation_prompt, continue_final_message)
    template = compile_chat_template(chat_template)
    chat = prepare_messages(messages)
    final_text = None
    if continue_final_message:
        final_text = _tag_final_message(chat, continue_final_message, chat_template)
    context = {name: plain_input(value, f"the template variable {name!r}")
               for name, value in variables.items()}
    context.update(messages=chat, tools=prepare_tools(tools), documents=prepare_documents(documents),
                   add_generation_prompt=add_generation_prompt)
    try:
        if spans:
            rendered = _render_spans(template, chat_template, context, now)
        else:
            rendered = RenderedChat(_run(template, chat_template, context, RenderState(now=now)), [])
    except ChatTemplateError as error:
        if error.original_type == "UndefinedError":
            error.note = none_key_note(messages, error.message)
        raise
    if final_text is not None:
        rendered = RenderedChat(_cut_at_tag(rendered.text, final_text), rendered.generation_spans)
    return rendered


def _run(template: jinja2.Template, source: str, context: dict[str, Any], state: RenderState) -> str:
    """Render ``template`` under ``state``, enforcing the output limit and translating errors."""
    token = enter_render(state)
    parts: list[str] = []
    append = parts.append
    total = 0
    limit = limits.MAX_OUTPUT_LENGTH
    try:
        blocks = template.root_render_func(template.new_context(context))
        if state.track_spans and state.span_markers is None:
            for block in blocks:  # generation blocks read the offset of the output so far
                total += len(block)
                state.offset = total
                append(block)
                if total > limit:
                    raise _output_limit_error(total)
        else:
            for block in blocks:
                total += len(block)
                append(block)
                if total > limit:
                    raise _output_limit_error(total)
    except ChatTemplateError as error:
        raise error_from_exception(error, lineno=_template_line(template, error), source=source) from None
    except RecursionError as error:
        lineno = _template_line(template, error)
        raise error_from_exception(limits.recursion_error(), lineno=lineno, source=source) from None
    except MemoryError:
        raise error_from_exception(limits.memory_error(), lineno=None, source=source) from None
    except Exception as error:
        raise error_from_exception(error, lineno=_template_line(template, error), source=source) from error
    finally:
        exit_render(token)
    return "".join(parts)


def _output_limit_error(total: int) -> Exception:
    return limits.limit_error(f"a prompt of more than {total:,} characters", "MAX_OUTPUT_LENGTH",
                              limits.MAX_OUTPUT_LENGTH)


def _template_line(template: jinja2.Template, error: BaseException) -> int | None:
    """The template line of the innermost template frame in ``error``'s traceback."""
    lineno = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            lineno = tb.tb_lineno
        tb = tb.tb_next
    return None if lineno is None else template.get_corresponding_lineno(lineno)


@functools.lru_cache(maxsize=64)
def _spans_are_direct(source: str) -> bool:
    return generation_is_direct(parse_chat_template(source))


def _render_spans(template: jinja2.Template, source: str, context: dict[str, Any],
                  now: datetime | None) -> RenderedChat:
    if "generation" not in source:
        return RenderedChat(_run(template, source, context, RenderState(now=now)), [])
    if now is None:
        from datetime import datetime

        now = datetime.now()  # both renders of a marked render must see the same time
    if _spans_are_direct(source):
        state = RenderState(now=now, track_spans=True)
        text = _run(template, source, context, state)
        return RenderedChat(text, state.spans)
    plain = _run(template, source, context, RenderState(now=now))
    markers = choose_span_markers(plain)
    if markers is None:
        raise ChatTemplateError(
            "generation spans: the prompt uses every Unicode noncharacter, so none is left to mark the "
            "{% generation %} blocks that are not written straight to the output"
        )
    marked = _run(template, source, context, RenderState(now=now, track_spans=True, span_markers=markers))
    stripped = strip_span_markers(marked, *markers)
    if stripped is None or stripped[0] != plain:
        raise ChatTemplateError(
            "generation spans: the template changes the text of a {% generation %} block after rendering it "
            "(inside a macro, {% set %} or {% filter %} block), so its span in the prompt cannot be known. "
            "Write generation blocks straight to the output to get spans."
        )
    return RenderedChat(plain, stripped[1])


def _tag_final_message(chat: list[dict[str, Any]], field: bool | str, chat_template: str) -> str:
    """Append the continue tag to the final message's field; return the text to be continued."""
    name = field if isinstance(field, str) else "content"
    last = chat[-1]
    final = last.get(name)
    if final is None:
        raise ConversationError(
            f'continue_final_message is set but the final message has no "{name}" to continue!'
        )
    fields = [name]
    if name in REASONING_FIELDS:  # reasoning is exposed under several names: tag every copy
        fields = [key for key in REASONING_FIELDS if last.get(key) == final]
    if not any(key in chat_template for key in fields):
        raise ConversationError(
            f'continue_final_message is set to "{name}" but this is not an accepted field in the '
            "chat_template"
        )
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                text = block["text"]
                block["text"] = text + CONTINUE_FINAL_MESSAGE_TAG
                return str(text)
        raise ConversationError(
            "continue_final_message is set but we could not find any text to continue in the final message!"
        )
    for key in fields:
        last[key] = last[key] + CONTINUE_FINAL_MESSAGE_TAG
    return str(final)


def _cut_at_tag(rendered: str, final_text: str) -> str:
    """Cut the prompt right before the continue tag (the reference's rule, whitespace included)."""
    tag = CONTINUE_FINAL_MESSAGE_TAG.strip()
    if final_text.strip() not in rendered or tag not in rendered:
        raise ConversationError(  # the reference's message, byte for byte
            "continue_final_message is set but the final message does not appear in the chat after applying "
            "the chat template! This can happen if the chat template deletes portions of the final message. "
            "Please verify the chat template and final message in your chat to ensure they are compatible."
            f"Final message to continue: {final_text.strip()}\nRendered chat:\n{rendered}"
        )
    at = rendered.rindex(tag)
    if rendered[at: at + len(CONTINUE_FINAL_MESSAGE_TAG)] == CONTINUE_FINAL_MESSAGE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()
