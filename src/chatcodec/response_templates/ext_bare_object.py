"""The ``x-bare-object`` content parser: an object with bare keys of any text and delimited strings.

Gemma 4 writes a call's arguments as ``{key:value,...}``: each key exactly as the tool declares it,
unquoted (``Content-Type``, ``user.name``, ``$ref``, ``my key``, ``-70``, emoji), string values
between ``<|"|>`` tokens, numbers, ``true``/``false`` and, for a Python ``None``, ``None``; nested
objects and arrays follow the same rules. ``json`` with ``unquoted_keys`` only reads identifier
keys, so it rejects most of these. A bare key is the text up to the next ``:`` (stripped of
surrounding whitespace); a key may also be written as a delimited or JSON string.

``content_args``:

* ``string_delims`` (list of ``[open, close]`` pairs, default none): what delimits a string besides
  JSON's ``"..."`` (whose escapes are decoded); the text between the delimiters is taken verbatim.
* ``bare_strings`` (bool, default false): a bare word that is not one of the bare values below is a
  string, as vLLM reads Gemma 4's arguments (``vllm/tool_parsers/gemma4_tool_parser.py``,
  ``_parse_gemma4_value``: what is neither a boolean, null nor a number is the bare string;
  ``vllm/parser/gemma4.py``, ``_parse_gemma4_args``: every bare value is its text), so
  ``{unit:celsius}`` gives ``{"unit": "celsius"}``. The word ends where those parsers end it: at the
  next ``,``, ``}`` or ``]`` (none of them can be part of a bare word), its surrounding whitespace
  stripped; an empty word is still an error. A bare key then ends before the first ``,``, ``}`` or
  ``]`` too (those separate the words): it is the text up to the first ``:`` in that span that a
  value other than a bare string follows (``{ns:tag:1}`` keeps the key ``ns:tag``), else up to the
  span's first ``:`` (``{url:http://x}`` gives ``{"url": "http://x"}``, as vLLM reads it). In an
  object, a ``,`` after a bare value is part of it when the text after that ``,`` up to the next
  ``,``, ``}`` or ``]`` cannot begin the next key: it is not blank and holds no ``:``, ``"``,
  ``{``, ``[`` nor a string delimiter (``{location:Tokyo, Japan}`` gives ``{"location": "Tokyo,
  Japan"}``, as Gemma 4 writes a place's name; vLLM keeps ``"Tokyo"`` and drops the rest, Ollama's
  Gemma 4 parser reads the whole when the schema says the argument is a string); in an array a
  ``,`` always separates items. Every text the option-less parser reads is read the same with the
  option; it only reads as strings what would be errors.

* ``inner_close_as`` (string, default none: a string ends at its first close delimiter): a close
  delimiter ends a delimited string only where a value can end, that is where the text after it
  (after whitespace) is ``,``, ``}``, ``]``, ``:``, the end of the text, or a bare key (letters,
  digits, ``_``, ``.``, ``-``) and its ``:``; written anywhere else it is text of the string and
  reads as this string. Gemma 4 writes its string token ``<|"|>`` for a ``"`` inside a string (a
  Python triple quote as three tokens: vLLM #44715, #48678), so its profile sets a double quote.
  With it, a key may follow a delimited string value without the ``,``
  (``command:<|"|>look<|"|>angle:90``, a real Gemma 4 output, yzma #243). It only reads what would
  be errors: a delimited string followed by anything else was one.

* ``single_quotes`` (bool, default false): a value (not a key) that begins with ``'`` is a string
  that runs to the next ``'`` that a ``,``, ``}`` or ``]`` follows (after whitespace), its text
  taken verbatim (a ``'`` elsewhere is text: ``'it's'`` is ``it's``). Gemma 4 writes Python's
  single-quoted strings inside containers (``data_refs:['ds_1']``, vLLM #51284, captured outputs)
  and as values (Ollama's ``repairGemma4SingleQuotedValues``); as a bare word the quotes would be
  part of the string (``"'ds_1'"``). A ``'`` that no such ``'`` ends begins a bare word, read as
  without the option (``'abc}`` gives ``"'abc"``).

* ``equals_keys`` (bool, default false): a bare key whose span (up to the next ``,``, ``}`` or
  ``]``) holds no ``:`` ends at the first ``=`` that a value follows, and any key may be followed
  by ``=`` instead of ``:``, as a real Gemma 4 output writes its later arguments
  (``,data_refs=["ds_1"],note="..."``, captured in a vLLM #51307 comment).

A key given twice in one object (``{a:1,a:2}``, bare or delimited) raises ``ValueError`` with the
offset of the second: a dict would keep only the last value.

Bare values: ``true``/``True``, ``false``/``False``, ``null``/``None`` and JSON numbers (an integer
stays an ``int``; a number too large for a float, ``1e999``, keeps its text as a string, as the
``json`` parser keeps it; ``inf``/``nan`` are not numbers). Anything else (a bare word without
``bare_strings``, an unclosed string or object, text after the object) raises ``ValueError`` with
the offset. The parser is registered ``string_aware``: the region's close delimiter written inside a
string value (``"..."`` or a ``string_delims`` pair) is text, not the end of the region.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from chatcodec.response_templates.content import parse_float, parse_int
from chatcodec.response_templates.ext_common import ExtensionError

__all__ = ["bare_value_end", "bare_word_end", "delim_closes", "parse_bare_object", "quote_closes",
           "validate_bare_object"]

_NAMED = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}
_JSON_STRING = json.JSONDecoder()
#: What ends a bare word (vLLM's Gemma 4 parser ends a bare value at the same three characters).
_WORD_END = re.compile(r"[,}\]]")
#: Nesting deeper than this is refused (the parser recurses once per level).
MAX_DEPTH = 200


def validate_bare_object(args: Mapping[str, Any], where: str) -> None:
    """Check the ``content_args`` of an ``x-bare-object`` region (see the module docstring).

    Args:
        args: the ``content_args``.
        where: their JSON path, for messages.

    Raises:
        ValueError: an unknown key, ``string_delims`` is not a list of pairs of non-empty strings,
            a flag (``bare_strings``, ``single_quotes``, ``equals_keys``) is not a bool, or
            ``inner_close_as`` is not a string.
    """
    known = {"string_delims", "bare_strings", "inner_close_as", "single_quotes", "equals_keys"}
    unknown = sorted(set(args) - known)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for x-bare-object. Known: {sorted(known)}")
    for flag in ("bare_strings", "single_quotes", "equals_keys"):
        if not isinstance(args.get(flag, False), bool):
            raise ValueError(f"{where}.{flag}: must be true or false")
    if not isinstance(args.get("inner_close_as", ""), str):
        raise ValueError(f"{where}.inner_close_as: must be a string")
    pairs = args.get("string_delims", [])
    if not isinstance(pairs, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and s for s in pair)
        for pair in pairs
    ):
        raise ValueError(f"{where}.string_delims: must be a list of [open, close] pairs of non-empty strings")


def parse_bare_object(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Parse ``{key:value,...}`` with bare keys (see the module docstring).

    Args:
        text: the region's raw text.
        args: the validated ``content_args``.

    Returns:
        The object.

    Raises:
        ValueError: the text is not one such object; an ``ExtensionError`` carries the offset.
    """
    delims = [tuple(pair) for pair in args.get("string_delims", [])]
    reader = _Reader(text, delims, bool(args.get("bare_strings")), args.get("inner_close_as"),
                     bool(args.get("single_quotes")), ":=" if args.get("equals_keys") else ":")
    position = reader.skip(0)
    if not text.startswith("{", position):
        raise ExtensionError(f"x-bare-object: '{{' expected at offset {position}", position)
    try:
        value, position = reader.object(position, 0)
    except RecursionError:  # a caller already deep in the stack
        raise ExtensionError("x-bare-object: nested too deeply", position) from None
    position = reader.skip(position)
    if position < len(text):
        excerpt = text[position : position + 40]
        raise ExtensionError(
            f"x-bare-object: unexpected text after the object at offset {position}: {excerpt!r}", position
        )
    return value


