"""The filters of the chat-template environment, checked so a template cannot run away with them.

Each filter here gives exactly what Jinja's filter of the same name gives (``tojson`` what the
reference's gives), and in addition:

* filters that go through an iterable (``map``, ``select``, ``sort``, ``join``, ``list``, ``sum``,
  ...) count one step per item, so the clock is read while they run, and those that read it all
  into memory stop at :data:`~chatcodec.chat_templates.limits.MAX_LIST_LENGTH` items;
* text filters count steps for long strings, measure a list or dict before turning it into text,
  and check the length of what they build: before building where it can be known
  (``indent``, ``wordwrap``, ``escape``, ``forceescape``, ``urlencode``, ``join``, ``replace``,
  ``tojson``, ``pprint``, ``format``, ``center``), right after where it cannot (case changes).

Which filter gets which treatment is listed in the tables at the end (:data:`SAFE_FILTERS`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
import jinja2.filters
import markupsafe

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.limits import charge_text, check_items, check_length, check_width, current_state
from chatcodec.chat_templates.safe_ops import (
    FREE_TEXT,
    check_join,
    check_printf,
    check_replace,
    count_pieces,
    escaped_length,
)
from chatcodec.chat_templates.sizes import check_compared, check_text_size

__all__ = ["SAFE_FILTERS", "tojson"]

_WORD = re.compile(r"\w+")  # Jinja's wordcount
_URL_SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~"


def tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None,
           separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    """``tojson``: plain ``json.dumps`` (no HTML escaping), as in the reference.

    Args:
        value: what to serialise.
        ensure_ascii, indent, separators, sort_keys: as for ``json.dumps``.

    Returns:
        The JSON text.

    Raises:
        ChatTemplateLimitError: the indent, or the text (estimated first, then measured), is over
            the limits.
    """
    check_width(indent, "a tojson indent")
    width = indent if type(indent) is int else len(indent) if isinstance(indent, str) else 0
    check_text_size(value, "tojson text", width)
    result = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                        sort_keys=sort_keys)
    check_length(len(result), "tojson text")
    charge_text(len(result))
    return result


def _pprint(value: Any) -> str:
    check_text_size(value, "pprint text")
    result: str = jinja2.filters.do_pprint(value)
    check_length(len(result), "pprint text")
    return result


def _before_text(value: Any, what: str) -> None:
    if isinstance(value, str):
        if len(value) >= FREE_TEXT:
            charge_text(len(value))
    else:
        check_text_size(value, what)


def _escape(value: Any) -> markupsafe.Markup:
    _before_text(value, "escaped list or dict")
    if isinstance(value, str):
        check_length(escaped_length(value), "escaped string")
    return markupsafe.escape(value)


def _forceescape(value: Any) -> markupsafe.Markup:
    if hasattr(value, "__html__"):
        value = value.__html__()
    _before_text(value, "escaped list or dict")
    return _escape(str(value))


def _quoted_length(text: str) -> int:
    encoded = text.encode("utf-8", "replace")
    return len(encoded) + 2 * len(encoded.translate(None, _URL_SAFE))


def _urlencode(value: Any) -> str:
    if isinstance(value, str) or not isinstance(value, Iterable):
        _before_text(value, "urlencoded value")
        check_length(_quoted_length(value if isinstance(value, str) else str(value)), "urlencoded string")
        result: str = jinja2.filters.do_urlencode(value)
        return result
    pairs = value.items() if isinstance(value, dict) else value
    items = list(current_state().capped(pairs, "urlencoded items"))
    size = 0
    for item in items:
        for piece in item if isinstance(item, tuple) else ():
            _before_text(piece, "urlencoded list or dict")
            size += _quoted_length(piece if isinstance(piece, str) else str(piece)) + 1
    check_length(size, "urlencoded string")
    result = jinja2.filters.do_urlencode(items)
    return result


def _indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    check_width(width, "an indent width")
    if isinstance(s, str):
        charge_text(len(s))
        lines = count_pieces(s, "splitlines") if len(s) > limits.MAX_LIST_LENGTH else s.count("\n") + 1
        check_items(lines, "list of lines")
        check_length(len(s) + lines * (len(width) if isinstance(width, str) else max(int(width), 0)),
                     "indented string")
    result: str = jinja2.filters.do_indent(s, width, first, blank)
    check_length(len(result), "indented string")
    return result


@jinja2.pass_environment
def _wordwrap(environment: jinja2.Environment, s: str, width: int = 79, break_long_words: bool = True,
              wrapstring: str | None = None, break_on_hyphens: bool = True) -> str:
    """Jinja's ``wordwrap``, measured before the wrapped text is joined."""
    if wrapstring is None:
        wrapstring = environment.newline_sequence
    charge_text(len(s))
    _check_word_filter_input(s, "wordwrap", "split")
    check_items(len(s) // max(int(width), 1), "list of wrapped lines")
    import textwrap  # here: only wordwrap needs it

    paragraphs = [
        textwrap.wrap(line, width=width, expand_tabs=False, replace_whitespace=False,
                      break_long_words=break_long_words, break_on_hyphens=break_on_hyphens)
        for line in s.splitlines()
    ]
    lines = sum(map(len, paragraphs))
    check_length(sum(len(line) for paragraph in paragraphs for line in paragraph)
                 + max(lines - 1, 0) * len(wrapstring), "wrapped string")
    return wrapstring.join([wrapstring.join(paragraph) for paragraph in paragraphs])


#: The input bound of each filter that goes through text word by word, by the name of its constant
#: in :mod:`~chatcodec.chat_templates.limits` (read at each call).
_WORD_FILTER_LIMITS = {"wordwrap": "MAX_WORDWRAP_INPUT", "urlize": "MAX_URLIZE_INPUT"}


def _check_word_filter_input(text: str, what: str, words: str) -> None:
    name = _WORD_FILTER_LIMITS.get(what, "MAX_TEXT_FILTER_INPUT")
    bound = int(getattr(limits, name))
    if len(text) > bound:
        raise limits.limit_error(f"a string of {len(text):,} characters given to {what}", name, bound)
    if len(text) > limits.MAX_LIST_LENGTH:
        check_items(count_pieces(text, words), f"list of words for {what}")


def _wordcount(s: Any) -> int:
    text = markupsafe.soft_str(s)
    charge_text(len(text))
    if len(text) <= limits.MAX_LIST_LENGTH:
        count: int = jinja2.filters.do_wordcount(s)
        return count
    return sum(1 for _ in _WORD.finditer(text))  # without a list of every word


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    check_printf(str(value), kwargs or args)
    for arg in (*args, *kwargs.values()):
        check_text_size(arg, "formatted list or dict")
    result: str = jinja2.filters.do_format(value, *args, **kwargs)
    check_length(len(result), "formatted string")
    return result


@jinja2.pass_eval_context
def _join(eval_ctx: jinja2.nodes.EvalContext, value: Iterable[Any], d: str = "",
          attribute: str | int | None = None) -> str:
    items = list(current_state().capped(value, "joined list"))
    if attribute is not None:
        getter = jinja2.filters.make_attrgetter(eval_ctx.environment, attribute)
        items = [getter(item) for item in items]
    check_join(items, str(d))
    result: str = jinja2.filters.sync_do_join(eval_ctx, items, d)
    check_length(len(result), "joined string")
    return result


@jinja2.pass_eval_context
def _replace(eval_ctx: jinja2.nodes.EvalContext, s: Any, old: str, new: str, count: int | None = None) -> str:
    _before_text(s, "list or dict to replace in")
    check_replace(str(s), str(old), str(new), -1 if count is None else count)
    result: str = jinja2.filters.do_replace(eval_ctx, s, old, new, count)
    return result


@jinja2.pass_environment
def _sum(environment: jinja2.Environment, iterable: Iterable[Any], attribute: str | int | None = None,
         start: Any = 0) -> Any:
    kind = type(start)
    values = current_state().guard(iterable) if iterable and kind not in (list, tuple) else iterable
    if attribute is not None:
        values = map(jinja2.filters.make_attrgetter(environment, attribute), values)
    if kind not in (list, tuple):
        return sum(values, start)  # numbers: one step per item, nothing kept
    items = list(current_state().capped(values, "summed list"))
    if not all(type(item) is kind for item in items):
        return sum(items, start)  # the TypeError sum() raises
    # lists added one after another: measured first, and built in linear time (sum() is quadratic)
    check_items(len(start) + sum(map(len, items)), "list built by sum")
    result = list(start)
    for item in items:
        result.extend(item)
    return result if kind is list else tuple(result)


def _list(value: Any) -> list[Any]:
    return list(current_state().capped(value, "list"))


def _reverse(value: Any) -> Any:
    if isinstance(value, str) or type(value) in limits.SIZED_TYPES:
        return jinja2.filters.do_reverse(value)
    try:
        return reversed(value)
    except TypeError:
        pass
    try:
        items = list(current_state().capped(value, "reversed list"))
    except TypeError as error:
        raise jinja2.exceptions.FilterArgumentError("argument must be iterable") from error
    items.reverse()
    return items


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Any:
    check_items(linecount, "batch")
    return jinja2.filters.do_batch(current_state().guard(value), linecount, fill_with)


def _slice(value: Iterable[Any], slices: int, fill_with: Any = None) -> Any:
    check_items(slices, "slice count")
    return jinja2.filters.sync_do_slice(list(current_state().capped(value, "sliced list")), slices, fill_with)


def _center(value: Any, width: int = 80) -> str:
    check_width(width, "a center width")
    _before_text(value, "centered list or dict")
    result: str = jinja2.filters.do_center(value, width)
    return result


# --- wrappers for the filters used as Jinja has them -------------------------------------------


def _input_position(filter_function: Callable[..., Any]) -> int:
    """Where a filter's input is among its arguments (after the context Jinja may pass first)."""
    return 1 if getattr(filter_function, "jinja_pass_arg", None) is not None else 0


def _reading(filter_function: Callable[..., Any], capped: str | None,
             compares: bool = False) -> Callable[..., Any]:
    """The filter, its input counted item by item (and capped at MAX_LIST_LENGTH when ``capped``
    names what the filter builds; with ``compares``, the items it compares or hashes measured first,
    see ``MAX_COMPARED_ITEMS``)."""
    position = _input_position(filter_function)
    name = filter_function.__name__.removeprefix("do_").removeprefix("sync_do_")

    @functools.wraps(filter_function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position and args[position]:  # Jinja's filters treat a falsy input (None) as empty
            state = current_state()
            value = args[position]
            if compares:
                check_compared(value, f"|{name}")
            value = state.guard(value) if capped is None else state.capped(value, capped)
            args = (*args[:position], value, *args[position + 1:])
        return filter_function(*args, **kwargs)

    return checked


def _text(filter_function: Callable[..., Any], what: str, words: str | None = None) -> Callable[..., Any]:
    """The filter, with its input measured and its result's length checked (and, with ``words``,
    the pieces it splits a long text into counted first, see ``count_pieces``)."""
    position = _input_position(filter_function)

    @functools.wraps(filter_function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position:
            value = args[position]
            if type(value) is not str or len(value) >= FREE_TEXT:
                _before_text(value, f"list or dict given to {what}")
                if words is not None and isinstance(value, str):
                    _check_word_filter_input(value, what, words)
        result = filter_function(*args, **kwargs)
        if isinstance(result, str) and len(result) >= FREE_TEXT:
            check_length(len(result), f"string from {what}")
        return result

    return checked


def _trim(value: Any, chars: str | None = None) -> str:
    """``trim``, the filter real templates use most: a short string goes straight to ``strip``."""
    if type(value) is str and len(value) < FREE_TEXT:
        return value.strip(chars)
    result: str = _TRIM(value, chars)
    return result


def _charged(filter_function: Callable[..., Any], compares: bool = False) -> Callable[..., Any]:
    """The filter, charged one step per item of its (sized) input (with ``compares``, the items it
    compares measured first)."""

    @functools.wraps(filter_function)
    def checked(value: Any, *args: Any, **kwargs: Any) -> Any:
        if compares:
            check_compared(value, "|dictsort")
        if type(value) in limits.SIZED_TYPES:
            current_state().charge(len(value))
        return filter_function(value, *args, **kwargs)

    return checked


_FILTERS = jinja2.filters.FILTERS
_TRIM = _text(_FILTERS["trim"], "trim")

#: Filters replaced in the chat-template environment (same output, checked sizes and steps).
SAFE_FILTERS: dict[str, Callable[..., Any]] = {
    **{name: _reading(_FILTERS[name], None)
       for name in ("map", "select", "reject", "selectattr", "rejectattr", "first")},
    **{name: _reading(_FILTERS[name], None, compares=True) for name in ("min", "max")},
    **{name: _reading(_FILTERS[name], f"list to {name}", compares=True)
       for name in ("unique", "sort", "groupby")},
    **{name: _text(_FILTERS[name], name) for name in (
        "capitalize", "lower", "upper", "truncate", "string", "safe", "xmlattr")},
    "trim": _trim,
    **{name: _text(_FILTERS[name], name, words="split") for name in ("striptags", "urlize")},
    "title": _text(_FILTERS["title"], "title", words="title"),
    "dictsort": _charged(_FILTERS["dictsort"], compares=True), "items": _charged(_FILTERS["items"]),
    "tojson": tojson, "pprint": _pprint, "escape": _escape, "e": _escape, "forceescape": _forceescape,
    "urlencode": _urlencode, "indent": _indent, "wordwrap": _wordwrap, "wordcount": _wordcount,
    "format": _format, "join": _join, "replace": _replace, "sum": _sum, "list": _list, "reverse": _reverse,
    "batch": _batch, "slice": _slice, "center": _center,
}
