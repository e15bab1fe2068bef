"""``ChatCodec.apply_chat_template`` step by step: check options, render, then tokenize.

What lives here: the reference's option checks and batch detection (transformers 5.23
``PreTrainedTokenizerBase.apply_chat_template``), control-token marking before rendering, one
render per conversation (with ``{% generation %}`` spans when a mask is asked for), and the hand
over to :mod:`chatcodec.model.encoding`. Rendering itself is :mod:`chatcodec.chat_templates`'s.

Rule kept: the result has the reference's shape for every combination of ``tokenize``,
``return_dict`` and batching: text, a list of texts, ids, a list of id lists, or the dict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chatcodec.chat_templates.inputs import (
    ConversationError,
    check_prompt_ending,
    plain_template_data,
    prepare_documents,
    prepare_tools,
)
from chatcodec.model.config import check_side
from chatcodec.model.encoding import PaddingOptions, batch_output, encode_chat
from chatcodec.model.sequences import token_id

if TYPE_CHECKING:
    from chatcodec.model.codec import ChatCodec

__all__ = ["ChatRequest", "apply_chat_template", "control_tokens_of"]


@dataclass
class ChatRequest:
    """The arguments of one ``apply_chat_template`` call."""

    conversation: Any
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
    tokenizer_kwargs: dict[str, Any] | None = None
    variables: dict[str, Any] = field(default_factory=dict)


def _check_options(request: ChatRequest) -> None:
    """The reference's incompatible-option errors, with its wording."""
    if not request.tokenize:
        request.return_dict = False  # the reference: dicts come only from tokenizing
    if request.return_assistant_tokens_mask and not (request.return_dict and request.tokenize):
        raise ValueError(
            "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`")
    check_prompt_ending(request.add_generation_prompt, request.continue_final_message)
    if request.continue_final_message and request.return_assistant_tokens_mask:
        raise ValueError("continue_final_message is not compatible with return_assistant_tokens_mask.")
    if request.sanitize_control_tokens and not request.tokenize:
        raise ValueError(
            "`sanitize_control_tokens=True` requires `tokenize=True`: prompt text cannot tell a control "
            "token typed by the user from one written by the template."
        )
    if request.max_length is not None:
        length = token_id(request.max_length)  # an int, or an integer scalar; never a bool
        if length is None or length < 0:
            raise ConversationError(
                f"max_length: expected a non-negative integer or None, got {request.max_length!r}")
        request.max_length = length
    _check_tokenizer_kwargs(request.tokenizer_kwargs or {})


#: ``tokenizer_kwargs`` keys that repeat what apply_chat_template passes to the tokenizer itself.
_OWN_TOKENIZER_ARGUMENTS = ("padding", "truncation", "max_length", "return_tensors", "add_special_tokens",
                            "sanitize_control_tokens")

#: ``tokenizer_kwargs`` keys chatcodec honours (the tokenizer-call options that need no tokenizer object).
TOKENIZER_KWARGS = ("padding_side", "pad_to_multiple_of")


def _check_tokenizer_kwargs(kwargs: dict[str, Any]) -> None:
    """The reference passes ``tokenizer_kwargs`` to the tokenizer call beside its own arguments:
    repeating one is its TypeError; chatcodec honours :data:`TOKENIZER_KWARGS` and refuses the rest
    (the reference ignores unknown keys, such as ``truncation_side``, silently)."""
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
    return [conversation], False


def control_tokens_of(codec: ChatCodec) -> tuple[str, ...]:
    """Every token that must not come from user input (SPEC §2.3).

    The tokenizer's added tokens (special or not), the named and extra special tokens and the
    ``chat_control_tokens`` of ``tokenizer_config.json``.

    Args:
        codec: the model.

    Returns:
        The tokens, each once, in the order above.
    """
    tokens: dict[str, None] = {}
    if codec.tokenizer is not None:
        tokens.update(dict.fromkeys(token.content for token in codec.tokenizer.added_tokens_decoder.values()))
    tokens.update(dict.fromkeys(token.content for token in codec.config.added_tokens.values()))
    tokens.update(dict.fromkeys(codec.special_tokens_map.values()))
    tokens.update(dict.fromkeys(codec.config.extra_special_tokens))
    tokens.update(dict.fromkeys(codec.config.chat_control_tokens or ()))
    return tuple(tokens)


