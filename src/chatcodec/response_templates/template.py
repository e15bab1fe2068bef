"""Response templates: JSON spec in, frozen compiled template out, every check done at load.

``load_response_template`` validates every key of SPEC §1.1 and compiles everything the engine
needs (delimiters, the per-state matchers, content parsers) so that nothing is looked up or
validated mid-stream. Each error is a :class:`~chatcodec.errors.ResponseTemplateError` whose
message starts with the JSON path of the offending key (``fields.tool_calls.close_pattern: ...``;
a problem of the whole template is a sentence of its own, ``Unknown keys in response_template:
...``, never a path repeated inside the message) and keeps the reference's key phrases, with
``.field``, ``.key`` and ``.path`` set. The top-level shape (version, keys, ``defaults``,
``fields``, the start anchor) is checked before any field, so the first real problem is reported.

Compiled templates are cached (:data:`TEMPLATE_CACHE_SIZE`, least recently used first out), keyed
by the JSON text of the dict, so ``parse_response(text, dict)`` in a loop compiles once. A cached
template is shared, so it is read-only: its mappings refuse changes, and ``spec`` / ``to_dict()``
return copies.

This module never parses model output; it only describes how to.
"""

from __future__ import annotations

import _thread
import copy
import json
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from types import MappingProxyType

import regex

from chatcodec.errors import ResponseTemplateError
from chatcodec.response_templates import backtracking, limits
from chatcodec.response_templates.backtracking import UNTIMED_SPAN, catastrophe, judge
from chatcodec.response_templates.content import (
    ContentParser,
    Prepared,
    known_parser_names,
    lookup_parser,
    prepare_parser,
)
from chatcodec.response_templates.delimiters import (
    Delimiter,
    compile_pattern,
    empty_match_problem,
    literal_delimiter,
    regex_delimiter,
    unsupported_construct,
)
from chatcodec.response_templates.limits import (
    MAX_DELIMITER_LITERALS,
    MAX_NESTING_DEPTH,
    exceeds_depth,
    static_depth,
)
from chatcodec.response_templates.lookbehind import lookbehind_problem
from chatcodec.response_templates.matcher import Matcher, build_matcher
from chatcodec.response_templates.pattern_size import expanded_size
from chatcodec.response_templates.transform import Build, compile_transform, validate_transform
from chatcodec.response_templates.value_end import value_end_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["TEMPLATE_CACHE_SIZE", "FieldSpec", "ResponseTemplate", "load_response_template"]

#: How many compiled templates :func:`load_response_template` keeps for template dicts it sees again.
TEMPLATE_CACHE_SIZE = 64

_TEMPLATE_KEYS = frozenset({"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"})
_FIELD_KEYS = frozenset({
    "open", "open_pattern", "close", "close_pattern", "content", "content_args", "repeats", "join",
    "optional", "transform", "transform_each",
    "flatten",  # chatcodec extension: a repeating field whose every match is a list gives one list
    "require_close",  # chatcodec extension: a region cut off by the end of generation is a problem
    "close_at_value_end",  # chatcodec extension: the region closes where its content parser's value ends
    "opens_once",  # chatcodec extension: once a region of the field closed, its open is plain text
})


