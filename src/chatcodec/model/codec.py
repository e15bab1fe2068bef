"""``ChatCodec``: one model's chat template, special tokens, response template and tokenizer.

What lives here: the model-level API with the reference's names, signatures and defaults
(transformers 5.24 ``PreTrainedTokenizerBase.apply_chat_template / parse_response /
get_response_parser / get_chat_template / encode / decode / save_pretrained``), as thin
delegation. Loading lives in :mod:`chatcodec.model.loading`, rendering in
:mod:`chatcodec.chat_templates`, tokenizing in :mod:`chatcodec.model.encoding`, parsing in
:mod:`chatcodec.response_templates` (through :mod:`chatcodec.model.responses` for token ids).

Rule kept: token ids are accepted wherever text is, and whatever needs a tokenizer raises
:class:`~chatcodec.errors.TokenizerUnavailableError` naming the fix when there is none.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatcodec.errors import ResponseTemplateNotFoundError
from chatcodec.model.config import TokenizerConfig, check_side
from chatcodec.model.responses import ModelResponseParser, ResponseDecoding
from chatcodec.model.sequences import to_python, token_id, token_id_sequences
from chatcodec.model.special_tokens import SpecialTokenAttributes
from chatcodec.model.tokenizer import NO_TOKENIZER_GIVEN, Tokenizer, TokenizerHandle, tokenizer_unavailable

if TYPE_CHECKING:
    from chatcodec.model.prompts import PromptModel
    from chatcodec.response_templates.template import ResponseTemplate

__all__ = ["ChatCodec"]

Conversation = Sequence[dict[str, Any]]
Tool = dict[str, Any] | Callable[..., Any]


class ChatCodec(SpecialTokenAttributes):
    """A model's chat template, special tokens, response template and (optional) tokenizer.

    Usually made by :meth:`from_pretrained`; the constructor builds one from values in memory.

    Args:
        chat_template: the template text, or ``{name: text}`` for named templates (anything else
            is a ``TypeError``, also when assigned later).
        response_template: a response template (dict), or ``None``.
        special_tokens: named special tokens (``{"eos_token": "<|im_end|>", ...}``).
        tokenizer: a :class:`~chatcodec.model.tokenizer.Tokenizer` for token ids, or ``None``.
        config: the configuration files read from a model directory (kept for saving).
        name_or_path: where it came from (a directory, or a profile name).

    Attributes:
        special_tokens_map: the named special tokens (``{"eos_token": "<|im_end|>", ...}``). As in
            the reference, ``codec.eos_token`` / ``codec.eos_token_id`` (and the other names of
            ``SPECIAL_TOKENS_ATTRIBUTES``) read and write it; ``None`` removes a token.
        response_template_source: where :attr:`response_template` came from:
            ``"tokenizer_config.json"``, ``"profile:<name>"`` (a bundled profile, loaded by name
            or detected from the chat template), ``"argument"`` (the constructor's),
            ``"assigned"`` (set on the attribute later), ``"derived"`` (derived from the chat
            template by ``from_pretrained`` for a directory with neither a response template nor a
            matching profile), or ``None`` when there is none.
        response_template_capabilities: for a derived response template, each capability's label
            (``{"content": {"status": "verified", "reason": "", "applicable": True}, ...}``, see
            ``chatcodec.analysis.derive``); a parse whose message uses one that is not verified
            warns once (``UnverifiedCapabilityWarning``). ``None`` otherwise.
        profile: the bundled profile loaded or detected, or ``None``.
        hub_snapshot: for a model loaded from the Hugging Face Hub, the snapshot folder in the Hub
            cache its files were read from (``name_or_path`` is then the Hub id), else ``None``.
    """

    def __init__(self, chat_template: str | dict[str, str] | None = None,
                 response_template: dict[str, Any] | None = None, *,
                 special_tokens: dict[str, str] | None = None, tokenizer: Tokenizer | None = None,
                 config: TokenizerConfig | None = None, name_or_path: str = "") -> None:
        self.chat_template = chat_template
        self.response_template_source: str | None = None
        self.response_template = response_template
        if response_template is not None:
            self.response_template_source = "argument"
        self.profile: str | None = None
        self.config = config if config is not None else TokenizerConfig()
        self.special_tokens_map: dict[str, str] = dict(
            special_tokens if special_tokens is not None else self.config.special_tokens)
        self.tokenizer = tokenizer
        self.name_or_path = name_or_path
        self.hub_snapshot: Path | None = None
        self.padding_side = self.config.padding_side
        self.truncation_side = self.config.truncation_side
        #: Template variables every render gets (a bundled profile's ``template_kwargs``); special
        #: tokens come first, then these, then the call's ``**kwargs``.
        self.template_variables: dict[str, Any] = {}
        #: The message of the TokenizerUnavailableError raised when ids are needed and there is none.
        self._tokenizer_missing: str | None = None if tokenizer is not None else NO_TOKENIZER_GIVEN
        self._compiled: tuple[str, ResponseTemplate] | None = None  # see _response_template
        #: Why no response template was derived from the chat template (see model/derived.py).
        self._derivation_failure: str | None = None
        #: The unverified capabilities of a derived response template already warned about.
        self._warned_unverified: set[str] = set()

    @classmethod
    def from_pretrained(cls, path_or_profile: str | os.PathLike[str], *, revision: str | None = None,
                        token: str | bool | None = None, cache_dir: str | os.PathLike[str] | None = None,
                        local_files_only: bool = False, load_tokenizer: bool | None = None) -> ChatCodec:
        """Load a model directory, a bundled profile by name, or a model from the Hugging Face Hub.

        A directory is read in every storage format (``chat_template.jinja``,
        ``additional_chat_templates/``, ``tokenizer_config.json``, ``chat_template.json``, and
        ``processor_config.json``'s ``chat_template`` when no other file holds one), with
        its special tokens, its ``response_template`` and, when the ``tokenizers`` package is
        installed, its ``tokenizer.json``. When the directory has no response template and its
        chat template matches a bundled profile, that profile's response template is attached
        (:attr:`response_template_source` says ``"profile:<name>"``). A name that is not an
        existing directory is looked up among the bundled profiles (``chatcodec.profiles``); only a
        directory shadows a profile name, a plain file of that name does not. A name written
        ``org/name`` that is neither is a Hub model id (as in transformers; needs
        ``pip install 'chatcodec[hub]'``): only the files chatcodec reads are fetched, through
        ``huggingface_hub``'s cache, so a model already cached loads offline (``HF_HUB_OFFLINE=1``).

        Args:
            path_or_profile: a model directory, the name or alias of a bundled profile, or a Hub id.
            revision: for a Hub id, a branch, tag or commit hash (default: the default branch).
            token: for a Hub id, a Hub token (``None``: ``huggingface_hub``'s own, ``HF_TOKEN`` or
                the login).
            cache_dir: for a Hub id, the Hub cache folder (default: ``huggingface_hub``'s).
            local_files_only: for a Hub id, use the Hub cache only, never the network.
            load_tokenizer: read ``tokenizer.json`` for token ids (``None``: when the
                ``tokenizers`` package is installed; a Hub model fetches it only then).

        Returns:
            The codec (for a Hub model, :attr:`name_or_path` is the id and :attr:`hub_snapshot`
            the cache folder it was read from).

        Raises:
            ModelStorageError: a file is malformed or the files contradict each other.
            ResponseTemplateError: the stored response template is invalid.
            UnknownProfileError: an empty name, or neither a directory, a bundled profile nor a Hub
                id (the message suggests a close profile name).
            HubError: a Hub id without ``huggingface_hub`` installed, an unknown repository or
                revision, a gated or private one without a token, or one not cached while offline.
            TypeError: ``path_or_profile`` is not a string or a path.
        """
        from chatcodec.model.loading import load_model

        if not isinstance(path_or_profile, (str, os.PathLike)):
            raise TypeError("from_pretrained: expected a model directory, a profile name or a Hub id "
                            f"(a string or a path), got {type(path_or_profile).__name__}")
        loaded = load_model(path_or_profile, revision=revision, token=token, cache_dir=cache_dir,
                            local_files_only=local_files_only, load_tokenizer=load_tokenizer)
        codec = cls(loaded.chat_template, special_tokens=loaded.special_tokens, tokenizer=loaded.tokenizer,
                    config=loaded.config, name_or_path=loaded.name_or_path)
        if loaded.tokenizer is None and loaded.tokenizer_missing is not None:
            codec._tokenizer_missing = loaded.tokenizer_missing
        if loaded.response_template is not None:
            codec.response_template = loaded.response_template
            codec.response_template_source = loaded.response_template_source
        codec.profile = loaded.profile
        codec.template_variables = dict(loaded.template_variables)
        codec.hub_snapshot = loaded.hub_snapshot
        codec.response_template_capabilities = loaded.response_template_capabilities
        codec._derivation_failure = loaded.derivation_failure
        return codec

    @property
    def chat_template(self) -> str | dict[str, str] | None:
        """The chat template text, ``{name: text}`` for named templates, or ``None``."""
        return self._chat_template

    @chat_template.setter
    def chat_template(self, value: str | dict[str, str] | None) -> None:
        if not (value is None or isinstance(value, str) or (isinstance(value, dict) and all(
                isinstance(name, str) and isinstance(text, str) for name, text in value.items()))):
            raise TypeError("chat_template: expected the template text, a dict of named templates "
                            f"{{name: text}} or None, got {value!r}")
        self._chat_template = value

    @property
    def padding_side(self) -> str:
        """Where ``apply_chat_template(..., padding=...)`` pads: ``"right"`` (the default) or
        ``"left"``; read from ``tokenizer_config.json``, settable, saved by :meth:`save_pretrained`,
        as on a transformers tokenizer.

        Raises:
            ValueError: (on assignment) a value other than ``"right"`` or ``"left"``.
        """
        return self._padding_side

    @padding_side.setter
    def padding_side(self, value: str) -> None:
        self._padding_side = check_side("padding_side", value)

    @property
    def truncation_side(self) -> str:
        """Which end ``apply_chat_template(..., truncation=True)`` cuts: ``"right"`` (the default)
        or ``"left"`` (keep the end of the prompt); as :attr:`padding_side`.

        Raises:
            ValueError: (on assignment) a value other than ``"right"`` or ``"left"``.
        """
        return self._truncation_side

    @truncation_side.setter
    def truncation_side(self, value: str) -> None:
        self._truncation_side = check_side("truncation_side", value)

    @property
    def response_template(self) -> dict[str, Any] | None:
        """The response template ``parse_response`` and ``get_response_parser`` use by default."""
        return self._response_template_value

    @response_template.setter
    def response_template(self, value: dict[str, Any] | None) -> None:
        self._response_template_value = value
        self.response_template_source = None if value is None else "assigned"
        self.response_template_capabilities: dict[str, dict[str, Any]] | None = None

    # -- special tokens: codec.eos_token, codec.pad_token_id = ..., eos_token_ids (model.special_tokens)

    def _tokenizer_handle(self) -> TokenizerHandle:
        """The tokenizer, or why there is none, as the model's helpers take it."""
        return TokenizerHandle(self.tokenizer, self._tokenizer_missing or str(tokenizer_unavailable(
            "the tokenizer was removed", "Set codec.tokenizer")))

    def _require_tokenizer(self) -> Tokenizer:
        return self._tokenizer_handle().require()

    def _pad_ids(self) -> frozenset[int]:
        """The pad ids: ``generation_config.json``'s ``pad_token_id`` and the ``pad_token``'s id."""
        ids = {self.config.pad_token_id, self._token_id(self.special_tokens_map.get("pad_token"))}
        return frozenset(index for index in ids if index is not None)

    def _prompt_model(self, sanitize_control_tokens: bool, tokenize: bool = True) -> PromptModel:
        """What ``apply_chat_template`` needs of the model, from its current state (the pad id only
        when ids are asked for, so a prompt rendered as text never loads a lazy tokenizer)."""
        from chatcodec.model.prompts import PromptModel, control_tokens_of

        pad = self.special_tokens_map.get("pad_token")
        pad_id = self._token_id(pad) if tokenize else None
        return PromptModel(
            tokenizer=self._tokenizer_handle(),
            variables={**self.special_tokens_map, **self.template_variables},
            control_tokens=control_tokens_of(self.tokenizer, self.config, self.special_tokens_map)
            if sanitize_control_tokens else None,
            pad_token_id=pad_id if pad_id is not None else self.config.pad_token_id,
            padding_side=self.padding_side, truncation_side=self.truncation_side,
            model_max_length=self.config.model_max_length,
        )

    def _response_decoding(self, ids: bool = True) -> ResponseDecoding:
        """What parsing the model's output needs of the model, from its current state.

        ``ids=False``: the output and the prompt are text, so the end-of-sequence and pad ids are
        not looked up (a lazy tokenizer is then loaded only to decode ``generation_config.json``'s
        end-of-sequence ids into their texts)."""
        texts = [self.special_tokens_map.get("eos_token") or ""]
        if self.tokenizer is not None:
            texts += [self.tokenizer.decode([index]) for index in self.config.eos_token_ids]
        if not ids:
            return ResponseDecoding(tokenizer=self._tokenizer_handle(), eos_texts=tuple(texts))
        return ResponseDecoding(tokenizer=self._tokenizer_handle(),
                                eos_token_ids=frozenset(self.eos_token_ids), eos_texts=tuple(texts),
                                pad_ids=self._pad_ids())

    # -- encoding --------------------------------------------------------------------------------

    def get_chat_template(self, chat_template: str | None = None, tools: list[Tool] | None = None) -> str:
        """The chat template text to use (the reference's selection rules).

        With named templates, a ``chat_template`` naming one wins; without, ``tool_use`` when
        tools are passed and it exists, else ``default``. A ``chat_template`` with Jinja
        delimiters is template text. Unlike the reference, a string that is neither is an
        unknown name, not template text (``chat_templates.selection.resolve_chat_template``).

        Args:
            chat_template: a template text, or the name of one of the model's named templates.
            tools: when non-empty and the model has a ``tool_use`` template, that one is chosen.

        Returns:
            The template text.

        Raises:
            ChatTemplateNotFoundError: no template at all, no template of that name, or several
                and none applies (the message lists the names).
            ConversationError: ``chat_template`` is not a string.
        """
        from chatcodec.chat_templates.inputs import ConversationError
        from chatcodec.chat_templates.selection import resolve_chat_template

        if chat_template is not None and not isinstance(chat_template, str):
            raise ConversationError("chat_template: expected template text or the name of one of the model's "
                                    f"templates, got {type(chat_template).__name__}")
        return resolve_chat_template(self.chat_template, chat_template, tools)

    def apply_chat_template(
        self,
        conversation: Conversation | Sequence[Conversation],
        tools: list[Tool] | None = None,
        documents: list[dict[str, Any]] | None = None,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        tokenize: bool = True,
        sanitize_control_tokens: bool = False,
        padding: bool | str = False,
        truncation: bool = False,
        max_length: int | None = None,
        return_tensors: str | None = None,
        return_dict: bool = True,
        return_assistant_tokens_mask: bool = False,
        tokenizer_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Render a conversation (or a batch) with the chat template, and tokenize it by default.

        Same signature and defaults as transformers 5.24: ``tokenize=True`` and
        ``return_dict=True``, so the default result is ``{"input_ids": [...], "attention_mask":
        [...]}`` and needs a tokenizer; pass ``tokenize=False`` for the prompt text. The special
        tokens of the model are template variables; ``**kwargs`` are more variables (and
        override special tokens of the same name).

        Differences from the reference (docs/compatibility.md): assistant masks mark every token
        with a character inside a ``{% generation %}`` span, and work together with
        ``sanitize_control_tokens``; sanitising treats every special and added token as a
        control token; ``tokenizer_kwargs`` takes ``padding_side`` and ``pad_to_multiple_of`` only.
        Padding and truncation follow :attr:`padding_side` and :attr:`truncation_side`.

        Messages and tools are taken as an OpenAI client or the ``openai`` SDK sends them
        (:mod:`chatcodec.chat_templates.openai_inputs`; transformers 5.24 does part of this):
        SDK objects become dicts, ``image_url`` / ``input_audio`` / ``video_url`` parts become the
        parts multimodal templates read and text-only part lists become text, tool-call arguments
        sent as JSON strings reach the template as it reads them, ``tools=[]`` is no tools (also
        for choosing the ``tool_use`` template), an empty ``tool_calls`` is no calls, and a tool
        message gets the name of the call it answers. :meth:`apply_chat_request` takes a whole
        request.

        Args:
            conversation: a list of messages, or a list of such lists (a batch; objects with a
                ``messages`` attribute are accepted in a batch too).
            tools: JSON schemas or Python functions.
            documents: retrieval documents.
            chat_template: a template text, or the name of one of the model's templates.
            add_generation_prompt: append the header that starts an assistant turn.
            continue_final_message: leave the final message open (``True``, or the field to
                continue such as ``"reasoning_content"``); incompatible with
                ``add_generation_prompt`` and ``return_assistant_tokens_mask``.
            tokenize: return token ids instead of text.
            sanitize_control_tokens: control tokens typed into the inputs become plain text ids.
            padding: ``True``/``"longest"``, ``"max_length"`` or ``False``.
            truncation: truncate to ``max_length`` (or the model's ``model_max_length``).
            max_length: the length for padding / truncation.
            return_tensors: ``None`` (lists), ``"np"`` or ``"pt"`` (numpy / torch, if installed).
            return_dict: return the dict of outputs (only with ``tokenize``); else the ids.
            return_assistant_tokens_mask: add ``assistant_masks`` (needs ``return_dict``).
            tokenizer_kwargs: ``{"padding_side": ..., "pad_to_multiple_of": ...}`` for this call.
            **kwargs: template variables.

        Returns:
            The prompt text (or a list of them), the ids (or a list of lists), or the dict.

        Raises:
            ValueError: incompatible options, an empty conversation, a ``tokenizer_kwargs`` key
                chatcodec does not support.
            ConversationError: a message the template cannot take (a media part for a text-only
                template, tool-call arguments that are not a JSON object), named by its position.
            TypeError: a ``tokenizer_kwargs`` key that repeats an argument (as in the reference).
            ChatTemplateNotFoundError: no chat template to use.
            ChatTemplateError: the template failed (subclasses mirror the original error type).
            TokenizerUnavailableError: token ids were asked for and there is no tokenizer.
            ControlTokenError: a control token in the inputs cannot be encoded as text.
        """
        from chatcodec.chat_templates.openai_inputs import TemplateReads, template_tools
        from chatcodec.model.prompts import ChatRequest, apply_chat_template

        template = self.get_chat_template(chat_template, template_tools(tools))
        request = ChatRequest.build(
            conversation, TemplateReads.of(template), tools=tools, documents=documents,
            add_generation_prompt=add_generation_prompt, continue_final_message=continue_final_message,
            tokenize=tokenize, sanitize_control_tokens=sanitize_control_tokens, padding=padding,
            truncation=truncation, max_length=max_length, return_tensors=return_tensors,
            return_dict=return_dict, return_assistant_tokens_mask=return_assistant_tokens_mask,
            tokenizer_kwargs=tokenizer_kwargs, variables=kwargs,
        )
        return apply_chat_template(template, request, self._prompt_model(sanitize_control_tokens, tokenize))

    def apply_chat_request(
        self,
        request: Any,
        *,
        chat_template: str | None = None,
        tokenize: bool = True,
        return_dict: bool = True,
        sanitize_control_tokens: bool = False,
        return_tensors: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Turn an OpenAI Chat Completions request into this model's prompt (text or ids).

        The request is read by :func:`chatcodec.chat_templates.requests.read_chat_request`:
        ``messages`` and ``tools`` as a client or the ``openai`` SDK sends them, ``reasoning_effort``
        and ``chat_template_kwargs`` as template variables the way the model's template reads them
        (``enable_thinking`` for Qwen3, ...), ``tool_choice`` / ``parallel_tool_calls`` /
        ``response_format`` checked and passed on, and the generation prompt added unless the
        request sets ``continue_final_message``. With named templates, ``tool_use`` is chosen when
        the request has tools (``tools: []`` is none). Sampling fields (``model``, ``temperature``,
        ...) are not the prompt's business and are ignored.

        Args:
            request: the request dict (or a pydantic / dataclass request object).
            chat_template: a template text or name, as for :meth:`apply_chat_template`.
            tokenize, return_dict, sanitize_control_tokens, return_tensors: as for
                :meth:`apply_chat_template` (the default result is ``{"input_ids", "attention_mask"}``;
                ``tokenize=False`` gives the prompt text).
            **kwargs: template variables of the server (the request's own win over them).

        Returns:
            What :meth:`apply_chat_template` returns for the request's conversation.

        Raises:
            ConversationError: the request is unusable (no messages, a refused or malformed field, a
                part the template cannot show, tool-call arguments that are not a JSON object).
            ChatTemplateNotFoundError, ChatTemplateError, TokenizerUnavailableError: as for
                :meth:`apply_chat_template`.
        """
        from chatcodec.chat_templates.openai_inputs import TemplateReads
        from chatcodec.chat_templates.requests import read_chat_request, request_tools
        from chatcodec.model.prompts import ChatRequest, apply_chat_template

        template = self.get_chat_template(chat_template, request_tools(request))
        inputs = read_chat_request(request, template)
        prompt = ChatRequest.build(
            inputs.messages, TemplateReads.of(template), tools=inputs.tools, documents=inputs.documents,
            add_generation_prompt=inputs.add_generation_prompt,
            continue_final_message=inputs.continue_final_message, tokenize=tokenize,
            sanitize_control_tokens=sanitize_control_tokens, return_tensors=return_tensors,
            return_dict=return_dict, variables={**kwargs, **inputs.variables})
        return apply_chat_template(template, prompt, self._prompt_model(sanitize_control_tokens, tokenize))

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text``; special and added tokens written in it become their ids.

        ``add_special_tokens`` is keyword-only: the reference's second positional parameter is
        ``text_pair``, which chat models do not use and chatcodec does not support.

        Args:
            text: the text.
            add_special_tokens: let the tokenizer's post-processor add its tokens (a BOS, ...).

        Returns:
            The token ids.

        Raises:
            TokenizerUnavailableError: the model has no tokenizer.
        """
        return self._require_tokenizer().encode(text, add_special_tokens=add_special_tokens)

    def decode(self, token_ids: Any, skip_special_tokens: bool = False) -> str | list[str]:
        """Text of one sequence of ids (a string), or of a batch (a list of strings).

        Special tokens are kept by default, as in the reference. As in the reference, one id is a
        sequence of one (``decode(78)``) and ``decode([])`` is ``""``. Arrays and tensors are
        accepted through ``tolist()``. Unlike the reference, an id outside the vocabulary is an
        error (``tokenizers`` overflows on negative ids and drops too large ones silently).

        Args:
            token_ids: one id, one sequence of ids, or a batch of sequences.
            skip_special_tokens: leave special tokens out of the text.

        Returns:
            The text, or one text per sequence for a batch.

        Raises:
            TokenizerUnavailableError: the model has no tokenizer.
            TypeError: ``token_ids`` is not token ids (text, floats, ...); the message names the item.
            ValueError: an id outside the vocabulary; the message names its position and the
                vocabulary's size.
        """
        tokenizer = self._require_tokenizer()
        sequences, batched = token_id_sequences(token_ids, "token_ids")
        if not batched:
            tokenizer.check_ids(sequences[0], "token_ids", single=token_id(to_python(token_ids)) is not None)
            return tokenizer.decode(sequences[0], skip_special_tokens=skip_special_tokens)
        return [tokenizer.decode(ids, skip_special_tokens=skip_special_tokens, what=f"token_ids[{index}]")
                for index, ids in enumerate(sequences)]

    # -- decoding --------------------------------------------------------------------------------

    def _response_template(self, schema: dict[str, Any] | None, where: str) -> ResponseTemplate:
        """The response template to parse with, compiled once for as long as its content stays the same.

        Compiling costs milliseconds (more than parsing a short answer), so the compiled template of
        the last dict is kept, keyed by the dict's ``repr``: a template changed in place is compiled
        again, an unchanged one never is.
        """
        from chatcodec.response_templates.template import load_response_template

        template = schema if schema is not None else self.response_template
        if template is None:
            derived = f"; {self._derivation_failure}" if self._derivation_failure else ""
            raise ResponseTemplateNotFoundError(
                f"{where}: this model has no response template (none in tokenizer_config.json, and no "
                f"bundled profile matched its chat template{derived}). Pass one (schema= / "
                "response_template=), set codec.response_template, or load a bundled profile: "
                "ChatCodec.from_pretrained('qwen3')."
            )
        key = repr(template)
        if self._compiled is None or self._compiled[0] != key:
            self._compiled = (key, load_response_template(template))
        return self._compiled[1]

    def parse_response(self, response: Any, schema: dict[str, Any] | None = None, *,
                       prefix: Any = None, tools: list[Tool] | None = None,
                       errors: str = "strict") -> dict[str, Any] | list[dict[str, Any]]:
        """Parse generated output into an assistant message (or a list of them, for a batch).

        Follows transformers 5.24: ``response`` is text, token ids, a batch of either (a list of
        strings, a list of id lists) or a 2-D array; ``prefix`` (the prompt, required: ``""``
        opts out) is one sequence broadcast to every response, or one per response. Token ids
        are decoded with special tokens kept; generation ends at the first end-of-sequence
        token (id or text), which is never part of the message. Beyond the reference, a batch may
        mix text and ids, and ``prefix`` may be the ``apply_chat_template`` output itself (its
        ``attention_mask`` says what is padding); prompt ids given without a mask lose the pad
        ids at both ends (the reference parses them as prompt text).

        Args:
            response: the model output.
            schema: a response template to use instead of the model's.
            prefix: the prompt that preceded generation (text or ids, per item for a batch, or the
                ``apply_chat_template`` dict).
            tools: JSON schemas or Python functions; tool-call arguments are typed with them.
            errors: ``"strict"`` (raise on unparsable output) or ``"keep"`` (see
                :func:`chatcodec.parse_response`).

        Returns:
            A message dict, or a list of them for a batch.

        Raises:
            ResponseTemplateNotFoundError: no response template.
            ValueError: ``prefix`` is missing, or a per-item prefix list has the wrong length.
            TokenizerUnavailableError: ids were given and the model has no tokenizer.
            ResponseTemplateError, ResponseParseError: as :func:`chatcodec.parse_response`.
        """
        from chatcodec.model.derived import warn_unverified
        from chatcodec.model.responses import parse_sequences

        template = self._response_template(schema, "parse_response")
        text_only = isinstance(response, str) and isinstance(prefix, str)
        decoding = self._response_decoding(ids=not text_only)
        parsed = parse_sequences(response, template, decoding, prefix=prefix, tools=tools, errors=errors)
        if schema is None and self.response_template_source == "derived":
            warn_unverified(str(self.name_or_path), self.response_template_capabilities,
                            self._warned_unverified, parsed if isinstance(parsed, list) else [parsed])
        return parsed

    def get_response_parser(self, response_template: dict[str, Any] | None = None, *,
                            prefix: Any = None, tools: list[Tool] | None = None,
                            errors: str = "strict", value_deltas: bool = False) -> ModelResponseParser:
        """A streaming parser for one generation, fed text or token ids at every step.

        ``prefix`` (text or one sequence of ids) is required, as in the reference: ``""`` opts
        out. Feed each step with ``parser.feed(text_or_ids)``; an end-of-sequence token ends
        the generation; ``parser.finalize()`` returns ``(message, events)``.

        Args:
            response_template: a response template to use instead of the model's.
            prefix: the prompt that preceded generation (text, one sequence of ids, or the
                ``apply_chat_template`` dict of one prompt).
            tools: JSON schemas or Python functions; tool-call arguments are typed with them.
            errors: ``"strict"`` or ``"keep"`` (see :func:`chatcodec.parse_response`).
            value_deltas: also emit ``region_value`` events (see :class:`~chatcodec.ResponseParser`).

        Returns:
            A parser for one generation.

        Raises:
            ResponseTemplateNotFoundError: no response template.
            ValueError: ``prefix`` is missing or is a batch.
            ResponseTemplateError: the response template is invalid.
        """
        from chatcodec.model.prefixes import parser_prompt_text
        from chatcodec.response_templates.engine import ResponseParser

        template = self._response_template(response_template, "get_response_parser")
        decoding = self._response_decoding()
        prompt = parser_prompt_text(prefix, decoding.tokenizer, decoding.pad_ids)
        parser = ResponseParser(template, prefix=prompt, tools=tools, errors=errors,
                                value_deltas=value_deltas)
        tokenizer = decoding.tokenizer.tokenizer
        # the decoder is made on the first id (a bound method: the parser keeps nothing else alive;
        # without a tokenizer, require() raises the TokenizerUnavailableError that names the cause)
        new_decoder = decoding.tokenizer.require if tokenizer is None else tokenizer.incremental_decoder
        model_parser = ModelResponseParser(parser, decoding.end_of_sequence(), new_decoder)  # type: ignore[arg-type]
        labels = self.response_template_capabilities
        if response_template is None and self.response_template_source == "derived" and labels:
            from chatcodec.model.derived import watch_parser

            watch_parser(model_parser, str(self.name_or_path), labels, self._warned_unverified)
        return model_parser

    # -- saving ----------------------------------------------------------------------------------

    def save_pretrained(self, save_directory: str | os.PathLike[str]) -> tuple[str, ...]:
        """Write the codec's current state as a model directory, in the modern format.

        As the reference writes a tokenizer's current configuration: chat templates go to
        ``chat_template.jinja`` / ``additional_chat_templates/`` (the ``chat_template`` key leaves
        ``tokenizer_config.json``); ``tokenizer_config.json`` is the configuration the codec was
        loaded with, with its current special tokens (edits included) and ``response_template``.
        A codec with no configuration of its own (a bundled profile, the constructor) adds its
        special tokens and templates to the target's existing ``tokenizer_config.json`` instead.
        A tokenizer, when there is one, is written as ``tokenizer.json``; other files of the
        target are left alone (``chatcodec.model.saving`` has the details).

        Args:
            save_directory: the target directory (created when missing).

        Returns:
            The paths written, each once.

        Raises:
            ModelStorageError: a template name would escape its folder, or a configuration file
                of the target cannot be read; nothing is written (or created) then.

        Warns:
            UserWarning: the response template written uses chatcodec extensions (``x-`` parsers,
                ``flatten``, ...): transformers cannot read it as chatcodec does.
        """
        from chatcodec.model.saving import CodecState, save_codec

        state = CodecState(
            chat_template=self.chat_template, special_tokens_map=dict(self.special_tokens_map),
            config=self.config, padding_side=self.padding_side, truncation_side=self.truncation_side,
            response_template=self.response_template, tokenizer=self.tokenizer,
            name_or_path=self.name_or_path, source_directory=self.hub_snapshot)
        return save_codec(state, Path(save_directory))

    def push_to_hub(self, repo_id: str, *, commit_message: str | None = None,
                    commit_description: str | None = None, private: bool | None = None,
                    token: str | bool | None = None, revision: str | None = None,
                    create_pr: bool = False) -> Any:
        """Upload what :meth:`save_pretrained` writes to a Hub repository, in one commit.

        As transformers' ``push_to_hub``: the repository is created when missing (``exist_ok``).
        Pushing back to the repository the codec was loaded from commits only the files whose
        bytes change, and deletes those :meth:`save_pretrained` would delete there (a legacy
        ``chat_template.json``, a named template no longer present); see
        :func:`chatcodec.model.hub.push_codec`. Needs ``pip install 'chatcodec[hub]'``.

        Args:
            repo_id: ``"org/name"``.
            commit_message: the commit title (default ``"Upload chat templates with chatcodec"``).
            commit_description: the commit or pull-request description.
            private: for a new repository, whether it is private.
            token: a Hub token (``None``: ``huggingface_hub``'s own).
            revision: the branch to commit to.
            create_pr: open a pull request instead of committing to the branch.

        Returns:
            ``huggingface_hub``'s ``CommitInfo``.

        Raises:
            HubError: ``huggingface_hub`` is missing, or the Hub refused the commit or could not be
                reached.
            ModelStorageError: as :meth:`save_pretrained`; nothing is sent then.
        """
        from chatcodec.model.hub import push_codec

        base = self.hub_snapshot if self.name_or_path == repo_id else None
        return push_codec(self.save_pretrained, repo_id, base=base, commit_message=commit_message,
                          commit_description=commit_description, private=private, token=token,
                          revision=revision, create_pr=create_pr)

    def __repr__(self) -> str:
        names = sorted(self.chat_template) if isinstance(self.chat_template, dict) else None
        return (f"ChatCodec(name_or_path={self.name_or_path!r}, "
                f"chat_templates={names or bool(self.chat_template)}, "
                f"response_template_source={self.response_template_source!r}, "
                f"tokenizer={self.tokenizer is not None})")
