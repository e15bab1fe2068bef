"""The sandboxed Jinja environment chat templates render in, and the compiled-template cache.

Same as the reference (transformers 5.23 ``_compile_jinja_template``) so that output is
byte-identical: ``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the
``loopcontrols`` extension and the ``{% generation %}`` block; ``tojson`` without HTML escaping and
with ``ensure_ascii`` / ``indent`` / ``separators`` / ``sort_keys``; the globals ``raise_exception``,
``strftime_now``, a ``dict`` that only builds dicts, and a ``namespace`` that refuses names
starting with ``_``.

What chatcodec adds is enforcement of the limits in :mod:`chatcodec.chat_templates.limits`: every
``{% for %}`` iterates through a step counter (a code-generator hook), every call counts a step,
and the operations that can build huge values (``+ * % **``, ``~``, buffers, ``join``, ``replace``,
padding, ``tojson(indent=...)``, ``batch``, ``slice``, ``lipsum``) check sizes. None of this
changes what a template renders while it stays within the limits.

Everything here is module-level (one environment, built at import); render-specific state lives
in a context variable (:mod:`~chatcodec.chat_templates.limits`), so renders may run concurrently.
"""

from __future__ import annotations

import functools
import json
import re
import string
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.utils
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.errors import ChatTemplateError, error_from_exception
from chatcodec.chat_templates.generation import GenerationExtension
from chatcodec.chat_templates.limits import check_length, check_width, current_state

__all__ = [
    "ENVIRONMENT",
    "TEMPLATE_CACHE_SIZE",
    "ChatTemplateEnvironment",
    "ChatTemplateError",
    "TemplateDict",
    "TemplateNamespace",
    "compile_chat_template",
]

#: How many compiled chat templates are kept (least recently used are dropped).
TEMPLATE_CACHE_SIZE = 128

#: Name of the filter every ``{% for %}`` iterable is passed through (the step counter).
LOOP_GUARD_FILTER = "chatcodec_loop_guard"

# A %-format conversion with its flags, width and precision (``*`` takes them from the arguments).
_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


# --- globals -----------------------------------------------------------------------------------


def raise_exception(message: Any) -> None:
    """``raise_exception(msg)``: the template refuses its input; ``msg`` reaches the user verbatim."""
    raise ChatTemplateError(str(message), original_type="TemplateError")


def strftime_now(format: str) -> str:
    """``strftime_now(fmt)``: the render's ``now`` (or the current local time), formatted."""
    return current_state().current_time().strftime(format)


class TemplateDict:
    """The ``dict`` global: builds plain dicts, and exposes nothing else of the ``dict`` type."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(jinja2.utils.Namespace):
    """The ``namespace`` global: Jinja's namespace, refusing attribute names that start with ``_``."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # same signature trick as Jinja's Namespace
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: object) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got "
                f"{name!r}. Please rename the attribute."
            )


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    check_length(n * max * 12, "lipsum text")
    return jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max)


# --- filters -----------------------------------------------------------------------------------


def tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None,
           separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    """``tojson``: plain ``json.dumps`` (no HTML escaping), as in the reference."""
    check_width(indent, "a tojson indent")
    result = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                        sort_keys=sort_keys)
    check_length(len(result), "tojson result")
    return result


@jinja2.pass_context
def _loop_guard(context: jinja2.runtime.Context, iterable: Iterable[Any]) -> Iterable[Any]:
    return current_state().guard(iterable)


def _check_printf(fmt: str, args: Any) -> None:
    for match in _PRINTF_SPEC.finditer(fmt):
        for number in match.groups():
            if number is not None and number != "*":
                check_width(int(number), "a %-format width")
    if "*" in fmt:
        for arg in args if isinstance(args, tuple) else (args,):
            check_width(arg, "a %-format width")


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
        check_length(sum(len(item) for item in items if isinstance(item, str))
                     + len(str(d)) * max(len(items) - 1, 0), "joined string")
    result = jinja2.filters.sync_do_join(eval_ctx, items, d, attribute)
    check_length(len(result), "joined string")
    return result


@jinja2.pass_eval_context
def _replace(eval_ctx: jinja2.nodes.EvalContext, s: str, old: str, new: str, count: int | None = None) -> str:
    _check_replace(str(s), str(old), str(new), -1 if count is None else count)
    return jinja2.filters.do_replace(eval_ctx, s, old, new, count)


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Any:
    check_length(linecount, "batch")
    return jinja2.filters.do_batch(value, linecount, fill_with)


def _slice(value: Iterable[Any], slices: int, fill_with: Any = None) -> Any:
    check_length(slices, "slice count")
    return jinja2.filters.sync_do_slice(list(value), slices, fill_with)


def _check_replace(s: str, old: str, new: str, count: int) -> None:
    if len(new) <= len(old):
        return
    hits = len(s) + 1 if not old else s.count(old)
    if count >= 0:
        hits = min(hits, count)
    check_length(len(s) + hits * (len(new) - len(old)), "replaced string")