class FieldSpec:
    """One compiled field of a response template.

    Attributes:
        name: the output key.
        open: the open delimiter; ``None`` for the implicit field.
        close: the close delimiter; ``None`` when the region runs to the end of the generation.
        content: the content parser's name; ``parser`` is the parser itself.
        content_args: the parser's arguments (validated; a read-only mapping).
        repeats, join, optional, transform, transform_each: as in the JSON spec.
        flatten: (chatcodec extension, with ``repeats``) every match's value is a list whose items
            are appended one by one, so several blocks of calls give one flat list.
        close_at_value_end: (chatcodec extension) the region also closes where its content
            parser's value ends (``value_end.py``).
        require_close: (chatcodec extension) a region that the end of generation closes, before
            its own close delimiter, is a parse problem (a cut-off call whose text cannot show it
            is incomplete).
        opens_once: (chatcodec extension) once a region of this field closed by its close
            delimiter, the field's open is no longer watched: a later occurrence is plain text of
            the surrounding (implicit) field (a ``<think>`` quoted in the answer).
        dirty: the ``dirty`` flag of this field's ``region_chunk`` events.
        concatenates: a non-repeating plain-text field: its value is the parsed concatenation of
            all its regions' raw text (SPEC §1.5, "nothing is lost").
        close_matcher: the matcher used while this (explicit) field's region is open.
        parse: the content parser prepared at load (:func:`~.content.prepare_parser`):
            ``parse(raw)`` is ``parser.parse(raw, content_args)``, nothing looked up at a close.
        build: ``transform`` compiled once (:func:`~.transform.compile_transform`), ``None`` without one.
        transform_depth: how many levels of lists and dicts the transform adds above the content
            value (one more with ``transform_each``, for the list), 0 without a transform.
    """

    __slots__ = ("build", "close", "close_at_value_end", "close_matcher", "concatenates", "content",
                 "content_args", "dirty", "flatten", "join", "name", "open", "opens_once", "optional",
                 "parse", "parser", "repeats", "require_close", "transform", "transform_depth",
                 "transform_each")

    def __init__(self, name: str, open: Delimiter | None, close: Delimiter | None, content: str,
                 content_args: Mapping[str, Any], parser: ContentParser, repeats: bool, flatten: bool,
                 require_close: bool, close_at_value_end: bool, join: str | None, optional: bool,
                 transform: Any, transform_each: bool, dirty: bool, concatenates: bool,
                 close_matcher: Matcher | None, parse: Prepared, transform_depth: int = 0,
                 build: Build | None = None, opens_once: bool = False) -> None:
        self.name = name
        self.open = open
        self.close = close
        self.content = content
        self.content_args = content_args
        self.parser = parser
        self.repeats = repeats
        self.flatten = flatten
        self.require_close = require_close
        self.close_at_value_end = close_at_value_end
        self.join = join
        self.optional = optional
        self.transform = transform
        self.transform_each = transform_each
        self.dirty = dirty
        self.concatenates = concatenates
        self.close_matcher = close_matcher
        self.parse = parse
        self.transform_depth = transform_depth
        self.build = build
        self.opens_once = opens_once

    def __repr__(self) -> str:
        return f"FieldSpec({self.name!r}, content={self.content!r})"


class ResponseTemplate:
    """A validated, compiled response template (build it with :func:`load_response_template`).

    Read-only: a compiled template may be shared by every caller that loaded an equal dict.

    Attributes:
        fields: field name -> :class:`FieldSpec`, in template order (a read-only mapping).
        defaults: values pre-set in every message (read-only; each message gets a copy).
        implicit: the field without ``open`` (collects text outside every region), or ``None``.
        start_anchor: matches where the current assistant message starts inside a prompt.
        outside_matcher: the matcher used while no explicit region is open (``None``: nothing to watch).
        once_outside: ``opens_once`` field name -> the outside matcher once that field alone has
            closed (built at load: the usual case, one such field, costs a lookup).
        closed_outside: the outside matchers once several ``opens_once`` fields closed
            (:meth:`outside_after`), built when first asked for.
        extensions_used: the ``x-`` content parsers used; non-empty means the template needs chatcodec.
        spec: the JSON spec the template was loaded from (a new copy on every access).
    """

    __slots__ = ("closed_outside", "defaults", "extensions_used", "fields", "implicit", "once_outside",
                 "outside_matcher", "source", "start_anchor")

    def __init__(self, fields: Mapping[str, FieldSpec], defaults: Mapping[str, Any],
                 implicit: FieldSpec | None, start_anchor: regex.Pattern[str],
                 outside_matcher: Matcher | None, extensions_used: frozenset[str], source: Mapping[str, Any],
                 once_outside: Mapping[str, Matcher | None] | None = None) -> None:
        self.fields = fields
        self.defaults = defaults
        self.implicit = implicit
        self.start_anchor = start_anchor
        self.outside_matcher = outside_matcher
        self.extensions_used = extensions_used
        self.source = source
        self.once_outside: Mapping[str, Matcher | None] = {} if once_outside is None else once_outside
        self.closed_outside: dict[frozenset[str], Matcher | None] = {}

    def __repr__(self) -> str:
        return f"ResponseTemplate(fields={list(self.fields)!r})"

    @property
    def spec(self) -> dict[str, Any]:
        """The JSON spec the template was loaded from, as a new dict."""
        return copy.deepcopy(dict(self.source))

    def to_dict(self) -> dict[str, Any]:
        """The JSON spec, as a new dict (what ``tokenizer_config.json`` stores)."""
        return self.spec

    def __reduce__(self) -> tuple[Any, ...]:
        # compiled patterns and read-only views do not pickle as such: rebuild from the spec
        return (load_response_template, (self.spec,))

    def outside_after(self, closed: frozenset[str]) -> Matcher | None:
        """The matcher for OUTSIDE once the ``opens_once`` fields named in ``closed`` have closed:
        every open but theirs, and the implicit field's close (``None``: nothing left to watch).

        Built once per set of names and kept (a parser swaps matchers when such a field closes,
        so the state change costs nothing per chunk). Safe to share: building twice for the same
        set gives equal matchers, and the last one stored wins.
        """
        if closed not in self.closed_outside:
            self.closed_outside[closed] = _outside_matcher(self.fields, closed)
        return self.closed_outside[closed]

    def truncate_prefix(self, prefix: str) -> str:
        """The part of ``prefix`` after the last start-anchor match (all of it if there is none).

        Args:
            prefix: the prompt text.

        Returns:
            What of the prompt belongs to the assistant message being generated.
        """
        after = self.after_last_anchor(prefix)
        return prefix if after is None else after

    def after_last_anchor(self, prefix: str) -> str | None:
        """The part of ``prefix`` after the last start-anchor match, or ``None`` when there is none.

        Matches are found left to right without overlap, as ``finditer`` does.

        Args:
            prefix: the prompt text.

        Returns:
            The text after the anchor (possibly ``""``), or ``None``: the prompt has no anchor.

        Raises:
            TimeoutError: the search ran longer than ``REGEX_TIMEOUT`` (a ``start_anchor_pattern`` that
                backtracks too much on this prompt).
        """
        last_end = None
        # literal anchors (the start_anchor key) are alternatives of escaped text: always linear
        untimed = len(prefix) <= UNTIMED_SPAN and ("start_anchor" in self.source
                                                   or judge(self.start_anchor.pattern).linear)
        timeout = None if untimed else backtracking.REGEX_TIMEOUT
        for match in self.start_anchor.finditer(prefix, timeout=timeout):
            last_end = match.end()
        return None if last_end is None else prefix[last_end:]


