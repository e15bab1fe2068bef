"""The sandboxed Jinja environment chat templates render in, and the compiled-template cache.

Same as the reference (transformers 5.24 ``_compile_jinja_template``) so that output is
byte-identical: ``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the
``loopcontrols`` extension and the ``{% generation %}`` block; ``tojson`` without HTML escaping and
with ``ensure_ascii`` / ``indent`` / ``separators`` / ``sort_keys``; the globals ``raise_exception``,
``strftime_now``, a ``dict`` that only builds dicts, and a ``namespace`` that refuses names
starting with ``_``.

What chatcodec adds is enforcement of the limits in :mod:`chatcodec.chat_templates.limits`,
through three Jinja extension points: a code generator (every ``{% for %}`` iterable passes a step
counter, every ``+`` and ``~`` a size check), the sandbox's ``call`` / ``call_binop`` /
``wrap_str_format`` hooks (calls count steps; ``* % **`` and growing ``str`` methods check sizes)
and replaced filters (:mod:`~chatcodec.chat_templates.safe_ops`). None of this changes what a
template renders while it stays within the limits.

Everything here is module-level (one environment, built at import); render-specific state lives
in a context variable (:mod:`~chatcodec.chat_templates.limits`), so renders may run concurrently.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import jinja2
import jinja2.ext
import jinja2.utils
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, operators, optimizeconst
from jinja2.exceptions import SecurityError
from jinja2.lexer import ignored_tokens
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter, modifies_known_mutable

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.errors import ChatTemplateError, error_from_exception
from chatcodec.chat_templates.generation import GenerationExtension
from chatcodec.chat_templates.limits import current_state
from chatcodec.chat_templates.safe_filters import SAFE_FILTERS
from chatcodec.chat_templates.safe_ops import (
    check_format_spec,
    check_str_method,
    check_str_result,
    checked_buffer,
    lipsum,
)
from chatcodec.chat_templates.sizes import check_text_size

__all__ = [
    "ENVIRONMENT",
    "TEMPLATE_CACHE_SIZE",
    "ChatTemplateEnvironment",
    "ChatTemplateError",
    "TemplateDict",
    "TemplateNamespace",
    "compile_chat_template",
    "copy_tree",
    "parse_chat_template",
]

#: How many compiled chat templates are kept (least recently used are dropped).
TEMPLATE_CACHE_SIZE = 128

#: Name of the filter every ``{% for %}`` iterable is passed through (the step counter).
LOOP_GUARD_FILTER = "chatcodec_loop_guard"

_BUILTIN_METHOD = types.BuiltinMethodType

_METHOD_TYPES = (types.BuiltinMethodType, types.MethodType)

# Every attribute a plain dict has: any other name on a dict can only be one of its keys.
_DICT_ATTRIBUTES = frozenset(dir(dict))
_STR_ATTRIBUTES = frozenset(dir(str))


def _plain_attributes(sample: Any) -> frozenset[str]:
    """Public attributes of ``type(sample)`` the sandbox always allows as they are: not private,
    not mutating (ImmutableSandboxedEnvironment's rule), not ``str.format`` (which it wraps)."""
    return frozenset(
        name for name in dir(type(sample))
        if not name.startswith("_") and not modifies_known_mutable(sample, name)
        and name not in ("format", "format_map")
    )


#: Types whose public attributes ``getattr`` returns without the sandbox's checks, because the
#: sandbox would allow them unchanged (the values of most attribute reads in real templates).
_PLAIN_ATTRIBUTES: dict[type, frozenset[str]] = {
    str: _plain_attributes(""), dict: _plain_attributes({}), list: _plain_attributes([]),
    LoopContext: frozenset(name for name in dir(LoopContext) if not name.startswith("_")),
}


# --- globals -----------------------------------------------------------------------------------


def raise_exception(message: Any) -> None:
    """``raise_exception(msg)``: the template refuses its input; ``msg`` reaches the user verbatim.

    Raises:
        ChatTemplateError: always, with ``message`` as its text and original type ``TemplateError``.
    """
    raise ChatTemplateError(str(message), original_type="TemplateError")


def strftime_now(format: str) -> str:
    """``strftime_now(fmt)``: the render's ``now`` (or the current local time), formatted."""
    return current_state().current_time().strftime(format)


class TemplateDict:
    """The ``dict`` global: builds plain dicts, and exposes nothing else of the ``dict`` type."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        """``dict.fromkeys(keys, value=None)``: a new plain dict."""
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


@jinja2.pass_context  # pass_context keeps Jinja from evaluating it at compile time on constant lists
def _loop_guard(context: jinja2.runtime.Context, iterable: Any) -> Any:
    return current_state().guard(iterable)


# --- the environment ---------------------------------------------------------------------------


def _checked_binop(function: str) -> Any:
    """A code-generator visitor writing ``function(left, right)`` for a binary operator."""

    @optimizeconst
    def visitor(self: CodeGenerator, node: nodes.BinExpr, frame: Frame) -> None:
        self.write(f"{function}(")
        self.visit(node.left, frame)
        self.write(", ")
        self.visit(node.right, frame)
        self.write(")")

    return visitor


class _GuardedCodeGenerator(CodeGenerator):
    """Jinja's code generator, plus the limit checks of :mod:`~chatcodec.chat_templates.limits`.

    Every ``{% for %}`` iterable goes through the loop-guard filter; ``+ * % **`` and ``~`` call
    size-checking functions (module globals of the generated code: the check costs one function
    call, not a trip through the sandbox's ``call_binop``).
    """

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        self.writeline("from chatcodec.chat_templates.safe_ops import checked_add as cc_add, "
                       "checked_concat as cc_concat, checked_markup_join as cc_markup_join, "
                       "checked_str as cc_str, checked_escape as cc_escape, checked_mul as cc_mul, "
                       "checked_mod as cc_mod, checked_pow as cc_pow, checked_operand as cc_cmp, "
                       "checked_compare as cc_compare")
        for loop in node.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, LOOP_GUARD_FILTER, [], [], None, None, lineno=loop.lineno)
        super().visit_Template(node, frame)

    @optimizeconst
    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        """A comparison with a constant operand (``role == 'user'``, ``'x' in message``) costs what
        the other operand's length costs, as in Jinja; one between two values goes through
        ``cc_compare``, which measures deep operands first (``MAX_COMPARED_ITEMS``)."""
        if len(node.ops) == 1:
            right = node.ops[0]
            if isinstance(node.expr, nodes.Const) or isinstance(right.expr, nodes.Const):
                super().visit_Compare(node, frame)
                return
            self.write(f"cc_compare({right.op!r}, ")
            self.visit(node.expr, frame)
            self.write(", ")
            self.visit(right.expr, frame)
            self.write(")")
            return
        self.write("(")  # a chain (a < b < c): every operand measured
        self._operand(node.expr, frame)
        for operand in node.ops:
            self.write(f" {operators[operand.op]} ")
            self._operand(operand.expr, frame)
        self.write(")")

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self.write("{")
        for index, item in enumerate(node.items):
            if index:
                self.write(", ")
            self._operand(item.key, frame)  # hashed
            self.write(": ")
            self.visit(item.value, frame)
        self.write("}")

    def _operand(self, node: nodes.Expr, frame: Frame) -> None:
        """A compared or hashed value: measured first unless it is a constant (``cc_cmp``)."""
        if isinstance(node, nodes.Const):
            self.visit(node, frame)
            return
        self.write("cc_cmp(")
        self.visit(node, frame)
        self.write(")")

    visit_Add = _checked_binop("cc_add")
    visit_Mul = _checked_binop("cc_mul")
    visit_Mod = _checked_binop("cc_mod")
    visit_Pow = _checked_binop("cc_pow")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        if frame.eval_ctx.volatile:  # Jinja's choice, with the checked functions
            self.write("(cc_markup_join if context.eval_ctx.volatile else cc_concat)((")
        elif frame.eval_ctx.autoescape:
            self.write("cc_markup_join((")
        else:
            self.write("cc_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        """``{{ value }}`` turns ``value`` into text through the checked functions (a list or dict
        is measured before it is printed); Jinja's own choice between escaping and ``str``."""
        if frame.eval_ctx.volatile:
            self.write("(cc_escape if context.eval_ctx.autoescape else cc_str)(")
        elif frame.eval_ctx.autoescape:
            self.write("cc_escape(")
        else:  # a string as it is, inline (most outputs are strings); anything else measured first
            self.write("(cc_out if type(cc_out := ")
        if finalize.src is not None:
            self.write(finalize.src)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if not frame.eval_ctx.volatile and not frame.eval_ctx.autoescape:
            if finalize.src is not None:
                self.write(")")
            self.write(") is str else cc_str(cc_out))")
            return
        super()._output_child_post(node, frame, finalize)


class ChatTemplateEnvironment(ImmutableSandboxedEnvironment):
    """The reference's sandbox plus chatcodec's resource limits. Use :data:`ENVIRONMENT`."""

    code_generator_class = _GuardedCodeGenerator
    concat = staticmethod(checked_buffer)
    #: ``* % **`` must not be folded at compile time (``"a" * 10**9`` would run in the compiler);
    #: at run time the code generator routes them to the checked functions, not to ``call_binop``.
    intercepted_binops = frozenset({"*", "%", "**"})

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``obj.attribute`` for the template: Jinja's sandbox rules, with the frequent cases
        decided first (a public method of a str, dict or list, a key of a plain dict, a loop or
        namespace attribute). Each gives exactly what the sandbox gives; the rest goes through it.

        Args:
            obj: the object the template reads from.
            attribute: the attribute name.

        Returns:
            The attribute (or dict item), an undefined value, or what the sandbox returns (an
            undefined value for unsafe attributes).
        """
        kind = type(obj)
        plain = _PLAIN_ATTRIBUTES.get(kind)
        if plain is not None:
            if attribute in plain:
                return getattr(obj, attribute)
            if kind is dict and attribute not in _DICT_ATTRIBUTES:
                try:
                    return obj[attribute]
                except KeyError:
                    return self.undefined(obj=obj, name=attribute)
        elif kind is TemplateNamespace and not attribute.startswith("_"):
            try:
                value = getattr(obj, attribute)
            except AttributeError:
                return self.undefined(obj=obj, name=attribute)
            if not isinstance(value, _METHOD_TYPES):
                return value
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """``obj[argument]`` for the template: the sandbox's rules, with a missing dict key and a
        string subscripted by a name (``content['type']`` on a str) decided first.

        Args:
            obj: the object the template subscripts.
            argument: the key, index or slice.

        Returns:
            The item, an undefined value, or what the sandbox returns.
        """
        kind = type(obj)
        if kind is dict:
            try:
                return obj[argument]
            except KeyError:
                if type(argument) is not str or argument not in _DICT_ATTRIBUTES:
                    return self.undefined(obj=obj, name=argument)
            except TypeError:
                pass
        elif kind is str and type(argument) is str:
            if argument in _PLAIN_ATTRIBUTES[str]:
                return getattr(obj, argument)
            if argument not in _STR_ATTRIBUTES:
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Call ``__obj`` for the template: count a step, check ``str`` methods that pad or grow.

        Args:
            __context: the template context (Jinja passes it to context-aware callables).
            __obj: what the template calls.
            *args: its positional arguments.
            **kwargs: its keyword arguments.

        Returns:
            The call's result.

        Raises:
            ChatTemplateLimitError: the step or time budget is spent, or a ``str`` method would
                build a string over the limits.
            SecurityError: ``__obj`` is not safely callable (Jinja's sandbox rule).
        """
        state = limits.active_state()
        if state is not None:  # count a step (inlined: this runs for every call a template makes)
            left = state.steps_left - 1
            state.steps_left = left
            if left < 0 or not left % limits.CLOCK_CHECK_STEPS:
                state.check_budget(left)
        if type(__obj) is _BUILTIN_METHOD and type(__obj.__self__) is str:
            args = check_str_method(__obj.__self__, __obj.__name__, args, kwargs)
            result = __context.call(__obj, *args, **kwargs)
            check_str_result(result, __obj.__name__)
            return result
        if not __self.is_safe_callable(__obj):
            raise SecurityError(f"{__obj!r} is not safely callable")
        return __context.call(__obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        """Jinja's sandboxed ``str.format`` / ``format_map``, with width and size checks.

        Args:
            value: the bound method the template is about to call.

        Returns:
            A checked replacement for ``str.format`` / ``format_map`` of a plain ``str``, Jinja's own
            for other owners, or ``None`` when ``value`` is neither method. The replacement raises
            ``ChatTemplateLimitError`` for a width or result over the limits.
        """
        if type(value) not in _METHOD_TYPES or value.__name__ not in ("format", "format_map"):
            return None
        owner = value.__self__
        if type(owner) is not str:  # Markup and str subclasses: Jinja's own handling
            return super().wrap_str_format(value)
        vformat = _CheckedFormatter(self).vformat
        is_format_map = value.__name__ == "format_map"

        def checked(*args: Any, **kwargs: Any) -> str:
            for arg in (*args, *kwargs.values()):
                check_text_size(arg, "formatted list or dict")
            if is_format_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument and no keyword arguments")
                result = vformat(owner, (), args[0])
            else:
                result = vformat(owner, args, kwargs)
            limits.check_length(len(result), "formatted string")
            return result

        return functools.update_wrapper(checked, value)


class _CheckedFormatter(SandboxedFormatter):
    """Jinja's sandboxed formatter, refusing widths over ``MAX_FORMAT_WIDTH``."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        check_format_spec(format_spec)
        return super().format_field(value, format_spec)


def _build_environment() -> ChatTemplateEnvironment:
    env = ChatTemplateEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[GenerationExtension, jinja2.ext.loopcontrols],
    )
    env.filters.update(SAFE_FILTERS)
    env.filters[LOOP_GUARD_FILTER] = _loop_guard
    env.globals.update({
        "raise_exception": raise_exception, "strftime_now": strftime_now, "dict": TemplateDict(),
        "namespace": TemplateNamespace, "lipsum": lipsum,
    })
    return env


#: The one environment every chat template is compiled in.
ENVIRONMENT = _build_environment()


#: How many parsed chat templates :func:`parse_chat_template` keeps (its callers read a few).
TREE_CACHE_SIZE = 32


@functools.lru_cache(maxsize=TREE_CACHE_SIZE)
def parse_chat_template(source: str) -> nodes.Template:
    """Parse a chat template once (cached): the syntax tree that :func:`compile_chat_template`
    compiles (a copy of it) and that the analyses of what a template reads walk.

    Args:
        source: the template text.

    Returns:
        The template's syntax tree, shared by every caller: read it, never change it.

    Raises:
        ChatTemplateSyntaxError: the text is not valid Jinja (the message names the line).
        ChatTemplateLimitError: the template nests too deeply for Python to parse it, or has more
            than :data:`~chatcodec.chat_templates.limits.MAX_TEMPLATE_SYNTAX_TOKENS` syntax tokens.
    """
    try:
        _check_token_count(source)
        return ENVIRONMENT.parse(source)
    except jinja2.TemplateSyntaxError as error:
        raise error_from_exception(error, lineno=error.lineno, source=source) from error
    except (RecursionError, MemoryError) as error:
        raise limits.compile_limit_error(error) from None


def _check_token_count(source: str) -> None:
    """Refuse a template of more than ``MAX_TEMPLATE_SYNTAX_TOKENS`` syntax tokens before parsing it
    (lexing stops at the limit; whitespace and comments inside tags are not counted, as the parser
    never sees them); a template of fewer characters than the limit is not lexed."""
    limit = limits.MAX_TEMPLATE_SYNTAX_TOKENS
    if len(source) <= limit:
        return
    tokens = (kind for _, kind, _ in ENVIRONMENT.lex(source) if kind not in ignored_tokens)
    for count, _ in enumerate(tokens, 1):
        if count > limit:
            raise limits.limit_error(f"a template of more than {limit:,} syntax tokens (names, operators, "
                                     "literals, runs of text)", "MAX_TEMPLATE_SYNTAX_TOKENS", limit)


@functools.lru_cache(maxsize=TEMPLATE_CACHE_SIZE)
def compile_chat_template(source: str) -> jinja2.Template:
    """Compile a chat template once (cached, at most :data:`TEMPLATE_CACHE_SIZE` templates).

    The text is parsed once for everything (:func:`parse_chat_template`); the code generator
    rewrites the tree it compiles (loop guards, folded constants), so it compiles a copy.

    Args:
        source: the template text.

    Returns:
        The compiled template.

    Raises:
        ChatTemplateSyntaxError: the text is not valid Jinja (the message names the line).
        ChatTemplateLimitError: the template nests too deeply for Python to compile it.
    """
    tree = copy_tree(parse_chat_template(source))
    try:
        return ENVIRONMENT.from_string(tree)
    except jinja2.TemplateSyntaxError as error:
        raise error_from_exception(error, lineno=error.lineno, source=source) from error
    except (RecursionError, SyntaxError, MemoryError) as error:
        raise limits.compile_limit_error(error) from None


def copy_tree(tree: nodes.Template) -> nodes.Template:
    """A copy of a syntax tree that shares no node and no list of nodes with it (constants and the
    environment are shared: nothing changes them).

    Args:
        tree: a parsed template.

    Returns:
        The copy, equal to ``tree`` (Jinja nodes compare field by field).
    """
    copies: dict[int, Any] = {}
    stack: list[nodes.Node] = [tree]
    order: list[nodes.Node] = []
    while stack:  # no recursion: a tree as deep as the parser allows is copied too
        node = stack.pop()
        order.append(node)
        for value in node.__dict__.values():
            if isinstance(value, nodes.Node):
                stack.append(value)
            elif type(value) is list:
                stack.extend(item for item in value if isinstance(item, nodes.Node))
    for node in order:
        copies[id(node)] = object.__new__(type(node))
    for node in order:
        fields = copies[id(node)].__dict__
        for name, value in node.__dict__.items():
            fields[name] = _copied(value, copies)
    result: nodes.Template = copies[id(tree)]
    return result


def _copied(value: Any, copies: dict[int, Any]) -> Any:
    if isinstance(value, nodes.Node):
        return copies[id(value)]
    if type(value) is list:
        return [copies[id(item)] if isinstance(item, nodes.Node) else item for item in value]
    return value
