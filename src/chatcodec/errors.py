"""Every exception chatcodec raises, in one place.

The hierarchy::

    ChatCodecError
    ├── ResponseTemplateError (ValueError)   a response template is invalid; raised when it is loaded
    ├── ResponseParseError (ValueError)      model output that the template cannot parse
    │   ├── MissingFieldError                required (``optional: false``) fields never matched
    │   └── UnknownPlaceholderError (KeyError)  a transform names a variable that does not exist
    ├── ParserStateError (RuntimeError)      ``feed``/``finalize`` on a parser that already finished
    ├── ChatTemplateNotFoundError (ValueError, LookupError)
    │                                        no chat template, or no template of the requested name
    ├── ResponseTemplateNotFoundError (AttributeError, LookupError)
    │                                        a model-level parse with no response template to use
    ├── ModelStorageError (ValueError)       a model directory whose files contradict each other,
    │                                        or a template name that would escape its folder
    ├── TypeHintParsingException (ValueError)  ``get_json_schema``: a type hint with no JSON schema
    ├── DocstringParsingException (ValueError) ``get_json_schema``: a docstring without a description
    ├── UnknownProfileError (ValueError, LookupError)
    │                                        no bundled profile has the requested name or alias
    ├── TokenizerUnavailableError (ImportError)
    │                                        token ids were asked for and no tokenizer can give them
    ├── HubError (OSError)                   a Hub model that cannot be had: no ``chatcodec[hub]``,
    │                                        no such repository or revision, not cached while offline
    └── ControlTokenError (ValueError)       ``sanitize_control_tokens``: a control token in user input
                                             that the tokenizer cannot encode as plain text

``ChatTemplateError`` (a Jinja ``TemplateError`` raised while a chat template renders) lives in
:mod:`chatcodec.chat_templates.errors`, because it subclasses ``jinja2.TemplateError`` and this
module must stay importable without jinja2 (``chatcodec parse`` never pays for it). Its subclasses
are also the type the template raised (``ChatTemplateTypeError`` is a ``TypeError``, ...), and
``ChatTemplateLimitError`` reports a sandbox resource limit. ``ConversationError`` (``ValueError``,
``TypeError``: unusable messages, tools, documents or options) lives in
:mod:`chatcodec.chat_templates.inputs`.

Rules kept here:

* Each class also inherits the built-in the reference (transformers 5.24) raises in the same
  situation, so existing ``except ValueError`` / ``except RuntimeError`` clauses keep working.
* Messages read ``where: what. hint``; the *where* is also available as attributes
  (``.field``, ``.key``, ``.path`` at load time; ``.field``, ``.parser``, ``.offset``, ``.text``,
  ``.partial_message`` for model output), so callers never parse messages.
* Every class pickles (``__reduce__``), so errors cross process boundaries (dataset ``map``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ChatCodecError",
    "ChatTemplateNotFoundError",
    "ControlTokenError",
    "DocstringParsingException",
    "HubError",
    "MissingFieldError",
    "ModelStorageError",
    "ParserStateError",
    "ResponseParseError",
    "ResponseTemplateError",
    "ResponseTemplateNotFoundError",
    "TokenizerUnavailableError",
    "TypeHintParsingException",
    "UnknownPlaceholderError",
    "UnknownProfileError",
    "caret_excerpt",
]

#: Characters of context shown on each side of the offending offset in a caret excerpt.
EXCERPT_CONTEXT_CHARS = 40


def caret_excerpt(text: str, offset: int, context: int = EXCERPT_CONTEXT_CHARS) -> str:
    """Return two lines pointing at ``offset`` inside ``text``.

    Args:
        text: the text the error is about (a model output, a prefix, a region body).
        offset: a character index into ``text`` (clamped to ``[0, len(text)]``).
        context: how many characters to show on each side of ``offset``.

    Returns:
        The excerpt as ``repr``-escaped text on the first line (so newlines and control
        characters stay visible) and a ``^`` under the offending character on the second.
    """
    offset = max(0, min(offset, len(text)))
    start = max(0, offset - context)
    end = min(len(text), offset + context)
    before = repr(text[start:offset])[1:-1]
    after = repr(text[offset:end])[1:-1]
    lead = "..." if start > 0 else ""
    trail = "..." if end < len(text) else ""
    return f"    {lead}{before}{after}{trail}\n    {' ' * (len(lead) + len(before))}^"


class ChatCodecError(Exception):
    """Base class of every error chatcodec raises on purpose."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, self.__dict__))