# --- str methods reachable from templates ------------------------------------------------------


def _check_str_method(obj: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Check a call of ``obj.<name>(*args)`` for a result size over the limits; return the args."""
    if name in ("ljust", "rjust", "center", "zfill") and args:
        check_width(args[0], f"a str.{name} width")
    elif name == "expandtabs":
        tabsize = args[0] if args else kwargs.get("tabsize", 8)
        check_width(tabsize, "a str.expandtabs tab size")
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        _check_replace(obj, args[0], args[1], args[2] if len(args) > 2 and isinstance(args[2], int) else -1)
    elif name == "join" and args:
        items = list(args[0])
        check_length(sum(len(item) for item in items if isinstance(item, str))
                     + len(obj) * max(len(items) - 1, 0), "joined string")
        return (items, *args[1:])
    return args


def _check_format_string(fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for _literal, field_name, spec, _conversion in string.Formatter().parse(fmt):
        if field_name is None or not spec:
            continue
        for number in _DIGITS.findall(spec):
            check_width(int(number), "a str.format width")
        if "{" in spec:
            for value in (*args, *kwargs.values()):
                check_width(value, "a str.format width")


# --- the environment ---------------------------------------------------------------------------


class _GuardedCodeGenerator(CodeGenerator):
    """Jinja's code generator, with every ``{% for %}`` iterable passed through the loop guard."""

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        for loop in node.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, LOOP_GUARD_FILTER, [], [], None, None, lineno=loop.lineno)
        super().visit_Template(node, frame)


def _checked_concat(parts: Iterable[str]) -> str:
    """``environment.concat`` (joins output buffers of macros and blocks), with a size check."""
    if type(parts) is list:
        check_length(sum(map(len, parts)), "buffered output")
    return "".join(parts)


class ChatTemplateEnvironment(ImmutableSandboxedEnvironment):
    """The reference's sandbox plus chatcodec's resource limits. Use :data:`ENVIRONMENT`."""

    code_generator_class = _GuardedCodeGenerator
    concat = staticmethod(_checked_concat)
    intercepted_binops = frozenset({"+", "*", "%", "**"})

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        """Run ``+ * % **`` with size checks (Jinja's hook for intercepted operators)."""
        if operator == "+":
            result = left + right
            if type(result) in (str, list, tuple):
                check_length(len(result))
            return result
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(times, int):
                    check_length(len(seq) * times, "repeated string or list")
            return left * right
        if operator == "%" and isinstance(left, str):
            _check_printf(left, right)
            result = left % right
            check_length(len(result), "formatted string")
            return result
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            bits = max(abs(left).bit_length() - 1, 0) * right
            if bits > limits.MAX_INT_BITS:
                raise limits.limit_error(f"an integer of about {bits:,} bits", "MAX_INT_BITS",
                                         limits.MAX_INT_BITS)
        return self.binop_table[operator](left, right)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Call ``__obj`` for the template: count a step, check str methods that pad or grow."""
        current_state().step()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            args = _check_str_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Jinja's sandboxed ``str.format``, with width checks."""
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        fmt: str = value.__self__
        is_format_map = value.__name__ == "format_map"

        def checked(*args: Any, **kwargs: Any) -> str:
            mapping = args[0] if is_format_map and args and isinstance(args[0], dict) else kwargs
            _check_format_string(fmt, () if is_format_map else args, mapping)
            result = wrapper(*args, **kwargs)
            check_length(len(result), "formatted string")
            return result

        return functools.update_wrapper(checked, value)


def _build_environment() -> ChatTemplateEnvironment:
    env = ChatTemplateEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[GenerationExtension, jinja2.ext.loopcontrols],
    )
    env.filters.update({
        "tojson": tojson, "center": _center, "indent": _indent, "format": _format, "join": _join,
        "replace": _replace, "batch": _batch, "slice": _slice, LOOP_GUARD_FILTER: _loop_guard,
    })
    env.globals.update({
        "raise_exception": raise_exception, "strftime_now": strftime_now, "dict": TemplateDict(),
        "namespace": TemplateNamespace, "lipsum": _lipsum,
    })
    return env


#: The one environment every chat template is compiled in.
ENVIRONMENT = _build_environment()


@functools.lru_cache(maxsize=TEMPLATE_CACHE_SIZE)
def compile_chat_template(source: str) -> jinja2.Template:
    """Compile a chat template once (cached, at most :data:`TEMPLATE_CACHE_SIZE` templates).

    Args:
        source: the template text.

    Returns:
        The compiled template.

    Raises:
        ChatTemplateSyntaxError: the text is not valid Jinja (the message names the line).
    """
    try:
        return ENVIRONMENT.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise error_from_exception(error, lineno=error.lineno, source=source) from error