def _outside_matcher(fields: Mapping[str, FieldSpec], closed: frozenset[str]) -> Matcher | None:
    """The OUTSIDE matcher: the open of every field not in ``closed``, then the implicit field's close."""
    watched = [spec.open for spec in fields.values() if spec.open is not None and spec.name not in closed]
    implicit = next((spec for spec in fields.values() if spec.open is None), None)
    if implicit is not None and implicit.close is not None:
        watched.append(implicit.close)
    return build_matcher(watched) if watched else None


def _error(message: str, *, field: str | None = None, key: str | None = None) -> ResponseTemplateError:
    """``path: message`` for a key or field; a problem of the whole template is a sentence of its own
    (``path`` is then ``"response_template"``), so the path is never repeated inside the message."""
    if field is None and key is None:
        return ResponseTemplateError(message, path="response_template")
    path = key if field is None else f"fields.{field}" + (f".{key}" if key else "")
    return ResponseTemplateError(f"{path}: {message}", field=field, key=key, path=path)


def _literals(raw: Any, key: str, field: str | None) -> list[str]:
    if isinstance(raw, str):
        literals = [raw]
    elif isinstance(raw, list):
        if not raw:
            raise _error(f"'{key}' list must contain at least one literal", field=field, key=key)
        if not all(isinstance(s, str) for s in raw):
            raise _error(f"'{key}' list must contain only strings", field=field, key=key)
        literals = list(raw)
        if len(literals) > MAX_DELIMITER_LITERALS:
            raise _error(f"'{key}' lists {len(literals)} literals, more than {MAX_DELIMITER_LITERALS} "
                         "(MAX_DELIMITER_LITERALS in chatcodec.response_templates.limits)",
                         field=field, key=key)
    else:
        raise _error(f"'{key}' must be a string or list of strings, got {type(raw).__name__}",
                     field=field, key=key)
    if any(s == "" for s in literals):
        raise _error(f"'{key}' literals cannot be empty strings", field=field, key=key)
    return literals


