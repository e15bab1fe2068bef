"""The ``x-findall`` and ``x-first`` content parsers: regex-driven and fallback parsing.

``x-findall`` runs a regex over the region text (``regex`` module, ``DOTALL``) and turns every
match into a dict of its named groups, each parsed by the content parser named for it. It reads
formats that put several tool calls inside one marked section (Kimi-K2, DeepSeek V3.x, MiniMax-M2,
Step3) and per-parameter tags whose value type is written beside them (DeepSeek V3.2's
``string="true"`` / ``string="false"``). ``content_args``:

* ``pattern`` (required): the regex; groups that did not take part in a match are left out;
* ``value_parsers``: ``{group: {"name": parser, "args": {...}}}``; other groups stay text;
* ``into``: ``"list"`` (default, one dict per match) or ``"dict"`` (the pattern needs a ``key``
  group; each match adds ``key -> the parsed value of its one other participating group``, or
  ``""`` when none takes part);
* ``between`` (regex, default ``\\s*``): what the text before, between and after the matches may
  be (the section's framing and separators), matched in full.

Nothing is dropped: a value parser that rejects a group, with ``into: "dict"`` a match whose
``key`` group did not take part, a match with more than one other participating group and a key
given twice (a dict would keep the last), and text outside the matches that
``between`` does not allow (a call the pattern cannot read, prose), raise ``ValueError`` naming the
offset, which the engine turns into a ``ResponseParseError`` (strict) or a ``parse_errors`` record
with the raw text (keep).

Text the pattern matches outside its named groups is the format's framing (tags, separators): a
template must not match free text there (``<c>.*?(?P<v>..)``), as it would vanish.

``x-first`` tries ``content_args.parsers`` (a list of ``{"name", "args"}``) in order and returns
the first value that parses; when all fail, its error gives every parser's error, in order, at the
furthest position any of them reported. It loses nothing by itself:
the value is the whole text as read by one parser, which follows its own nothing-lost rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import regex

from chatcodec.response_templates import backtracking
from chatcodec.response_templates.backtracking import catastrophe
from chatcodec.response_templates.content import (
    Prepared,
    check_parser_spec,
    compile_user_pattern,
    get_parser,
    prepare_parser,
    user_matches,
    user_timeout,
)
from chatcodec.response_templates.content_error import ContentError
from chatcodec.response_templates.ext_common import ExtensionError, reject_skip_invalid

__all__ = [
    "findall_gap_check",
    "parse_findall",
    "parse_first",
    "prepare_findall",
    "prepare_first",
    "validate_findall",
    "validate_first",
]

_WHITESPACE = r"\s*"


def validate_findall(args: Mapping[str, Any], where: str) -> None:
    """Check ``x-findall``'s ``content_args`` when the template loads.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, a missing or invalid ``pattern``, a ``value_parsers`` entry
            for a group the pattern lacks or naming a bad parser, a bad ``into`` or ``between``.
    """
    reject_skip_invalid(args, where)
    unknown = sorted(set(args) - {"pattern", "value_parsers", "into", "between"})
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {unknown} for x-findall. "
            "Known: ['between', 'into', 'pattern', 'value_parsers']"
        )
    pattern = _compile(args.get("pattern"), f"{where}.pattern", check=True)
    parsers = args.get("value_parsers", {})
    if not isinstance(parsers, dict):
        raise ValueError(f"{where}.value_parsers: must be an object {{group: parser}}")
    for group, spec in parsers.items():
        if group not in pattern.groupindex:
            raise ValueError(f"{where}.value_parsers.{group}: the pattern has no group {group!r}")
        check_parser_spec(spec, f"{where}.value_parsers.{group}")
    into = args.get("into", "list")
    if into not in ("list", "dict"):
        raise ValueError(f"{where}.into: must be 'list' or 'dict', got {into!r}")
    if into == "dict" and "key" not in pattern.groupindex:
        raise ValueError(f"{where}.pattern: 'into': 'dict' needs a named group 'key'")
    if "between" in args:
        _compile(args["between"], f"{where}.between", check=True)


def parse_findall(text: str, args: Mapping[str, Any]) -> Any:
    """Parse every match of ``args["pattern"]`` in ``text`` (see the module docstring).

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        A list of dicts (``into: "list"``) or one dict (``into: "dict"``).

    Raises:
        ValueError: a value parser rejected a group, or text outside the matches is not allowed
            by ``between``; the message names the offset.
    """
    return prepare_findall(args)(text)


def prepare_findall(args: Mapping[str, Any]) -> Prepared:
    """``x-findall`` with ``args`` bound: its patterns compiled and its value parsers resolved
    once, at load (:func:`~chatcodec.response_templates.content.prepare_parser`).

    Args:
        args: the validated ``content_args``.

    Returns:
        ``(raw_text) -> value``, which returns and raises what :func:`parse_findall` does.
    """
    pattern = _compile(args["pattern"], "x-findall pattern")
    between, untimed = _between(args.get("between", _WHITESPACE))
    parsers: dict[str, Prepared] = {
        group: prepare_parser(get_parser(spec.get("name", "text")), spec.get("args", {}))
        for group, spec in args.get("value_parsers", {}).items()
    }
    into_list = args.get("into", "list") == "list"

    def parse(text: str) -> Any:
        items: list[dict[str, Any]] = []
        starts: list[int] = []
        position = 0
        for match in user_matches(pattern, text, "content_args.pattern (x-findall)"):
            gap = "between matches" if items else "before the first match"
            _check_gap(between, text, position, match.start(), gap, untimed)
            position = match.end()
            items.append(_groups(match, parsers))
            starts.append(match.start())
        gap = "after the last match" if items else "before the first match"
        _check_gap(between, text, position, len(text), gap, untimed)
        if into_list:
            return items
        return _into_dict(items, starts)

    return parse


def findall_gap_check(args: Mapping[str, Any]) -> Callable[[str, Sequence[tuple[int, int]]], None]:
    """The check of the text outside the matches of an ``x-findall`` region against ``between``,
    with ``args`` bound (made once per arguments): the checks its parser makes, with its errors.

    Args:
        args: the validated ``content_args``.

    Returns:
        ``(text, spans) -> None``: ``text`` is the region's text and ``spans`` the ``(start, end)``
        of each match of the pattern in it, in order; raises ``ValueError`` (naming the offset)
        when text before, between or after the matches is not what ``between`` allows, or its
        check ran out of time.
    """
    between, untimed = _between(args.get("between", _WHITESPACE))

    def check(text: str, spans: Sequence[tuple[int, int]]) -> None:
        position = 0
        for index, (start, end) in enumerate(spans):
            gap = "between matches" if index else "before the first match"
            _check_gap(between, text, position, start, gap, untimed)
            position = end
        gap = "after the last match" if spans else "before the first match"
        _check_gap(between, text, position, len(text), gap, untimed)

    return check


@lru_cache(maxsize=64)
def _between(source: str) -> tuple[regex.Pattern[str], int]:
    """``between`` compiled, and the longest gap it is matched over without the clock: a linear
    ``between`` (``\\s*``) over a short gap runs without it, as the delimiters do (reading the
    clock costs far more than the match)."""
    between = _compile(source, "x-findall between")
    return between, backtracking.UNTIMED_SPAN if _linear(between.pattern) else -1


def _into_dict(items: list[dict[str, Any]], starts: list[int]) -> dict[str, Any]:
    """``key -> value`` of every match; a missing key, a second value group or a repeated key raise."""
    result: dict[str, Any] = {}
    for item, start in zip(items, starts, strict=True):
        where = f"x-findall: match at offset {start}"
        if "key" not in item:
            raise ExtensionError(f"{where}: the group 'key' did not take part (into: dict)", start)
        key = item.pop("key")
        if len(item) > 1:
            raise ExtensionError(
                f"{where}: key {key!r} has more than one value group {sorted(item)} (into: dict takes one)",
                start,
            )
        if key in result:  # a dict keeps the last; nothing may be lost
            raise ExtensionError(f"{where}: key {key!r} is given twice (into: dict)", start)
        result[key] = next(iter(item.values()), "")
    return result


def _groups(match: regex.Match[str], parsers: Mapping[str, Prepared]) -> dict[str, Any]:
    """The participating named groups of ``match``, each parsed by its value parser (if any)."""
    values: dict[str, Any] = {}
    for group, value in match.groupdict().items():
        if value is None:
            continue
        if group not in parsers:
            values[group] = value
            continue
        try:
            values[group] = parsers[group](value)
        except ValueError as error:
            inner = error.position if isinstance(error, ContentError) else None
            where = match.start(group) + (inner if inner is not None else 0)
            raise ExtensionError(
                f"x-findall: match at offset {match.start()}, group {group!r}: {error}", where
            ) from None
    return values


@lru_cache(maxsize=64)
def _linear(source: str) -> bool:
    """Whether ``source`` is proved linear (:func:`~.backtracking.judge`), once per pattern."""
    return backtracking.judge(source).linear


def _check_gap(between: regex.Pattern[str], text: str, start: int, end: int, where: str,
               untimed: int = -1) -> None:
    """Raise unless ``text[start:end]`` (text outside the matches) is what ``between`` allows; a gap
    of at most ``untimed`` characters is matched without the timeout."""
    timeout = None if end - start <= untimed else backtracking.REGEX_TIMEOUT
    try:
        allowed = between.fullmatch(text, start, end, timeout=timeout)
    except TimeoutError:
        raise ExtensionError(user_timeout("content_args.between (x-findall)"), start) from None
    if allowed is None:
        excerpt = text[start:end]
        excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "..."
        raise ExtensionError(
            f"x-findall: text {where} at offset {start}: {excerpt!r} is not a match of the pattern "
            "(a malformed tool call, or text the format does not allow there)",
            start,
        )


def validate_first(args: Mapping[str, Any], where: str) -> None:
    """Check ``x-first``'s ``content_args`` when the template loads.

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, or ``parsers`` is not a non-empty list of valid parser specs.
    """
    unknown = sorted(set(args) - {"parsers"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for x-first. Known: ['parsers']")
    parsers = args.get("parsers")
    if not isinstance(parsers, list) or not parsers:
        raise ValueError(f"{where}.parsers: must be a non-empty list of {{name, args}}")
    for index, spec in enumerate(parsers):
        check_parser_spec(spec, f"{where}.parsers[{index}]")


def parse_first(text: str, args: Mapping[str, Any]) -> Any:
    """The value of the first parser in ``args["parsers"]`` that accepts ``text``.

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        That parser's value.

    Raises:
        ValueError: every parser rejected the text; the message gives each parser's error, in
            order, and the error is an ``ExtensionError`` at the furthest position any of them
            reported (the parser that got furthest is the likeliest to be the one meant).
    """
    return prepare_first(args)(text)


def prepare_first(args: Mapping[str, Any]) -> Prepared:
    """``x-first`` with ``args`` bound: its parsers resolved once, at load.

    Args:
        args: the validated ``content_args``.

    Returns:
        ``(raw_text) -> value``, which returns and raises what :func:`parse_first` does.
    """
    parsers = [prepare_parser(get_parser(spec.get("name", "text")), spec.get("args", {}))
               for spec in args["parsers"]]

    def parse(text: str) -> Any:
        errors: list[ValueError] = []
        for parser in parsers:
            try:
                return parser(text)
            except ValueError as failure:
                errors.append(failure)
        message = "x-first: no parser accepted the text: " + "; ".join(str(error) for error in errors)
        positions = [error.position for error in errors
                     if isinstance(error, ContentError) and error.position is not None]
        if positions:
            raise ExtensionError(message, max(positions))
        raise ValueError(message)

    return parse


def _compile(pattern: Any, where: str, check: bool = False) -> regex.Pattern[str]:
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"{where}: a non-empty regex string is required")
    try:
        compiled = compile_user_pattern(pattern)
    except regex.error as error:
        raise ValueError(f"{where}: invalid regex: {error}") from None
    if check:
        problem = catastrophe(compiled)
        if problem is not None:
            raise ValueError(f"{where}: {problem}")
    return compiled
