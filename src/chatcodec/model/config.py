"""A model directory's configuration files: ``tokenizer_config.json``, ``special_tokens_map.json``,
``generation_config.json``.

What lives here: reading the special tokens (strings, ``{"content": ...}`` objects or serialised
``AddedToken`` objects), the added tokens (``added_tokens_decoder``), the ``response_template`` key
and the end-of-sequence token ids; and writing ``tokenizer_config.json`` back with only the keys
chatcodec owns changed. Chat templates are not read here (:mod:`chatcodec.model.storage` owns
them) and nothing here tokenizes.

Rule kept: a file is never half understood. A key chatcodec reads and cannot use raises
:class:`~chatcodec.errors.ModelStorageError` naming the file and the key; keys chatcodec does not
read are kept verbatim (and in order) when the file is written back.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatcodec.errors import ModelStorageError

__all__ = [
    "GENERATION_CONFIG_FILE",
    "MAX_CONFIG_BYTES",
    "SPECIAL_TOKENS_ATTRIBUTES",
    "SPECIAL_TOKENS_MAP_FILE",
    "TOKENIZER_CONFIG_FILE",
    "AddedToken",
    "TokenizerConfig",
    "broken_link",
    "check_side",
    "config_special_tokens",
    "is_directory",
    "is_model_file",
    "json_file_text",
    "read_json_file",
    "read_tokenizer_config",
    "shown_name",
    "token_content",
    "write_tokenizer_config",
]

TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"
GENERATION_CONFIG_FILE = "generation_config.json"

#: Largest JSON configuration file a model directory may hold (``tokenizer_config.json``,
#: ``special_tokens_map.json``, ``generation_config.json``, ``chat_template.json``,
#: ``processor_config.json``), in bytes. Real ones are a few kilobytes to about a megabyte (a config
#: listing thousands of added tokens); the file is read whole and parsed into Python objects, which
#: take several times its size, so a multi-gigabyte file would exhaust memory. Read at each call:
#: raise ``chatcodec.model.config.MAX_CONFIG_BYTES`` for a trusted larger one.
MAX_CONFIG_BYTES = 32 * 1024 * 1024

#: The named special tokens a chat template sees as variables (the reference's
#: ``PreTrainedTokenizerBase.SPECIAL_TOKENS_ATTRIBUTES``, transformers 5.24).
SPECIAL_TOKENS_ATTRIBUTES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)


@dataclass(frozen=True)
class AddedToken:
    """A token the tokenizer matches before splitting text (``added_tokens_decoder`` entries).

    Attributes:
        id: the token id.
        content: the token's text, e.g. ``"<|im_start|>"``.
        special: whether the tokenizer marks it special (``skip_special_tokens`` would drop it).
    """

    id: int
    content: str
    special: bool


@dataclass
class TokenizerConfig:
    """What chatcodec reads from a model directory's configuration files.

    Attributes:
        data: the parsed ``tokenizer_config.json`` (``{}`` when the file is absent), kept verbatim
            so that writing it back changes only the keys chatcodec owns.
        special_tokens: the named special tokens as strings (``{"eos_token": "</s>", ...}``), in
            :data:`SPECIAL_TOKENS_ATTRIBUTES` order, then the model-specific ones (other top-level
            ``*_token`` strings, ``extra_special_tokens`` given as an object); tokens set to
            ``null`` are absent.
        extra_special_tokens: ``extra_special_tokens`` / ``additional_special_tokens`` as strings.
        added_tokens: ``added_tokens_decoder`` as ``{id: AddedToken}``.
        response_template: the ``response_template`` key, or ``None``.
        chat_control_tokens: the ``chat_control_tokens`` key (tokens that must never come from
            user input), or ``None``.
        eos_token_ids: the end-of-sequence ids of ``generation_config.json`` (``eos_token_id``,
            an int or a list), in file order; empty when the file or the key is absent.
        pad_token_id: ``generation_config.json``'s ``pad_token_id``, or ``None``.
        files: the configuration files that were read, by name.
    """

    data: dict[str, Any] = field(default_factory=dict)
    special_tokens: dict[str, str] = field(default_factory=dict)
    extra_special_tokens: list[str] = field(default_factory=list)
    added_tokens: dict[int, AddedToken] = field(default_factory=dict)
    response_template: dict[str, Any] | None = None
    chat_control_tokens: list[str] | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    pad_token_id: int | None = None
    files: list[str] = field(default_factory=list)

    @property
    def padding_side(self) -> str:
        """``"right"`` (the reference's default) or ``"left"``, from ``padding_side``."""
        return str(self.data.get("padding_side", "right"))

    @property
    def truncation_side(self) -> str:
        """``"right"`` (the reference's default) or ``"left"``, from ``truncation_side``."""
        return str(self.data.get("truncation_side", "right"))

    @property
    def model_max_length(self) -> int | None:
        """``model_max_length`` when it is a sensible integer, else ``None``."""
        value = self.data.get("model_max_length")
        return value if isinstance(value, int) and 0 < value < 10**12 else None


#: Characters of a path or name that error messages show (one of thousands is cut, saying so).
SHOWN_NAME_CHARS = 200


def shown_name(name: str, *, quoted: bool = False) -> str:
    """A path or name as an error message shows it: cut to :data:`SHOWN_NAME_CHARS` characters and
    followed by its length when it is longer.

    Args:
        name: the path or name.
        quoted: show it as a Python string literal (``repr``).
    """
    head = name[:SHOWN_NAME_CHARS]
    text = repr(head) if quoted else head
    return text if len(name) <= SHOWN_NAME_CHARS else f"{text}... ({len(name):,} characters)"


def is_directory(path: Path) -> bool:
    """Whether ``path`` is a directory (following symbolic links), as ``Path.is_dir`` answers, except
    that a name the system cannot look up is an error rather than a bare ``OSError``.

    Args:
        path: a path given by the caller.

    Returns:
        ``True`` for a directory; ``False`` when nothing is there, something else is, or no file
        can have the name (it holds a NUL character or a lone surrogate).

    Raises:
        ModelStorageError: the name is too long for the file system, or a folder on the way cannot be
            searched; the message names the path (cut to :data:`SHOWN_NAME_CHARS` characters) and the
            system's reason.
    """
    try:
        return path.is_dir()
    except OSError as error:  # ENAMETOOLONG, EACCES: Path.is_dir lets them through
        shown = shown_name(str(path))
        raise ModelStorageError(f"{shown}: cannot be a model directory: {error.strerror or error}",
                                path=str(path)) from None


def is_model_file(path: Path) -> bool:
    """Whether a model directory holds the file ``path``, refusing what is there but cannot be read.

    The reference checks ``os.path.isfile`` and takes anything else for an absent file, so a Hub cache
    whose blob was deleted (its snapshot link now points nowhere) silently loads without that file:
    a legacy template in ``tokenizer_config.json`` then renders instead of ``chat_template.jinja``.

    Args:
        path: the file's path in the model directory.

    Returns:
        ``False`` when nothing is there; ``True`` for a regular file, or a symbolic link to one (the
        Hub cache's snapshots are links to its blobs).

    Raises:
        ModelStorageError: a symbolic link to nothing or in a loop, a directory, or a FIFO, socket or
            device (reading one could block forever); the message names the path.
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        broken = broken_link(path)
        if broken is None:
            return False
        raise ModelStorageError(f"{path}: {broken}", path=str(path)) from None
    if stat.S_ISREG(mode):
        return True
    what = ("a directory" if stat.S_ISDIR(mode)
            else "neither a file nor a directory (a FIFO, socket or device)")
    raise ModelStorageError(f"{path}: expected a file, found {what}", path=str(path))


def broken_link(path: Path) -> str | None:
    """What is wrong with a path that cannot be followed, or ``None`` when nothing is there (or it can
    be followed): ``"a symbolic link to TARGET, which does not exist"``, or the system's reason (a
    link loop: ``"cannot be read: Too many levels of symbolic links"``).

    Args:
        path: any path.
    """
    try:
        path.stat()
    except FileNotFoundError:
        if not path.is_symlink():
            return None
        return f"a symbolic link to {os.readlink(path)}, which does not exist"
    except OSError as error:  # a link loop (ELOOP), no permission on a folder on the way
        return f"cannot be read: {error.strerror or error}"
    except ValueError:  # a NUL character or a lone surrogate: no file can have this name
        return None
    return None


def read_json_file(path: Path) -> Any:
    """Parse a JSON file, naming the file, line and column when it is not valid JSON.

    Args:
        path: the file.

    Returns:
        The parsed value.

    Raises:
        ModelStorageError: the file is larger than :data:`MAX_CONFIG_BYTES`, is not UTF-8 JSON, nests
            past Python's recursion limit, holds an integer longer than Python converts (4,300
            digits), or does not fit in memory.
    """
    with open(path, "rb") as handle:  # the size read, not stat's: a file may grow, /proc lies
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ModelStorageError(
            f"{path}: larger than MAX_CONFIG_BYTES ({MAX_CONFIG_BYTES:,} bytes), more than a configuration "
            "file holds (raise chatcodec.model.config.MAX_CONFIG_BYTES for a trusted one)", path=str(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelStorageError(
            f"{path}: not UTF-8 text (byte {error.start}: {error.reason})", path=str(path)
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelStorageError(
            f"{path}: invalid JSON (line {error.lineno}, column {error.colno}): {error.msg}",
            path=str(path),
        ) from None
    except RecursionError:
        raise ModelStorageError(f"{path}: invalid JSON: nested too deeply", path=str(path)) from None
    except MemoryError:
        raise ModelStorageError(f"{path}: invalid JSON: too large to parse in memory",
                                path=str(path)) from None
    except ValueError as error:  # an integer of more than sys.get_int_max_str_digits() digits
        raise ModelStorageError(f"{path}: invalid JSON: {error}", path=str(path)) from None


def token_content(value: Any, where: str) -> str | None:
    """The text of a special token as the configuration files store it.

    Accepts a string, ``None``, or an object with a ``"content"`` string (both the plain
    ``{"content": ...}`` form and the serialised ``{"__type": "AddedToken", "content": ...}``).

    Args:
        value: the stored value.
        where: ``"file: key"`` for the error message.

    Returns:
        The token text, or ``None`` when the value is ``None``.

    Raises:
        ModelStorageError: any other shape.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    raise ModelStorageError(
        f"{where}: expected a token string or an object with a 'content' string, got {value!r}"
    )


