"""Token ids: an optional wrapper over the ``tokenizers`` package, and incremental decoding.

What lives here: loading ``tokenizer.json`` (``tokenizers`` is imported lazily, only when a model
directory with a ``tokenizer.json`` is loaded), encoding with character offsets, encoding text
"as text" (never producing an added or special token, for control-token sanitising), decoding with
special tokens kept (delimiters are often special tokens), and generated ids as text exactly as
they stream (:meth:`Tokenizer.decode_generated`, with :mod:`chatcodec.model.incremental`).

Rules kept:

* ``import chatcodec`` and the decoding path never import ``tokenizers``.
* When ids are asked for and no tokenizer exists, :class:`~chatcodec.errors.TokenizerUnavailableError`
  names the actual cause and its fix (``pip install 'chatcodec[tokenizers]'`` only when the package
  is missing; add ``tokenizer.json`` when the file is).
* Generated ids have one text, whether they arrive all at once or one step at a time
  (:meth:`Tokenizer.decode_generated` is what :class:`~chatcodec.model.incremental.IncrementalDecoder`
  streams).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatcodec.errors import TokenizerUnavailableError
from chatcodec.model.config import AddedToken, is_model_file
from chatcodec.model.incremental import (
    REPLACEMENT_CHARACTER,
    IncrementalDecoder,
    StreamDecoder,
    streams_exactly,
)

__all__ = [
    "INSTALL_FIX",
    "MAX_TOKENIZER_BYTES",
    "NO_TOKENIZER_GIVEN",
    "TOKENIZER_FILE",
    "Tokenizer",
    "TokenizerHandle",
    "load_tokenizer",
    "tokenizer_unavailable",
]

TOKENIZER_FILE = "tokenizer.json"

#: Largest ``tokenizer.json`` read, in bytes. Real ones are up to a few dozen megabytes (a 256,000-token
#: vocabulary is about 35 MB); ``tokenizers`` reads the whole file into memory first, so a sparse
#: 6 GB file (nothing on disk) would take 6 GB before failing to parse. Read at each load.
MAX_TOKENIZER_BYTES = 256 * 1024 * 1024


#: How to get a tokenizer when the ``tokenizers`` package is missing.
INSTALL_FIX = "Install it with `pip install 'chatcodec[tokenizers]'`"


def tokenizer_unavailable(reason: str, fix: str = INSTALL_FIX) -> TokenizerUnavailableError:
    """The error raised when token ids are asked for and no tokenizer exists.

    Args:
        reason: why there is none (``"the tokenizers package is not installed"``, ...).
        fix: what to do about it, for that reason.

    Returns:
        The error (not raised), naming ``reason`` and ``fix``.
    """
    return TokenizerUnavailableError(
        f"token ids: no tokenizer is available ({reason}). {fix}; "
        "for the prompt text alone pass tokenize=False."
    )


#: Why a ``ChatCodec`` built without ``tokenizer=`` has none, and the fix.
NO_TOKENIZER_GIVEN = str(tokenizer_unavailable(
    "none was given to ChatCodec", "Pass tokenizer=Tokenizer.from_file('tokenizer.json') (from "
    "chatcodec.model.tokenizer), or load a model directory with ChatCodec.from_pretrained"))


@dataclass(frozen=True)
class TokenizerHandle:
    """A model's tokenizer, or the reason it has none: what the model's helpers get instead of the model.

    Attributes:
        tokenizer: the tokenizer, or ``None``.
        missing: the message of the :class:`~chatcodec.errors.TokenizerUnavailableError` that
            :meth:`require` raises when ``tokenizer`` is ``None`` (it names the cause and the fix).
    """

    tokenizer: Tokenizer | None
    missing: str = NO_TOKENIZER_GIVEN

    def require(self) -> Tokenizer:
        """The tokenizer.

        Raises:
            TokenizerUnavailableError: there is none (the message is :attr:`missing`).
        """
        if self.tokenizer is None:
            raise TokenizerUnavailableError(self.missing)
        return self.tokenizer


def _import_tokenizers() -> Any:
    try:
        return importlib.import_module("tokenizers")
    except ImportError:
        raise tokenizer_unavailable("the tokenizers package is not installed") from None


class Tokenizer:
    """A ``tokenizers.Tokenizer`` with the operations chat templates and response parsing need.

    Args:
        backend: a ``tokenizers.Tokenizer``.
        path: the ``tokenizer.json`` it was loaded from, if any (copied by ``save_pretrained``).
    """

    def __init__(self, backend: Any, path: Path | None = None) -> None:
        self._backend = backend
        self.path = path
        self._added: dict[int, AddedToken] | None = None
        self._newline_plain: list[int] | None = None
        self._offsets_backend: Any = None
        self._id_limit: int | None = None
        self._stream_class: Any = None  # DecodeStream when it gives this tokenizer's text; False: not

    @classmethod
    def from_file(cls, path: str | Path, *, lazy: bool = False) -> Tokenizer:
        """Load a ``tokenizer.json``.

        Args:
            path: the file.
            lazy: read the file when the tokenizer is first used (its first encode, decode or id
                check), not now: a large vocabulary takes a noticeable part of a second to load,
                which a process that only renders and parses text never needs to pay.

        Returns:
            The tokenizer, remembering ``path`` (``save_pretrained`` copies the file).

        Raises:
            TokenizerUnavailableError: the ``tokenizers`` package is not installed.
            ModelStorageError: the file cannot be parsed by ``tokenizers`` (with ``lazy``, raised
                by the first use instead).
        """
        if importlib.util.find_spec("tokenizers") is None:
            raise tokenizer_unavailable("the tokenizers package is not installed")
        tokenizer = cls(None, Path(path))
        if not lazy:
            tokenizer._load()
        return tokenizer

    @property
    def backend(self) -> Any:
        """The ``tokenizers.Tokenizer`` (read from :attr:`path` on first use when loaded lazily).

        Raises:
            ModelStorageError: a lazily loaded file cannot be parsed by ``tokenizers``.
        """
        backend = self._backend
        return backend if backend is not None else self._load()

    def _load(self) -> Any:
        from chatcodec.errors import ModelStorageError

        tokenizers = _import_tokenizers()
        try:
            size = self.path.stat().st_size if self.path is not None else 0
        except OSError as error:
            raise ModelStorageError(f"{self.path}: cannot be read: {error.strerror or error}",
                                    path=str(self.path)) from None
        if size > MAX_TOKENIZER_BYTES:
            raise ModelStorageError(
                f"{self.path}: {size:,} bytes, more than MAX_TOKENIZER_BYTES ({MAX_TOKENIZER_BYTES:,}) "
                "allows; real tokenizer.json files are a few dozen megabytes (raise "
                "chatcodec.model.tokenizer.MAX_TOKENIZER_BYTES for a trusted one)", path=str(self.path))
        try:
            self._backend = tokenizers.Tokenizer.from_file(str(self.path))
        except Exception as error:  # tokenizers raises a bare Exception on malformed files
            raise ModelStorageError(f"{self.path}: tokenizers cannot load it: {error}",
                                    path=str(self.path)) from None
        return self._backend

    # -- vocabulary ------------------------------------------------------------------------------

    @property
    def added_tokens_decoder(self) -> dict[int, AddedToken]:
        """The tokenizer's added tokens (special or not), ``{id: AddedToken}``."""
        if self._added is None:
            self._added = {
                token_id: AddedToken(token_id, token.content, bool(token.special))
                for token_id, token in sorted(self.backend.get_added_tokens_decoder().items())
            }
        return self._added

    def token_to_id(self, token: str) -> int | None:
        """The id of a token string (a vocabulary entry or an added token), or ``None``."""
        value = self.backend.token_to_id(token)
        return None if value is None else int(value)

    def id_to_token(self, token_id: int) -> str | None:
        """The vocabulary string of an id, or ``None``."""
        value = self.backend.id_to_token(token_id)
        return None if value is None else str(value)

    @property
    def vocab_size(self) -> int:
        """The vocabulary size, added tokens included."""
        return int(self.backend.get_vocab_size(with_added_tokens=True))

    @property
    def id_limit(self) -> int:
        """One more than the largest token id (of the vocabulary or an added token)."""
        if self._id_limit is None:
            self._id_limit = max(self.vocab_size, max(self.added_tokens_decoder, default=-1) + 1)
        return self._id_limit

    def check_ids(self, ids: Sequence[int], what: str, *, single: bool = False) -> None:
        """Refuse ids this tokenizer has no token for (``tokenizers`` overflows or drops them silently).

        Args:
            ids: the token ids (Python ints).
            what: the argument they came from (``"token_ids"``, ``"feed"``, ``"prefix[1]"``).
            single: the argument was one id, not a sequence (the message then has no index).

        Raises:
            ValueError: an id is negative or not below :attr:`id_limit`; the message names the
                argument, the position, the id and the size of the vocabulary.
        """
        limit = self.id_limit
        if not ids or (min(ids) >= 0 and max(ids) < limit):
            return
        index = next(index for index, token_id in enumerate(ids) if not 0 <= token_id < limit)
        where = what if single else f"{what}[{index}]"
        raise ValueError(f"{where}: {ids[index]} is not a token id of this tokenizer "
                         f"(the vocabulary has {limit} ids, 0 to {limit - 1})")

    # -- encoding --------------------------------------------------------------------------------

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text``; added and special tokens written in it become their ids.

        Args:
            text: the text to encode.
            add_special_tokens: let the tokenizer's post-processor add its tokens (a BOS, ...).

        Returns:
            The token ids.

        Raises:
            ModelStorageError: the tokenizer cannot encode the text (its file is inconsistent, such
                as an ``unk_token`` missing from the vocabulary of a ``WordLevel`` model).
            ValueError: the text holds a lone surrogate (``tokenizers`` reads UTF-8 only).
        """
        try:
            return list(self.backend.encode(text, add_special_tokens=add_special_tokens).ids)
        except Exception as error:  # tokenizers raises a bare Exception
            raise self._cannot_encode(error, text) from None

    def _cannot_encode(self, error: Exception, text: str) -> Exception:
        """The error for a failure of ``tokenizers`` while encoding ``text``: its bare ``Exception``
        (an inconsistent file) and its ``TypeError`` for a lone surrogate are named; others are
        returned as they are."""
        from chatcodec.errors import ModelStorageError

        if isinstance(error, (TypeError, UnicodeError)) and isinstance(text, str):  # "... must be str"
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as bad:
                return ValueError(
                    f"the text to encode holds a lone surrogate (U+{ord(text[bad.start]):04X} at character "
                    f"{bad.start}), which UTF-8 cannot encode, so no tokenizer can read it (a JSON "
                    "\\ud800-style escape without its pair?)")
        if type(error) is not Exception:
            return error
        return ModelStorageError(f"{self.path}: the tokenizer cannot encode the text: {error}",
                                 path=str(self.path))

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids of ``text`` (no post-processor tokens) and each token's character span.

        A character split over several byte tokens lies in the span of each of them, and a
        token's span includes its whitespace: post-processors that trim whitespace from offsets
        (``trim_offsets=True``) are bypassed, since without added tokens they change nothing else.

        Args:
            text: the text.

        Returns:
            ``(ids, [(start, end) per token])``, character offsets into ``text``.

        Raises:
            ModelStorageError, ValueError: as :meth:`encode`.
        """
        try:
            encoding = self._untrimmed_backend().encode(text, add_special_tokens=False)
        except Exception as error:  # tokenizers raises a bare Exception
            raise self._cannot_encode(error, text) from None
        return list(encoding.ids), [(int(start), int(end)) for start, end in encoding.offsets]

    def _untrimmed_backend(self) -> Any:
        """The backend, or a copy without post-processor when the backend trims offsets."""
        if self._offsets_backend is None:
            self._offsets_backend = self.backend
            probe = " a  b\n c"
            offsets = self.backend.encode(probe, add_special_tokens=False).offsets
            ends = [0] + [int(end) for _, end in offsets]
            if any(int(start) > ends[i] for i, (start, _) in enumerate(offsets)) or ends[-1] != len(probe):
                copy = type(self.backend).from_str(self.backend.to_str())
                copy.post_processor = None
                self._offsets_backend = copy
        return self._offsets_backend

    def encode_plain(self, text: str) -> list[int]:
        """Token ids of ``text`` read as plain text: no added or special token is matched in it.

        Runs the tokenizer's normalizer, pre-tokenizer and model directly, skipping the added
        vocabulary (the reference's ``split_special_tokens=True`` still matches added tokens that
        are not special, and then refuses to sanitise them).

        Args:
            text: the text.

        Returns:
            The token ids.

        Raises:
            ModelStorageError, ValueError: as :meth:`encode`.
        """
        backend = self.backend
        normalizer, pre_tokenizer, model = backend.normalizer, backend.pre_tokenizer, backend.model
        try:
            normalized = normalizer.normalize_str(text) if normalizer is not None else text
            words = (
                [word for word, _ in pre_tokenizer.pre_tokenize_str(normalized)]
                if pre_tokenizer is not None
                else [normalized]
            )
            return [int(token.id) for word in words if word for token in model.tokenize(word)]
        except Exception as error:  # tokenizers raises a bare Exception
            raise self._cannot_encode(error, text) from None

    def encode_plain_inside(self, text: str) -> list[int]:
        """:meth:`encode_plain` for text in the middle of a prompt.

        SentencePiece-style tokenizers add a word-boundary space at the start of a string; the
        text is encoded after a newline and the newline's ids are removed again (the reference
        does the same for sanitised pieces).

        Args:
            text: the text.

        Returns:
            The token ids.
        """
        if self._newline_plain is None:
            self._newline_plain = self.encode_plain("\n")
        ids = self.encode_plain("\n" + text)
        size = len(self._newline_plain)
        if ids[:size] == self._newline_plain:
            return ids[size:]
        return self.encode_plain(text)

    # -- decoding --------------------------------------------------------------------------------

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False,
               what: str = "token_ids") -> str:
        """Text of ``ids``. Special tokens are kept unless ``skip_special_tokens`` is set.

        No tokenization-space clean-up is applied (it would change model output).

        Args:
            ids: the token ids.
            skip_special_tokens: leave special tokens out.
            what: the argument the ids came from, for the error message.

        Returns:
            The text.

        Raises:
            ValueError: an id outside the vocabulary (:meth:`check_ids`).
        """
        ids = list(ids)
        self.check_ids(ids, what)
        return self._decode(ids, skip_special_tokens)

    def _decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return str(self.backend.decode(ids, skip_special_tokens=skip_special_tokens))

    def incremental_decoder(self) -> IncrementalDecoder:
        """A fresh incremental decoder over this tokenizer (special tokens kept, ids checked).

        Returns:
            A :class:`~chatcodec.model.incremental.StreamDecoder` (``tokenizers``' own streaming
            decoder, in Rust) when this tokenizer's decoder streams exactly
            (:func:`~chatcodec.model.incremental.streams_exactly`) and the installed ``tokenizers``
            has ``DecodeStream`` (0.21 and later); otherwise the Python
            :class:`~chatcodec.model.incremental.IncrementalDecoder`. Both give the same text.
        """
        stream_class = self._stream_class
        if stream_class is None:
            stream_class = self._stream_class = self._decode_stream_class()
        if stream_class is False:
            return IncrementalDecoder(self._decode, check=self.check_ids, limit=self.id_limit)
        return StreamDecoder(self.backend, stream_class(skip_special_tokens=False), self._decode,
                             check=self.check_ids, limit=self.id_limit)

    def _decode_stream_class(self) -> Any:
        """``tokenizers.decoders.DecodeStream``, or ``False`` when it is missing or would not give
        the Python decoder's text for this tokenizer's decoder."""
        decoders = importlib.import_module("tokenizers.decoders")
        stream_class = getattr(decoders, "DecodeStream", None)
        decoder = self.backend.decoder
        state = None if decoder is None else json.loads(decoder.__getstate__())
        return stream_class if stream_class is not None and streams_exactly(state) else False

    def decode_generated(self, ids: Sequence[int], *, what: str = "response") -> str:
        """Text of generated ids, the same as :meth:`incremental_decoder` streams it (SPEC §1.8a).

        That is :meth:`decode`'s text, except where a byte-fallback tokenizer meets an invalid byte
        run: ``tokenizers`` then replaces every byte of the run, including characters that were
        complete before the invalid byte, which a stream has already emitted. Such ids are decoded
        step by step, so a one-shot parse and a streamed one agree.

        Args:
            ids: the token ids.
            what: the argument they came from, for the error message.

        Returns:
            The text.

        Raises:
            ValueError: an id outside the vocabulary (:meth:`check_ids`).
        """
        text = self.decode(ids, what=what)
        if REPLACEMENT_CHARACTER not in text:
            return text
        decoder = IncrementalDecoder(self._decode)
        return decoder.step(ids) + decoder.flush()


def load_tokenizer(directory: str | Path, *, lazy: bool = False) -> tuple[Tokenizer | None, str | None]:
    """Load ``directory/tokenizer.json`` when it exists and ``tokenizers`` is installed.

    Args:
        directory: a model directory.
        lazy: read the file on the tokenizer's first use (:meth:`Tokenizer.from_file`).

    Returns:
        ``(tokenizer, None)``, or ``(None, message)``: the message of the
        :class:`~chatcodec.errors.TokenizerUnavailableError` to raise if token ids are asked for
        later, naming the actual cause (the file is missing, or the package is) and its fix.

    Raises:
        ModelStorageError: ``tokenizer.json`` exists but cannot be parsed (with ``lazy``: on first use),
            or is no readable file (:func:`~chatcodec.model.config.is_model_file`).
    """
    path = Path(directory) / TOKENIZER_FILE
    if not is_model_file(path):
        return None, str(tokenizer_unavailable(
            f"{path} does not exist",
            "Add the model's tokenizer.json to the directory (chatcodec reads no other tokenizer format)"))
    try:
        return Tokenizer.from_file(path, lazy=lazy), None
    except TokenizerUnavailableError as error:
        return None, str(error)
