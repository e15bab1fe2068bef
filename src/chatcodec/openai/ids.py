"""Tool-call ids for calls the model wrote without one, in the form the model's chat template accepts.

An OpenAI tool call needs an ``id`` (the client answers with ``{"role": "tool", "tool_call_id"}``),
and the id goes back through the model's chat template on the next turn. Most templates never read
it, but some check its shape: Mistral-Nemo's raises unless it is 9 alphanumerics. So the form of a
generated id is profile data (``profile.json``'s ``tool_call_id``), never a branch per family here.

A form is literal text with placeholders:

* ``{alnum:N}``: ``N`` random letters and digits (``[A-Za-z0-9]``);
* ``{hex:N}``: ``N`` random lowercase hexadecimal digits;
* ``{name}``: the called function's name;
* ``{index}``: the call's position among the calls of the message, plus ``start`` (Kimi's
  ``functions.{name}:{index}`` counts the calls of the conversation, as vLLM does).

The default, :data:`DEFAULT_FORM`, is OpenAI's own ``call_`` + 24 alphanumerics. With ``seed``, ids
are a pure function of ``(seed, name, index)``, so a stream and :func:`~chatcodec.openai.to_chat_message`
give the same ids for the same calls (tests, reproducible logs); without it they come from the
system's random bytes (``os.urandom``, as :mod:`secrets`).
"""

from __future__ import annotations

import hashlib
import os
import re
import string
from collections.abc import Callable

__all__ = ["DEFAULT_FORM", "IdFactory", "ToolCallIds"]

#: The id form of profiles that say nothing: ``call_`` and 24 alphanumerics, as OpenAI writes them.
DEFAULT_FORM = "call_{alnum:24}"

#: What :func:`~chatcodec.openai.to_chat_message` and the streams accept as ``ids=``:
#: ``(function name, call index) -> id``.
IdFactory = Callable[[str, int], str]

_ALPHABETS = {"alnum": string.ascii_letters + string.digits, "hex": "0123456789abcdef"}
_PLACEHOLDER = re.compile(r"\{(?:(?P<kind>alnum|hex):(?P<size>[1-9][0-9]?)|(?P<word>name|index))\}")
_BRACES = re.compile(r"[{}]")


class ToolCallIds:
    """Makes tool-call ids of one form (see the module docstring for the placeholders).

    Args:
        form: the id form, e.g. ``"call_{alnum:24}"``, ``"{alnum:9}"``, ``"functions.{name}:{index}"``.
        seed: make ids a pure function of ``(seed, name, index)`` (same calls, same ids).
        start: added to the call index for ``{index}`` (the calls already in the conversation).

    Raises:
        ValueError: the form has an unknown placeholder or a stray brace, or ``start`` is negative.

    Example:
        >>> ids = ToolCallIds("functions.{name}:{index}")
        >>> ids("get_weather", 0)
        'functions.get_weather:0'
        >>> len(ToolCallIds("{alnum:9}")("f", 0))
        9
    """

    __slots__ = ("_parts", "_seed", "form", "start")

    def __init__(self, form: str = DEFAULT_FORM, *, seed: int | str | None = None, start: int = 0) -> None:
        self.form = form
        self._seed = seed
        if start < 0:
            raise ValueError(f"ToolCallIds: start must be 0 or more, got {start}")
        self.start = start
        self._parts: list[tuple[str, str | int]] = _compile(form)

    @classmethod
    def for_profile(cls, profile: str | None, *, seed: int | str | None = None,
                    start: int = 0) -> ToolCallIds:
        """The id form a bundled profile declares (``profile.json``'s ``tool_call_id``).

        Args:
            profile: a profile name or alias (``ChatCodec.profile``); ``None`` gives the default form.
            seed: as for the constructor.
            start: as for the constructor.

        Returns:
            A :class:`ToolCallIds` of the profile's form (:data:`DEFAULT_FORM` when it declares none).

        Raises:
            UnknownProfileError: no bundled profile has that name.
        """
        if profile is None:
            return cls(seed=seed, start=start)
        from chatcodec import profiles

        return cls(profiles.load(profile).tool_call_id or DEFAULT_FORM, seed=seed, start=start)

    def __call__(self, name: str, index: int) -> str:
        """The id of call ``index`` (0-based, in the message) of function ``name``."""
        random = _seeded(self._seed, name, index) if self._seed is not None else None
        out: list[str] = []
        for kind, value in self._parts:
            if kind == "text":
                out.append(str(value))
            elif kind == "name":
                out.append(name)
            elif kind == "index":
                out.append(str(index + self.start))
            else:
                alphabet = _ALPHABETS[kind]
                size = int(value)
                if random is None:
                    out.append(_random_text(alphabet, size))
                else:
                    out.append("".join(alphabet[next(random) % len(alphabet)] for _ in range(size)))
        return "".join(out)

    def __repr__(self) -> str:
        return f"ToolCallIds({self.form!r}, seed={self._seed!r}, start={self.start})"


