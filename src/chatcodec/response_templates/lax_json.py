"""The JSON dialect of the ``json`` content parser: strict JSON plus the knobs models need.

Three ``content_args`` knobs (SPEC §1.3), applied in this order before ``json.loads``:

* ``string_delims``: ``[[open, close], ...]`` pairs that delimit string values instead of ``"``
  (Gemma 4 writes ``<|"|>text<|"|>``). Delimited strings may hold raw newlines, quotes and
  non-ASCII; they come back as ordinary JSON strings. While they are set aside they are replaced
  by reserved sentinel characters (``\\x01``/``\\x02``), so input that already contains those is
  rejected (as the reference does).
* ``unquoted_keys``: bare identifier keys (``{city: "London"}``) are quoted, as transformers 5.24
  quotes them: a ``\\w+`` key after ``{`` or ``,``, whitespace around it allowed (``{ a : 1, b: 2}``),
  and nothing inside a quoted string is ever rewritten (``{a: "x,y:z"}`` keeps its value; 5.23
  rewrote it and needed the key right after ``{`` or ``,``).
* ``allow_non_json``: on failure, return the stripped raw text instead of raising.

JSON nested more than ``MAX_NESTING_DEPTH`` levels deep is a failure too (never a
``RecursionError``), so ``allow_non_json`` returns its text and ``x-first`` tries its next parser.

What this module never does: accept ``NaN``/``Infinity`` (they are not JSON, and a message holding
them cannot be serialised as JSON again), or turn a number too large for a float (``1e999``) into
``inf``: such a number is kept as its text, the string ``"1e999"``, as vLLM and SGLang keep a
non-finite argument's raw text (SGLang's ``test_nonfinite_coercion.py``), so no data is changed and
the arguments stay valid JSON (:func:`finite_number`).

Rule kept: every failure is a ``ValueError`` whose message says whether the dialect rewrote the
text (``after dialect transforms``) or not (``could not parse region as JSON``), with the JSON
error's position.
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence

import regex

from chatcodec.response_templates.content_error import ContentError
from chatcodec.response_templates.limits import MAX_NESTING_DEPTH, NESTING_ERROR, bracket_bound, exceeds_depth

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SENTINEL_CLOSE",
    "SENTINEL_OPEN",
    "JSONContentError",
    "StringTracker",
    "decode_number",
    "finite_number",
    "loads_finite_json",
    "loads_json",
    "parse_json_dialect",
    "prepare_json_dialect",
    "quote_bare_keys",
    "reject_constant",
    "unique_keys",
]

#: Marks the start of a set-aside delimited string while the dialect is applied.
SENTINEL_OPEN = "\x01"
#: Marks the end of a set-aside delimited string while the dialect is applied.
SENTINEL_CLOSE = "\x02"

class JSONContentError(ContentError):
    """A region that is not JSON in its dialect; ``position`` is ``None`` when decoding failed in
    the dialect-rewritten text (positions there do not map back to the raw region)."""


#: A bare object key (a ``bare_keys`` dialect), compiled on first use through regex's own cache.
_BARE_KEY = r"(\w+)(\s*):"


def reject_constant(name: str) -> Any:
    """``parse_constant`` for ``json``: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON.

    Raises:
        ValueError: always, naming the constant.
    """
    raise ValueError(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


def finite_number(text: str) -> float | str:
    """``parse_float`` for ``json``: the float a JSON number's text stands for, or, when it does not
    fit a float finitely (``1e999``, ``-2e400``), that text as written.

    Python's ``float`` gives ``inf``, which ``json.dumps`` writes as ``Infinity`` (not JSON) and which
    has lost the number; vLLM and SGLang keep the raw text of such an argument instead.

    Args:
        text: a number's text as the JSON grammar matched it (a fraction or an exponent).

    Returns:
        The finite float, or ``text`` itself.
    """
    value = float(text)
    return value if math.isfinite(value) else text


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for ``json``: an object that gives a key twice is an error.

    A dict would keep the last value and silently drop the first (``{"a": "KEEP", "a": "x"}``);
    nothing may be lost, so every JSON reader of model output refuses it.

    Raises:
        ValueError: a key is given twice, naming it.
    """
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} is given twice in one object (a dict would keep only the "
                                 "last value)")
            seen.add(key)
    return result