def _rebuild(cls: type[ChatCodecError], args: tuple[Any, ...], state: dict[str, Any]) -> ChatCodecError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class ResponseTemplateError(ChatCodecError, ValueError):
    """A response template is invalid. Raised when the template is loaded, never mid-stream.

    Attributes:
        field: the name of the offending field, or ``None`` for a top-level problem.
        key: the offending key inside the field spec (``"open_pattern"``, ``"join"``, ...), or ``None``.
        path: a JSON-pointer-like location, e.g. ``"fields.tool_calls.content_args.tag_pattern"``.
    """

    def __init__(self, message: str, *, field: str | None = None, key: str | None = None,
                 path: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.key = key
        self.path = path


class ResponseParseError(ChatCodecError, ValueError):
    """Model output that the response template cannot turn into a value.

    Raised with ``errors="strict"`` (the default). Nothing is lost with the exception: it carries
    the message parsed so far and the raw text of the failing region.

    Attributes:
        field: the field whose region failed to parse.
        parser: the content parser that failed (``"json"``, ``"int"``, ...), or ``None``.
        offset: character offset in the generated text where the failure was found: the start of
            the failing region's body, or the exact spot when the content parser reports one (a
            JSON syntax error). Negative offsets point into the prefix; ``None`` when unknown. The
            message says it in words: ``at offset 15 of the output``, or ``at offset 34 of the
            prefix`` (counted in the whole prompt) when the spot is in the prompt.
        text: the raw text of the failing region's body.
        raw: the failing region as it was written, its open and close delimiters included.
        span: ``(start, end)`` of ``raw`` in the generated text (negative: in the prefix).
        partial_message: the message as parsed up to the failure (a new dict, safe to keep).
    """

    def __init__(self, message: str, *, field: str | None = None, parser: str | None = None,
                 offset: int | None = None, text: str | None = None, raw: str | None = None,
                 span: tuple[int, int] | None = None,
                 partial_message: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.parser = parser
        self.offset = offset
        self.text = text
        self.raw = raw
        self.span = span
        self.partial_message = partial_message if partial_message is not None else {}


class MissingFieldError(ResponseParseError):
    """Fields marked ``optional: false`` never matched in the output.

    Attributes:
        fields: the names of the missing fields, in template order.
    """

    def __init__(self, message: str, *, fields: list[str],
                 partial_message: dict[str, Any] | None = None) -> None:
        super().__init__(message, partial_message=partial_message)
        self.fields = fields


class UnknownPlaceholderError(ResponseParseError, KeyError):
    """A transform placeholder names a variable that is not defined when the region closes.

    A ``KeyError`` as well, because the reference raises ``KeyError`` here. Its ``str`` is the plain
    message (``KeyError`` would wrap it in quotes).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ParserStateError(ChatCodecError, RuntimeError):
    """``feed`` or ``finalize`` was called on a parser that already finished (or failed)."""


class ChatTemplateNotFoundError(ChatCodecError, ValueError, LookupError):
    """No chat template is available, or none has the requested name.

    Attributes:
        name: the requested template name, or ``None``.
        available: the names that do exist (empty when there is no template at all).
    """

    def __init__(self, message: str, *, name: str | None = None,
                 available: list[str] | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.available = available or []


class ResponseTemplateNotFoundError(ChatCodecError, AttributeError, LookupError):
    """``ChatCodec.parse_response`` / ``get_response_parser`` with no response template to use.

    The reference raises ``AttributeError`` ("This tokenizer does not have a
    `response_template`..."); the message names the ways to provide one.
    """


class ModelStorageError(ChatCodecError, ValueError):
    """A model directory whose files contradict each other, or a save that would be unsafe.

    Attributes:
        path: the file or directory concerned.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class TypeHintParsingException(ChatCodecError, ValueError):
    """``get_json_schema``: a type hint that has no JSON-schema equivalent (reference name)."""


class DocstringParsingException(ChatCodecError, ValueError):
    """``get_json_schema``: a missing docstring or argument description (reference name)."""


class UnknownProfileError(ChatCodecError, ValueError, LookupError):
    """No bundled profile has the requested name or alias (:func:`chatcodec.profiles.load`).

    Attributes:
        name: the requested name.
        available: the profile names that do exist.
    """

    def __init__(self, message: str, *, name: str, available: list[str]) -> None:
        super().__init__(message)
        self.name = name
        self.available = available


class TokenizerUnavailableError(ChatCodecError, ImportError):
    """Token ids were requested but no tokenizer is available.

    The message names the fix: install ``chatcodec[tokenizers]`` or add ``tokenizer.json``.
    """


class HubError(ChatCodecError, OSError):
    """A model id that names a Hugging Face Hub repository could not be loaded or pushed.

    ``huggingface_hub`` is missing (the message names ``pip install 'chatcodec[hub]'``), the
    repository or revision does not exist or needs a token, or it is not in the Hub cache while
    offline (``HF_HUB_OFFLINE=1`` / ``local_files_only=True``). transformers raises ``OSError`` in
    these cases.

    Attributes:
        repo_id: the repository (``"org/name"``).
    """

    def __init__(self, message: str, *, repo_id: str) -> None:
        super().__init__(message)
        self.repo_id = repo_id


class ControlTokenError(ChatCodecError, ValueError):
    """``sanitize_control_tokens``: a control token typed into user input that the tokenizer turns
    into that same control token even when it encodes it as plain text, so it cannot be sanitised
    (the reference raises ``ValueError`` in the same case)."""
