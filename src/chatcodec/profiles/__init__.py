"""Bundled model-family profiles: data folders, and the only code that reads them.

Each family is a folder beside this module, named by the ``family`` id of the peer-output corpus:
``response_template.json`` (loaded by users through :func:`chatcodec.load_response_template`),
``profile.json`` (generation prompts, special tokens, the markers that identify the family in a
chat template, license, sources, demo data) and, only where the model's license allows
redistribution, ``chat_template.jinja``. Folders are read with :mod:`importlib.resources`, so
profiles work from a wheel or a zip.

Rules kept here: profiles are data (no family-specific code in this module); :func:`load` returns
fresh copies, so a caller that mutates a profile's dicts cannot change what the next caller gets;
:func:`detect` only ever answers with a profile whose markers were checked against real chat
templates (profiles without markers are never detected), and markers count only as template
structure, never in Jinja comments or prose (:mod:`.markers`).
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatcodec.errors import UnknownProfileError
from chatcodec.profiles.markers import Markers

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = ["COVERAGE_FILE", "Demo", "Markers", "Profile", "close_name", "detect", "load", "names", "resolve"]

#: Generated file (beside this module) with each family's peer-vector pass counts.
COVERAGE_FILE = "coverage.json"
#: Keys every ``profile.json`` must have; anything else (besides the optional keys below) is an error.
_REQUIRED_KEYS = frozenset(
    {
        "name",
        "description",
        "generation_prompt",
        "generation_prompts",
        "license",
        "redistributable",
        "sources",
    }
)
_OPTIONAL_KEYS = frozenset(
    {
        "aliases",
        "models",
        "special_tokens",
        "detect",
        "chat_template",
        "demo",
        "notes",
        "template_kwargs",
        "tool_call_id",
    }
)


@dataclass(frozen=True)
class Demo:
    """What ``chatcodec demo`` shows for a profile: a conversation with tools and a real output.

    ``output`` is one real model output copied from the peer-output corpus (``source`` names the
    vector and the project whose test it comes from); ``prompt_suffix`` is what the generation
    prompt must end with for that output (e.g. a pre-opened ``<think>``), ``None`` for nothing.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    output: str
    source: str
    prompt_suffix: str | None = None
    template_kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    """A bundled model-family profile (see the module docstring for the folder layout).

    Attributes:
        name: the family id (folder name), e.g. ``"qwen3"``.
        aliases: other names :func:`load` accepts (``"qwen2.5"`` for ``"hermes"``).
        description: one line on the output format.
        models: example models whose output this profile parses.
        response_template: the response template as a JSON-shaped dict (a fresh copy).
        generation_prompt: what ``add_generation_prompt`` appends with the profile's chat template and
            default options, including a pre-opened reasoning block such as ``<think>\\n``.
        generation_prompts: every generation prompt the family's templates produce (options such as
            ``enable_thinking`` change it); the first pre-opens nothing.
        special_tokens: ``bos_token``, ``eos_token``, ... as strings (chat templates read them).
        markers: what identifies the family in a chat template (:func:`detect`).
        chat_template: the chat template text when the license allows bundling it, else ``None``.
        chat_template_source: where the bundled chat template comes from (model, repository, commit).
        license: the model's license (SPDX id or name), which decides ``redistributable``.
        redistributable: whether the chat template may be bundled.
        sources: where the output format is documented or parsed (peer parsers, model cards).
        notes: anything a user should know (fields a template drops, assumptions).
        template_kwargs: extra variables the profile's chat template expects by default.
        demo: the bundled demo data, or ``None``.
        coverage: ``(passed, total)`` peer vectors of the family, as measured by
            ``scripts/gen_profiles_doc.py`` when the profiles were built (``None`` if unmeasured).
        tool_call_id: the form of the ids given to tool calls the model wrote without one, as the
            family's chat template accepts them back (:class:`chatcodec.openai.ToolCallIds`), or
            ``None`` when any id will do.
    """

    name: str
    aliases: tuple[str, ...]
    description: str
    models: tuple[str, ...]
    response_template: dict[str, Any]
    generation_prompt: str
    generation_prompts: tuple[str, ...]
    special_tokens: dict[str, str]
    markers: Markers
    chat_template: str | None
    chat_template_source: dict[str, Any] | None
    license: str
    redistributable: bool
    sources: tuple[str, ...]
    notes: str
    template_kwargs: dict[str, Any]
    demo: Demo | None
    coverage: tuple[int, int] | None = None
    tool_call_id: str | None = None

    @property
    def needs_chatcodec(self) -> bool:
        """Whether the response template uses chatcodec extensions (``x-`` content parsers,
        ``flatten``, optional placeholders, ``"strip": "blank"``), which transformers cannot read as
        chatcodec does (:mod:`chatcodec.response_templates.chatcodec_only`)."""
        from chatcodec.response_templates.chatcodec_only import chatcodec_only_features

        return bool(chatcodec_only_features(self.response_template))

    def generation_prompt_ending(self, suffix: str | None) -> str:
        """The family's generation prompt that ends with ``suffix`` (``None``: the first, nothing pre-opened).

        A server that pre-opens a block the family's templates do not (a ``<think>`` added to the
        prompt by hand) still gets a prompt: the first generation prompt continued by ``suffix``
        (sharing any end of the prompt that begins ``suffix``: ``X<think>`` and ``<think>\n`` give
        ``X<think>\n``).

        Args:
            suffix: what the prompt must end with (a pre-opened ``<think>``), or ``None``.

        Returns:
            The first of :attr:`generation_prompts` that ends with ``suffix``, else the first
            generation prompt continued by ``suffix``.
        """
        if suffix is None:
            return self.generation_prompts[0]
        for prompt in self.generation_prompts:
            if prompt.endswith(suffix):
                return prompt
        base = self.generation_prompts[0]
        shared = next((size for size in range(len(suffix), 0, -1) if base.endswith(suffix[:size])), 0)
        return base + suffix[shared:]