def loads_json(text: str) -> Any:
    """``json.loads`` that rejects the non-standard ``NaN``/``Infinity`` tokens and repeated keys.

    Args:
        text: the JSON text.

    Returns:
        The parsed value.

    Raises:
        ValueError: ``text`` is not strict JSON (``json.JSONDecodeError`` is a ``ValueError``), or an
            object gives a key twice (:func:`unique_keys`).
    """
    decoded = _DECODED.last
    if decoded is not None:  # the string tracker decoded this region's text a moment ago
        _DECODED.last = None
        if decoded[0] == text:
            return decoded[1]
    if text.startswith("\ufeff"):  # json.loads' own message for a byte-order mark
        return json.loads(text, parse_constant=reject_constant, object_pairs_hook=unique_keys,
                          parse_float=finite_number)
    # JSONDecoder.decode and raw_decode, inlined (same errors, same positions): a region close is
    # the hot path of whole-text parsing of tool-heavy output
    try:
        value, end = _SCAN(text, _SKIP(text, 0).end())
    except StopIteration as error:
        raise json.JSONDecodeError("Expecting value", text, error.value) from None
    end = _SKIP(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


class _Decoded(threading.local):
    """The last value :class:`StringTracker` decoded whole, with its text, for :func:`loads_json`
    (one per thread; handed out once): a region read at its close is then decoded once, not
    once to find where its strings are and once more for its value."""

    last: tuple[str, Any] | None = None


_DECODED = _Decoded()

#: What ``json.loads`` builds on every call, built once.
_DECODER = json.JSONDecoder(parse_constant=reject_constant, object_pairs_hook=unique_keys,
                            parse_float=finite_number)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]
_SKIP = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]


def decode_number(text: str) -> int | float | str:
    """One JSON number's text as :func:`loads_json` reads it inside a value (the streaming scanner
    sets numbers one by one): an ``int``, a finite ``float``, or the text of a number too large for
    a float (:func:`finite_number`).

    Raises:
        ValueError: ``text`` is not one JSON number, or is an integer too long for Python's ``int``.
    """
    value: int | float | str = _DECODER.decode(text)
    if isinstance(value, str) and value != text:  # a JSON string, not a number kept as text
        raise ValueError(f"not a JSON number: {text!r}")
    return value


def _refuse_overflow(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} does not fit a float (it would become {value})")
    return value


_FINITE_DECODER = json.JSONDecoder(parse_constant=reject_constant, object_pairs_hook=unique_keys,
                                   parse_float=_refuse_overflow)


def loads_finite_json(text: str) -> Any:
    """:func:`loads_json` that refuses a number too large for a float instead of keeping its text.

    For casting a whole argument's text by its schema (``"[1e999]"`` for an ``array`` parameter):
    vLLM and SGLang then keep the argument's raw text, not a list holding ``"1e999"``.

    Raises:
        ValueError: as :func:`loads_json`, and for such a number.
    """
    return _FINITE_DECODER.decode(text)


def quote_bare_keys(text: str) -> str:
    """Quote bare identifier keys that follow ``{`` or ``,`` (whitespace allowed) outside strings.

    Args:
        text: JSON-like text; double-quoted strings (with backslash escapes) are copied untouched.

    Returns:
        The text with ``key:`` rewritten to ``"key":`` wherever a key may stand.
    """
    out: list[str] = []
    i, n = 0, len(text)
    key_may_follow = False
    while i < n:
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i, key_may_follow = end, False
            continue
        if key_may_follow and not char.isspace():
            match = regex.compile(_BARE_KEY).match(text, i)
            if match is not None:
                out.append(f'"{match.group(1)}"{match.group(2)}:')
                i, key_may_follow = match.end(), False
                continue
        if not char.isspace():
            key_may_follow = char in "{,"
        out.append(char)
        i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """Index just past the double-quoted string starting at ``start`` (or the end of ``text``)."""
    i, n = start + 1, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == '"':
            return i + 1
        i += 1
    return n


