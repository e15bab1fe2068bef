"""What a chat template reads, found in its syntax tree: message content as parts, and its variables.

What lives here: :func:`reads_content_parts` (does the template read a message's ``content`` as
a list of typed parts, ``{"type": "text", ...}``, ``{"type": "image"}``, or only as text?) and
:func:`template_variables` (the variables it reads that it does not set itself). Request
normalisation (:mod:`chatcodec.chat_templates.openai_inputs`, :mod:`chatcodec.chat_templates.requests`)
asks them how to hand a conversation to a given template.

Rule kept: the answer comes from the template's syntax, never from rendering it. A template reads
parts when it loops over a message's ``content`` (``{% for part in message['content'] %}``),
picks items of it (``content[0]``, ``content|selectattr(...)``, ``content|map(...)``), directly or
through a variable or a macro argument that holds it (``{% set c = message.content %}``,
``render_content(message.content)``). This is the test vLLM and SGLang apply for their "openai"
vs "string" content formats; on the 59 corpus templates it agrees with what each template does
with the corpus's ``multimodal`` conversation (test: ``tests/chat_templates/test_template_reads.py``).
"""

from __future__ import annotations

import functools
from typing import TypeVar

from jinja2 import nodes

from chatcodec.chat_templates.environment import compile_chat_template, copy_tree, parse_chat_template

__all__ = ["reads_arguments_as_text", "reads_content_parts", "template_variables"]

#: Filters that treat their operand as a sequence of parts (on a string they would see characters).
_PART_FILTERS = frozenset({"selectattr", "rejectattr", "map", "first", "last", "select", "reject"})

#: Filters and methods that read their operand as a mapping.
_MAPPING_FILTERS = frozenset({"tojson", "items", "dictsort"})
_MAPPING_METHODS = frozenset({"items", "keys", "values", "get"})


def _branches(expr: nodes.Node) -> list[nodes.Node]:
    """The values ``expr`` may have without changing what it holds: filters stripped, both sides of
    an inline ``if`` and of ``or`` / ``and`` (``message.content|trim``, ``c if c is string else ''``,
    ``tc.arguments or {}``)."""
    if isinstance(expr, nodes.Filter) and expr.node is not None:
        return _branches(expr.node)
    if isinstance(expr, nodes.CondExpr):
        return [*_branches(expr.expr1), *(_branches(expr.expr2) if expr.expr2 is not None else [])]
    if isinstance(expr, (nodes.Or, nodes.And)):
        return [*_branches(expr.left), *_branches(expr.right)]
    return [expr]


def _reads_key(expr: nodes.Node, key: str, aliases: set[str]) -> bool:
    """``expr`` is the ``key`` of something (``x.content``, ``x['content']``) or a name holding one."""
    for branch in _branches(expr):
        if isinstance(branch, nodes.Getattr) and branch.attr == key:
            return True
        if isinstance(branch, nodes.Getitem) and isinstance(branch.arg, nodes.Const) \
                and branch.arg.value == key:
            return True
        if isinstance(branch, nodes.Name) and branch.name in aliases:
            return True
    return False


class _Nodes:
    """Every node of a template's syntax tree by class, from one walk (each :meth:`all` answers what
    ``tree.find_all(cls)`` would: the nodes below the root that are instances of ``cls``, in the
    same depth-first order)."""

    def __init__(self, tree: nodes.Template) -> None:
        by_class: dict[type, list[nodes.Node]] = {}
        stack: list[nodes.Node] = [tree]
        while stack:  # pre-order, children in field order, as Node.find_all visits them
            node = stack.pop()
            if node is not tree:
                for cls in type(node).__mro__:
                    by_class.setdefault(cls, []).append(node)
            children: list[nodes.Node] = []
            for field in node.fields:
                value = getattr(node, field, None)
                if isinstance(value, list):
                    children.extend(item for item in value if isinstance(item, nodes.Node))
                elif isinstance(value, nodes.Node):
                    children.append(value)
            stack.extend(reversed(children))
        self._by_class = by_class

    def all(self, cls: type[_N]) -> list[_N]:
        """The nodes that are instances of ``cls``, in tree order."""
        return self._by_class.get(cls, [])  # type: ignore[return-value]


_N = TypeVar("_N", bound=nodes.Node)


def _aliases(tree: _Nodes, key: str) -> set[str]:
    """The names that hold a ``key`` value: ``{% set %}`` targets and macro parameters given one."""
    macros = {macro.name: macro for macro in tree.all(nodes.Macro)}
    aliases: set[str] = set()
    while True:
        found: set[str] = set()
        for assign in tree.all(nodes.Assign):
            if isinstance(assign.target, nodes.Name) and _reads_key(assign.node, key, aliases):
                found.add(assign.target.name)
        for call in tree.all(nodes.Call):
            macro = macros.get(call.node.name) if isinstance(call.node, nodes.Name) else None
            if macro is None:
                continue
            params = [param.name for param in macro.args]
            found.update(name for name, arg in zip(params, call.args, strict=False)
                         if _reads_key(arg, key, aliases))
            found.update(keyword.key for keyword in call.kwargs
                         if keyword.key in params and _reads_key(keyword.value, key, aliases))
        if found <= aliases:
            return aliases
        aliases |= found