def names() -> list[str]:
    """The names of every bundled profile, sorted."""
    return list(_folders())


def resolve(name: str) -> str | None:
    """The bundled profile a name or alias stands for, as :func:`load` reads it, or ``None``.

    A profile's own name is found by its folder alone and a string that no name or alias could be
    (a path such as ``./out.json``) is refused at once; only an alias reads every ``profile.json``
    (once per process). So a command that asks whether its argument names a profile pays little.

    Args:
        name: a profile name, an alias, or any other string (case-insensitive; ``-`` and ``_`` are
            the same).

    Returns:
        The profile's name (its folder), or ``None`` when no profile has that name or alias.

    Raises:
        ValueError: a bundled ``profile.json`` is malformed, or two profiles claim the same name.
    """
    key = _normalize(name)
    if _NAME.fullmatch(key) is None:
        return None
    if _root().joinpath(key).joinpath("profile.json").is_file():
        return key  # _index() refuses an alias equal to another profile's folder name
    return _index().get(key)


def load(name: str) -> Profile:
    """Load a bundled profile by name or alias (case-insensitive; ``-`` and ``_`` are the same).

    Args:
        name: a profile name such as ``"qwen3"`` or an alias such as ``"qwen2.5"``.

    Returns:
        A :class:`Profile` whose dicts are fresh copies.

    Raises:
        UnknownProfileError: no profile has that name or alias; the message lists the names.
    """
    folder = resolve(name)
    if folder is None:
        known = names()
        raise UnknownProfileError(
            f"profile {name!r}: no bundled profile has this name or alias. "
            f"Known profiles: {', '.join(known)}",
            name=name,
            available=known,
        )
    return _build(
        folder,
        copy.deepcopy(_read_json(folder, "profile.json")),
        copy.deepcopy(_read_json(folder, "response_template.json")),
    )


def close_name(name: str) -> str | None:
    """The bundled profile name or alias closest to ``name`` (a typo such as ``qwen33``), or ``None``.

    Args:
        name: what the user wrote.

    Returns:
        A profile name or alias that :func:`load` accepts, or ``None`` when nothing is close.
    """
    import difflib

    stem = name.strip().replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    close = difflib.get_close_matches(_normalize(stem), list(_index()), n=1)
    return close[0] if close else None


def detect(chat_template: str) -> str | None:
    """Name the bundled profile whose markers a chat template carries.

    Markers in Jinja comments never count; markers in template structure are preferred over
    markers in prose, which count only when no profile matches on structure (:mod:`.markers`).

    Args:
        chat_template: the chat template text (Jinja source).

    Returns:
        The profile name, or ``None`` when no profile's markers match.
    """
    for prose in (False, True):
        for name in _detection_order():
            if _markers(name).match(chat_template, prose=prose):
                return name
    return None


# ----------------------------------------------------------------------------- reading the folders


#: What every profile name and alias is once normalized (:func:`_index` checks it), so anything else
#: (a path, a file name with a ``/``) is no profile without reading one.
_NAME = re.compile(r"[a-z0-9][a-z0-9._]*")