def _token_list(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, Mapping):  # named model-specific tokens: {"image_token": "<image>"}
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise ModelStorageError(f"{where}: expected a list of tokens, got {type(value).__name__}")
    tokens = [token_content(item, f"{where}[{index}]") for index, item in enumerate(items)]
    return [token for token in tokens if token is not None]


def _added_tokens(value: Any, where: str) -> dict[int, AddedToken]:
    if not isinstance(value, Mapping):
        raise ModelStorageError(f"{where}: expected an object mapping token ids to tokens")
    added: dict[int, AddedToken] = {}
    for key, item in value.items():
        try:
            token_id = int(key)
        except (TypeError, ValueError):
            raise ModelStorageError(f"{where}: {key!r} is not a token id") from None
        content = token_content(item, f"{where}.{key}")
        if content is None:
            raise ModelStorageError(f"{where}.{key}: a token without content")
        special = bool(item.get("special", False)) if isinstance(item, Mapping) else False
        added[token_id] = AddedToken(token_id, content, special)
    return added


def config_special_tokens(data: Mapping[str, Any], where: str) -> dict[str, str]:
    """The named special tokens of one ``tokenizer_config.json`` object, as strings, in the order
    :func:`read_tokenizer_config` gives them (without ``special_tokens_map.json``, which only a
    directory has).

    Args:
        data: the parsed configuration.
        where: the file, for messages.

    Returns:
        ``{"bos_token": "<s>", ...}``; tokens set to ``null`` are absent.

    Raises:
        ModelStorageError: a token has the wrong shape.
    """
    named = _named_special_tokens(data, where)
    named.update(_model_specific_tokens(data, where, objects=False))
    return _ordered(named)


