"""Size-checked versions of the template operations that can build huge values.

Each function here behaves exactly like the Jinja filter, Python operator or ``str`` method it
replaces, except that it raises :class:`~chatcodec.chat_templates.errors.ChatTemplateLimitError`
(through :mod:`~chatcodec.chat_templates.limits`) *before* building a value over the limits:
padding widths and indents, ``%`` and ``str.format`` widths, ``*`` repetition, ``**`` powers,
``join``, ``replace``, ``batch``, ``slice``, ``tojson(indent=...)`` and ``lipsum``.
The environment wires them in; nothing here holds state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
import jinja2.filters
import jinja2.utils

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.limits import check_items, check_length, check_width

__all__ = [
    "SAFE_FILTERS",
    "check_format_spec",
    "check_str_method",
    "checked_mod",
    "checked_mul",
    "checked_pow",
    "lipsum",
    "tojson",
]

# A %-format conversion with its flags, width and precision (``*`` takes them from the arguments);
# ``%%`` (a literal percent sign) matches as a whole, with no width, so the text after it is not read
# as one.
_PRINTF_SPEC = re.compile(r"%(?:%|(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?)")
_DIGITS = re.compile(r"\d+")


def tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None,
           separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    """``tojson``: plain ``json.dumps`` (no HTML escaping), as in the reference.

    Args:
        value: what to serialise.
        ensure_ascii, indent, separators, sort_keys: as for ``json.dumps``.

    Returns:
        The JSON text.

    Raises:
        ChatTemplateLimitError: the indent or the result is over the limits.
    """
    check_width(indent, "a tojson indent")
    result = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                        sort_keys=sort_keys)
    check_length(len(result), "tojson result")
    return result


def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """Jinja's ``lipsum`` global, refusing to generate more than the string limit.

    Args:
        n, html, min, max: as for Jinja's ``lipsum`` (paragraphs, HTML, words per paragraph).

    Returns:
        The generated text.

    Raises:
        ChatTemplateLimitError: the text could exceed ``MAX_STRING_LENGTH``.
    """
    check_length(n * max * 12, "lipsum text")
    return jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max)


def _check_printf(fmt: str, args: Any) -> None:
    star = False
    for match in _PRINTF_SPEC.finditer(fmt):
        for number in match.groups():
            if number == "*":
                star = True
            elif number is not None:
                check_width(int(number), "a %-format width")
    if star:  # a width taken from the arguments: any integer argument may be one
        for arg in args if isinstance(args, tuple) else (args,):
            check_width(arg, "a %-format width")


def _check_replace(s: str, old: str, new: str, count: int) -> None:
    if len(new) <= len(old):
        return
    hits = len(s) + 1 if not old else s.count(old)
    if count >= 0:
        hits = min(hits, count)
    check_length(len(s) + hits * (len(new) - len(old)), "replaced string")


def _check_join(items: list[Any], separator: str) -> None:
    check_length(sum(len(item) for item in items if isinstance(item, str))
                 + len(separator) * max(len(items) - 1, 0), "joined string")


def checked_mul(left: Any, right: Any) -> Any:
    """``left * right`` for templates, refusing to repeat a string or list past the limit.

    Args:
        left: the left operand.
        right: the right operand.

    Returns:
        The product.

    Raises:
        ChatTemplateLimitError: a repeated string or list would be over its limit.
    """
    for seq, times in ((left, right), (right, left)):
        if isinstance(times, int):
            if isinstance(seq, str):
                check_length(len(seq) * times, "repeated string")
            elif isinstance(seq, (list, tuple)):
                check_items(len(seq) * times, "repeated list")
    return left * right


def checked_mod(left: Any, right: Any) -> Any:
    """``left % right`` for templates: %-formatting with widths and result size checked.

    Args:
        left: a format string, or a number.
        right: the values, or the divisor.

    Returns:
        The formatted string, or the remainder.

    Raises:
        ChatTemplateLimitError: a width or the formatted string is over the limits.
    """
    if type(left) is not str:
        return left % right
    _check_printf(left, right)
    result = left % right
    check_length(len(result), "formatted string")
    return result


def checked_pow(left: Any, right: Any) -> Any:
    """``left ** right`` for templates, refusing integers over :data:`~limits.MAX_INT_BITS` bits.

    Args:
        left: the base.
        right: the exponent.

    Returns:
        The power.

    Raises:
        ChatTemplateLimitError: the integer result would have more than ``MAX_INT_BITS`` bits.
    """
    if isinstance(left, int) and isinstance(right, int) and right > 0:
        bits = max(abs(left).bit_length() - 1, 0) * right
        if bits > limits.MAX_INT_BITS:
            raise limits.limit_error(f"an integer of about {bits:,} bits", "MAX_INT_BITS",
                                     limits.MAX_INT_BITS)
    return left**right


def check_str_method(obj: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Check a template's call ``obj.<name>(*args)`` for a result over the limits.

    Args:
        obj: the string whose method is called.
        name: the method name.
        args: the positional arguments.
        kwargs: the keyword arguments.

    Returns:
        The positional arguments to call with (an iterable given to ``join`` is read into a list).

    Raises:
        ChatTemplateLimitError: a width, or the string the call would build, is over the limits.
    """
    if name in ("ljust", "rjust", "center", "zfill") and args:
        check_width(args[0], f"a str.{name} width")
    elif name == "expandtabs":
        check_width(args[0] if args else kwargs.get("tabsize", 8), "a str.expandtabs tab size")
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        _check_replace(obj, args[0], args[1], args[2] if len(args) > 2 and isinstance(args[2], int) else -1)
    elif name == "join" and args:
        items = list(args[0])
        _check_join(items, obj)
        return (items, *args[1:])
    return args


