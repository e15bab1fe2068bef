"""What models write in Python-style calls that Python's grammar rejects, made valid without changing a value.

Models that write tool calls as Python (LFM2, Llama 3.2 / 4 pythonic, ...) copy shell commands and
dates into them as a person types them, not as Python spells them. These spellings are errors
for :mod:`ast`, though what they mean is plain (vLLM's LFM2 tests read them all,
``tests/tool_parsers/test_lfm2_tool_parser.py``: ``multiline_string_arg``, ``nul_byte_string_arg``,
``leading_zero_int``):

* a line break (or a NUL) written raw inside a one-line string (``exec(command='cat > f.py << EOF
  \\nimport csv')`` with a real newline): it is read as the character it
  is, as the escape ``\\n`` (``\\x00``) would be;
* a decimal integer with leading zeros (``set_date(month=07, day=05)``): read as the decimal number
  (``7``, ``5``), never as an octal one;
* a string's own quote written unescaped inside it (``bash(command='sed -n '360,450p' f.py')``,
  vLLM's LFM2 ``nested_quote``): a quote ends a one-line string only where what follows it (after
  whitespace) can follow a value: ``,`` ``)`` ``]`` ``}`` ``:``, another string's quote (Python
  joins ``'a' 'b'``) or the end of the text; any other such quote is text of the string, as the
  escape ``\'`` would be. The value scanner (``scanners/pythonic_scan.py``) decides each quote the
  same way, once the character after it arrives.

:func:`repair` rewrites exactly those and nothing else: a raw (``r``-prefixed) string keeps its
text (an escape would add a backslash to its value), a triple-quoted string already allows line
breaks, and a number with a fraction, an exponent or a base prefix (``0.5``, ``0e1``,
``0x1F``) is left as written. The caller parses the original text first and only falls back to
the repaired one when that fails, so text Python accepts is never read differently; a text the
repairs cannot make valid keeps its original error.

A set literal (``tags={'a', 'b'}``, vLLM's ``set_arg``) is valid Python and needs no repair:
``x-pythonic`` reads it as a list (the scanner holds a ``{`` until its first ``:`` or ``}`` shows a dict).
"""

from __future__ import annotations

import regex

__all__ = ["ends_string", "repair"]

_QUOTES = "'\""
#: What may follow a string's closing quote (after whitespace) in a call list.
_AFTER_VALUE = frozenset(",)]}:'\"")
#: A decimal integer with leading zeros, not part of a name, a longer number or a float.
_LEADING_ZEROS = regex.compile(r"(?<![\w.])0+(?=[1-9])([0-9_]+)(?![\w.])")
_RAW_PREFIX = regex.compile(r"(?<![\w])[bBuUfF]?[rR][bBfF]?$|(?<![\w])[rR]$")
#: The characters Python does not take raw inside a one-line string, and their escapes.
_RAW_ONLY = {"\n": "\\n", "\r": "\\r", "\x00": "\\x00"}


def repair(source: str) -> str | None:
    """``source`` with raw line breaks and NULs in one-line strings escaped and leading
    zeros of integers dropped (see the module docstring), or ``None`` when it has none of them.

    Args:
        source: the text of a Python-style call list that :func:`ast.parse` rejected.

    Returns:
        The repaired text, or ``None`` when nothing needed repair (the caller keeps its error).
    """
    pieces: list[str] = []
    changed = False
    position, end = 0, len(source)
    while position < end:
        start = _next_quote(source, position)
        code = source[position:start]
        fixed = _LEADING_ZEROS.sub(r"\1", code)
        changed = changed or fixed != code
        pieces.append(fixed)
        if start == end:
            break
        string, stop = _string(source, start, raw=_RAW_PREFIX.search(code) is not None)
        changed = changed or string != source[start:stop]
        pieces.append(string)
        position = stop
    return "".join(pieces) if changed else None


def ends_string(source: str, after: int) -> bool:
    """Whether a one-line string's quote just before ``after`` ends it: what follows it (after
    whitespace) can follow a value in a call list, or nothing does (see the module docstring).

    Args:
        source: the text.
        after: the offset right after the quote.

    Returns:
        ``True`` when the quote ends the string; ``False`` when it is the string's own text.
    """
    position, end = after, len(source)
    while position < end and source[position].isspace():
        position += 1
    return position == end or source[position] in _AFTER_VALUE


def _next_quote(source: str, position: int) -> int:
    """Where the next string starts at or after ``position`` (``len(source)`` when none does)."""
    found = [index for index in (source.find(quote, position) for quote in _QUOTES) if index >= 0]
    return min(found) if found else len(source)


def _string(source: str, start: int, *, raw: bool) -> tuple[str, int]:
    """The string literal starting at ``start`` (its line breaks escaped unless it is raw or
    triple-quoted) and the offset after it; an unterminated string runs to the end."""
    quote = source[start]
    delimiter = quote * 3 if source.startswith(quote * 3, start) else quote
    pieces = [delimiter]
    position, end = start + len(delimiter), len(source)
    while position < end:
        char = source[position]
        if char == "\\":
            pieces.append(source[position:position + 2])
            position += 2
            continue
        if source.startswith(delimiter, position):
            if len(delimiter) == 1 and not raw and not ends_string(source, position + 1):
                pieces.append("\\" + quote)  # the string's own quote, written unescaped inside it
                position += 1
                continue
            pieces.append(delimiter)
            return "".join(pieces), position + len(delimiter)
        escape = _RAW_ONLY.get(char) if len(delimiter) == 1 and not raw else None
        pieces.append(escape or char)
        position += 1
    return "".join(pieces), end
