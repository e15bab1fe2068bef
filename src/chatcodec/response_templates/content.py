"""Content parsers: the registry that turns a region's raw text into a value.

Eight standard parsers (SPEC §1.3; ``python-call-list`` is in :mod:`.python_call_list`) sit in a
table of :class:`ContentParser` records, and
:func:`lookup_parser` finds every ``x-`` extension of
:data:`chatcodec.response_templates.extensions.EXTENSIONS` the same way. Each record has a pure
``parse(text, args)`` and a ``validate(args, where)`` that the template loader calls, so a bad
``content_args`` (a missing ``tag_pattern``, an unknown ``value_parser``) fails when the template
is loaded, never mid-stream. A nested ``{"name": parser, "args": {...}}`` spec (``value_parser``,
and the sub-parsers of ``x-findall``, ``x-first`` and ``x-xml-tree``) is checked by
:func:`check_parser_spec`, the same way as a field's ``content``; the template loader prepares
each field's parser once (:func:`prepare_parser`: ``xml-inline``'s ``tag_pattern`` compiled, a
``value_parser`` resolved by :func:`prepare_spec`), and the extensions that nest parsers
(``x-findall``, ``x-first``, ``x-xml-tree``) resolve theirs there too, through their
``Extension.prepare``; :func:`run_parser` resolves a spec by name at each call.
The extensions are imported on first use, so templates that use none never load them.

Rules kept here: parsers never see the buffer, the parser state or other fields; they raise
``ValueError`` (naming what is wrong; :class:`ContentError` when they know where) and the engine
adds the field, offset and raw text. Nothing is skipped silently: ``xml-inline`` refuses text that
its ``tag_pattern`` does not match, apart from whitespace and the literal end tags the template
lists in ``content_args.skip_tags`` (a format's own framing, e.g. ``["</function>"]``); any other
end tag, such as a damaged close delimiter ``</tool_QZcall>``, is an error like other stray text.
Without ``skip_tags`` every bare end tag (``</word>``) is skipped, as the reference (which ignores
all text between matches) does in the corpus vectors that pin it (the seed's Qwen3 example leaves
``</function>`` inside the region); the bundled profiles all set ``skip_tags``.
Numbers are ASCII only (``1_000`` and non-ASCII digits are not numbers; Python's ``int()`` would
accept them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import regex

from chatcodec.errors import ResponseTemplateError
from chatcodec.response_templates import backtracking
from chatcodec.response_templates.backtracking import catastrophe
from chatcodec.response_templates.content_error import ContentError
from chatcodec.response_templates.lax_json import parse_json_dialect, prepare_json_dialect
from chatcodec.response_templates.limits import bracket_bound
from chatcodec.response_templates.pattern_size import check_size
from chatcodec.response_templates.python_call_list import parse_python_call_list, validate_python_call_list

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn, TypeAlias

__all__ = [
    "BLANK",
    "STANDARD_PARSERS",
    "ContentError",
    "ContentParser",
    "Prepared",
    "check_parser_spec",
    "check_xml_gaps",
    "compile_user_pattern",
    "get_parser",
    "known_parser_names",
    "lookup_parser",
    "parse_float",
    "parse_int",
    "prepare_parser",
    "prepare_spec",
    "run_parser",
    "user_matches",
    "user_timeout",
]

ParseFn: TypeAlias = "Callable[[str, Mapping[str, Any]], Any]"
#: A parser with its ``content_args`` bound, compiled at load: ``(raw_text) -> value``.
Prepared: TypeAlias = "Callable[[str], Any]"
ValidateFn: TypeAlias = "Callable[[Mapping[str, Any], str], None]"


class ContentParser:
    """One content parser.

    Attributes:
        name: the name templates use (``"json"``, ``"x-pythonic"``, ...).
        parse: ``(raw_text, content_args) -> value``; raises ``ValueError``.
        validate: ``(content_args, where) -> None``; raises ``ValueError`` naming ``where`` and the key.
        streams_verbatim: every streamed chunk is part of the final value (``dirty: false`` events).
        extension: an ``x-`` parser, unknown to the reference; a template using it needs chatcodec.
        scanner: an extension's own value scanner factory (``extensions.Extension.scanner``), or ``None``.
        string_aware: the region's close delimiter only counts outside JSON strings (``"..."`` with
            escapes, and the ``string_delims`` pairs of ``content_args``); true for ``json`` and for
            the extensions that declare it.
        depth_bound: ``(raw_text) -> int``, an upper bound on how deep the parsed value nests
            (``limits``), so the engine can skip walking a value that cannot be too deep; ``None``
            when the parser has none (the value is walked).
        prepare: ``(content_args) -> (raw_text) -> value``: the parser with its arguments bound and
            whatever they name compiled (``tag_pattern``, nested ``value_parser``), called once
            at load (:func:`prepare_parser`); ``None``: ``parse`` with the arguments bound.
    """

    __slots__ = ("depth_bound", "extension", "name", "parse", "prepare", "scanner", "streams_verbatim",
                 "string_aware", "validate")

    def __init__(self, name: str, parse: ParseFn, validate: ValidateFn, streams_verbatim: bool,
                 extension: bool = False, string_aware: bool = False,
                 scanner: Callable[[Mapping[str, Any]], Any] | None = None,
                 depth_bound: Callable[[str], int] | None = None,
                 prepare: Callable[[Mapping[str, Any]], Prepared] | None = None) -> None:
        self.name = name
        self.parse = parse
        self.validate = validate
        self.streams_verbatim = streams_verbatim
        self.extension = extension
        self.string_aware = string_aware
        self.scanner = scanner
        self.depth_bound = depth_bound
        self.prepare = prepare

    def __repr__(self) -> str:
        return f"ContentParser({self.name!r})"


#: ``content_args.strip`` of a ``text`` field that keeps text as written but reads a region of only
#: whitespace as empty (a chatcodec extension: layout around tool calls is not content).
BLANK = "blank"

_INT = regex.compile(r"[+-]?[0-9]+")
_FLOAT = regex.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))"
)


def _ascii_number(pattern: regex.Pattern[str], text: str, kind: str, expected: str) -> str:
    """``text`` if ``pattern`` matches all of it (Python's ``int``/``float`` accept far more)."""
    if pattern.fullmatch(text) is None:
        raise ValueError(f"invalid literal for {kind}: {text!r} (expected {expected})")
    return text


def parse_int(text: str) -> int:
    """Parse an ASCII decimal integer (sign and leading zeros allowed, no underscores).

    Args:
        text: the text, already stripped.

    Returns:
        The integer.

    Raises:
        ValueError: ``text`` is not such an integer.
    """
    return int(_ascii_number(_INT, text, "int", "ASCII digits"))


def parse_float(text: str) -> float:
    """Parse an ASCII decimal float (``1.5``, ``2e3``, ``.5``, ``nan``, ``inf``; no underscores).

    Args:
        text: the text, already stripped.

    Returns:
        The float.

    Raises:
        ValueError: ``text`` is not such a number.
    """
    return float(_ascii_number(_FLOAT, text, "float", "an ASCII decimal number"))


def _strip(text: str, args: Mapping[str, Any]) -> str:
    mode = args.get("strip", True)
    if mode == BLANK:
        return text if text.strip() else ""
    return text.strip() if mode else text


def _parse_text(text: str, args: Mapping[str, Any]) -> str:
    return _strip(text, args)


def _prepare_text(args: Mapping[str, Any]) -> Prepared:
    """The ``text`` parser with its ``strip`` bound: the string methods themselves where they do
    what :func:`_strip` does, so a text region (every message has one or two) costs no Python call."""
    mode = args.get("strip", True)
    if mode == BLANK:
        return _blank_as_empty
    return str.strip if mode else str


def _blank_as_empty(text: str) -> str:
    return text if text.strip() else ""


def _parse_int(text: str, args: Mapping[str, Any]) -> int:
    return parse_int(_strip(text, args))


def _parse_float(text: str, args: Mapping[str, Any]) -> float:
    return parse_float(_strip(text, args))


def _parse_bool(text: str, args: Mapping[str, Any]) -> bool:
    return _strip(text, args).lower() in ("true", "1")


@lru_cache(maxsize=256)
def compile_user_pattern(source: str) -> regex.Pattern[str]:
    """Compile a regex of ``content_args`` (``tag_pattern``, ``x-findall``'s ``pattern``), cached.

    ``DOTALL``, as every template regex; delimiters go through
    :func:`~chatcodec.response_templates.delimiters.compile_pattern`, which also rewrites ``$``.

    Args:
        source: the regex.

    Returns:
        The compiled pattern (shared between callers; patterns are immutable).

    Raises:
        regex.error: the pattern is invalid, or too big to compile
            (:func:`~chatcodec.response_templates.pattern_size.check_size`).
    """
    check_size(source)
    return regex.compile(source, regex.DOTALL)


def user_matches(pattern: regex.Pattern[str], text: str, key: str) -> list[regex.Match[str]]:
    """Every match of a ``content_args`` regex in ``text``, within ``REGEX_TIMEOUT``.

    Args:
        pattern: the compiled regex.
        text: the region's text.
        key: the regex's key, for the message (``"content_args.tag_pattern"``).

    Returns:
        The matches, in order.

    Raises:
        ValueError: the search ran out of time (the pattern backtracks too much on this text).
    """
    try:
        return list(pattern.finditer(text, timeout=backtracking.REGEX_TIMEOUT))
    except TimeoutError:
        raise ValueError(user_timeout(key)) from None


def user_timeout(key: str) -> str:
    """The problem reported when a ``content_args`` regex ran out of time."""
    return (f"{key}: searching this region took longer than REGEX_TIMEOUT ({backtracking.REGEX_TIMEOUT:g} s "
            "of CPU time in chatcodec.response_templates.backtracking); the pattern backtracks too much on "
            "this text")


#: What may stand between xml-inline tags when the template sets no ``skip_tags``: whitespace and
#: bare end tags (``</function>``), which the corpus vectors pin.
_XML_FILLER = regex.compile(r"(?:\s+|</[^\s<>/]+\s*>)*")


def _check_xml_filler(text: str, start: int, end: int, skip_tags: tuple[str, ...] | None) -> None:
    """Refuse text between tags that is not whitespace or a ``skip_tags`` literal (without
    ``skip_tags``: a bare end tag): a malformed tag (or a damaged end tag) would otherwise vanish."""
    stop = start
    if skip_tags is None:
        stop = _XML_FILLER.match(text, start, end).end()
    while stop < end and skip_tags is not None:
        if text[stop].isspace():
            stop += 1
            continue
        tag = next((tag for tag in skip_tags if text.startswith(tag, stop, end)), None)
        if tag is None:
            break
        stop += len(tag)
    if stop < end:
        excerpt = text[stop:min(end, stop + 40)].rstrip()
        raise ContentError(f"xml-inline: text outside the tags at offset {stop}: {excerpt!r} "
                           "(tag_pattern does not match it: a malformed tag?)", stop)


def check_xml_gaps(text: str, spans: Sequence[tuple[int, int]], skip_tags: tuple[str, ...] | None) -> None:
    """Check the text outside the tags of an ``xml-inline`` region as its parser does.

    Args:
        text: the region's text.
        spans: ``(start, end)`` of each match of ``tag_pattern`` in ``text``, in order.
        skip_tags: the ``skip_tags`` argument as a tuple, ``None`` when the template sets none.

    Raises:
        ContentError: text before, between or after the matches is neither whitespace nor a
            ``skip_tags`` literal (without ``skip_tags``: a bare end tag), with its offset.
    """
    position = 0
    for start, end in spans:
        _check_xml_filler(text, position, start, skip_tags)
        position = end
    _check_xml_filler(text, position, len(text), skip_tags)


def _parse_xml_inline(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    return _prepare_xml_inline(args)(text)  # type: ignore[no-any-return]


def _prepare_xml_inline(args: Mapping[str, Any]) -> Prepared:
    """``xml-inline`` with its ``tag_pattern`` compiled and its ``value_parser`` resolved once."""
    pattern = compile_user_pattern(args["tag_pattern"])
    value_parser = prepare_spec(args.get("value_parser"))
    merge = bool(args.get("merge_duplicates", False))
    skip_tags = tuple(args["skip_tags"]) if "skip_tags" in args else None
    return lambda text: _xml_inline(text, pattern, value_parser, merge, skip_tags)


def _xml_inline(text: str, pattern: regex.Pattern[str], value_parser: Prepared | None, merge: bool,
                skip_tags: tuple[str, ...] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    merged: set[str] = set()
    position = 0
    for match in user_matches(pattern, text, "content_args.tag_pattern"):
        _check_xml_filler(text, position, match.start(), skip_tags)
        position = match.end()
        key = match.group("key")
        if key is None:
            raise ValueError(f"tag_pattern matched {match.group()!r} without its 'key' group")
        raw = match.groupdict().get("value")
        raw = "" if raw is None else raw
        value = raw if value_parser is None else value_parser(raw)
        if merge and key in out:
            if key not in merged:
                out[key] = [out[key]]
                merged.add(key)
            out[key].append(value)
        elif key in out:
            raise ContentError(f"xml-inline: key {key!r} is given twice (the second at offset "
                               f"{match.start()}); a dict would keep only the last value. Set "
                               "merge_duplicates to collect repeated keys into a list", match.start())
        else:
            out[key] = value
    _check_xml_filler(text, position, len(text), skip_tags)
    return out


def _parse_kv_lines(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    return _prepare_kv_lines(args)(text)  # type: ignore[no-any-return]


def _prepare_kv_lines(args: Mapping[str, Any]) -> Prepared:
    """``kv-lines`` with its ``value_parser`` resolved once."""
    value_parser = prepare_spec(args.get("value_parser"))
    return lambda text: _kv_lines(text, args, value_parser)


def _kv_lines(text: str, args: Mapping[str, Any], value_parser: Prepared | None) -> dict[str, Any]:
    line_sep = args.get("line_sep", "\n")
    kv_sep = args.get("kv_sep", ":")
    out: dict[str, Any] = {}
    for line in text.split(line_sep):
        line = _strip(line, args)
        if not line or kv_sep not in line:
            continue
        key, value = line.split(kv_sep, 1)
        key = _strip(key, args)
        if key in out:
            raise ValueError(f"kv-lines: key {key!r} is given twice; a dict would keep only the last value")
        value = _strip(value, args)
        out[key] = value if value_parser is None else value_parser(value)
    return out


# ---------------------------------------------------------------------------------------------
# content_args validation (load time)

def _fail(where: str, key: str, what: str) -> NoReturn:
    raise ResponseTemplateError(f"{where}.{key}: {what}", path=f"{where}.{key}")


def _check_keys(args: Mapping[str, Any], where: str, allowed: frozenset[str]) -> None:
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise ResponseTemplateError(
            f"{where}: unknown keys {unknown}. Allowed keys: {', '.join(sorted(allowed))}", path=where)


def _check_bool(args: Mapping[str, Any], where: str, key: str) -> None:
    if key in args and not isinstance(args[key], bool):
        _fail(where, key, f"must be true or false, got {type(args[key]).__name__}")


def _check_separator(args: Mapping[str, Any], where: str, key: str) -> None:
    if key in args and (not isinstance(args[key], str) or not args[key]):
        _fail(where, key, "must be a non-empty string")


def _check_value_parser(args: Mapping[str, Any], where: str) -> None:
    spec = args.get("value_parser")
    if spec is None:
        return
    if isinstance(spec, Mapping):
        spec = {"name": "text", **spec}  # a value_parser's name defaults to text (SPEC §1.3)
    check_parser_spec(spec, f"{where}.value_parser")


def _validate_scalar(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"strip"}))
    _check_bool(args, where, "strip")


def _validate_text(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"strip"}))
    if "strip" in args and args["strip"] != BLANK and not isinstance(args["strip"], bool):
        _fail(where, "strip", f'must be true, false or "blank", got {args["strip"]!r}')