def _set_aside_delimited(text: str, pairs: Sequence[Sequence[str]]) -> tuple[str, list[str]]:
    """Replace each delimited string by a sentinel token; return the text and the strings."""
    captured: list[str] = []
    for open_delim, close_delim in pairs:
        # what regex.sub(open (.*?) close) does, in linear time: once no close follows an open,
        # none follows a later open either (the lazy search would try every one, to the end)
        pieces: list[str] = []
        done = 0
        while (start := text.find(open_delim, done)) >= 0:
            end = text.find(close_delim, start + len(open_delim))
            if end < 0:
                break
            captured.append(text[start + len(open_delim) : end])
            pieces += [text[done:start], f"{SENTINEL_OPEN}{len(captured) - 1}{SENTINEL_CLOSE}"]
            done = end + len(close_delim)
        text = "".join(pieces) + text[done:]
    return text, captured


def _restore_delimited(text: str, captured: list[str]) -> str:
    for index, value in enumerate(captured):
        text = text.replace(f"{SENTINEL_OPEN}{index}{SENTINEL_CLOSE}", json.dumps(value, ensure_ascii=False))
    return text


def parse_json_dialect(text: str, args: Mapping[str, Any]) -> Any:
    """Parse ``text`` as JSON with the ``content_args`` dialect knobs.

    Args:
        text: the raw region text.
        args: ``content_args`` (``string_delims``, ``unquoted_keys``, ``allow_non_json``, ``strip``),
            already validated when the template was loaded.

    Returns:
        The decoded value, or with ``allow_non_json`` the (stripped) raw text when decoding fails.

    Raises:
        ValueError: the text is not JSON in this dialect, or contains the reserved sentinels.
    """
    pairs = args.get("string_delims") or []
    if pairs and (SENTINEL_OPEN in text or SENTINEL_CLOSE in text):
        raise JSONContentError(
            "input contains the reserved sentinel characters \\x01/\\x02 that string_delims uses "
            "internally; cannot parse it safely"
        )
    working, captured = _set_aside_delimited(text, pairs) if pairs else (text, [])
    if args.get("unquoted_keys"):
        working = quote_bare_keys(working)
    if captured:
        working = _restore_delimited(working, captured)
    try:
        value = loads_json(working)
        if bracket_bound(working) > MAX_NESTING_DEPTH and exceeds_depth(value):
            raise ValueError(NESTING_ERROR)
        return value
    except (ValueError, RecursionError) as error:
        return _failed(error, text, working, args)


def prepare_json_dialect(args: Mapping[str, Any]) -> Callable[[str], Any]:
    """:func:`parse_json_dialect` with ``args`` bound (the ``json`` parser's ``prepare``, called
    when a template loads).

    Args:
        args: validated ``content_args``.

    Returns:
        ``(text) -> value``, returning and raising what ``parse_json_dialect(text, args)`` does.
        Without ``string_delims`` and ``unquoted_keys`` the text is decoded as it is, with no
        dialect step to skip at every region close (the hot path of tool-heavy output).
    """
    if args.get("string_delims") or args.get("unquoted_keys"):
        return lambda text: parse_json_dialect(text, args)

    def parse_plain_json(text: str) -> Any:
        try:
            value = loads_json(text)
            if bracket_bound(text) > MAX_NESTING_DEPTH and exceeds_depth(value):
                raise ValueError(NESTING_ERROR)
            return value
        except (ValueError, RecursionError) as error:
            return _failed(error, text, text, args)

    return parse_plain_json


