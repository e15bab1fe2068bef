"""Errors raised while a chat template compiles or renders.

Everything a template raises surfaces as a :class:`ChatTemplateError`, which is at the same time:

* a :class:`chatcodec.errors.ChatCodecError` (catch everything chatcodec raises);
* a ``jinja2.TemplateError`` (code written for the reference catches that around
  ``apply_chat_template``);
* an instance of the type the template really raised, when that is one of the common ones
  (``TypeError``, ``ValueError``, ``KeyError``, ``IndexError``, ``AttributeError``,
  ``ZeroDivisionError``, ``OverflowError``, and Jinja's ``UndefinedError``, ``SecurityError``,
  ``TemplateSyntaxError``, ``TemplateRuntimeError``), so ``except TypeError`` keeps working.

``str(error)`` is the original message, verbatim (``raise_exception`` messages come through
unchanged), then the template line and its source, the way Jinja prints syntax errors. The
original exception stays reachable as ``__cause__``.

This module imports jinja2; :mod:`chatcodec.errors` stays free of it.
"""

from __future__ import annotations

import jinja2

from chatcodec.errors import ChatCodecError

__all__ = [
    "RAISED_BY_TEMPLATE",
    "ChatTemplateAttributeError",
    "ChatTemplateError",
    "ChatTemplateIndexError",
    "ChatTemplateKeyError",
    "ChatTemplateLimitError",
    "ChatTemplateOverflowError",
    "ChatTemplateRuntimeError",
    "ChatTemplateSecurityError",
    "ChatTemplateSyntaxError",
    "ChatTemplateTypeError",
    "ChatTemplateUndefinedError",
    "ChatTemplateValueError",
    "ChatTemplateZeroDivisionError",
    "error_from_exception",
]

#: ``original_type`` of errors the template raised on purpose with ``raise_exception(msg)``.
RAISED_BY_TEMPLATE = "TemplateError"

#: Longest source line shown in an error message; longer lines are cut with an ellipsis.
MAX_SOURCE_LINE_CHARS = 160


class ChatTemplateError(ChatCodecError, jinja2.TemplateError):
    """A chat template failed to compile or render.

    Attributes:
        message: the original message, verbatim (for ``raise_exception(msg)``, exactly ``msg``).
        lineno: the template line where it happened (1-based), or ``None`` when unknown.
        source_line: the text of that line, or ``None``.
        original_type: the name of the exception type the template raised (``"TypeError"``,
            ``"UndefinedError"``, ...; ``"TemplateError"`` for ``raise_exception``).
        name: which template it was (a file, or a model directory and template name), when the
            caller knows and sets it (``chatcodec render`` does); ``None`` otherwise. Jinja's
            ``TemplateSyntaxError.name`` means the same.
        note: what in the caller's input most likely caused it (e.g. a message key set to ``None``,
            which is left out before rendering), printed after the template line; ``None`` when
            nothing is known.
    """

    def __init__(self, message: str, *, lineno: int | None = None, source_line: str | None = None,
                 original_type: str | None = None) -> None:
        Exception.__init__(self, message)
        self.lineno = lineno
        self.source_line = source_line
        self.original_type = original_type or type(self).__name__
        self.name: str | None = None
        self.note: str | None = None

    @property
    def message(self) -> str:
        """The original message, verbatim (``str(error)`` adds the template line)."""
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        lines = [self.message]
        template = "the chat template" if self.name is None else f"the chat template {self.name!r}"
        if self.lineno is None and self.name is not None:
            lines.append(f"  in {template}")
        if self.lineno is not None:
            where = f"  line {self.lineno} of {template}"
            if self.original_type not in (RAISED_BY_TEMPLATE, type(self).__name__):
                where += f" ({self.original_type})"
            lines.append(where + (":" if self.source_line else ""))
            if self.source_line:
                text = self.source_line.strip()
                if len(text) > MAX_SOURCE_LINE_CHARS:
                    text = text[: MAX_SOURCE_LINE_CHARS - 3] + "..."
                lines.append("    " + text)
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


class ChatTemplateLimitError(ChatTemplateError):
    """A sandbox resource limit was hit while rendering (see :mod:`chatcodec.chat_templates.limits`).

    Attributes:
        limit: the name of the limit constant (``"MAX_STRING_LENGTH"``, ...).
        value: its value when the error was raised.
    """

    def __init__(self, message: str, *, limit: str, value: float, lineno: int | None = None,
                 source_line: str | None = None) -> None:
        super().__init__(message, lineno=lineno, source_line=source_line,
                         original_type="ChatTemplateLimitError")
        self.limit = limit
        self.value = value


