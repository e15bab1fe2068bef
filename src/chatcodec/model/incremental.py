"""Incremental decoding: token ids arriving one generation step at a time, turned into text.

What lives here: :class:`IncrementalDecoder`, which needs only a function that decodes a list of
ids (so it works with any ``tokenizers`` decoder, and in tests with a table).

Rules kept (SPEC §1.8a):

* a multi-byte character split across byte tokens is emitted once it is complete, never as
  U+FFFD pieces, and the word-boundary spaces of SentencePiece-style tokenizers are kept
  (decoding ids one by one and concatenating is wrong on both counts);
* text once emitted is never taken back, and the text does not depend on how the ids are grouped
  into steps: ids are taken one at a time whatever the step size, so one-shot decoding through
  this class gives exactly what a stream gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["REPLACEMENT_CHARACTER", "IncrementalDecoder"]

#: The character ``tokenizers`` decoders put where bytes do not (yet) form a character.
REPLACEMENT_CHARACTER = "\ufffd"


class IncrementalDecoder:
    """Turns token ids arriving step by step into text.

    The decoder keeps a small window of recent ids: it decodes the window with and without the
    newest id and emits the difference, holding it back while it ends in U+FFFD (an incomplete
    character). When the newest id changes the text of ids already emitted (with ``tokenizers``'
    ``ByteFallback`` decoder, a byte that makes a byte run invalid turns every byte of the run into
    U+FFFD, including a character completed earlier), the emitted text stays and the ids not yet
    emitted are decoded on their own. That text is then the one-shot text of this class, not of
    ``tokenizers`` (``Tokenizer.decode_generated`` uses this class for such ids).

    Args:
        decode: a function turning a list of ids into text (special tokens kept).
        check: refuses ids the tokenizer has no token for (``Tokenizer.check_ids``), or ``None``.
    """

    def __init__(self, decode: Callable[[list[int]], str],
                 check: Callable[..., None] | None = None) -> None:
        self._decode = decode
        self._check = check
        self._ids: list[int] = []
        self._prefix_offset = 0  # start of the window decoded for context
        self._read_offset = 0  # ids before this were emitted as text

    def step(self, ids: int | Sequence[int], *, what: str = "ids") -> str:
        """Add one id or several and return the text that is now complete (maybe ``""``).

        Args:
            ids: the new id(s), Python ints.
            what: the argument they came from, for the error message.

        Returns:
            The new text.

        Raises:
            ValueError: an id outside the vocabulary (nothing is added then).
        """
        new = [ids] if isinstance(ids, int) else list(ids)
        if self._check is not None:
            self._check(new, what, single=isinstance(ids, int))
        parts = []
        for token_id in new:
            self._ids.append(token_id)
            parts.append(self._emit(final=False))
        return "".join(parts)

    def flush(self) -> str:
        """Return the text still held back (an incomplete character decodes as U+FFFD here)."""
        return self._emit(final=True)

    def _emit(self, *, final: bool) -> str:
        if self._read_offset == len(self._ids):
            return ""
        context = self._decode(self._ids[self._prefix_offset:self._read_offset])
        text = self._decode(self._ids[self._prefix_offset:])
        # When the newest id changed the text already emitted, the rest is decoded on its own.
        new = text[len(context):] if text.startswith(context) else self._decode(self._ids[self._read_offset:])
        if not final and (not new or new.endswith(REPLACEMENT_CHARACTER)):
            return ""
        self._prefix_offset, self._read_offset = self._read_offset, len(self._ids)
        return new
