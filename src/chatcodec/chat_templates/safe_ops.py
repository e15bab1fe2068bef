"""Size-checked versions of the operators, outputs and ``str`` methods a template uses.

Each function here behaves exactly like the Python operator, Jinja output step or ``str`` method
it replaces, except that it raises
:class:`~chatcodec.chat_templates.errors.ChatTemplateLimitError` (through
:mod:`~chatcodec.chat_templates.limits`) instead of building a value over the limits: before
building wherever the size can be known first (``*`` of strings, lists and integers, ``%`` and
``str.format`` widths, ``join``, ``replace``, ``expandtabs``, ``translate``, ``split``, lists and
dicts turned into text), right after building where it cannot (case changes, formatting). Long
strings also count steps (``limits.charge_text``) so the clock keeps being read. Filters are in
:mod:`~chatcodec.chat_templates.safe_filters`; nothing here holds state.
"""

from __future__ import annotations

import collections
import operator
import re
from collections.abc import Iterable
from typing import Any

import jinja2.runtime
import jinja2.utils
import markupsafe

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.limits import charge_text, check_items, check_length, check_width
from chatcodec.chat_templates.sizes import CONTAINERS, check_compared, check_text_size, estimate_text_size

__all__ = [
    "FREE_TEXT",
    "check_format_spec",
    "check_join",
    "check_printf",
    "check_replace",
    "check_str_method",
    "check_str_result",
    "checked_add",
    "checked_buffer",
    "checked_compare",
    "checked_concat",
    "checked_escape",
    "checked_markup_join",
    "checked_mod",
    "checked_mul",
    "checked_operand",
    "checked_pow",
    "checked_str",
    "count_pieces",
    "escaped_length",
    "lipsum",
]

# A %-format conversion with its flags, width and precision (``*`` takes them from the arguments);
# ``%%`` (a literal percent sign) matches as a whole, with no width, so the text after it is not read
# as one.
_PRINTF_SPEC = re.compile(r"%(?:%|(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?)")
_DIGITS = re.compile(r"\d+")
_SEQUENCES = frozenset({str, list, tuple})

#: Strings shorter than this cost no steps of their own (see ``limits.TEXT_CHARS_PER_STEP``):
#: counting them would slow every render down for nothing.
FREE_TEXT = 4096
# What str.splitlines() splits on.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


# --- operators ---------------------------------------------------------------------------------


#: Jinja's comparison operators as functions.
_COMPARISONS: dict[str, Any] = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "lteq": operator.le, "gt": operator.gt,
    "gteq": operator.ge, "in": lambda left, right: left in right,
    "notin": lambda left, right: left not in right,
}


def checked_compare(op: str, left: Any, right: Any) -> Any:
    """``left OP right`` for templates (generated code calls it when neither operand is a constant).

    Comparing or hashing costs time only when both sides are lists, tuples or dicts (``==``, ``<``),
    or the left one is and ``in`` compares it with the right one's items or hashes it: those
    operands are measured first (``MAX_COMPARED_ITEMS``).

    Args:
        op: Jinja's operator name (``"eq"``, ``"lt"``, ``"in"``, ...).
        left, right: the operands.

    Returns:
        The result of the comparison.

    Raises:
        ChatTemplateLimitError: an operand is over the limit.
    """
    if type(left) in CONTAINERS and (type(right) in CONTAINERS or op in ("in", "notin")):
        check_compared(left, "a comparison or hash")
        check_compared(right, "a comparison or hash")
    return _COMPARISONS[op](left, right)


def checked_operand(value: Any) -> Any:
    """``value`` as an operand of a comparison (``==``, ``<``, ``in``, ...) or a dict key (hashed):
    a list, tuple or dict that would make it go through more than ``MAX_COMPARED_ITEMS`` items is
    refused (generated code calls it for every operand that is not a constant).

    Raises:
        ChatTemplateLimitError: over the limit.
    """
    if type(value) in CONTAINERS:
        check_compared(value, "a comparison or hash")
    return value


def checked_add(left: Any, right: Any) -> Any:
    """``left + right`` for templates (generated code calls it for every ``+``).

    Raises:
        ChatTemplateLimitError: the result is a string or list over its limit.
    """
    result = left + right
    if type(result) in _SEQUENCES:
        size = len(result)
        if size >= FREE_TEXT:
            if size > limits.MAX_LIST_LENGTH or size > limits.MAX_STRING_LENGTH:
                limits.check_size(result, "string or list built with +")
            charge_text(size)
    return result


def checked_concat(values: Iterable[Any]) -> str:
    """``a ~ b ~ c`` for templates (generated code calls it for every ``~``).

    Raises:
        ChatTemplateLimitError: a list or dict operand, or the result, is over the string limit.
    """
    result = "".join([value if type(value) is str else checked_str(value) for value in values])
    size = len(result)
    if size >= FREE_TEXT:
        check_length(size, "concatenated string")
        charge_text(size)
    return result