def _failed(error: ValueError | RecursionError, text: str, working: str, args: Mapping[str, Any]) -> Any:
    """What :func:`parse_json_dialect` does when decoding ``working`` (``text`` after the dialect)
    failed: the raw text with ``allow_non_json``, else a :class:`JSONContentError` saying why."""
    if args.get("allow_non_json"):
        return text.strip() if args.get("strip", True) else text
    if not isinstance(error, ValueError) or str(error) == NESTING_ERROR:
        raise JSONContentError(NESTING_ERROR) from None
    detail = _describe(error)
    if working == text:
        position = error.pos if isinstance(error, json.JSONDecodeError) else None
        raise JSONContentError(f"could not parse region as JSON: {detail}", position) from None
    raise JSONContentError(
        f"could not parse after dialect transforms: {detail}; the text after the dialect "
        f"rewrite was {_clip(working)}"
    ) from None


def _describe(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} (line {error.lineno}, column {error.colno}, char {error.pos})"
    return str(error)


def _clip(text: str, limit: int = 200) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


#: Characters after which (ignoring whitespace) a quote opens a JSON string; other quotes are stray.
_STRING_MAY_START = frozenset({"", "{", "[", ",", ":"})
_IN_QUOTED = regex.compile(r'["\\]')
#: Text this long is first tried as a whole (:func:`_plain_json_end`): shorter pieces (streamed
#: tokens) go straight to the step-by-step scan.
_WHOLE_AT_ONCE = 32


def _plain_json_end(text: str, last: str) -> str | None:
    """What the step-by-step scan of :class:`StringTracker` concludes about ``text`` (fed outside a
    string, after ``last``, in the ``"..."``-only dialect), when it ends outside a string: the new
    last significant character. ``None`` when ``text`` ends inside a string or holds an escape JSON
    does not have (the caller then scans step by step).

    One ``str.find`` per quote and the ``json`` module's C string scanner per string, so text full
    of escaped quotes costs no Python step per escape: the same rules as the scan (a quote opens a
    string only after ``{ [ , :`` or at the start, else it is stray; a backslash escapes the next
    character inside a string), in a few C calls per string.
    """
    find, i = text.find, 0
    while (quote := find('"', i)) >= 0:
        significant = text[i:quote].rstrip()
        if significant:
            last = significant[-1]
        if last in _STRING_MAY_START:
            try:
                i = _scan_string(text, quote + 1, False)[1]
            except ValueError:  # unterminated, or an escape JSON does not have (``\q``, ``\u12``)
                return None
        else:  # a stray quote: plain text
            i = quote + 1
        last = '"'
    significant = text[i:].rstrip()
    return significant[-1] if significant else last


_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]


def _one_value_end(text: str) -> str | None:
    """What the step-by-step scan of :class:`StringTracker` concludes about ``text`` fed from the
    start of a region, when ``text`` is one JSON value with only whitespace around it (a whole
    tool call, read at its close): the value's last character, since in valid JSON every string
    opens where the scan expects one and ends where it does. ``None`` otherwise (the caller then
    scans string by string). One call of the ``json`` module's C scanner, so a value with many
    strings costs no Python step per string; the value it builds is kept for :func:`loads_json`
    when that would return it for the same text (same scanner, JSON whitespace around it).
    """
    try:  # JSON whitespace only before it: other leading whitespace fails here (scan string by string)
        value, end = _SCAN(text, _SKIP(text, 0).end())
    except (ValueError, StopIteration, RecursionError):  # a repeated key or NaN too: scan step by step
        return None
    if _SKIP(text, end).end() == len(text):
        _DECODED.last = (text, value)  # exactly what loads_json(text) returns: keep it for the parser
    elif not text[end:].isspace():
        return None
    return text[end - 1]