def _delimiter(spec: Mapping[str, Any], name: str, literal_key: str, is_open: bool) -> Delimiter | None:
    pattern_key = f"{literal_key}_pattern"
    if literal_key in spec and pattern_key in spec:
        raise _error(f"cannot specify both '{literal_key}' and '{pattern_key}'", field=name, key=pattern_key)
    if literal_key in spec:
        return literal_delimiter(name, is_open, _literals(spec[literal_key], literal_key, name))
    if pattern_key not in spec:
        return None
    source = spec[pattern_key]
    if not isinstance(source, str):
        raise _error(f"'{pattern_key}' must be a regex string, got {type(source).__name__}",
                     field=name, key=pattern_key)
    try:
        delimiter = regex_delimiter(name, is_open, source)
    except regex.error as error:
        raise _error(f"invalid {pattern_key} regex: {error}", field=name, key=pattern_key) from None
    problem = unsupported_construct(delimiter.pattern) or lookbehind_problem(delimiter.pattern) \
        or empty_match_problem(delimiter.pattern) or catastrophe(delimiter.pattern)
    if problem is not None:
        raise _error(problem, field=name, key=pattern_key)
    return delimiter


def _check_bool(spec: Mapping[str, Any], name: str, key: str, default: bool) -> bool:
    value = spec.get(key, default)
    if not isinstance(value, bool):
        raise _error(f"'{key}' must be true or false, got {type(value).__name__}", field=name, key=key)
    return value


def _content_parser(spec: Mapping[str, Any], name: str) -> tuple[ContentParser, Mapping[str, Any]]:
    content = spec.get("content", "text")
    parser = lookup_parser(content) if isinstance(content, str) else None
    if parser is None:
        raise _error(f"unknown content parser {content!r}. Available: {known_parser_names()}",
                     field=name, key="content")
    args = spec.get("content_args", {})
    if not isinstance(args, dict):
        raise _error(f"'content_args' must be an object, got {type(args).__name__}",
                     field=name, key="content_args")
    where = f"fields.{name}.content_args"
    try:
        parser.validate(args, where)
    except ValueError as error:
        message = str(error)
        path = getattr(error, "path", None)
        if path is None:
            path = message.split(": ", 1)[0] if message.startswith(where) else where
        if not message.startswith(path):
            message = f"{path}: {message}"
        raise ResponseTemplateError(message, field=name, key="content_args", path=path) from None
    return parser, MappingProxyType(copy.deepcopy(args))


def _check_join_and_transform(spec: Mapping[str, Any], name: str, repeats: bool) -> tuple[str | None, bool]:
    join = spec.get("join")
    if join is not None and not isinstance(join, str):
        raise _error(f"'join' must be a string, got {type(join).__name__}", field=name, key="join")
    if join is not None and not repeats:
        raise _error("'join' requires 'repeats': true", field=name, key="join")
    if _check_bool(spec, name, "flatten", False):
        if not repeats:
            raise _error("'flatten' requires 'repeats': true (it appends the items of every match's "
                         "list to one list)", field=name, key="flatten")
        if join is not None:
            raise _error("'flatten' and 'join' exclude each other: one collects the items of lists, "
                         "the other concatenates strings", field=name, key="flatten")
    transform_each = _check_bool(spec, name, "transform_each", False)
    if transform_each and spec.get("transform") is None:
        raise _error("transform_each is set but no transform was provided", field=name, key="transform_each")
    if spec.get("transform") is not None:
        try:
            validate_transform(spec["transform"], f"fields.{name}.transform")
        except ValueError as error:
            path = str(error).split(": ", 1)[0]
            raise ResponseTemplateError(str(error), field=name, key="transform", path=path) from None
    return join, transform_each


def _check_named_groups(name: str, open_: Delimiter | None, close: Delimiter | None) -> None:
    for key, delimiter in (("open_pattern", open_), ("close_pattern", close)):
        groups = sorted(delimiter.pattern.groupindex) if delimiter and delimiter.literals is None else []
        if groups:
            raise _error(
                f"{key} declares named group(s) {groups}, but the field has no 'transform'. Named "
                "captures only reach the output through a 'transform' (alongside 'content'); add a "
                "transform that uses them, or remove the named groups from the pattern.",
                field=name, key=key,
            )


