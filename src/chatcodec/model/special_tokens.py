"""Named special tokens as attributes: ``codec.eos_token``, ``codec.pad_token_id = 0``, ...

What lives here: :class:`SpecialTokenAttributes`, the mixin that gives ``ChatCodec`` the
reference's special-token attributes (transformers 5.24 ``PreTrainedTokenizerBase.__getattr__ /
__setattr__``) for the names of ``SPECIAL_TOKENS_ATTRIBUTES``.

Rule kept: the attributes are views of ``special_tokens_map``, never separate state, so an
assignment reaches everything that uses the special tokens (padding, template variables, the end
of generation, saving). ``None`` removes a token; a ``*_token_id`` goes through the tokenizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatcodec.model.config import SPECIAL_TOKENS_ATTRIBUTES, TokenizerConfig
from chatcodec.model.sequences import token_id

if TYPE_CHECKING:
    from chatcodec.model.tokenizer import Tokenizer

__all__ = ["SpecialTokenAttributes"]


def _special_token_name(attribute: str) -> str | None:
    """``"pad_token"`` for ``pad_token`` and ``pad_token_id``; ``None`` for other attributes."""
    name = attribute.removesuffix("_id")
    return name if name in SPECIAL_TOKENS_ATTRIBUTES else None


class SpecialTokenAttributes:
    """``eos_token``, ``eos_token_id``, ``pad_token``, ... read and write ``special_tokens_map``.

    The class using it provides ``special_tokens_map``, ``config``, ``tokenizer`` and
    ``_require_tokenizer()``.
    """

    special_tokens_map: dict[str, str]
    config: TokenizerConfig
    tokenizer: Tokenizer | None

    def _require_tokenizer(self) -> Tokenizer:  # pragma: no cover - provided by the class using it
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        """``codec.eos_token`` reads ``special_tokens_map``; ``codec.eos_token_id`` its id."""
        token_name = _special_token_name(name)
        if token_name is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        token = self.__dict__.get("special_tokens_map", {}).get(token_name)
        if name == token_name or token is None:
            return token
        return self._require_tokenizer().token_to_id(token)

    def __setattr__(self, name: str, value: Any) -> None:
        """``codec.pad_token = ...`` (or ``pad_token_id``) writes ``special_tokens_map``, as in the
        reference; ``None`` removes the token.

        Raises:
            ValueError: a token that is not a string, or an id that is not one (the reference's
                error type).
            TokenizerUnavailableError: an id is set and there is no tokenizer.
        """
        token_name = _special_token_name(name)
        if token_name is None:
            super().__setattr__(name, value)
            return
        if value is not None and name != token_name:
            tokenizer = self._require_tokenizer()
            index = token_id(value)
            if index is None:
                raise ValueError(f"{name}: expected a token id, got {type(value).__name__}")
            tokenizer.check_ids([index], name, single=True)
            value = tokenizer.id_to_token(index)
        if value is None:
            self.special_tokens_map.pop(token_name, None)
        elif isinstance(value, str):
            self.special_tokens_map[token_name] = value
        else:
            raise ValueError(f"{token_name}: cannot set a non-string value (got {type(value).__name__}); "
                             f"pass the token's text, or set {token_name}_id to an id")

    @property
    def eos_token_ids(self) -> list[int]:
        """The ids that end generation: ``generation_config.json``'s, plus the ``eos_token``'s."""
        ids = list(self.config.eos_token_ids)
        eos_id = self._token_id(self.special_tokens_map.get("eos_token"))
        if eos_id is not None and eos_id not in ids:
            ids.append(eos_id)
        return ids

    def _token_id(self, token: str | None) -> int | None:
        """The id of ``token``, or ``None`` (no token, no tokenizer, or not in the vocabulary)."""
        return self.tokenizer.token_to_id(token) if self.tokenizer is not None and token else None