def _validate_json(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"strip", "unquoted_keys", "string_delims", "allow_non_json"}))
    for key in ("strip", "unquoted_keys", "allow_non_json"):
        _check_bool(args, where, key)
    pairs = args.get("string_delims", [])
    if not isinstance(pairs, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and s for s in pair)
        for pair in pairs
    ):
        _fail(where, "string_delims", 'must be a list of [open, close] pairs of non-empty strings, '
              'e.g. [["<|\\"|>", "<|\\"|>"]]')


def _validate_xml_inline(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"tag_pattern", "value_parser", "merge_duplicates", "skip_tags"}))
    _check_bool(args, where, "merge_duplicates")
    tags = args.get("skip_tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) and tag for tag in tags):
        _fail(where, "skip_tags", 'must be a list of non-empty strings, the end tags that may stand between '
              'the tags (e.g. ["</function>"])')
    source = args.get("tag_pattern")
    if not isinstance(source, str):
        _fail(where, "tag_pattern", "xml-inline requires 'tag_pattern', a regex with the named groups "
              "'key' and (optionally) 'value', e.g. \"<(?P<key>\\\\w+)>(?P<value>.*?)</(?P=key)>\"")
    try:
        pattern = compile_user_pattern(str(source))
    except regex.error as error:
        _fail(where, "tag_pattern", f"invalid tag_pattern regex: {error}")
    problem = catastrophe(pattern)
    if problem is not None:
        _fail(where, "tag_pattern", problem)
    if "key" not in pattern.groupindex:
        _fail(where, "tag_pattern", f"tag_pattern must have a named group 'key' (found groups: "
              f"{sorted(pattern.groupindex)})")
    _check_value_parser(args, where)


def _validate_kv_lines(args: Mapping[str, Any], where: str) -> None:
    _check_keys(args, where, frozenset({"line_sep", "kv_sep", "strip", "value_parser"}))
    _check_bool(args, where, "strip")
    _check_separator(args, where, "line_sep")
    _check_separator(args, where, "kv_sep")
    _check_value_parser(args, where)


#: The standard content parsers, in SPEC order (``python-call-list`` came with transformers 5.24).
STANDARD_PARSERS: dict[str, ContentParser] = {
    parser.name: parser
    for parser in (
        ContentParser("text", _parse_text, _validate_text, streams_verbatim=True, prepare=_prepare_text),
        ContentParser("int", _parse_int, _validate_scalar, streams_verbatim=True),
        ContentParser("float", _parse_float, _validate_scalar, streams_verbatim=True),
        ContentParser("bool", _parse_bool, _validate_scalar, streams_verbatim=True),
        ContentParser("json", parse_json_dialect, _validate_json, streams_verbatim=False, string_aware=True,
                      depth_bound=bracket_bound, prepare=prepare_json_dialect),
        ContentParser("xml-inline", _parse_xml_inline, _validate_xml_inline, streams_verbatim=False,
                      prepare=_prepare_xml_inline),
        ContentParser("kv-lines", _parse_kv_lines, _validate_kv_lines, streams_verbatim=False,
                      prepare=_prepare_kv_lines),
        ContentParser("python-call-list", parse_python_call_list, validate_python_call_list,
                      streams_verbatim=False),
    )
}


def lookup_parser(name: str) -> ContentParser | None:
    """The parser called ``name``, or ``None``. ``x-`` names come from ``extensions.EXTENSIONS``."""
    parser = STANDARD_PARSERS.get(name)
    if parser is None and name.startswith("x-"):
        from chatcodec.response_templates.extensions import EXTENSIONS

        entry = EXTENSIONS.get(name)
        if entry is not None:
            aware = bool(entry[2]) if len(entry) > 2 else False
            scanner = entry[3] if len(entry) > 3 else None
            prepare = entry[4] if len(entry) > 4 else None
            parser = ContentParser(name, entry[0], entry[1], streams_verbatim=False, extension=True,
                                   string_aware=aware, scanner=scanner, prepare=prepare)
    return parser


def get_parser(name: str) -> ContentParser:
    """The parser called ``name``.

    Args:
        name: a standard parser name or a registered ``x-`` name.

    Returns:
        The parser.

    Raises:
        KeyError: no such parser (templates are validated at load, so the engine never sees this).
    """
    parser = lookup_parser(name)
    if parser is None:
        raise KeyError(name)
    return parser


def known_parser_names() -> list[str]:
    """Every usable parser name: the standard eight, then the registered ``x-`` extensions."""
    from chatcodec.response_templates.extensions import EXTENSIONS

    return [*STANDARD_PARSERS, *sorted(n for n in EXTENSIONS if n.startswith("x-"))]


def run_parser(spec: Mapping[str, Any], text: str) -> Any:
    """Parse ``text`` with the content parser a nested ``{"name", "args"}`` spec names.

    Args:
        spec: a spec checked by :func:`check_parser_spec` at load time.
        text: the raw text.

    Returns:
        The parsed value.

    Raises:
        ValueError: the parser rejects the text.
    """
    return get_parser(spec.get("name", "text")).parse(text, spec.get("args", {}))


def prepare_parser(parser: ContentParser, args: Mapping[str, Any]) -> Prepared:
    """``parser`` with ``args`` bound, ready for every region of its field (called at load).

    Args:
        parser: the content parser.
        args: its ``content_args``, already validated.

    Returns:
        ``(raw_text) -> value``: what ``parser.parse(raw_text, args)`` returns or raises, with the
        nested parsers looked up and the patterns compiled once, not at every region close.
    """
    if parser.prepare is not None:
        return parser.prepare(args)
    parse = parser.parse
    return lambda text: parse(text, args)


def prepare_spec(spec: Mapping[str, Any] | None) -> Prepared | None:
    """A nested ``{"name", "args"}`` spec (checked by :func:`check_parser_spec`) prepared as
    :func:`prepare_parser` does; ``None`` for no spec."""
    if spec is None:
        return None
    return prepare_parser(get_parser(spec.get("name", "text")), spec.get("args", {}))


def check_parser_spec(spec: Any, where: str) -> None:
    """Validate a nested ``{"name": parser, "args": {...}}`` spec at load time.

    Args:
        spec: the spec as written in the template.
        where: its JSON path (``"fields.x.content_args.value_parser"``), for messages.

    Raises:
        ResponseTemplateError: not an object with a string ``name``, an unknown key or parser name,
            or ``args`` the parser rejects; the message and ``.path`` name the offending key.
    """
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise ResponseTemplateError(
            f'{where}: must be an object {{"name": parser, "args": {{...}}}}', path=where)
    unknown = sorted(set(spec) - {"name", "args"})
    if unknown:
        raise ResponseTemplateError(f"{where}: unknown key(s) {unknown}. Known: ['args', 'name']", path=where)
    parser = lookup_parser(spec["name"])
    if parser is None:
        known = ", ".join(known_parser_names())
        _fail(where, "name", f"unknown content parser {spec['name']!r}. Known parsers: {known}")
    args = spec.get("args", {})
    if not isinstance(args, Mapping):
        _fail(where, "args", "must be an object")
    parser.validate(args, f"{where}.args")