def checked_markup_join(values: Iterable[Any]) -> str:
    """``~`` inside ``{% autoescape true %}`` (Jinja's ``markup_join``), size-checked like ``~``."""
    parts = [value if isinstance(value, str) else checked_str(value) for value in values]
    check_length(sum(escaped_length(part) for part in parts), "concatenated string")
    result: str = jinja2.runtime.markup_join(parts)
    charge_text(len(result))
    return result


def checked_buffer(parts: Iterable[str]) -> str:
    """``environment.concat``: joins the output buffer of a macro or block, size-checked first."""
    if type(parts) is list:
        size = sum(map(len, parts))
        if size >= FREE_TEXT:
            check_length(size, "buffered output")
            charge_text(size)
    return "".join(parts)


def checked_str(value: Any) -> str:
    """``str(value)`` for an output ``{{ value }}``: a list or dict is measured before it is printed.

    Raises:
        ChatTemplateLimitError: the text of a list or dict would be over the string limit.
    """
    if type(value) is str:
        return value
    check_text_size(value, "printed list or dict")
    return str(value)


def checked_escape(value: Any) -> markupsafe.Markup:
    """``escape(value)`` for an output under autoescaping, measured like :func:`checked_str`."""
    if not isinstance(value, str):
        check_text_size(value, "printed list or dict")
    elif not hasattr(value, "__html__"):
        check_length(escaped_length(value), "escaped string")
    return markupsafe.escape(value)


def escaped_length(text: str) -> int:
    """The length of ``text`` once HTML-escaped (``&`` → ``&amp;``, quotes → ``&#34;`` / ``&#39;``)."""
    if hasattr(text, "__html__"):
        return len(text)
    if len(text) * 5 <= limits.MAX_STRING_LENGTH:
        return len(text)  # cannot reach the limit: skip counting
    return (len(text) + 4 * (text.count("&") + text.count('"') + text.count("'"))
            + 3 * (text.count("<") + text.count(">")))


def checked_mul(left: Any, right: Any) -> Any:
    """``left * right`` for templates.

    Raises:
        ChatTemplateLimitError: a repeated string or list would be over its limit (a list of lists
            is measured by the text it would print as), or a product of integers over
            ``MAX_INT_BITS`` bits.
    """
    if type(left) is int and type(right) is int:
        bits = left.bit_length() + right.bit_length()
        if bits > limits.MAX_INT_BITS:
            raise limits.limit_error(f"an integer of about {bits:,} bits", "MAX_INT_BITS",
                                     limits.MAX_INT_BITS)
        return left * right
    for seq, times in ((left, right), (right, left)):
        if isinstance(times, int) and times > 1:
            if isinstance(seq, str):
                check_length(len(seq) * times, "repeated string")
                charge_text(len(seq) * times)
            elif isinstance(seq, (list, tuple)):
                check_items(len(seq) * times, "repeated list")
                _check_repeated_text(seq, times)
    return left * right