class StringTracker:
    """Follows a ``json`` region's text, chunk by chunk, to tell whether it is inside a string.

    A close delimiter that appears inside a JSON string (``{"s": "</tool_call>"}``) is text, not a
    close (SPEC §1.5 improvement over the reference). Strings are ``"..."`` with backslash escapes
    and the ``string_delims`` pairs of the dialect. Only a quote in a place where JSON allows a
    string (after ``{``, ``[``, ``,``, ``:`` or at the start) opens one, so a stray quote in broken
    JSON (``{"name": "a, "x": 1}``) does not hide the close delimiter for the rest of the output.
    Work is linear in the text fed.
    """

    __slots__ = ("_carry", "_closer", "_closers", "_escape", "_last", "_outside")

    def __init__(self, string_delims: Sequence[Sequence[str]] = ()) -> None:
        self._closers, self._outside = _dialect(tuple(tuple(pair) for pair in string_delims)) \
            if string_delims else _dialect(())
        self._closer: str | None = None  # what ends the string we are in
        self._escape = False  # the last character fed was a backslash inside a "..." string
        self._last = ""  # the last non-whitespace character outside strings
        self._carry = ""  # the start of a multi-character token cut off by the chunk end

    def feed(self, text: str) -> None:
        """Advance over the next piece of the region's text."""
        if self._closer is None and not self._carry and not self._escape and len(self._closers) == 1 \
                and len(text) >= _WHOLE_AT_ONCE:
            last = _one_value_end(text) if not self._last else None
            if last is None:
                last = _plain_json_end(text, self._last)
            if last is not None:  # it ends outside a string: a few C calls per string
                self._last = last
                return
        text, self._carry = self._carry + text, ""
        i, n = 0, len(text)
        if self._escape and n:
            i, self._escape = 1, False
        while i < n:
            closer = self._closer
            if closer is None:
                i = self._step_outside(text, i)
            elif closer == '"':
                m = _IN_QUOTED.search(text, i)
                if m is None:
                    return
                if m.group() == "\\":
                    i = m.end() + 1
                    self._escape = i > n
                else:
                    self._closer, self._last, i = None, '"', m.end()
            else:
                end = text.find(closer, i)
                if end < 0:
                    self._carry = _cut_prefix(text, i, closer)
                    return
                self._closer, self._last, i = None, '"', end + len(closer)

    def _step_outside(self, text: str, i: int) -> int:
        m = self._outside.search(text, i)
        stop = len(text) if m is None else m.start()
        significant = text[i:stop].rstrip()
        if significant:
            self._last = significant[-1]
        if m is None:
            return len(text)
        if m.lastindex is None:
            self._carry = text[m.start():]
            return len(text)
        if self._last in _STRING_MAY_START:
            self._closer = self._closers[m.group()]
        else:
            self._last = m.group()[-1]
        return int(m.end())

    def inside(self, delimiter_text: str) -> bool:
        """Whether a delimiter starting right after the text fed so far falls inside a string.

        Args:
            delimiter_text: the delimiter's own text (it may complete a string opener cut off by
                the previous chunk; only text already in the buffer is looked at, so the answer
                does not depend on chunking).

        Returns:
            ``True`` when the delimiter would be string content, not a close.
        """
        if self._closer is not None:
            return True
        if not self._carry or self._last not in _STRING_MAY_START:
            return False
        joined = self._carry + delimiter_text
        return any(joined.startswith(token) for token in self._closers)


@functools.lru_cache(maxsize=64)
def _dialect(string_delims: tuple[tuple[str, ...], ...]) -> tuple[dict[str, str], Any]:
    """What ends each string opener, and the search for openers outside strings (compiled once per
    dialect, not once per region)."""
    closers = {'"': '"', **{open_: close for open_, close in string_delims}}
    tokens = sorted(closers, key=len, reverse=True)
    prefixes = sorted({t[:i] for t in tokens for i in range(1, len(t))}, key=len, reverse=True)
    tail = "|".join(regex.escape(p) for p in prefixes)
    outside = regex.compile(
        "(" + "|".join(regex.escape(t) for t in tokens) + ")" + (f"|(?:{tail})\\Z" if tail else ""))
    return closers, outside


def _cut_prefix(text: str, start: int, token: str) -> str:
    """The longest end of ``text[start:]`` that begins ``token`` (kept until the next chunk)."""
    for size in range(min(len(token) - 1, len(text) - start), 0, -1):
        if token.startswith(text[-size:]):
            return text[-size:]
    return ""
