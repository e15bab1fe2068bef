"""``ChatCodec.apply_chat_template`` step by step: check options, render, then tokenize.

What lives here: the reference's option checks and batch detection (transformers 5.24
``PreTrainedTokenizerBase.apply_chat_template``), control-token marking before rendering, one
render per conversation (with ``{% generation %}`` spans when a mask is asked for), and the hand
over to :mod:`chatcodec.model.encoding`. Rendering itself is :mod:`chatcodec.chat_templates`'s.

Rule kept: the result has the reference's shape for every combination of ``tokenize``,
``return_dict`` and batching: text, a list of texts, ids, a list of id lists, or the dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatcodec.chat_templates.inputs import (
    ConversationError,
    check_prompt_ending,
    plain_template_data,
    prepare_documents,
    prepare_tools,
)
from chatcodec.chat_templates.openai_inputs import TemplateReads, template_messages, template_tools
from chatcodec.model.config import TokenizerConfig, check_side
from chatcodec.model.encoding import PaddingOptions, batch_output, encode_chat
from chatcodec.model.sequences import token_id
from chatcodec.model.tokenizer import Tokenizer, TokenizerHandle

__all__ = ["ChatRequest", "PromptModel", "apply_chat_template", "control_tokens_of"]


@dataclass(frozen=True)
class ChatRequest:
    """The arguments of one ``apply_chat_template`` call, checked once (:meth:`build`), never changed.

    Attributes:
        conversations: the conversations to render (one, or the batch's).
        batched: the call was given a batch (the result is a list).
        Other attributes: the call's arguments; ``return_dict`` is ``False`` without ``tokenize`` (the
        reference's rule) and ``max_length`` is a plain ``int``.
    """

    conversations: tuple[Any, ...]
    batched: bool = False
    tools: Sequence[Any] | None = None
    documents: Sequence[Any] | None = None
    add_generation_prompt: bool = False
    continue_final_message: bool | str = False
    tokenize: bool = True
    sanitize_control_tokens: bool = False
    padding: bool | str = False
    truncation: bool | str = False
    max_length: int | None = None
    return_tensors: str | None = None
    return_dict: bool = True
    return_assistant_tokens_mask: bool = False
    tokenizer_kwargs: Mapping[str, Any] = field(default_factory=dict)
    variables: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, conversation: Any, reads: TemplateReads, *, tools: Any = None, tokenize: bool = True,
              return_dict: bool = True, max_length: Any = None,
              tokenizer_kwargs: Mapping[str, Any] | None = None, **arguments: Any) -> ChatRequest:
        """Check the arguments of an ``apply_chat_template`` call and make the request.

        Messages and tools are taken as a client or the ``openai`` SDK sends them
        (:mod:`chatcodec.chat_templates.openai_inputs`): objects become dicts, content parts and
        string tool-call arguments take the shape the template reads, ``tools=[]`` is no tools.

        Args:
            conversation: a conversation or a batch of them (the reference's detection).
            reads: what the chat template that will render them reads.
            tools, tokenize, return_dict, max_length, tokenizer_kwargs: the call's arguments.
            **arguments: the call's other arguments, by their attribute names.

        Returns:
            The request.

        Raises:
            ValueError, TypeError: the reference's incompatible-option errors (with its wording), an
                empty conversation, a bad ``max_length`` or ``tokenizer_kwargs``, a ``messages``
                template variable (the conversation sets it).
            ConversationError: a message the template cannot take (a part it cannot show, tool-call
                arguments that are not a JSON object; :func:`~chatcodec.chat_templates.openai_inputs.
                template_messages`).
        """
        return_dict = return_dict and tokenize  # the reference: dicts come only from tokenizing
        _check_options(tokenize=tokenize, return_dict=return_dict, **arguments)
        length = _max_length(max_length)
        _check_tokenizer_kwargs({} if tokenizer_kwargs is None else tokenizer_kwargs)
        if "messages" in arguments.get("variables", {}):  # was: render_chat_template()'s own TypeError
            raise TypeError("apply_chat_template: 'messages' is the template variable the conversation "
                            "argument sets; pass the messages as the first argument (transformers: got "
                            "multiple values for keyword argument 'messages')")
        conversations, batched = _conversations(conversation)
        return cls(conversations=tuple(template_messages(chat, reads) for chat in conversations),
                   batched=batched, tools=template_tools(tools), tokenize=tokenize,
                   return_dict=return_dict, max_length=length, tokenizer_kwargs=dict(tokenizer_kwargs or {}),
                   **arguments)


def _check_options(*, tokenize: bool, return_dict: bool, return_assistant_tokens_mask: bool = False,
                   add_generation_prompt: bool = False, continue_final_message: bool | str = False,
                   sanitize_control_tokens: bool = False, **_: Any) -> None:
    """The reference's incompatible-option errors, with its wording."""
    if return_assistant_tokens_mask and not (return_dict and tokenize):
        raise ValueError(
            "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`")
    check_prompt_ending(add_generation_prompt, continue_final_message)
    if continue_final_message and return_assistant_tokens_mask:
        raise ValueError("continue_final_message is not compatible with return_assistant_tokens_mask.")
    if sanitize_control_tokens and not tokenize:
        raise ValueError(
            "`sanitize_control_tokens=True` requires `tokenize=True`: prompt text cannot tell a control "
            "token typed by the user from one written by the template."
        )


@dataclass(frozen=True)
class PromptModel:
    """What a model gives ``apply_chat_template``: built by ``ChatCodec`` from its current state.

    Attributes:
        tokenizer: the tokenizer (or why there is none), needed for ids.
        variables: the template variables every render gets (special tokens, then the model's own).
        control_tokens: the tokens ``sanitize_control_tokens`` encodes as text (:func:`control_tokens_of`),
            or ``None`` when not sanitising.
        pad_token_id: the id padding uses, or ``None``.
        padding_side, truncation_side: the model's sides (``"right"`` or ``"left"``).
        model_max_length: the model's ``model_max_length``, or ``None``.
    """

    tokenizer: TokenizerHandle
    variables: Mapping[str, Any] = field(default_factory=dict)
    control_tokens: tuple[str, ...] | None = None
    pad_token_id: int | None = None
    padding_side: str = "right"
    truncation_side: str = "right"
    model_max_length: int | None = None


def _max_length(value: Any) -> int | None:
    if value is None:
        return None
    length = token_id(value)  # an int, or an integer scalar; never a bool
    if length is None or length < 0:
        raise ConversationError(f"max_length: expected a non-negative integer or None, got {value!r}")
    return length


#: ``tokenizer_kwargs`` keys that repeat what apply_chat_template passes to the tokenizer itself.
_OWN_TOKENIZER_ARGUMENTS = ("padding", "truncation", "max_length", "return_tensors", "add_special_tokens",
                            "sanitize_control_tokens")

#: ``tokenizer_kwargs`` keys chatcodec honours (the tokenizer-call options that need no tokenizer object).
TOKENIZER_KWARGS = ("padding_side", "pad_to_multiple_of")


def _check_tokenizer_kwargs(kwargs: Mapping[str, Any]) -> None:
    """The reference passes ``tokenizer_kwargs`` to the tokenizer call beside its own arguments:
    repeating one is its TypeError; chatcodec honours :data:`TOKENIZER_KWARGS` and refuses the rest
    (the reference ignores unknown keys, such as ``truncation_side``, silently)."""
    if not isinstance(kwargs, Mapping):  # was: "argument of type 'int' is not iterable"
        raise TypeError(f"tokenizer_kwargs: expected a dict of tokenizer options (supported: "
                        f"{', '.join(TOKENIZER_KWARGS)}), got {type(kwargs).__name__}")
    for key in _OWN_TOKENIZER_ARGUMENTS:
        if key in kwargs:
            raise TypeError(f"tokenizer_kwargs: {key!r} is an argument apply_chat_template passes itself "
                            f"(transformers: got multiple values for keyword argument {key!r})")
    unknown = sorted(set(kwargs) - set(TOKENIZER_KWARGS))
    if unknown:
        raise ValueError(f"tokenizer_kwargs: not supported by chatcodec: {unknown} (supported: "
                         f"{', '.join(TOKENIZER_KWARGS)}; set codec.truncation_side for the truncation side)")
    if "padding_side" in kwargs:
        check_side("tokenizer_kwargs: padding_side", kwargs["padding_side"])
    multiple = kwargs.get("pad_to_multiple_of")
    if multiple is not None and ((value := token_id(multiple)) is None or value < 1):
        raise ValueError(f"tokenizer_kwargs: pad_to_multiple_of: expected a positive integer or None, got "
                         f"{multiple!r}")


def _conversations(conversation: Any) -> tuple[list[Any], bool]:
    """Split a conversation or a batch (the reference's detection); rendering checks the messages."""
    if isinstance(conversation, (list, tuple)) and not conversation:
        raise ConversationError(
            "Cannot apply chat template to an empty conversation. Provide at least one message.")
    if isinstance(conversation, (list, tuple)) and (
        isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")
    ):
        return [getattr(chat, "messages", chat) for chat in conversation], True
    return [getattr(conversation, "messages", conversation)], False  # a Conversation object, as in 5.24


def control_tokens_of(tokenizer: Tokenizer | None, config: TokenizerConfig,
                      special_tokens: Mapping[str, str]) -> tuple[str, ...]:
    """Every token that must not come from user input (SPEC §2.3).

    Args:
        tokenizer: the model's tokenizer, or ``None``: its added tokens (special or not).
        config: the model's configuration: its added tokens, extra special tokens and
            ``chat_control_tokens``.
        special_tokens: the model's named special tokens.

    Returns:
        The tokens, each once, in the order above (tokenizer, configuration's added tokens, named
        special tokens, extra special tokens, ``chat_control_tokens``).
    """
    tokens: dict[str, None] = {}
    if tokenizer is not None:
        tokens.update(dict.fromkeys(token.content for token in tokenizer.added_tokens_decoder.values()))
    tokens.update(dict.fromkeys(token.content for token in config.added_tokens.values()))
    tokens.update(dict.fromkeys(special_tokens.values()))
    tokens.update(dict.fromkeys(config.extra_special_tokens))
    tokens.update(dict.fromkeys(config.chat_control_tokens or ()))
    return tuple(tokens)


@dataclass(frozen=True)
class _Inputs:
    """The call's own inputs: conversations, tools, documents and variables (marked when sanitising)."""

    chats: list[Any]
    tools: Any
    documents: Any
    variables: Mapping[str, Any]


def _marked_inputs(request: ChatRequest, control_tokens: tuple[str, ...]) -> _Inputs:
    """Mark control tokens in every string of the inputs (after turning them into plain data)."""
    from chatcodec.model.control_tokens import control_token_pattern, mark_control_tokens

    pattern = control_token_pattern(control_tokens)
    return _Inputs(
        chats=[mark_control_tokens(plain_template_data(chat), pattern) for chat in request.conversations],
        tools=mark_control_tokens(prepare_tools(request.tools), pattern),
        documents=mark_control_tokens(prepare_documents(request.documents), pattern),
        variables=mark_control_tokens(dict(request.variables), pattern),  # strings marked, others kept
    )


def _render(chat_template: str, inputs: _Inputs, variables: Mapping[str, Any],
            request: ChatRequest) -> list[tuple[str, list[tuple[int, int]] | None]]:
    from chatcodec.chat_templates.render import render_chat_template, render_chat_template_with_spans

    rendered: list[tuple[str, list[tuple[int, int]] | None]] = []
    for chat in inputs.chats:
        if request.return_assistant_tokens_mask:
            result = render_chat_template_with_spans(
                chat_template, chat, tools=inputs.tools, documents=inputs.documents,
                add_generation_prompt=request.add_generation_prompt, **variables)
            rendered.append((result.text, list(result.generation_spans)))
        else:
            text = render_chat_template(
                chat_template, chat, tools=inputs.tools, documents=inputs.documents,
                add_generation_prompt=request.add_generation_prompt,
                continue_final_message=request.continue_final_message, **variables)
            rendered.append((text, None))
    return rendered


def apply_chat_template(chat_template: str, request: ChatRequest, model: PromptModel) -> Any:
    """Run one ``apply_chat_template`` call with the selected template text.

    Args:
        chat_template: the template text, already selected.
        request: the call's arguments.
        model: what the model gives the call (tokenizer, variables, control tokens, padding).

    Returns:
        What :meth:`chatcodec.ChatCodec.apply_chat_template` returns for these arguments.

    Raises:
        ValueError, ChatTemplateError, TokenizerUnavailableError, ControlTokenError: see
            :meth:`chatcodec.ChatCodec.apply_chat_template`.
    """
    control_tokens = model.control_tokens if request.sanitize_control_tokens else None
    if control_tokens is not None:
        model.tokenizer.require()
        inputs = _marked_inputs(request, control_tokens)  # the call's inputs only, never the model's tokens
    else:
        inputs = _Inputs(list(request.conversations), request.tools, request.documents, request.variables)
    rendered = _render(chat_template, inputs, {**model.variables, **inputs.variables}, request)
    if not request.tokenize:
        texts = [text for text, _ in rendered]
        return texts if request.batched else texts[0]
    tokenizer = model.tokenizer.require()
    encoded = [encode_chat(tokenizer, text, spans, control_tokens) for text, spans in rendered]
    options = PaddingOptions(
        padding=request.padding, truncation=request.truncation, max_length=request.max_length,
        pad_token_id=model.pad_token_id,
        padding_side=request.tokenizer_kwargs.get("padding_side", model.padding_side),
        truncation_side=model.truncation_side,
        pad_to_multiple_of=token_id(request.tokenizer_kwargs.get("pad_to_multiple_of")),
        model_max_length=model.model_max_length,
    )
    output = batch_output(encoded, batched=request.batched, options=options,
                          return_tensors=request.return_tensors)
    return output if request.return_dict else output["input_ids"]
