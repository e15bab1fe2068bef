"""Portability lint for chat templates and response templates (SPEC §2.6), with severities.

Every finding has a **severity**: ``error`` means the template is wrong (it cannot be used, or
parsing with it raises); ``warning`` means it is not portable (another engine renders or parses
it differently, measured in ``../shared/research/portability.md``); ``info`` is the seed guide's
advice where today's engines agree anyway. ``chatcodec lint`` fails (exit 1) only on errors.

Chat templates are also rendered by Jinja engines that are not Python (MiniJinja, llama.cpp's,
@huggingface/jinja). Checked here (engine versions: MiniJinja 3.1.0 with ``pycompat``,
@huggingface/jinja 0.5.11):

* ``CT001`` a Python method called on a value (``x.lower()``, ``d.items()``, ``s.strip()``): a
  warning when MiniJinja or @huggingface/jinja lacks it (``.format()``, ``.join()``, ...), info
  when both implement it (the guide's filter spelling still reads better);
* ``CT002`` ``True`` / ``False`` / ``None``: info, both engines accept the Python spelling;
* ``CT003`` a dict or list printed directly (``{{ tools }}``): a warning, @huggingface/jinja prints
  JSON-like text where Jinja2 prints Python's ``repr``; print it with ``|tojson``;
* ``CT004`` ``{% generation %}``: a warning, MiniJinja has no such tag (the template does not parse);
* ``CT005`` CRLF line ends: a warning, Jinja2 reads them as ``\n``, the other engines keep ``\r``;
* ``CT006`` a dict literal with non-string keys: a warning, @huggingface/jinja refuses it;
* ``CT007`` ``{% for a, b in [(x, y), ...] %}`` over tuple literals: a warning,
  @huggingface/jinja cannot unpack them.

Response-template regexes are checked for features other regex engines lack (RE2, JavaScript
without flags, Rust's ``regex``):

* ``RT001`` look-arounds, ``RT002`` back-references, ``RT003`` atomic groups, ``RT004`` possessive
  quantifiers, ``RT005`` recursion: warnings.

And for what a response template does with text:

* ``RT010`` no implicit field: text outside every region is discarded (SPEC §1.5), which is
  rarely what the author wants (a warning);
* ``RT011`` a transform placeholder whose root is not a variable of its field (``content`` or a
  named group of the field's open/close pattern): a typo such as ``"{nmae}"``. The reference
  raises only when such a region first closes (``KeyError``), and chatcodec keeps that timing
  (the corpus vectors pin it), so the linter is where authors learn it early; an optional
  placeholder (``"{nmae?}"``) would silently leave its key out every time. An error. Fields with
  ``transform_each`` are skipped: their variables are the keys of each list element;
* ``RT012`` a chatcodec extension (an ``x-`` content parser, ``flatten``, ``require_close``, an
  optional placeholder ``"{name?}"``, ``"strip": "blank"``): the template needs chatcodec, since
  transformers refuses it or parses differently (:mod:`chatcodec.response_templates.chatcodec_only` says how).
  A warning: the template is right, but not portable;
* ``RT013`` a delimiter or start anchor that matches the empty string almost everywhere (``a*``,
  ``x?``, ``(?=.)``): it would shred the output, so the template does not load. An error.

``CT000`` / ``RT000`` (a template that does not compile / load, reported by ``chatcodec lint`` and
``chatcodec doctor``) are errors. A code missing from :data:`SEVERITIES` is a warning.

The linter never renders and never changes a template; it only reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from chatcodec.response_templates.chatcodec_only import chatcodec_only_features
from chatcodec.response_templates.transform import PLACEHOLDER

__all__ = [
    "SEVERITIES",
    "SEVERITY_ORDER",
    "LintFinding",
    "chat_template_findings",
    "lint_chat_template",
    "lint_pattern",
    "lint_response_template",
    "response_template_findings",
]

#: The severity of each code (``CT001`` depends on the method, see :data:`ENGINE_METHODS`).
SEVERITIES: dict[str, str] = {
    "CT000": "error", "CT001": "warning", "CT002": "info", "CT003": "warning", "CT004": "warning",
    "CT005": "warning", "CT006": "warning", "CT007": "warning",
    "RT000": "error", "RT001": "warning", "RT002": "warning", "RT003": "warning", "RT004": "warning",
    "RT005": "warning", "RT010": "warning", "RT011": "error", "RT012": "warning", "RT013": "error",
}

#: Severities from the most to the least serious.
SEVERITY_ORDER = ("error", "warning", "info")

#: The Python methods each engine implements, measured by calling each on a string, a dict and a
#: list (MiniJinja 3.1.0 with ``pycompat``; @huggingface/jinja 0.5.11). A method missing from one
#: fails there whatever the value; one both implement renders the same as in Jinja2.
ENGINE_METHODS: dict[str, frozenset[str]] = {
    "MiniJinja": frozenset({
        "lower", "upper", "title", "capitalize", "strip", "lstrip", "rstrip", "split", "splitlines",
        "startswith", "endswith", "replace", "format", "join", "find", "rfind", "count", "isdigit",
        "isalpha", "isspace", "islower", "isupper", "isalnum", "isnumeric", "items", "keys", "values", "get",
    }),
    "@huggingface/jinja": frozenset({
        "lower", "upper", "title", "capitalize", "strip", "lstrip", "rstrip", "split", "startswith",
        "endswith", "replace", "items", "keys", "values", "get",
    }),
}

#: Python methods and the Jinja filter to use instead (``None``: no direct equivalent).
PYTHON_METHODS: dict[str, str | None] = {
    "lower": "|lower", "upper": "|upper", "title": "|title", "capitalize": "|capitalize",
    "strip": "|trim", "lstrip": None, "rstrip": None, "split": None, "splitlines": None,
    "startswith": None, "endswith": None, "replace": "|replace(old, new)", "format": "|format(...)",
    "join": "|join(sep)", "find": None, "rfind": None, "index": None, "count": None,
    "items": "|items (or |dictitems)", "keys": "|list", "values": None, "get": "x[key] with is defined",
    "encode": None, "ljust": None, "rjust": None, "center": "|center(width)", "zfill": None,
    "isdigit": None, "isalpha": None, "isspace": None, "casefold": "|lower", "copy": None,
}

#: Names that usually hold dicts or lists in chat templates (printing them needs ``|tojson``).
_STRUCTURED_NAMES = frozenset({
    "tools", "messages", "documents", "tool_calls", "arguments", "parameters", "properties", "function",
    "tool", "tool_call", "json_schema", "schema",
})

#: Filters whose result is a string, so printing it is portable.
_STRING_FILTERS = frozenset({
    "tojson", "string", "join", "length", "count", "trim", "lower", "upper", "title", "capitalize", "e",
    "escape", "safe", "replace", "format", "indent", "center", "truncate", "wordcount", "int", "float",
    "default", "d", "first", "last", "striptags", "urlencode",
})


@dataclass(frozen=True, slots=True)
class LintFinding:
    """One portability problem.

    Attributes:
        code: ``CT00x`` (chat template) or ``RT0xx`` (response template).
        message: what is wrong and what to write instead.
        line: the template line (chat templates), or ``None``.
        where: the JSON path of the pattern (response templates), or ``None``.
        severity: ``"error"`` (the template is wrong), ``"warning"`` (not portable) or ``"info"``;
            left empty, it is the code's entry in :data:`SEVERITIES` (``"warning"`` for a code not
            listed there).
    """

    code: str
    message: str
    line: int | None = None
    where: str | None = None
    severity: str = ""

    def __post_init__(self) -> None:
        if not self.severity:
            object.__setattr__(self, "severity", SEVERITIES.get(self.code, "warning"))
        if self.severity not in SEVERITY_ORDER:
            raise ValueError(f"LintFinding: severity must be one of {SEVERITY_ORDER}, got {self.severity!r}")

    def __str__(self) -> str:
        location = f"line {self.line}" if self.line is not None else (self.where or "")
        text = f"{self.severity} {self.code} {self.message}"
        return f"{location}: {text}" if location else text


def lint_chat_template(source: str) -> list[LintFinding]:
    """Report the non-portable constructs of a chat template, in line order.

    Args:
        source: the chat template text.

    Returns:
        The findings, by line, then by code (empty when the template is portable).

    Raises:
        ChatTemplateSyntaxError: the template is not valid Jinja.
        ChatTemplateLimitError: the template nests too deeply for Python to compile it (it could
            never render).
    """
    from chatcodec.chat_templates.environment import ENVIRONMENT, compile_chat_template

    compile_chat_template(source)  # every error a render would hit before running, named as a render names it
    ast = ENVIRONMENT.parse(source)
    tokens = list(ENVIRONMENT.lex(source))
    findings = [*_method_calls(ast), *_python_literals(tokens), *_printed_structures(ast),
                *_engine_hazards(source, ast, tokens)]
    return sorted(findings, key=lambda finding: (finding.line or 0, finding.code))


def chat_template_findings(source: str) -> list[LintFinding]:
    """Every finding of a chat template, including ``CT000`` when it cannot be used at all.

    Args:
        source: the chat template text.

    Returns:
        ``[CT000]`` (an error) for an empty template (only whitespace) or one that does not compile
        (with its line when known), else :func:`lint_chat_template`'s findings.
    """
    from chatcodec.chat_templates.errors import ChatTemplateError

    if not source.strip():
        return [LintFinding("CT000", "empty template: every prompt it renders is empty (or only whitespace)")]
    try:
        return lint_chat_template(source)
    except ChatTemplateError as error:
        return [LintFinding("CT000", f"cannot compile: {error.message}", error.lineno)]


def _method_calls(ast: Any) -> Iterator[LintFinding]:
    from jinja2 import nodes

    for call in ast.find_all(nodes.Call):
        target = call.node
        if isinstance(target, nodes.Getattr) and target.attr in PYTHON_METHODS:
            if isinstance(target.node, nodes.Name) and target.node.name in ("loop", "cycler", "joiner"):
                continue
            yield _method_finding(target.attr, call.lineno)


def _method_finding(method: str, line: int) -> LintFinding:
    """``CT001`` for ``.method()``: a warning naming the engines that lack it, else info."""
    instead = PYTHON_METHODS[method]
    hint = f"use {instead}" if instead else "no filter does exactly this"
    lacking = [engine for engine, methods in ENGINE_METHODS.items() if method not in methods]
    if lacking:
        engines = " or ".join(lacking)
        message = f"Python method .{method}() is not implemented by {engines}; {hint}"
        return LintFinding("CT001", message, line, severity="warning")
    return LintFinding("CT001", f"Python method .{method}() (MiniJinja and @huggingface/jinja implement it "
                                f"too); {hint} for other engines", line, severity="info")


def _python_literals(tokens: list[tuple[int, str, str]]) -> Iterator[LintFinding]:
    spelling = {"True": "true", "False": "false", "None": "none"}
    for lineno, kind, value in tokens:
        if kind == "name" and value in spelling:
            yield LintFinding("CT002", f"{value} is Python spelling (MiniJinja and @huggingface/jinja accept "
                                      f"it too); write {spelling[value]} for other engines", lineno)


def _printed_structures(ast: Any) -> Iterator[LintFinding]:
    """Outputs of probable dicts or lists, except inside ``{% if x is string %}`` for that ``x``."""
    from jinja2 import nodes

    stack: list[tuple[Any, frozenset[str]]] = [(ast, frozenset())]
    while stack:
        node, strings = stack.pop()
        if isinstance(node, nodes.If):
            guarded = strings | _string_tests(node.test)
            stack += [(child, guarded) for child in node.body]
            stack += [(child, strings) for child in (*node.elif_, *node.else_)]
            stack.append((node.test, strings))
            continue
        if isinstance(node, nodes.Output):
            for expr in node.nodes:
                skip = isinstance(expr, nodes.TemplateData) or repr(expr) in strings
                name = None if skip else _structured(expr)
                if name is not None:
                    yield LintFinding("CT003", f"{name} may be a dict or list printed with Python's repr "
                                               "(@huggingface/jinja prints JSON-like text instead); print it "
                                               "with |tojson", expr.lineno)
        stack += [(child, strings) for child in node.iter_child_nodes()]


def _string_tests(test: Any) -> frozenset[str]:
    """The expressions a condition proves to be strings (``x is string``, joined with ``and``)."""
    from jinja2 import nodes

    if isinstance(test, nodes.Test) and test.name == "string":
        return frozenset({repr(test.node)})
    if isinstance(test, nodes.And):
        return _string_tests(test.left) | _string_tests(test.right)
    return frozenset()


def _structured(expr: Any) -> str | None:
    """The name of a printed expression that is (probably) a dict or list, else ``None``."""
    from jinja2 import nodes

    if isinstance(expr, (nodes.Dict, nodes.List)):
        return "a literal dict or list"
    if isinstance(expr, nodes.Filter):
        return None if expr.name in _STRING_FILTERS else _structured(expr.node)
    if isinstance(expr, nodes.Name) and expr.name in _STRUCTURED_NAMES:
        return f"'{expr.name}'"
    if isinstance(expr, nodes.Getattr) and expr.attr in _STRUCTURED_NAMES:
        return f"'.{expr.attr}'"
    if isinstance(expr, nodes.Getitem) and isinstance(expr.arg, nodes.Const) \
            and expr.arg.value in _STRUCTURED_NAMES:
        return f"'[{expr.arg.value!r}]'"
    return None


def _engine_hazards(source: str, ast: Any, tokens: list[tuple[int, str, str]]) -> Iterator[LintFinding]:
    """``CT004``-``CT007``: constructs that diverge on another engine whenever they run."""
    from jinja2 import nodes

    significant = [token for token in tokens if token[1] != "whitespace"]
    for index, (lineno, kind, _) in enumerate(significant[:-1]):
        if kind == "block_begin" and significant[index + 1][1:] == ("name", "generation"):
            yield LintFinding("CT004", "{% generation %} is a transformers tag: MiniJinja cannot parse the "
                                       "template; keep it only if assistant masks are needed", lineno)
    if "\r\n" in source:
        line = source[:source.index("\r\n")].count("\n") + 1
        yield LintFinding("CT005", "CRLF line ends: Jinja2 reads them as \\n, MiniJinja and "
                                   "@huggingface/jinja keep the \\r in the output; save the file with LF "
                                   "line ends", line)
    for literal in ast.find_all(nodes.Dict):
        keys = [pair.key for pair in literal.items]
        if any(isinstance(key, nodes.Const) and not isinstance(key.value, str) for key in keys):
            yield LintFinding("CT006", "a dict literal with non-string keys: @huggingface/jinja refuses it "
                                       "(\"Object keys must be strings\"); use string keys", literal.lineno)
    for loop in ast.find_all(nodes.For):
        if isinstance(loop.target, nodes.Tuple) and isinstance(loop.iter, (nodes.List, nodes.Tuple)) \
                and any(isinstance(item, nodes.Tuple) for item in loop.iter.items):
            yield LintFinding("CT007", "unpacking tuple literals in a for loop: @huggingface/jinja cannot; "
                                       "loop over a list of lists or dicts", loop.lineno)


# --- response-template regexes -----------------------------------------------------------------

_PATTERN_KEYS = ("open_pattern", "close_pattern")


def lint_response_template(template: Mapping[str, Any]) -> list[LintFinding]:
    """Report regex features of a response template's patterns that other engines lack.

    Args:
        template: the response template as a JSON object (not validated here).

    Returns:
        The findings of ``start_anchor_pattern``, then of each field's patterns and
        ``tag_pattern`` and the ``RT011`` of its transform, in template order, then the ``RT012``
        chatcodec extensions, then ``RT010`` when no field is implicit; each names its JSON path
        in ``where``.
    """
    findings: list[LintFinding] = []
    if isinstance(template.get("start_anchor_pattern"), str):
        findings += lint_pattern(template["start_anchor_pattern"], "start_anchor_pattern")
        findings += _delimiter_findings(template["start_anchor_pattern"], "start_anchor_pattern")
    fields = template.get("fields")
    specs = [(name, spec) for name, spec in (fields.items() if isinstance(fields, Mapping) else ())
             if isinstance(spec, Mapping)]
    for name, spec in specs:
        for key in _PATTERN_KEYS:
            if isinstance(spec.get(key), str):
                findings += lint_pattern(spec[key], f"fields.{name}.{key}")
                findings += _delimiter_findings(spec[key], f"fields.{name}.{key}")
        args = spec.get("content_args")
        if isinstance(args, Mapping) and isinstance(args.get("tag_pattern"), str):
            findings += lint_pattern(args["tag_pattern"], f"fields.{name}.content_args.tag_pattern")
        findings += _unknown_placeholders(name, spec)
    findings += [
        LintFinding("RT012", f"{feature.feature} is a chatcodec extension, so this response template "
                    f"needs chatcodec: {feature.effect}", where=feature.where)
        for feature in chatcodec_only_features(template)
    ]
    if specs and all("open" in spec or "open_pattern" in spec for _, spec in specs):
        findings.append(LintFinding(
            "RT010", "no implicit field (a field without open/open_pattern), so text outside every region "
            'is discarded; add one (e.g. "content": {}) to keep that text', where="fields"))
    return findings


def response_template_findings(template: Any) -> list[LintFinding]:
    """Every finding of a response template, including ``RT000`` when it does not load.

    Args:
        template: the response template as a JSON value.

    Returns:
        ``RT000`` (an error, with the loader's message) when the template does not load, then
        :func:`lint_response_template`'s findings.
    """
    from chatcodec.errors import ResponseTemplateError
    from chatcodec.response_templates.template import load_response_template

    findings = []
    try:
        load_response_template(template)
    except ResponseTemplateError as error:
        message = str(error)
        if error.path and not message.startswith(f"{error.path}:"):
            message = f"{error.path}: {message}"
        findings.append(LintFinding("RT000", message))
    return findings + (lint_response_template(template) if isinstance(template, Mapping) else [])


def _delimiter_findings(source: str, where: str) -> list[LintFinding]:
    """``RT013`` for a delimiter that matches the empty string almost everywhere (the template does
    not load: it would shred the output)."""
    from chatcodec.response_templates.delimiters import compile_pattern, empty_match_problem

    try:
        pattern = compile_pattern(source)
    except regex.error:
        return []  # the template does not load; RT000 says why
    problem = empty_match_problem(pattern)
    return [] if problem is None else [LintFinding("RT013", f"{problem}: {source!r}", where=where)]


def _unknown_placeholders(name: str, spec: Mapping[str, Any]) -> list[LintFinding]:
    """``RT011`` for each placeholder of the field's transform whose root no region can define."""
    from chatcodec.response_templates.delimiters import compile_pattern

    if "transform" not in spec or spec.get("transform_each") is True:
        return []
    variables = {"content"}
    for key in ("open_pattern", "close_pattern"):
        if isinstance(spec.get(key), str):
            try:
                variables.update(compile_pattern(spec[key]).groupindex)
            except regex.error:
                return []  # the template does not load; RT000 says why
    findings = []
    for where, text in _strings(spec["transform"], f"fields.{name}.transform"):
        whole = PLACEHOLDER.fullmatch(text)
        root = whole.group(1).split(".")[0] if whole is not None else None
        if root is not None and root not in variables:
            effect = ("so its key is always left out" if whole is not None and whole.group(2)
                      else "parsing raises when such a region closes")
            findings.append(LintFinding(
                "RT011", f"placeholder {text!r} names no variable of this field (available: "
                f"{', '.join(sorted(variables))}); {effect}", where=where))
    return findings


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string inside a JSON value, with its path."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def lint_pattern(pattern: str, where: str) -> list[LintFinding]:
    """Report the non-portable regex features of one pattern.

    Args:
        pattern: the regex source.
        where: its JSON path in the template, put in each finding.

    Returns:
        One finding per feature, in pattern order.
    """
    findings = []
    for code, message in _scan_pattern(pattern):
        findings.append(LintFinding(code, f"{message} in {pattern!r}", where=where))
    return findings


_GROUP_PREFIXES = (
    ("(?<=", "RT001", "look-behind (?<=...)"), ("(?<!", "RT001", "negative look-behind (?<!...)"),
    ("(?=", "RT001", "look-ahead (?=...)"), ("(?!", "RT001", "negative look-ahead (?!...)"),
    ("(?>", "RT003", "atomic group (?>...)"), ("(?P=", "RT002", "named back-reference (?P=name)"),
    ("(?P>", "RT005", "recursion (?P>name)"), ("(?&", "RT005", "recursion (?&name)"),
    ("(?R)", "RT005", "recursion (?R)"),
)


def _scan_pattern(pattern: str) -> Iterator[tuple[str, str]]:
    """Walk a regex, skipping escapes and character classes, and yield (code, message) findings."""
    position = 0
    after_quantifier = False
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            escape = pattern[position + 1: position + 2]
            if escape.isdigit() and escape != "0":
                yield "RT002", f"back-reference \\{escape}"
            elif escape in ("g", "k") and pattern[position + 2: position + 3] in ("<", "{", "'"):
                yield "RT002", f"back-reference \\{escape}<name>"
            position += 2
            after_quantifier = False
            continue
        if char == "[":
            position = _skip_class(pattern, position)
            after_quantifier = False
            continue
        if char == "(":
            for prefix, code, message in _GROUP_PREFIXES:
                if pattern.startswith(prefix, position):
                    yield code, message
                    break
            else:
                if pattern.startswith("(?", position) and pattern[position + 2: position + 3].isdigit():
                    yield "RT005", "recursion (?N)"
        quantifier = char in "*+?}" and not (char == "?" and pattern[position - 1: position] == "(")
        if char == "+" and after_quantifier:
            yield "RT004", "possessive quantifier (X*+, X++, X?+, X{n}+)"
            quantifier = False
        after_quantifier = quantifier
        position += 1


def _skip_class(pattern: str, start: int) -> int:
    """The position just after the character class that starts at ``start``."""
    position = start + 1
    if pattern[position: position + 1] == "^":
        position += 1
    if pattern[position: position + 1] == "]":
        position += 1
    while position < len(pattern):
        if pattern[position] == "\\":
            position += 2
            continue
        if pattern[position] == "]":
            return position + 1
        position += 1
    return position