def _ordered(named: Mapping[str, str | None]) -> dict[str, str]:
    order = [*SPECIAL_TOKENS_ATTRIBUTES, *(key for key in named if key not in SPECIAL_TOKENS_ATTRIBUTES)]
    return {key: value for key in order if (value := named.get(key)) is not None}


def _named_special_tokens(source: Mapping[str, Any], where: str) -> dict[str, str | None]:
    return {
        key: token_content(source[key], f"{where}: {key}")
        for key in SPECIAL_TOKENS_ATTRIBUTES
        if key in source
    }


def _model_specific_tokens(source: Mapping[str, Any], where: str, objects: bool) -> dict[str, str | None]:
    """Named tokens beyond :data:`SPECIAL_TOKENS_ATTRIBUTES`, as the reference collects them: every
    other top-level ``*_token`` string (or token object, when ``objects``, as in
    ``special_tokens_map.json``), then the entries of an ``extra_special_tokens`` object."""
    named = {
        key: token_content(value, f"{where}: {key}") for key, value in source.items()
        if key.endswith("_token") and key not in SPECIAL_TOKENS_ATTRIBUTES
        and (isinstance(value, str) or (objects and isinstance(value, Mapping)))
    }
    extra = source.get("extra_special_tokens")
    if isinstance(extra, Mapping):
        named.update((key, token_content(value, f"{where}: extra_special_tokens.{key}"))
                     for key, value in extra.items())
    return named