class ChatTemplateSyntaxError(ChatTemplateError, jinja2.TemplateSyntaxError):  # type: ignore[misc]
    """The chat template is not valid Jinja (raised when it is compiled)."""

    def __init__(self, message: str, *, lineno: int | None = None, source_line: str | None = None,
                 original_type: str | None = None) -> None:
        super().__init__(message, lineno=lineno, source_line=source_line, original_type=original_type)
        # the other attributes jinja2.TemplateSyntaxError users read
        self.filename: str | None = None
        self.source: str | None = None
        self.translated = True


class ChatTemplateRuntimeError(ChatTemplateError, jinja2.TemplateRuntimeError):
    """Jinja's ``TemplateRuntimeError`` raised by the template."""


class ChatTemplateUndefinedError(ChatTemplateError, jinja2.UndefinedError):
    """The template used a variable, key or attribute that does not exist."""


class ChatTemplateSecurityError(ChatTemplateError, jinja2.exceptions.SecurityError):
    """The template tried something the sandbox forbids (private attributes, mutating inputs)."""


class ChatTemplateTypeError(ChatTemplateError, TypeError):
    """``TypeError`` raised by the template (e.g. concatenating a string and a list)."""


class ChatTemplateValueError(ChatTemplateError, ValueError):
    """``ValueError`` raised by the template."""


class ChatTemplateKeyError(ChatTemplateError, KeyError):
    """``KeyError`` raised by the template."""

    def __str__(self) -> str:  # KeyError would quote the message
        return ChatTemplateError.__str__(self)


class ChatTemplateIndexError(ChatTemplateError, IndexError):
    """``IndexError`` raised by the template."""


class ChatTemplateAttributeError(ChatTemplateError, AttributeError):
    """``AttributeError`` raised by the template."""


class ChatTemplateZeroDivisionError(ChatTemplateError, ZeroDivisionError):
    """``ZeroDivisionError`` raised by the template."""


class ChatTemplateOverflowError(ChatTemplateError, OverflowError):
    """``OverflowError`` raised by the template."""


#: Original exception type -> the ChatTemplateError subclass that is also an instance of it.
#: The most specific entry wins (the original type's MRO is walked in order).
_MIRRORS: dict[type[BaseException], type[ChatTemplateError]] = {
    jinja2.TemplateSyntaxError: ChatTemplateSyntaxError,
    jinja2.UndefinedError: ChatTemplateUndefinedError,
    jinja2.exceptions.SecurityError: ChatTemplateSecurityError,
    jinja2.TemplateRuntimeError: ChatTemplateRuntimeError,
    jinja2.TemplateError: ChatTemplateError,
    TypeError: ChatTemplateTypeError,
    KeyError: ChatTemplateKeyError,
    IndexError: ChatTemplateIndexError,
    ValueError: ChatTemplateValueError,
    AttributeError: ChatTemplateAttributeError,
    ZeroDivisionError: ChatTemplateZeroDivisionError,
    OverflowError: ChatTemplateOverflowError,
}


def _mirror_class(error: BaseException) -> type[ChatTemplateError]:
    for cls in type(error).__mro__:
        mirror = _MIRRORS.get(cls)
        if mirror is not None:
            return mirror
    return ChatTemplateError


def _message_of(error: BaseException) -> str:
    if isinstance(error, jinja2.TemplateError):
        return "" if error.message is None else str(error.message)
    return str(error)  # a KeyError's str() quotes its key, as the reference's messages do


def error_from_exception(error: BaseException, *, lineno: int | None,
                         source: str | None) -> ChatTemplateError:
    """Turn an exception raised by a template into the matching :class:`ChatTemplateError`.

    Args:
        error: what the template raised (already a ``ChatTemplateError`` for limits).
        lineno: the template line, when known.
        source: the template source, to quote the line.

    Returns:
        The new error (or ``error`` itself, completed with the line, when it already is one).
    """
    source_line = None
    if lineno is not None and source is not None:
        lines = source.splitlines()
        if 0 < lineno <= len(lines):
            source_line = lines[lineno - 1]
    if isinstance(error, ChatTemplateError):
        if error.lineno is None:
            error.lineno = lineno
            error.source_line = source_line
        return error
    cls = _mirror_class(error)
    original_type = type(error).__name__
    return cls(_message_of(error), lineno=lineno, source_line=source_line, original_type=original_type)
