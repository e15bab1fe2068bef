"""Marker atoms: the unit every diff of two renders is snapped to.

An **atom** is a piece of template text that acts as one marker: a tag ``<...>`` without
whitespace (``<|im_end|>``, ``</think>``, ``<seed:think>``, ``<｜tool▁sep｜>``), a bracket token
``[...]`` (``[INST]``, ``[TOOL_CALLS]``; or of two to four capital words, Apriel's
``[BEGIN FINAL RESPONSE]``, a shape prose does not write), one of the model's special tokens, an
inverted bracket token (MiniMax's ``]~b]``, ``]<]minimax[>[``), two tags with a word glued between
them (Kimi-K3's ``<|close|>think<|sep|>``; unless the second tag starts another such pair:
gpt-oss's ``<|start|>assistant<|channel|>final<|message|>`` is ``<|start|>`` and the channel
marker ``<|channel|>final<|message|>``), or a run of three or more of one punctuation character
(a code fence, ``>>>``). Plain words never are on their own: a delimiter made of a word would fire on ordinary
prose (inference.md §7, "never use a plain word as a delimiter"), nor are mixed punctuation runs
such as ``={"`` (the text of a value).

Diffs of renders (a common prefix or suffix) are cut back so that they never split an atom;
a tool name leaking into a marker (llama.cpp's ``FFF_FIRST_FUN_F[ARGS]``) is what this prevents.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import regex

__all__ = ["Atoms", "common_prefix_length", "common_suffix_length"]

#: An inverted bracket token: a word between brackets that face the wrong way or hold symbols
#: (MiniMax's ``]~b]``, ``[e~[``, ``]<]minimax[>[``), a shape prose and code do not write.
_SYMBOL = r"[~!<>|@#$%^&*+=\[\]]"
_INVERTED = (rf"\]{_SYMBOL}{{1,3}}\w{{1,16}}{_SYMBOL}{{0,3}}[\[\]]"
             rf"|\]{_SYMBOL}{{0,3}}\w{{1,16}}{_SYMBOL}{{1,3}}[\[\]]"
             rf"|\[{_SYMBOL}{{1,3}}\w{{1,16}}{_SYMBOL}{{0,3}}\["
             rf"|\[{_SYMBOL}{{0,3}}\w{{1,16}}{_SYMBOL}{{1,3}}\[")
_TAG = r"<[^<>\s]{1,80}>|\[[^\[\]\s]{1,40}\]|\[[A-Z][A-Z_]*(?: [A-Z][A-Z_]*){1,3}\]"
#: Two tags with a word glued between them, no whitespace (Kimi-K3's ``<|close|>think<|sep|>``, Llama's
#: ``<|start_header_id|>assistant<|end_header_id|>``): one marker, as the word is part of it.
_GLUED = rf"(?:{_TAG})\w{{1,24}}(?:{_TAG})(?!\w{{1,24}}(?:{_TAG}))"
_GENERIC = _TAG + "|" + _INVERTED + r"|([^\w\s<>\[\]])\1{2,}"


@dataclass(frozen=True)
class Atoms:
    """The atom finder of one model (its special tokens are atoms too).

    Attributes:
        specials: the special-token strings, longest first.
    """

    specials: tuple[str, ...] = ()

    @classmethod
    def for_tokens(cls, tokens: Iterable[str]) -> Atoms:
        """An atom finder knowing ``tokens`` (empty strings are ignored)."""
        unique = sorted({token for token in tokens if token and token.strip()}, key=len, reverse=True)
        return cls(tuple(unique))

    @property
    def pattern(self) -> regex.Pattern[str]:
        return _compiled(self.specials)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of every atom in ``text``, left to right, not overlapping."""
        return [match.span() for match in self.pattern.finditer(text)]

    def texts(self, text: str) -> list[str]:
        """The atoms of ``text``, in order."""
        return [text[start:end] for start, end in self.spans(text)]

    def snap_start(self, text: str, position: int) -> int:
        """``position`` moved back to the start of the atom it falls inside of, or of a tag
        (``<`` / ``[``) left open before it (``<parameter=`` cut before its key); else unchanged."""
        spans = self.spans(text)
        for start, end in spans:
            if start < position < end:
                return start
        window = text[max(0, position - _TAG_REACH):position]
        for opener, closer in (("<", ">"), ("[", "]")):
            index = window.rfind(opener)
            at = position - len(window) + index
            if index != -1 and closer not in window[index:] and not _inside(spans, at):
                return at
        return position

    def snap_end(self, text: str, position: int) -> int:
        """``position`` moved forward to the end of the atom it falls inside of, or past the end of
        a tag (``>`` / ``]``) whose start lies before it; else unchanged."""
        spans = self.spans(text)
        for start, end in spans:
            if start < position < end:
                return end
        window = text[position:position + _TAG_REACH]
        for opener, closer in (("<", ">"), ("[", "]")):
            index = window.find(closer)
            if index != -1 and opener not in window[:index] and not _inside(spans, position + index):
                return position + index + 1
        return position

    def is_atom(self, text: str) -> bool:
        """Whether ``text`` is exactly one atom."""
        match = self.pattern.fullmatch(text)
        return match is not None

    def only_atoms(self, text: str) -> bool:
        """Whether ``text`` is atoms and whitespace only (and holds at least one atom)."""
        spans = self.spans(text)
        if not spans:
            return False
        rest, last = [], 0
        for start, end in spans:
            rest.append(text[last:start])
            last = end
        rest.append(text[last:])
        return not "".join(rest).strip()

    def cut_points(self, text: str, count: int) -> list[int]:
        """The start offsets of the last ``count`` atoms of ``text``, last atom first."""
        return [start for start, _ in reversed(self.spans(text))][:count]


def _inside(spans: list[tuple[int, int]], index: int) -> bool:
    """Whether the character at ``index`` belongs to one of the atoms at ``spans`` (a bracket of
    ``]<]minimax[>[`` opens no tag)."""
    return any(start <= index < end for start, end in spans)


#: How far :meth:`Atoms.snap_start` / :meth:`Atoms.snap_end` look for the rest of a tag.
_TAG_REACH = 48

_CACHE: dict[tuple[str, ...], regex.Pattern[str]] = {}


def _compiled(specials: tuple[str, ...]) -> regex.Pattern[str]:
    pattern = _CACHE.get(specials)
    if pattern is None:
        alternatives = [regex.escape(token) for token in specials]
        pattern = regex.compile("|".join([*alternatives, _GLUED, _GENERIC]))
        _CACHE[specials] = pattern
    return pattern


def common_prefix_length(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[index] == b[index]:
        index += 1
    return index


def common_suffix_length(a: str, b: str) -> int:
    """The length of the longest common suffix of ``a`` and ``b``."""
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[len(a) - 1 - index] == b[len(b) - 1 - index]:
        index += 1
    return index