def _build_field(name: Any, spec: Any) -> FieldSpec:
    if not isinstance(name, str):
        raise _error(f"field names must be strings, got {type(name).__name__}", key="fields")
    if not isinstance(spec, dict):
        raise _error(f"a field spec must be an object, got {type(spec).__name__}", field=name)
    unknown = sorted(set(spec) - _FIELD_KEYS)
    if unknown:
        raise _error(f"unknown keys {unknown}. Allowed keys: {', '.join(sorted(_FIELD_KEYS))}", field=name)
    parser, args = _content_parser(spec, name)
    open_ = _delimiter(spec, name, "open", True)
    close = _delimiter(spec, name, "close", False)
    repeats = _check_bool(spec, name, "repeats", False)
    optional = _check_bool(spec, name, "optional", True)
    join, transform_each = _check_join_and_transform(spec, name, repeats)
    transform = copy.deepcopy(spec.get("transform"))
    if transform is None:
        _check_named_groups(name, open_, close)
    require_close = _check_bool(spec, name, "require_close", False)
    if require_close and (open_ is None or close is None):
        raise _error("'require_close' needs both an open and a close delimiter (the region it makes a "
                     "problem is an explicit one cut off before its close)", field=name, key="require_close")
    at_value_end = _check_bool(spec, name, "close_at_value_end", False)
    if at_value_end:
        problem = "it needs an open or open_pattern (the implicit field has no value to end)" \
            if open_ is None else value_end_problem(parser.name, args)
        if problem is not None:
            raise _error(f"'close_at_value_end': {problem}", field=name, key="close_at_value_end")
    opens_once = _check_bool(spec, name, "opens_once", False)
    if opens_once and (open_ is None or close is None or repeats):
        raise _error("'opens_once' needs an open and a close delimiter and no 'repeats' (it makes the open "
                     "plain text once a region of the field has closed)", field=name, key="opens_once")
    return FieldSpec(
        name=name, open=open_, close=close, content=parser.name, content_args=args, parser=parser,
        repeats=repeats, flatten=spec.get("flatten", False), require_close=require_close,
        close_at_value_end=at_value_end, join=join,
        optional=optional,
        transform=transform,
        transform_each=transform_each, dirty=not parser.streams_verbatim,
        concatenates=parser.name == "text" and transform is None and not repeats,
        close_matcher=build_matcher([close]) if close is not None and open_ is not None else None,
        parse=prepare_parser(parser, args),
        transform_depth=0 if transform is None else static_depth(transform) + transform_each,
        build=None if transform is None else compile_transform(transform),
        opens_once=opens_once,
    )


def _check_shape(spec: Any) -> None:
    if not isinstance(spec, dict):
        hint = ("; to use a file, load it first (json.load), and for a bundled profile or a model use "
                "chatcodec.profiles.load(name).response_template or ChatCodec.from_pretrained(name)"
                if isinstance(spec, str) else "")
        if isinstance(spec, str) and ("{%" in spec or "{{" in spec):
            hint = ("; this string is a chat template (Jinja), not a response template, which is a JSON "
                    "object saying how to read the model's output (chatcodec.profiles.load(name)"
                    ".response_template, or ChatCodec.from_pretrained(name), which brings its own)")
        raise _error(f"A response template must be a JSON object, got {type(spec).__name__}{hint}")
    if exceeds_depth(spec):
        field, key = _too_deep(spec)
        raise _error(f"nested more than {MAX_NESTING_DEPTH} levels deep (MAX_NESTING_DEPTH, counting from "
                     "the top of the response template) is refused; real templates are a few levels deep",
                     field=field, key=key)
    version = spec.get("version", 1)
    if isinstance(version, bool) or version != 1:
        raise _error(f"unsupported version {version!r} (only 1 exists)", key="version")
    unknown = sorted(set(spec) - _TEMPLATE_KEYS)
    if unknown:
        raise _error(f"Unknown keys in response_template: {unknown}. Allowed keys: "
                     f"{', '.join(sorted(_TEMPLATE_KEYS))}")
    if not isinstance(spec.get("defaults", {}), dict):
        raise _error(f"must be an object, got {type(spec['defaults']).__name__}", key="defaults")
    fields = spec.get("fields")
    if not isinstance(fields, dict) or not fields:
        if "fields" not in spec:
            raise _error("missing: a response template needs fields (output key -> field spec)", key="fields")
        got = "" if isinstance(fields, dict) else f", got {type(fields).__name__}"
        raise _error(f"must be a non-empty object (output key -> field spec){got}", key="fields")
    if len(fields) > limits.MAX_FIELDS:
        raise _error(f"{len(fields):,} fields, more than MAX_FIELDS ({limits.MAX_FIELDS}) in "
                     "chatcodec.response_templates.limits (loading builds a matcher per field over the other "
                     "fields' delimiters: 6,000 fields took over 20 s); real formats have a handful",
                     key="fields")