def _apply_special_tokens_map(config: TokenizerConfig, directory: Path,
                              named: dict[str, str | None]) -> None:
    """Merge the legacy ``special_tokens_map.json`` the way the reference does.

    transformers 5.24 reads it only when ``tokenizer_config.json`` has no
    ``added_tokens_decoder``, and then its values override the config's.
    """
    path = directory / SPECIAL_TOKENS_MAP_FILE
    if "added_tokens_decoder" in config.data or not is_model_file(path):
        return
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise ModelStorageError(f"{path}: expected a JSON object", path=str(path))
    config.files.append(SPECIAL_TOKENS_MAP_FILE)
    named.update(_named_special_tokens(data, SPECIAL_TOKENS_MAP_FILE))
    named.update(_model_specific_tokens(data, SPECIAL_TOKENS_MAP_FILE, objects=True))
    for key in ("extra_special_tokens", "additional_special_tokens"):
        for token in _token_list(data.get(key), f"{SPECIAL_TOKENS_MAP_FILE}: {key}"):
            if token not in config.extra_special_tokens:
                config.extra_special_tokens.append(token)


def _read_generation_config(config: TokenizerConfig, directory: Path) -> None:
    path = directory / GENERATION_CONFIG_FILE
    if not is_model_file(path):
        return
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise ModelStorageError(f"{path}: expected a JSON object", path=str(path))
    config.files.append(GENERATION_CONFIG_FILE)
    eos = data.get("eos_token_id")
    ids = [] if eos is None else eos if isinstance(eos, list) else [eos]
    if not all(_is_token_id(value) for value in ids):
        raise ModelStorageError(f"{path}: eos_token_id: expected a token id (an integer) or a list of them, "
                                f"got {eos!r}", path=str(path))
    config.eos_token_ids = ids
    pad = data.get("pad_token_id")
    if pad is not None and not _is_token_id(pad):
        raise ModelStorageError(f"{path}: pad_token_id: expected a token id (an integer), got {pad!r}",
                                path=str(path))
    config.pad_token_id = pad