def _normalize(name: str) -> str:
    return name.strip().lower().replace("-", "_")


@cache
def _root() -> Traversable:
    """This package's folder: the directory itself when the package is installed as files, else as
    :mod:`importlib.resources` reads it (a zip); importing that module costs start-up time."""
    if __file__ and os.path.isfile(__file__):
        return Path(__file__).parent
    from importlib import resources

    return resources.files(__name__)


@cache
def _folders() -> tuple[str, ...]:
    return tuple(
        sorted(
            entry.name
            for entry in _root().iterdir()
            if entry.is_dir() and entry.joinpath("profile.json").is_file()
        )
    )


@cache
def _index() -> dict[str, str]:
    """Every normalized name and alias -> its folder.

    Raises:
        ValueError: a name or alias that :data:`_NAME` does not accept, or one that two profiles
            claim (an alias equal to another folder's name would make :func:`resolve`'s folder
            check disagree with this index).
    """
    folders = _folders()
    index: dict[str, str] = {folder: folder for folder in folders}
    for folder in folders:
        data = _read_json(folder, "profile.json")
        for alias in data.get("aliases", []):
            key = _normalize(alias)
            if _NAME.fullmatch(key) is None:
                raise ValueError(f"profiles/{folder}/profile.json: alias {alias!r} is not a profile name "
                                 "(letters, digits, '.', '_' and '-', starting with a letter or digit)")
            if index.get(key, folder) != folder:
                raise ValueError(f"profiles/{folder}/profile.json: alias {alias!r} is already the name or "
                                 f"an alias of profile {index[key]!r}")
            index[key] = folder
    return index


@cache
def _read_json(folder: str, filename: str) -> Any:
    text = _root().joinpath(folder).joinpath(filename).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"profiles/{folder}/{filename}: invalid JSON (line {error.lineno}, "
            f"column {error.colno}): {error.msg}"
        ) from None


def _read_text(folder: str, filename: str) -> str:
    # bytes, not read_text(): universal newlines would turn a template's CRLF into LF
    return _root().joinpath(folder).joinpath(filename).read_bytes().decode("utf-8")


@cache
def _markers(folder: str) -> Markers:
    spec = _read_json(folder, "profile.json").get("detect") or {}
    return Markers(
        all=tuple(spec.get("all", ())),
        any=tuple(spec.get("any", ())),
        none=tuple(spec.get("none", ())),
        priority=int(spec.get("priority", 0)),
    )


@cache
def _detection_order() -> tuple[str, ...]:
    return tuple(sorted(_folders(), key=lambda folder: (-_markers(folder).priority, folder)))


def _build(folder: str, data: dict[str, Any], response_template: dict[str, Any]) -> Profile:
    where = f"profiles/{folder}/profile.json"
    missing = sorted(_REQUIRED_KEYS - set(data))
    unknown = sorted(set(data) - _REQUIRED_KEYS - _OPTIONAL_KEYS)
    if missing or unknown:
        raise ValueError(f"{where}: missing keys {missing}, unknown keys {unknown}")
    if data["name"] != folder:
        raise ValueError(f"{where}: 'name' is {data['name']!r} but the folder is {folder!r}")
    source = data.get("chat_template")
    chat_template = _read_text(folder, source["file"]) if source else None
    demo = data.get("demo")
    return Profile(
        name=folder,
        aliases=tuple(data.get("aliases", ())),
        description=data["description"],
        models=tuple(data.get("models", ())),
        response_template=response_template,
        generation_prompt=data["generation_prompt"],
        generation_prompts=tuple(data["generation_prompts"]),
        special_tokens=dict(data.get("special_tokens", {})),
        markers=_markers(folder),
        chat_template=chat_template,
        chat_template_source=source,
        license=data["license"],
        redistributable=bool(data["redistributable"]),
        sources=tuple(data["sources"]),
        notes=data.get("notes", ""),
        template_kwargs=dict(data.get("template_kwargs", {})),
        demo=Demo(**demo) if demo else None,
        coverage=_coverage().get(folder),
        tool_call_id=data.get("tool_call_id"),
    )


@cache
def _coverage() -> dict[str, tuple[int, int]]:
    entry = _root().joinpath(COVERAGE_FILE)
    if not entry.is_file():
        return {}
    families = json.loads(entry.read_text(encoding="utf-8")).get("families", {})
    return {name: (int(counts["passed"]), int(counts["vectors"])) for name, counts in families.items()}