def _random_text(alphabet: str, size: int) -> str:
    """``size`` characters drawn uniformly from ``alphabet`` (at most 256 ASCII characters) from the
    system's random bytes (what :mod:`secrets` draws from): bytes past the last whole multiple of the
    alphabet's size are rejected, so every character is equally likely; each byte is mapped to its
    character by a table (one draw of bytes and one translation, not one call per character)."""
    table, rejected = _DRAWS[alphabet]
    drawn = os.urandom(2 * size).translate(table, rejected)
    while len(drawn) < size:
        drawn += os.urandom(2 * size).translate(table, rejected)
    return drawn[:size].decode("ascii")


def _draw_table(alphabet: str) -> tuple[bytes, bytes]:
    """For :func:`_random_text`: byte ``b`` -> ``alphabet[b % len(alphabet)]``, and the bytes rejected."""
    count = len(alphabet)
    limit = 256 - 256 % count
    return bytes(ord(alphabet[byte % count]) for byte in range(256)), bytes(range(limit, 256))


#: each alphabet's byte table and rejected bytes, made once
_DRAWS = {alphabet: _draw_table(alphabet) for alphabet in _ALPHABETS.values()}


def _compile(form: str) -> list[tuple[str, str | int]]:
    """``form`` as (kind, value) parts; raises ``ValueError`` naming a bad placeholder."""
    if not isinstance(form, str) or not form:
        raise ValueError(f"tool-call id form: expected a non-empty string, got {form!r}")
    parts: list[tuple[str, str | int]] = []
    position = 0
    for match in _PLACEHOLDER.finditer(form):
        _literal(parts, form, position, match.start())
        if match["word"]:
            parts.append((match["word"], ""))
        else:
            parts.append((match["kind"], int(match["size"])))
        position = match.end()
    _literal(parts, form, position, len(form))
    return parts


def _literal(parts: list[tuple[str, str | int]], form: str, start: int, end: int) -> None:
    text = form[start:end]
    brace = _BRACES.search(text)
    if brace is not None:
        raise ValueError(
            f"tool-call id form {form!r}: unknown placeholder at offset {start + brace.start()}. "
            "Known: {alnum:N}, {hex:N} (N from 1 to 99), {name}, {index}"
        )
    if text:
        parts.append(("text", text))


def _seeded(seed: int | str, name: str, index: int) -> _Bytes:
    return _Bytes(f"{seed}\x00{name}\x00{index}".encode())


class _Bytes:
    """An endless stream of pseudo-random bytes from SHA-256 in counter mode (deterministic ids)."""

    __slots__ = ("_block", "_counter", "_key", "_position")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._counter = 0
        self._block = b""
        self._position = 0

    def __next__(self) -> int:
        if self._position == len(self._block):
            self._block = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._position = 0
        value = self._block[self._position]
        self._position += 1
        return value