def _is_token_id(value: Any) -> bool:
    """Whether a JSON value can be a token id: an integer (``true`` is none; some old configurations
    write ``-1`` for "no padding", which matches no token and is kept)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _response_template(data: Mapping[str, Any]) -> dict[str, Any] | None:
    value = data.get("response_template")
    if value is None or isinstance(value, dict):
        return value
    raise ModelStorageError(
        f"{TOKENIZER_CONFIG_FILE}: response_template: expected a JSON object (a response template), "
        f"got {type(value).__name__}"
    )


def check_side(name: str, value: Any) -> str:
    """``value`` when it is ``"right"`` or ``"left"`` (a ``padding_side`` / ``truncation_side``).

    Args:
        name: the attribute or key, for the message.
        value: the value given.

    Returns:
        ``value``.

    Raises:
        ValueError: anything else (transformers only fails later, when padding).
    """
    if value not in ("right", "left"):
        raise ValueError(f"{name}: expected 'right' or 'left', got {value!r}")
    return str(value)


def _check_sides(data: Mapping[str, Any]) -> None:
    """``padding_side`` and ``truncation_side`` are ``"right"`` or ``"left"`` (the reference refuses
    anything else when the tokenizer loads)."""
    for key in ("padding_side", "truncation_side"):
        if key in data and data[key] not in ("right", "left"):
            raise ModelStorageError(
                f"{TOKENIZER_CONFIG_FILE}: {key}: expected 'right' or 'left', got {data[key]!r}")


def _chat_control_tokens(data: Mapping[str, Any]) -> list[str] | None:
    value = data.get("chat_control_tokens")
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(token, str) for token in value):
        return list(value)
    raise ModelStorageError(f"{TOKENIZER_CONFIG_FILE}: chat_control_tokens: expected a list of strings")


def read_tokenizer_config(directory: str | Path) -> TokenizerConfig:
    """Read the configuration files of a model directory.

    Follows transformers 5.24 (``PreTrainedTokenizerBase._from_pretrained``): named special tokens
    come from ``tokenizer_config.json``; the legacy ``special_tokens_map.json`` is read only when
    the config has no ``added_tokens_decoder``, and then overrides it; ``additional_special_tokens``
    is the old name of ``extra_special_tokens``. Absent files are simply absent.

    Args:
        directory: the model directory.

    Returns:
        A :class:`TokenizerConfig`.

    Raises:
        ModelStorageError: a file is not valid JSON, or a key chatcodec reads has the wrong shape
            (the message names the file and the key).
    """
    directory = Path(directory)
    config = TokenizerConfig()
    path = directory / TOKENIZER_CONFIG_FILE
    if is_model_file(path):
        data = read_json_file(path)
        if not isinstance(data, dict):
            raise ModelStorageError(f"{path}: expected a JSON object", path=str(path))
        config.data = data
        config.files.append(TOKENIZER_CONFIG_FILE)
    named = _named_special_tokens(config.data, TOKENIZER_CONFIG_FILE)
    named.update(_model_specific_tokens(config.data, TOKENIZER_CONFIG_FILE, objects=False))
    for key in ("extra_special_tokens", "additional_special_tokens"):
        if config.data.get(key) is not None and not config.extra_special_tokens:
            config.extra_special_tokens = _token_list(config.data[key], f"{TOKENIZER_CONFIG_FILE}: {key}")
    if "added_tokens_decoder" in config.data:
        config.added_tokens = _added_tokens(
            config.data["added_tokens_decoder"], f"{TOKENIZER_CONFIG_FILE}: added_tokens_decoder"
        )
    _apply_special_tokens_map(config, directory, named)
    config.special_tokens = _ordered(named)
    config.response_template = _response_template(config.data)
    config.chat_control_tokens = _chat_control_tokens(config.data)
    _check_sides(config.data)
    _read_generation_config(config, directory)
    return config


def json_file_text(data: Mapping[str, Any]) -> str:
    """The text chatcodec writes for a JSON configuration file.

    Two-space indent, non-ASCII kept, keys in the given order, one final newline (the layout
    transformers writes), so a rewritten file differs from the original only where it must.

    Args:
        data: the whole JSON object.

    Returns:
        The file's text.
    """
    return json.dumps(dict(data), indent=2, ensure_ascii=False) + "\n"


def write_tokenizer_config(directory: str | Path, data: Mapping[str, Any]) -> Path:
    """Write ``tokenizer_config.json`` as :func:`json_file_text` lays it out (UTF-8), atomically, never
    through a symbolic link that leads out of ``directory``
    (:func:`~chatcodec.model.file_changes.apply_file_changes`).

    Args:
        directory: the model directory (must exist).
        data: the whole configuration object to write.

    Returns:
        The path written.
    """
    from chatcodec.model.file_changes import apply_file_changes

    apply_file_changes(Path(directory), [(TOKENIZER_CONFIG_FILE, json_file_text(data))])
    return Path(directory) / TOKENIZER_CONFIG_FILE