def _mark_inputs(chats: list[Any], request: ChatRequest, variables: dict[str, Any],
                 control_tokens: tuple[str, ...]) -> tuple[list[Any], dict[str, Any]]:
    """Mark control tokens in every string of the inputs (after turning them into plain data)."""
    from chatcodec.model.control_tokens import control_token_pattern, mark_control_tokens

    pattern = control_token_pattern(control_tokens)
    request.tools = mark_control_tokens(prepare_tools(request.tools), pattern)
    request.documents = mark_control_tokens(prepare_documents(request.documents), pattern)
    chats = [mark_control_tokens(plain_template_data(chat), pattern) for chat in chats]
    return chats, mark_control_tokens(variables, pattern)  # strings inside are marked, other values kept


def _render(chat_template: str, chats: list[list[dict[str, Any]]], request: ChatRequest,
            variables: dict[str, Any]) -> list[tuple[str, list[tuple[int, int]] | None]]:
    from chatcodec.chat_templates.render import render_chat_template, render_chat_template_with_spans

    rendered: list[tuple[str, list[tuple[int, int]] | None]] = []
    for chat in chats:
        if request.return_assistant_tokens_mask:
            result = render_chat_template_with_spans(
                chat_template, chat, tools=request.tools, documents=request.documents,
                add_generation_prompt=request.add_generation_prompt, **variables)
            rendered.append((result.text, list(result.generation_spans)))
        else:
            text = render_chat_template(
                chat_template, chat, tools=request.tools, documents=request.documents,
                add_generation_prompt=request.add_generation_prompt,
                continue_final_message=request.continue_final_message, **variables)
            rendered.append((text, None))
    return rendered


def apply_chat_template(codec: ChatCodec, chat_template: str, request: ChatRequest) -> Any:
    """Run one ``apply_chat_template`` call for ``codec`` with the selected template text.

    Args:
        codec: the model (special tokens, template variables, tokenizer, configuration).
        chat_template: the template text, already selected.
        request: the call's other arguments.

    Returns:
        What :meth:`chatcodec.ChatCodec.apply_chat_template` returns for these arguments.

    Raises:
        ValueError, ChatTemplateError, TokenizerUnavailableError, ControlTokenError: see
            :meth:`chatcodec.ChatCodec.apply_chat_template`.
    """
    _check_options(request)
    chats, batched = _conversations(request.conversation)
    variables = request.variables
    control_tokens: tuple[str, ...] | None = None
    if request.sanitize_control_tokens:
        codec._require_tokenizer()
        control_tokens = control_tokens_of(codec)
        chats, variables = _mark_inputs(chats, request, variables, control_tokens)
    rendered = _render(chat_template, chats, request,
                       {**codec.special_tokens_map, **codec.template_variables, **variables})
    if not request.tokenize:
        texts = [text for text, _ in rendered]
        return texts if batched else texts[0]
    tokenizer = codec._require_tokenizer()
    encoded = [encode_chat(tokenizer, text, spans, control_tokens) for text, spans in rendered]
    pad = codec.special_tokens_map.get("pad_token")
    pad_id = tokenizer.token_to_id(pad) if pad else None
    options = PaddingOptions(
        padding=request.padding, truncation=request.truncation, max_length=request.max_length,
        pad_token_id=pad_id if pad_id is not None else codec.config.pad_token_id,
        padding_side=(request.tokenizer_kwargs or {}).get("padding_side", codec.padding_side),
        truncation_side=codec.truncation_side,
        pad_to_multiple_of=token_id((request.tokenizer_kwargs or {}).get("pad_to_multiple_of")),
        model_max_length=codec.config.model_max_length,
    )
    output = batch_output(encoded, batched=batched, options=options, return_tensors=request.return_tensors)
    return output if request.return_dict else output["input_ids"]