def _check_repeated_text(seq: list[Any] | tuple[Any, ...], times: int) -> None:
    if not any(type(item) in CONTAINERS or type(item) is str for item in seq):
        return  # numbers and the like: the item limit already bounds the text
    limit = limits.MAX_STRING_LENGTH
    size = estimate_text_size(seq, limit // times + 1) * times
    if size > limit:
        raise limits.limit_error(f"a repeated list printing as more than {limit:,} characters",
                                 "MAX_STRING_LENGTH", limit)


def checked_mod(left: Any, right: Any) -> Any:
    """``left % right`` for templates: %-formatting with widths, arguments and result size checked.

    Raises:
        ChatTemplateLimitError: a width, an argument's text or the formatted string is over the limits.
    """
    if type(left) is not str:
        return left % right
    check_printf(left, right)
    for value in right if type(right) is tuple else right.values() if type(right) is dict else (right,):
        check_text_size(value, "formatted list or dict")
    result = left % right
    check_length(len(result), "formatted string")
    return result


def checked_pow(left: Any, right: Any) -> Any:
    """``left ** right`` for templates, refusing integers over :data:`~limits.MAX_INT_BITS` bits.

    Raises:
        ChatTemplateLimitError: the integer result would have more than ``MAX_INT_BITS`` bits.
    """
    if isinstance(left, int) and isinstance(right, int) and right > 0:
        bits = max(abs(left).bit_length() - 1, 0) * right
        if bits > limits.MAX_INT_BITS:
            raise limits.limit_error(f"an integer of about {bits:,} bits", "MAX_INT_BITS",
                                     limits.MAX_INT_BITS)
    return left**right


# --- checks shared with the filters ------------------------------------------------------------


def check_printf(fmt: str, args: Any) -> None:
    """Check the widths of a %-format (``"%9999d"``, or ``"%*d"`` with the width in ``args``).

    Raises:
        ChatTemplateLimitError: a width is over ``MAX_FORMAT_WIDTH``.
    """
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


def check_replace(s: str, old: str, new: str, count: int) -> None:
    """Check ``s.replace(old, new, count)`` before it runs.

    Raises:
        ChatTemplateLimitError: the result would be over the string limit.
    """
    charge_text(len(s))
    if len(new) <= len(old):
        return
    hits = len(s) + 1 if not old else s.count(old)
    if count >= 0:
        hits = min(hits, count)
    check_length(len(s) + hits * (len(new) - len(old)), "replaced string")


def check_join(items: list[Any], separator: str) -> None:
    """Check ``separator.join(items)`` before it runs (items that are not strings print as text).

    Raises:
        ChatTemplateLimitError: the joined text would be over the string limit.
    """
    size = len(separator) * max(len(items) - 1, 0)
    size += sum(len(item) for item in items if isinstance(item, str))
    containers = [item for item in items if type(item) in CONTAINERS]
    if containers:  # measured together, so a list given many times is walked once
        size += estimate_text_size(containers, limits.MAX_STRING_LENGTH) - 2 * len(containers)
    check_length(size, "joined string")
    charge_text(size)


def check_format_spec(spec: str) -> None:
    """Check one ``str.format`` field's spec (``">9999999"``) for widths over the limit."""
    if spec:
        for number in _DIGITS.findall(spec):
            check_width(int(number), "a str.format width")


# --- str methods -------------------------------------------------------------------------------


def check_str_method(obj: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Check a template's call ``obj.<name>(*args)`` before it runs.

    Args:
        obj: the string whose method is called.
        name: the method name.
        args: the positional arguments.
        kwargs: the keyword arguments.

    Returns:
        The positional arguments to call with (an iterable given to ``join`` is read into a list).

    Raises:
        ChatTemplateLimitError: a width, or the string or list the call would build, is over the
            limits.
    """
    if len(obj) >= FREE_TEXT:
        charge_text(len(obj))
    if name in ("ljust", "rjust", "center", "zfill") and args:
        check_width(args[0], f"a str.{name} width")
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        check_width(size, "a str.expandtabs tab size")
        if isinstance(size, int):
            check_length(len(obj) + obj.count("\t") * max(size - 1, 0), "string with tabs expanded")
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        check_replace(obj, args[0], args[1], args[2] if len(args) > 2 and isinstance(args[2], int) else -1)
    elif name == "join" and args:
        items = list(limits.current_state().capped(args[0], "joined list"))
        check_join(items, obj)
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], dict):
        _check_translate(obj, args[0])
    elif name in ("split", "rsplit", "splitlines") and len(obj) > limits.MAX_LIST_LENGTH:
        check_items(count_pieces(obj, name, args, kwargs), f"list from str.{name}")
    return args


def check_str_result(result: Any, name: str) -> None:
    """Check what a ``str`` method returned (``upper()`` can make a string up to 3 times longer).

    Raises:
        ChatTemplateLimitError: the string or list is over its limit.
    """
    if type(result) is str:
        check_length(len(result), f"string from str.{name}")
    elif type(result) is list:
        check_items(len(result), f"list from str.{name}")


def _check_translate(obj: str, table: dict[Any, Any]) -> None:
    longest = max((len(value) for value in table.values() if isinstance(value, str)), default=1)
    if len(obj) * longest <= limits.MAX_STRING_LENGTH:
        return
    counts = collections.Counter(obj)
    growth = sum(counts[chr(key)] * (len(value) - 1) for key, value in table.items()
                 if isinstance(key, int) and 0 <= key <= 0x10FFFF and isinstance(value, str))
    check_length(len(obj) + growth, "translated string")


def count_pieces(obj: str, name: str, args: tuple[Any, ...] = (),
                 kwargs: dict[str, Any] | None = None) -> int:
    """How many items ``obj.split()`` / ``rsplit()`` / ``splitlines()`` would return, at most,
    found without building them.

    Args:
        obj: the string.
        name: ``"split"``, ``"rsplit"`` or ``"splitlines"`` (or ``"title"``, for Jinja's filter).
        args, kwargs: the method's arguments (``sep``, ``maxsplit``).

    Returns:
        The number of items (an upper bound for ``splitlines``).
    """
    kwargs = kwargs or {}
    if name == "splitlines":
        return sum(obj.count(char) for char in _LINE_BREAKS) + 1
    if name == "title":  # the pieces Jinja's title filter splits the text into, at most
        return 2 * (count_pieces(obj, "split") + sum(obj.count(char) for char in "-([{<")) + 1
    sep = args[0] if args else kwargs.get("sep")
    maxsplit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
    if isinstance(maxsplit, int) and 0 <= maxsplit < limits.MAX_LIST_LENGTH:
        return maxsplit + 1
    if isinstance(sep, str) and sep:
        return obj.count(sep) + 1
    step = 1 << 20  # whitespace: count the words a chunk at a time, without building them all
    words = 0
    for start in range(0, len(obj), step):
        chunk = obj[start: start + step]
        words += len(chunk.split())
        if start and not chunk[:1].isspace() and not obj[start - 1].isspace():
            words -= 1  # a word across the chunk boundary was counted twice
    return words


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
