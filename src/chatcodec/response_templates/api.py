"""One-shot parsing: ``parse_response`` and ``parse_response_batch``.

Both run the streaming engine (:class:`~chatcodec.response_templates.engine.ResponseParser`) over
the whole text, so a one-shot parse is exactly a stream fed in one chunk; there is no second
parser to disagree with it. The template is loaded once per call (once per batch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from chatcodec.response_templates.engine import ResponseParser
from chatcodec.response_templates.prefix import require_prefix
from chatcodec.response_templates.template import FieldSpec, ResponseTemplate, load_response_template

if TYPE_CHECKING:
    from chatcodec.response_templates.value_stream import RegionValues

__all__ = ["parse_response", "parse_response_batch"]

Tools = Iterable[dict[str, Any] | Callable[..., Any]] | None


def parse_response(text: str, response_template: dict[str, Any] | ResponseTemplate, *,
                   prefix: str | None, tools: Tools = None, errors: str = "strict") -> dict[str, Any]:
    """Parse a complete model output into an assistant message.

    The same engine as streaming, fed the whole text at once (SPEC §1.8). Follows transformers'
    ``parse_response``, except where chatcodec keeps data the reference drops (see
    docs/compatibility.md).

    Args:
        text: the generated text (only the model's output; the prompt goes in ``prefix``).
        response_template: a template dict or a loaded :class:`ResponseTemplate`.
        prefix: the prompt that preceded generation; required, because chat templates often
            pre-write part of the assistant message (an opening ``<think>``). ``""`` opts out.
        tools: tool JSON schemas or Python functions; tool-call arguments are typed with them.
        errors: ``"strict"`` raises on content that cannot be parsed; ``"keep"`` never raises on
            model output and lists the problems under the message's ``"parse_errors"`` key.

    Returns:
        The message dict (``defaults`` plus every field that matched with a non-empty value).

    Raises:
        ResponseTemplateError: the template is invalid.
        ValueError: ``prefix`` is ``None`` (the message explains why it is required).
        ResponseParseError: (strict) a region's content cannot be parsed; ``partial_message`` and
            ``text`` carry what was parsed and the failing region's raw text.
        MissingFieldError: (strict) a required field never matched.

    Example:
        >>> template = {"start_anchor": "<|im_start|>assistant\\n", "fields": {
        ...     "reasoning_content": {"open": "<think>", "close": "</think>"},
        ...     "content": {"close": "<|im_end|>"}}}
        >>> parse_response("<think>Hm.</think>Hi!<|im_end|>", template, prefix="")
        {'reasoning_content': 'Hm.', 'content': 'Hi!'}
    """
    return _WholeTextParser(response_template, prefix=prefix, tools=tools, errors=errors).parse(text)


class _WholeTextParser(ResponseParser):
    """The streaming engine, unchanged, except for what only its events (which ``parse_response``
    drops) would carry: no per-region events at all, and no value of its own for a region of a
    concatenating text field (the message parses the field's concatenated text once, at
    ``finalize``, and the ``text`` parser never fails)."""

    _emits = False

    def parse(self, text: str) -> dict[str, Any]:
        """The message of ``text``, the whole output: the engine's per-chunk step run once, told that
        this chunk is the last (``eos``), then the end of :meth:`finalize`.

        ``feed(text)`` then ``finalize()`` give the same message (the engine only ever holds text
        back until the end of the output decides it, and here the end is known from the start), in
        one pass instead of two and without ``feed``'s checks for the next chunk: fewer steps on the
        fixed cost of every parse, which a short output right after unrelated work pays with cold
        CPU caches.

        Raises:
            TypeError: ``text`` is not a ``str`` (``feed``'s message).
            ResponseParseError, MissingFieldError: as :meth:`finalize`.
        """
        if not isinstance(text, str):
            self.feed(text)  # raises the TypeError that names where token ids go
        self._advance(text, eos=True)
        return self._finish()

    def _value(self, spec: FieldSpec, raw: str, captures: dict[str, str],
               values: RegionValues | None = None) -> Any:
        if spec.concatenates:
            return raw
        return ResponseParser._value(self, spec, raw, captures, values)


def parse_response_batch(texts: Sequence[str], response_template: dict[str, Any] | ResponseTemplate, *,
                         prefix: str | Sequence[str] | None, tools: Tools = None,
                         errors: str = "strict") -> list[dict[str, Any]]:
    """Parse several model outputs with one template.

    Args:
        texts: the generated texts.
        response_template: a template dict or a loaded :class:`ResponseTemplate` (loaded once).
        prefix: one prompt for every text (a string, or ``[]`` meaning ``""``), or one per text.
        tools: as :func:`parse_response`.
        errors: as :func:`parse_response`.

    Returns:
        One message per text, in order.

    Raises:
        ValueError: ``prefix`` is ``None``, or a list whose length differs from ``texts``.
        ResponseTemplateError, ResponseParseError, MissingFieldError: as :func:`parse_response`.
    """
    template = load_response_template(response_template)
    require_prefix(prefix)
    if isinstance(prefix, str):
        prefixes = [prefix] * len(texts)
    elif not prefix:
        prefixes = [""] * len(texts)
    else:
        prefixes = list(prefix)
        if len(prefixes) != len(texts):
            raise ValueError(
                f"parse_response_batch: got {len(texts)} response(s) but {len(prefixes)} prefix(es); "
                "pass one prefix (used for every response) or one prefix per response")
    return [parse_response(text, template, prefix=p, tools=tools, errors=errors)
            for text, p in zip(texts, prefixes, strict=True)]