def _tree(chat_template: str) -> nodes.Template:
    """The template's syntax tree (compiled first, so a bad template raises as rendering it would),
    parsed once for compiling and for these analyses."""
    compile_chat_template(chat_template)
    return parse_chat_template(chat_template)


@functools.lru_cache(maxsize=32)
def _nodes(chat_template: str) -> _Nodes:
    """The template's nodes by class (compiled first, as :func:`_tree`)."""
    return _Nodes(_tree(chat_template))


@functools.lru_cache(maxsize=128)
def reads_content_parts(chat_template: str) -> bool:
    """Whether the template reads a message's ``content`` as a list of typed parts.

    Args:
        chat_template: the template text.

    Returns:
        ``True`` when the template loops over, indexes or filters a message's content as a list
        (see the module docstring); ``False`` when it only reads content as text.

    Raises:
        ChatTemplateError: the template cannot be compiled (as rendering it would raise).
    """
    tree = _nodes(chat_template)
    aliases = _aliases(tree, "content")
    if any(_reads_key(loop.iter, "content", aliases) for loop in tree.all(nodes.For)):
        return True
    for item in tree.all(nodes.Getitem):
        index = item.arg.value if isinstance(item.arg, nodes.Const) else None
        if type(index) is int and _reads_key(item.node, "content", aliases):
            return True
    return any(
        item.name in _PART_FILTERS and item.node is not None and _reads_key(item.node, "content", aliases)
        for item in tree.all(nodes.Filter)
    )


@functools.lru_cache(maxsize=128)
def reads_arguments_as_text(chat_template: str) -> bool:
    """Whether the template uses a tool call's ``arguments`` only as text (a JSON string).

    Text use: joined to other text (``'...' + tool['function']['arguments']``, ``~``) or written
    out as it is (``{{ tool_call.arguments }}``). Mapping use: ``|tojson``, ``|items``,
    ``|dictsort``, ``.items()``, a loop over it, an item of it (``arguments['city']``,
    ``arguments.city``). A template that tests the type (``is string``, ``is mapping``) takes both.

    Args:
        chat_template: the template text.

    Returns:
        ``True`` when the template has a text use and neither a mapping use nor a type test
        (DeepSeek R1 / V3.1, functionary v3.1: they concatenate the arguments string); ``False``
        otherwise (the template reads a mapping, takes both, or never reads arguments).

    Raises:
        ChatTemplateError: the template cannot be compiled.
    """
    tree = _nodes(chat_template)
    aliases = _aliases(tree, "arguments")

    def reads(expr: nodes.Node | None) -> bool:
        return expr is not None and _reads_key(expr, "arguments", aliases)

    text = any(reads(node.left) or reads(node.right) for node in tree.all(nodes.Add))
    text = text or any(any(reads(item) for item in node.nodes) for node in tree.all(nodes.Concat))
    text = text or any(
        isinstance(item, (nodes.Getattr, nodes.Getitem, nodes.Name)) and reads(item)
        for node in tree.all(nodes.Output) for item in node.nodes)
    if not text:
        return False
    if any(node.name in ("string", "mapping") and reads(node.node) for node in tree.all(nodes.Test)):
        return False
    if any(node.name in _MAPPING_FILTERS and reads(node.node) for node in tree.all(nodes.Filter)):
        return False
    if any(reads(loop.iter) for loop in tree.all(nodes.For)):
        return False
    for call in tree.all(nodes.Call):
        method = call.node
        if isinstance(method, nodes.Getattr) and method.attr in _MAPPING_METHODS and reads(method.node):
            return False
    for attribute in tree.all(nodes.Getattr):  # arguments.city (a method is a call, above)
        if reads(attribute.node) and attribute.attr not in _MAPPING_METHODS:
            return False
    return not any(reads(item.node) for item in tree.all(nodes.Getitem))  # arguments['city']


@functools.lru_cache(maxsize=128)
def template_variables(chat_template: str) -> frozenset[str]:
    """The variables the template reads without setting them (``enable_thinking``, ``tools``, ...).

    Args:
        chat_template: the template text.

    Returns:
        Their names (Jinja's ``find_undeclared_variables``).

    Raises:
        ChatTemplateError: the template cannot be compiled.
    """
    import jinja2.meta

    # Jinja's tracking code generator folds constants into the tree it reads: give it a copy
    return frozenset(jinja2.meta.find_undeclared_variables(copy_tree(_tree(chat_template))))