class _Reader:
    """A recursive-descent reader over one region's text; every method returns ``(value, end)``."""

    def __init__(self, text: str, delims: list[tuple[str, ...]], bare_strings: bool = False,
                 inner_close_as: str | None = None, single_quotes: bool = False,
                 separators: str = ":") -> None:
        self.text = text
        self.separators = separators  # what may end a key
        self.delims = delims
        self.bare_strings = bare_strings
        self.inner_close_as = inner_close_as
        self.single_quotes = single_quotes
        self.delimited = False  # the last value read was a delimited string

    def skip(self, position: int) -> int:
        while position < len(self.text) and self.text[position].isspace():
            position += 1
        return position

    def fail(self, message: str, position: int) -> ExtensionError:
        return ExtensionError(f"x-bare-object: {message}", position)

    def object(self, position: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth >= MAX_DEPTH:
            raise self.fail("nested too deeply", position)
        result: dict[str, Any] = {}
        position = self.skip(position + 1)
        if self.text.startswith("}", position):
            return result, position + 1
        while True:
            start = position
            key, position = self.key(position)
            if key in result:  # a dict keeps the last; nothing may be lost
                raise self.fail(f"key {key!r} is given twice (the second at offset {start})", start)
            position = self.skip(position)
            if position >= len(self.text) or self.text[position] not in self.separators:
                raise self.fail(f"':' expected after the key at offset {position}", position)
            result[key], position = self.value(self.skip(position + 1), depth, in_object=True)
            position = self.skip(position)
            if self.text.startswith(",", position):
                position = self.skip(position + 1)
            elif self.text.startswith("}", position):
                return result, position + 1
            elif self.delimited and self.inner_close_as is not None and position < len(self.text) \
                    and self.text[position] not in "]:":
                continue  # the string's close showed that a bare key and its ':' follow (no ',')
            else:
                raise self.fail(f"'}}' expected at offset {position}", position)

    def key(self, position: int) -> tuple[str, int]:
        """A key: a string, or bare text up to the first ``:`` that a value follows (keys may hold ``:``).

        With ``bare_strings`` the colon is looked for only before the first ``,``, ``}`` or ``]``.
        """
        string = self.string(position)
        if string is not None:
            return string
        limit = bare_word_end(self.text, position) if self.bare_strings else len(self.text)
        if limit < 0:
            limit = len(self.text)
        separator = ":"
        if "=" in self.separators and self.text.find(":", position, limit) < 0:
            separator = "="  # equals_keys: where the key's span holds no ':'
        end = first = self.text.find(separator, position, limit)
        while end >= 0 and not self.value_follows(end + 1):
            end = self.text.find(separator, end + 1, limit)
        if end < 0:
            end = first  # no value anywhere: report the problem at the first colon's value
        if end < 0:
            raise self.fail(f"':' expected after the key at offset {position}", position)
        return self.text[position:end].strip(), end

    def value_follows(self, position: int) -> bool:
        """Whether a value starts at ``position`` (after whitespace), judged by its first token."""
        position = self.skip(position)
        text = self.text
        if text.startswith(("{", "[", '"'), position) or any(
            text.startswith(opening, position) for opening, _ in self.delims
        ):
            return True
        if self.single_quotes and text.startswith("'", position):
            return True
        try:
            self.bare(position, strings=False)
        except ValueError:
            return False
        return True

    def array(self, position: int, depth: int) -> tuple[list[Any], int]:
        if depth >= MAX_DEPTH:
            raise self.fail("nested too deeply", position)
        result: list[Any] = []
        position = self.skip(position + 1)
        if self.text.startswith("]", position):
            return result, position + 1
        while True:
            item, position = self.value(position, depth)
            result.append(item)
            position = self.skip(position)
            if self.text.startswith(",", position):
                position = self.skip(position + 1)
            elif self.text.startswith("]", position):
                return result, position + 1
            else:
                raise self.fail(f"']' expected at offset {position}", position)

    def value(self, position: int, depth: int, *, in_object: bool = False) -> tuple[Any, int]:
        """A value at ``position``; ``self.delimited`` then says whether it was a delimited string."""
        self.delimited = False
        if self.text.startswith("{", position):
            found: tuple[Any, int] = self.object(position, depth + 1)
            self.delimited = False
            return found
        if self.text.startswith("[", position):
            found = self.array(position, depth + 1)
            self.delimited = False
            return found
        if self.single_quotes and self.text.startswith("'", position):
            return self.quoted(position, in_object)
        string = self.string(position)
        if string is not None:
            return string
        return self.bare(position, strings=self.bare_strings, in_object=in_object)

    def quoted(self, position: int, in_object: bool) -> tuple[Any, int]:
        """A single-quoted string value at ``position`` (``single_quotes``): its text and end.

        Without a ``'`` that ends it, the value is read as a bare word (its quote kept), as before.
        """
        search = position + 1
        while True:
            end = self.text.find("'", search)
            if end < 0:
                return self.bare(position, strings=self.bare_strings, in_object=in_object)
            if quote_closes(self.text, end + 1, final=True):
                return self.text[position + 1 : end], end + 1
            search = end + 1

    def string(self, position: int) -> tuple[str, int] | None:
        """A delimited or JSON string at ``position`` (value and end), or ``None`` if none starts there."""
        for opening, closing in self.delims:
            if self.text.startswith(opening, position):
                start = search = position + len(opening)
                parts: list[str] = []
                while True:
                    end = self.text.find(closing, search)
                    if end < 0:
                        raise self.fail(f"a string opened at offset {position} is never closed", position)
                    inner = self.inner_close_as
                    if inner is None or delim_closes(self.text, end + len(closing), final=True,
                                                     separators=self.separators):
                        break
                    parts += (self.text[search:end], inner)
                    search = end + len(closing)
                self.delimited = True
                value = "".join((*parts, self.text[search:end])) if parts else self.text[start:end]
                return value, end + len(closing)
        if self.text.startswith('"', position):
            try:
                value, end = _JSON_STRING.raw_decode(self.text, position)
            except json.JSONDecodeError:
                raise self.fail(f"a string opened at offset {position} is never closed", position) from None
            return str(value), end
        return None

    def bare(self, position: int, *, strings: bool, in_object: bool = False) -> tuple[Any, int]:
        """A bare value up to the next ``,``, ``}`` or ``]``; with ``strings`` any other word is a string.

        With ``strings`` and ``in_object``, the value ends where :func:`bare_value_end` says.
        """
        if strings and in_object:
            end = bare_value_end(self.text, position, self.delims, final=True, separators=self.separators)
        else:
            end = bare_word_end(self.text, position)
        if end < 0:
            end = len(self.text)
        word = self.text[position:end].strip()
        if not word:
            raise self.fail(f"a value expected at offset {position}", position)
        if word in _NAMED:
            return _NAMED[word], end
        try:
            return parse_int(word), end
        except ValueError:
            pass
        try:
            number = parse_float(word)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number, end
        if math.isinf(number) and any(char.isdigit() for char in word):
            return word, end  # a number too large for a float keeps its text, as the json parser does
        if strings:
            return word, end
        raise self.fail(
            f"a bare value must be true, false, null, None or a number, got {word!r} at offset {position}",
            position,
        )


def bare_word_end(text: str, position: int) -> int:
    """Where a bare word starting at ``position`` ends: the next ``,``, ``}`` or ``]``, or ``-1``.

    Shared with the value scanner, so that streaming and whole-text parsing end a word alike.
    """
    found = _WORD_END.search(text, position)
    return found.start() if found is not None else -1


def bare_value_end(text: str, position: int, delims: Sequence[Sequence[str]], *, final: bool,
                   separators: str = ":") -> int:
    """Where a bare value of an object starts at ``position`` ends, with ``bare_strings``.

    The value runs to the next ``,``, ``}`` or ``]``, and on past each ``,`` whose following text (up
    to the next of the three) cannot begin a key: it is not blank and holds no ``:``, ``"``, ``{``,
    ``[`` nor the opening of a string delimiter (``Tokyo, Japan}`` ends before the ``}``). Shared with
    the value scanner, so that streaming and whole-text parsing end a value alike.

    Args:
        text: the text.
        position: where the value starts.
        delims: the ``string_delims`` pairs.
        final: ``text`` is complete; otherwise a ``,`` whose following text has not reached the next
            ``,``, ``}`` or ``]`` leaves the end undecided.
        separators: what may end a key (``":="`` with ``equals_keys``), none of which that text holds.

    Returns:
        The offset of the character that ends the value, or ``-1`` when none has arrived (or, when
        not ``final``, it is undecided).
    """
    end = bare_word_end(text, position)
    while end >= 0 and text[end] == ",":
        after = bare_word_end(text, end + 1)
        if after < 0:
            return end if final else -1
        segment = text[end + 1 : after]
        if not segment.strip() or any(char in segment for char in '"{[' + separators) or any(
            pair[0] in segment for pair in delims
        ):
            return end
        end = after
    return end


def delim_closes(text: str, position: int, *, final: bool, separators: str = ":") -> bool | None:
    """Whether a close delimiter that ends just before ``position`` ends its string (``inner_close_as``).

    It does where the text after it, after whitespace, is ``,``, ``}``, ``]``, ``:``, the end of the
    text, or a bare key (letters, digits, ``_``, ``.``, ``-``) and its ``:``. Shared with the value
    scanner, so that streaming and whole-text parsing end a string alike.

    Args:
        text: the text.
        position: the offset just after the close delimiter.
        final: ``text`` is complete; otherwise what has not arrived yet may decide.
        separators: what may end a key (``":="`` with ``equals_keys``).

    Returns:
        ``True`` or ``False``; ``None`` (only when not ``final``) while the text so far cannot tell.
    """
    length = len(text)
    while position < length and text[position].isspace():
        position += 1
    if position >= length:
        return True if final else None
    if text[position] in ",}]" or text[position] in separators:
        return True
    end = position
    while end < length and (text[end].isalnum() or text[end] in "_.-"):
        end += 1
    if end == position:
        return False
    while end < length and text[end].isspace():
        end += 1
    if end >= length:
        return False if final else None
    return text[end] in separators



def quote_closes(text: str, position: int, *, final: bool) -> bool | None:
    """Whether a ``'`` that ends just before ``position`` ends its single-quoted string.

    It does where the text after it, after whitespace, is ``,``, ``}``, ``]`` or the end of the text.
    Shared with the value scanner.

    Args:
        text: the text.
        position: the offset just after the quote.
        final: ``text`` is complete; otherwise only whitespace so far leaves it undecided.

    Returns:
        ``True`` or ``False``; ``None`` (only when not ``final``) while only whitespace follows.
    """
    length = len(text)
    while position < length and text[position].isspace():
        position += 1
    if position >= length:
        return True if final else None
    return text[position] in ",}]"