def _too_deep(spec: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The field and key that nest deeper than the template may (``spec`` as a whole does): a key of
    a field (``fields.NAME.transform``), else a top-level key (``defaults``)."""
    fields = spec.get("fields")
    if isinstance(fields, dict) and exceeds_depth(fields, MAX_NESTING_DEPTH - 1):
        for name, field_spec in fields.items():
            if isinstance(field_spec, dict) and exceeds_depth(field_spec, MAX_NESTING_DEPTH - 2):
                key = next((key for key, value in field_spec.items()
                            if exceeds_depth(value, MAX_NESTING_DEPTH - 3)), None)
                return str(name), None if key is None else str(key)
        return None, "fields"
    key = next(str(key) for key, value in spec.items() if exceeds_depth(value, MAX_NESTING_DEPTH - 1))
    return None, key


def _start_anchor(spec: Mapping[str, Any]) -> regex.Pattern[str]:
    if "start_anchor" in spec and "start_anchor_pattern" in spec:
        raise _error("cannot specify both 'start_anchor' and 'start_anchor_pattern'",
                     key="start_anchor_pattern")
    if "start_anchor" in spec:
        literals = sorted(_literals(spec["start_anchor"], "start_anchor", None), key=len, reverse=True)
        return regex.compile("|".join(regex.escape(s) for s in literals), regex.DOTALL)
    if "start_anchor_pattern" not in spec:
        raise _error(
            "a response template needs start_anchor (or start_anchor_pattern): where the assistant "
            'message starts in the prompt, e.g. "<|im_start|>assistant\\n". It is required even when '
            'parsing without a prompt (prefix="", chatcodec parse --no-prefix)',
            key="start_anchor",
        )
    source = spec["start_anchor_pattern"]
    if not isinstance(source, str):
        raise _error("'start_anchor_pattern' must be a regex string", key="start_anchor_pattern")
    try:
        pattern = compile_pattern(source)
    except regex.error as error:
        raise _error(f"invalid start_anchor_pattern regex: {error}", key="start_anchor_pattern") from None
    if pattern.flags & regex.REVERSE:
        raise _error(unsupported_construct(pattern) or "", key="start_anchor_pattern")
    problem = empty_match_problem(pattern) or catastrophe(pattern)
    if problem is not None:
        raise _error(problem, key="start_anchor_pattern")
    return pattern


def _check_distinct_opens(fields: Mapping[str, FieldSpec]) -> None:
    """Refuse an open that another field also has: on a tie the first field by name wins (SPEC
    §1.5 ranks opens by field name), so the other field could never open there."""
    owners: dict[tuple[str, str], str] = {}
    for field in sorted(fields.values(), key=lambda f: f.name):
        if field.open is None:
            continue
        literals = field.open.literals
        keys = [("open", lit) for lit in literals or ()] or [("open_pattern", field.open.pattern.pattern)]
        for key in keys:
            winner = owners.setdefault(key, field.name)
            if winner == field.name:
                continue
            what = f"{key[1]!r} is also the open" if key[0] == "open" else \
                "the same pattern is the open_pattern"
            raise _error(f"{what} of field {winner!r}, which wins ties (opens are ranked by field name), "
                         f"so field {field.name!r} could never open there", field=field.name, key=key[0])


def _extensions_used(fields: Mapping[str, FieldSpec]) -> frozenset[str]:
    """Every ``x-`` parser a field uses, directly or as a (nested) ``value_parser``."""
    used: set[str] = set()
    for field in fields.values():
        names = [field.content]
        value_parser = field.content_args.get("value_parser")
        while isinstance(value_parser, Mapping):
            names.append(value_parser.get("name", "text"))
            value_parser = (value_parser.get("args") or {}).get("value_parser")
        used.update(name for name in names if name.startswith("x-"))
    return frozenset(used)


def _check_pattern_total(spec: Mapping[str, Any]) -> None:
    """Refuse a template whose regexes together would compile into more than
    ``MAX_TEMPLATE_PATTERN_SIZE`` elements (each within ``MAX_PATTERN_SIZE``, two hundred fields
    took 8 s and 1.6 GB to load), before any is compiled. A single pattern over its own limit is
    left to its field, whose error names it."""
    sizes = [expanded_size(source) for source in _pattern_sources(spec["fields"])]
    total = sum(sizes)
    if total > limits.MAX_TEMPLATE_PATTERN_SIZE and max(sizes) <= limits.MAX_PATTERN_SIZE:
        raise _error(
            f"the template's regexes together make about {total:,} elements once compiled, more than "
            f"MAX_TEMPLATE_PATTERN_SIZE ({limits.MAX_TEMPLATE_PATTERN_SIZE:,}) in "
            "chatcodec.response_templates.limits (counted repetitions such as {1000} are written out "
            "that many times)"
        )


def _pattern_sources(value: Any) -> Iterator[str]:
    """Every regex string under ``value`` (the keys ``*_pattern``, ``pattern`` and ``between``, at any
    depth: ``content_args`` of ``x-first`` nest parsers; a transform's keys are output, not regexes)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(child, str) and (key.endswith("pattern") or key == "between"):
                    yield child
                elif isinstance(child, (Mapping, list)) and key not in ("transform", "transform_each"):
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


def load_response_template(spec: Mapping[str, Any] | ResponseTemplate) -> ResponseTemplate:
    """Validate and compile a response template.

    Every problem SPEC §1.1 lists is found here, not when a region first appears: conflicting or
    empty delimiters, invalid regexes, ``join``/``transform_each`` misuse, named groups that no
    transform uses, unknown content parsers or ``content_args``, mixed transform strings, more than
    one implicit field, unknown keys.

    Args:
        spec: the JSON object (as found under ``response_template`` in ``tokenizer_config.json``),
            or an already loaded template (returned as is).

    Returns:
        The compiled :class:`ResponseTemplate`.

    Raises:
        ResponseTemplateError: the template is invalid; the message starts with the JSON path of
            the offending key (also in ``.path``, ``.field`` and ``.key``), or is a sentence about
            the whole template (``.path`` is then ``"response_template"``).

    Example:
        >>> template = load_response_template({"start_anchor": "<|im_start|>assistant\\n",
        ...     "fields": {"content": {"close": "<|im_end|>"}}})
        >>> template.implicit.name
        'content'
    """
    if isinstance(spec, ResponseTemplate):
        return spec
    return _CACHE.get(spec)


def _compile(spec: Any) -> ResponseTemplate:
    """Validate and compile ``spec`` (no cache)."""
    _check_shape(spec)
    assert isinstance(spec, dict)
    start_anchor = _start_anchor(spec)  # the top-level shape first, so the first real problem shows
    _check_pattern_total(spec)
    fields = {name: _build_field(name, raw) for name, raw in spec["fields"].items()}
    _check_distinct_opens(fields)
    implicit = [field for field in fields.values() if field.open is None]
    if len(implicit) > 1:
        raise _error(
            "at most one field may omit 'open'/'open_pattern' (that field is the implicit one, which "
            f"collects text outside every region); found: {', '.join(f.name for f in implicit)}",
            key="fields",
        )
    return ResponseTemplate(
        fields=MappingProxyType(fields),
        defaults=MappingProxyType(copy.deepcopy(spec.get("defaults", {}))),
        implicit=implicit[0] if implicit else None,
        start_anchor=start_anchor,
        outside_matcher=_outside_matcher(fields, frozenset()),
        once_outside=MappingProxyType({name: _outside_matcher(fields, frozenset({name}))
                                       for name, field in fields.items() if field.opens_once}),
        extensions_used=_extensions_used(fields),
        source=MappingProxyType(copy.deepcopy(spec)),
    )


class _TemplateCache:
    """Compiled templates by the JSON text of their dict, least recently used evicted first.

    A hit also requires the dict to equal the one compiled (``{1: ...}`` and ``{"1": ...}`` dump
    alike but are different templates). Dicts that are not JSON are compiled every time; so are
    invalid ones (errors are not cached).
    """

    def __init__(self) -> None:
        self._entries: OrderedDict[str, ResponseTemplate] = OrderedDict()
        self._lock = _thread.allocate_lock()  # threading.Lock, without threading's import

    def get(self, spec: Any) -> ResponseTemplate:
        try:
            key = json.dumps(spec, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return _compile(spec)
        with self._lock:
            template = self._entries.get(key)
            if template is not None and template.source == spec:
                self._entries.move_to_end(key)
                return template
        template = _compile(spec)
        with self._lock:
            self._entries[key] = template
            self._entries.move_to_end(key)
            while len(self._entries) > max(0, TEMPLATE_CACHE_SIZE):
                self._entries.popitem(last=False)
        return template


_CACHE = _TemplateCache()