def check_format_spec(spec: str) -> None:
    """Check one ``str.format`` field's spec (``">9999999"``) for widths over the limit."""
    if spec:
        for number in _DIGITS.findall(spec):
            check_width(int(number), "a str.format width")


# --- filters -----------------------------------------------------------------------------------


def _center(value: Any, width: int = 80) -> str:
    check_width(width, "a center width")
    return jinja2.filters.do_center(value, width)


def _indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    check_width(width, "an indent width")
    result = jinja2.filters.do_indent(s, width, first, blank)
    check_length(len(result), "indented string")
    return result


def _format(value: str, *args: Any, **kwargs: Any) -> str:
    _check_printf(str(value), kwargs or args)
    return jinja2.filters.do_format(value, *args, **kwargs)


@jinja2.pass_eval_context
def _join(eval_ctx: jinja2.nodes.EvalContext, value: Iterable[Any], d: str = "",
          attribute: str | int | None = None) -> str:
    items = list(value)
    if attribute is None:
        _check_join(items, str(d))
    result = jinja2.filters.sync_do_join(eval_ctx, items, d, attribute)
    check_length(len(result), "joined string")
    return result


@jinja2.pass_eval_context
def _replace(eval_ctx: jinja2.nodes.EvalContext, s: str, old: str, new: str, count: int | None = None) -> str:
    _check_replace(str(s), str(old), str(new), -1 if count is None else count)
    return jinja2.filters.do_replace(eval_ctx, s, old, new, count)


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Any:
    check_items(linecount, "batch")
    return jinja2.filters.do_batch(value, linecount, fill_with)


def _slice(value: Iterable[Any], slices: int, fill_with: Any = None) -> Any:
    check_items(slices, "slice count")
    return jinja2.filters.sync_do_slice(list(value), slices, fill_with)


#: Filters replaced in the chat-template environment (same behaviour, checked sizes).
SAFE_FILTERS: dict[str, Callable[..., Any]] = {
    "tojson": tojson, "center": _center, "indent": _indent, "format": _format, "join": _join,
    "replace": _replace, "batch": _batch, "slice": _slice,
}
