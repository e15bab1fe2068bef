"""The parser's buffer: the generated text not yet decided, and where the parser is in it.

Units: every length and index here counts characters (``str`` indices into :attr:`Buffer.text`); an
*offset* counts characters of the generated text from its first one, negative inside the prompt's
tail that the parser is fed before generation (``ResponseParser``'s ``prefix``). Index ``i`` of
:attr:`Buffer.text` is offset ``origin + i``.

Invariants (:class:`Buffer` keeps them; the engine reads and advances ``text`` and ``pos`` itself on
its per-chunk path, bound to locals, and leaves the rest to the methods):

* ``text[:pos]`` is decided (routed to a region or consumed by a delimiter) and kept only as the
  context a delimiter's look-behind may read; ``text[pos:]`` is unresolved: it may start a
  delimiter, so no region has it yet.
* ``origin + pos`` (:attr:`Buffer.resolved`) never decreases; a trim (:meth:`Buffer.trim`) drops
  decided text and moves ``origin`` by as much, so no offset changes.
* ``held`` is not ``None`` only while the unresolved tail waits (:meth:`Buffer.hold`): its chunks
  come after ``text``, in no region and not in ``text``, until :meth:`Buffer.release` hands them
  back (the engine then appends them, and what came with them, to ``text``).

A plain slotted class: one per live parser, so its size counts (a server keeps thousands), and
its attributes are read on every chunk.
"""

from __future__ import annotations

from chatcodec.response_templates.lookbehind import LOOKBEHIND_CONTEXT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from chatcodec.response_templates.delimiters import Delimiter

__all__ = ["DEFER_AFTER", "TRIM_THRESHOLD", "Buffer"]

#: The decided part of the buffer is dropped, but for its last :data:`LOOKBEHIND_CONTEXT`
#: characters, once it is longer than this (amortised O(1) per character).
TRIM_THRESHOLD = 1024
#: An unresolved tail this long is not searched again on every feed (:meth:`Buffer.hold`); below
#: it, every feed searches, so real outputs stream with no added delay.
DEFER_AFTER = 256
_UNBOUNDED = 1 << 62
_NOTHING: frozenset[Any] = frozenset()


class Buffer:
    """The generated text a parser has not decided yet, the decided context before it, and the
    held chunks that wait for a search (see the module docstring for units and invariants).

    Attributes:
        text: the kept context (decided), then the unresolved tail (characters).
        pos: the index in ``text`` of the first unresolved character.
        origin: the offset of ``text[0]`` in the generated text (negative: in the prompt).
        zero_width: the delimiters that committed zero-width at ``pos`` (none may again there: the
            engine's progress guard); the engine empties it whenever ``pos`` moves.
        held: chunks fed while the unresolved tail waits (:meth:`hold`), or ``None``.
        hold_chars: the characters a chunk may hold and still wait.
        hold_wide: whether any non-ASCII character may wait too.
        room: how many more characters may wait before the tail is searched again.
    """

    __slots__ = ("held", "hold_chars", "hold_wide", "origin", "pos", "room", "text", "zero_width")

    def __init__(self) -> None:
        self.text = ""
        self.pos = 0
        self.origin = 0
        self.zero_width: frozenset[Delimiter] = _NOTHING
        self.held: list[str] | None = None
        self.hold_chars: frozenset[str] = _NOTHING
        self.hold_wide = False
        self.room = 0

    @property
    def resolved(self) -> int:
        """The offset up to which the generated text is decided (``origin + pos``)."""
        return self.origin + self.pos

    def trim(self) -> int:
        """Drop the decided text but its last :data:`LOOKBEHIND_CONTEXT` characters, keeping every
        offset (``origin`` grows by what was dropped). The engine calls it once ``pos`` is past
        :data:`TRIM_THRESHOLD`, then compacts the open region's parts (each character is copied
        once per trim, so the cost per character stays constant however long the output).

        Returns:
            How many characters were dropped.
        """
        cut = self.pos - LOOKBEHIND_CONTEXT
        self.text, self.pos, self.origin = self.text[cut:], LOOKBEHIND_CONTEXT, self.origin + cut
        return cut

    def hold(self, absorbed: str) -> None:
        """Decide how much may be fed before the unresolved tail ``text[pos:]`` is searched again
        (after a search that left it unresolved; ``absorbed``: the whitespace the pending
        delimiter absorbs, ``Matcher.absorbed``, ``""`` for none).

        A run of that whitespace (``\\s*</think>``) waits while only that whitespace arrives,
        however long. Any other tail of at least :data:`DEFER_AFTER` characters is searched again
        once an ASCII character it does not hold arrives (or its first non-ASCII character: all
        non-ASCII characters count as one, else every character of CJK text would be new), or once
        it has doubled: searching it on every feed would cost time quadratic in its length (a
        pending ``</tc>\\s*``, a lookahead, a name being written). So a search is triggered at most
        ~130 times per doubling: linear in total. Waiting never changes the result, since a tail
        is only ever resolved the way the whole output resolves it; it only delays text that can
        no longer be part of a delimiter, until the tail doubles (latency, for tails of
        :data:`DEFER_AFTER` characters or more). A shorter tail does not wait.
        """
        text, pos = self.text, self.pos
        if absorbed and not text[pos:].strip(absorbed):
            self.held, self.hold_chars, self.room, self.hold_wide = [], frozenset(absorbed), _UNBOUNDED, False
        elif len(text) - pos >= DEFER_AFTER:
            tail = text[pos:]
            self.held, self.hold_chars, self.room = [], frozenset(tail), len(tail)
            self.hold_wide = not tail.isascii()

    def wait(self, text: str) -> bool:
        """While the tail is held: keep ``text`` with it, unsearched, if it holds only characters
        that may wait and fits in the room left; ``True`` when kept (call only while
        :attr:`held` is not ``None``). Empty text is never kept: it asks for a search."""
        if text and len(text) <= self.room:
            chars = self.hold_chars
            if chars.issuperset(text) or (self.hold_wide and chars.issuperset(c for c in text if c < "\x80")):
                self.held.append(text)  # type: ignore[union-attr]
                self.room -= len(text)
                return True
        return False

    def release(self, text: str) -> str:
        """End the wait: the held chunks joined, then ``text`` (the held tail is searched again)."""
        joined = "".join(self.held) + text  # type: ignore[arg-type]
        self.held = None
        return joined
