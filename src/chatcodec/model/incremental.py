"""Incremental decoding: token ids arriving one generation step at a time, turned into text.

What lives here: :class:`IncrementalDecoder`, which needs only a function that decodes a list of
ids (so it works with any ``tokenizers`` decoder, and in tests with a table), and
:class:`StreamDecoder`, the same text through ``tokenizers``' own streaming decoder
(``tokenizers.decoders.DecodeStream``, in Rust) for the decoders where both give the same text.

Rules kept (SPEC §1.8a):

* a multi-byte character split across byte tokens is emitted once it is complete, never as
  U+FFFD pieces, and the word-boundary spaces of SentencePiece-style tokenizers are kept
  (decoding ids one by one and concatenating is wrong on both counts);
* text once emitted is never taken back, and the text does not depend on how the ids are grouped
  into steps: ids are taken one at a time whatever the step size, so one-shot decoding through
  this class gives exactly what a stream gives;
* :class:`StreamDecoder` gives exactly :class:`IncrementalDecoder`'s text, step by step: both decode
  the same window of ids (the ids of the last step that emitted text, then the new ones) and emit
  the same difference; where ``DecodeStream`` refuses a step (an id that changes text already
  emitted, which only ``ByteFallback`` byte runs do), that step and every later one go through the
  Python decoder, from the same window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["REPLACEMENT_CHARACTER", "IncrementalDecoder", "StreamDecoder"]

#: The character ``tokenizers`` decoders put where bytes do not (yet) form a character.
REPLACEMENT_CHARACTER = "\ufffd"
_UNLIMITED = 1 << 63


class IncrementalDecoder:
    """Turns token ids arriving step by step into text.

    The decoder keeps a small window of recent ids: it decodes the window with and without the
    newest id and emits the difference, holding it back while it ends in U+FFFD (an incomplete
    character). When the newest id changes the text of ids already emitted (with ``tokenizers``'
    ``ByteFallback`` decoder, a byte that makes a byte run invalid turns every byte of the run into
    U+FFFD, including a character completed earlier), the emitted text stays and the ids not yet
    emitted are decoded on their own. That text is then the one-shot text of this class, not of
    ``tokenizers`` (``Tokenizer.decode_generated`` uses this class for such ids).

    Only the window is kept (the ids of the last step that emitted text, then the ids not yet
    emitted), so memory does not grow with the output.

    Args:
        decode: a function turning a list of ids into text (special tokens kept).
        check: refuses ids the tokenizer has no token for (``Tokenizer.check_ids``), or ``None``.
        limit: one more than the largest id ``check`` accepts (``Tokenizer.id_limit``): an id in
            ``range(limit)`` needs no call to ``check``.
    """

    __slots__ = ("_check", "_decode", "_ids", "_read", "limit")

    def __init__(self, decode: Callable[[list[int]], str],
                 check: Callable[..., None] | None = None, limit: int = 0) -> None:
        self._decode = decode
        self._check = check
        #: ids in ``range(limit)`` are known to the tokenizer: :meth:`push` takes them as they are
        self.limit = limit if check is not None else _UNLIMITED
        self._ids: list[int] = []  # the window: context ids, then ids not yet emitted
        self._read = 0  # ids of the window before this index were emitted as text

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
        return "".join([self.push(token_id) for token_id in new])

    def step_id(self, token_id: int, *, what: str = "ids") -> str:
        """:meth:`step` for one id given as a Python ``int`` (the per-token path of a server).

        Raises:
            ValueError: the id is outside the vocabulary (nothing is added then).
        """
        if not 0 <= token_id < self.limit and self._check is not None:
            self._check([token_id], what, single=True)
        return self.push(token_id)

    def push(self, token_id: int) -> str:
        """Add one id already known to be in the vocabulary; return the new text (maybe ``""``)."""
        self._ids.append(token_id)
        return self._emit(final=False)

    def flush(self) -> str:
        """Return the text still held back (an incomplete character decodes as U+FFFD here)."""
        return self._emit(final=True)

    def _emit(self, *, final: bool) -> str:
        ids, read = self._ids, self._read
        if read == len(ids):
            return ""
        context = self._decode(ids[:read])
        text = self._decode(ids)
        # When the newest id changed the text already emitted, the rest is decoded on its own.
        new = text[len(context):] if text.startswith(context) else self._decode(ids[read:])
        if not final and (not new or new.endswith(REPLACEMENT_CHARACTER)):
            return ""
        del ids[:read]
        self._read = len(ids)
        return new


class StreamDecoder(IncrementalDecoder):
    """:class:`IncrementalDecoder`'s text through ``tokenizers.decoders.DecodeStream``.

    ``DecodeStream`` runs the same algorithm in Rust with one decode per id instead of two: it
    decodes the window (the ids of its last step that gave text, then the new ones), holds the
    text while it ends in U+FFFD, and emits what follows the window's context. The window is
    mirrored here (a list append per id), so when ``DecodeStream`` refuses a step (its
    ``InvalidPrefix`` error: the newest id changed text already emitted), that step is decoded by
    the Python algorithm from the same window, and so is the rest of the stream.

    Use it only for tokenizers whose decoder gives each token's text independently of the tokens
    before the window (:func:`streams_exactly`); :meth:`Tokenizer.incremental_decoder
    <chatcodec.model.tokenizer.Tokenizer.incremental_decoder>` chooses.

    Args:
        backend: the ``tokenizers.Tokenizer``.
        stream: a fresh ``tokenizers.decoders.DecodeStream(skip_special_tokens=False)``.
        decode: the Python decode function (special tokens kept), for refused steps and :meth:`flush`.
        check, limit: as for :class:`IncrementalDecoder`.
    """

    __slots__ = ("_backend", "_stream")

    def __init__(self, backend: Any, stream: Any, decode: Callable[[list[int]], str],
                 check: Callable[..., None] | None = None, limit: int = 0) -> None:
        super().__init__(decode, check, limit)
        self._backend = backend
        self._stream: Any = stream

    def push(self, token_id: int) -> str:
        ids = self._ids
        ids.append(token_id)
        stream = self._stream
        if stream is None:
            return self._emit(final=False)
        try:
            text = stream.step(self._backend, token_id)
        except Exception:  # InvalidPrefix: the Python algorithm decides this step and the rest
            self._stream = None
            return self._emit(final=False)
        if text is None:
            return ""
        del ids[:self._read]
        self._read = len(ids)
        return text  # type: ignore[no-any-return]


#: Decoder types that turn each token into text without looking at tokens outside the window
#: (``tokenizers`` names): with them ``DecodeStream`` and :class:`IncrementalDecoder` agree.
STREAMING_DECODERS = frozenset({"ByteLevel", "Metaspace", "Replace", "ByteFallback", "Fuse", "Strip",
                                "Sequence"})


def streams_exactly(decoder_state: dict[str, Any] | None) -> bool:
    """Whether a tokenizer with this decoder may stream through ``DecodeStream``.

    Args:
        decoder_state: the ``decoder`` section of a ``tokenizer.json`` as a dict (``None``: no
            decoder, tokens joined as they are).

    Returns:
        ``True`` for byte-level BPE (``ByteLevel``), SentencePiece word boundaries (``Metaspace``,
        ``Replace``, ``Strip``), byte fallback (``ByteFallback``, ``Fuse``) and sequences of them;
        ``False`` for decoders that join tokens by looking at their neighbours (``WordPiece``'s
        ``##``, ``BPEDecoder``'s suffixes, ``CTC``'s repeats), which the Python decoder handles.
    """
    if decoder_state is None:
        return True
    kind = decoder_state.get("type")
    if kind == "Sequence":
        return all(streams_exactly(part) for part in decoder_state.get("decoders") or ())
    return kind in STREAMING_DECODERS
