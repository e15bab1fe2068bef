"""Which response template an engine's model is parsed with.

The order is the one ``ChatCodec.from_pretrained`` follows for a model directory, with one explicit
override in front (engines hand plugins a tokenizer object, never a command-line option of their
own):

1. the environment variable :data:`ENV_VAR` (``CHATCODEC_RESPONSE_TEMPLATE``): a bundled profile's
   name, a response-template JSON file, a ``tokenizer_config.json`` or a model directory;
2. the tokenizer's own ``response_template`` (the attribute transformers sets from
   ``tokenizer_config.json``, or the same key of its ``init_kwargs``);
3. the bundled profile detected from the tokenizer's chat template (:func:`chatcodec.profiles.detect`).

None of them: :class:`~chatcodec.errors.ResponseTemplateNotFoundError`, naming the model and the
variable. Both engines build their parsers once at startup with the model's tokenizer, so the error
stops the server before it serves a request, not in the middle of a stream.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatcodec.errors import ModelStorageError, ResponseTemplateError, ResponseTemplateNotFoundError
from chatcodec.response_templates.template import ResponseTemplate, load_response_template

__all__ = ["ENV_VAR", "ServingTemplate", "serving_template", "template_from_setting"]

logger = logging.getLogger("chatcodec")

#: The environment variable that names the response template explicitly (wins over the tokenizer).
ENV_VAR = "CHATCODEC_RESPONSE_TEMPLATE"


@dataclass(frozen=True)
class ServingTemplate:
    """The response template one engine model is parsed with.

    Attributes:
        template: the loaded template.
        source: where it came from: ``"CHATCODEC_RESPONSE_TEMPLATE=<value>"``,
            ``"tokenizer_config.json"`` or ``"profile:<name>"``.
        model: the model's name or path as the tokenizer knows it (for messages).
        profile: the bundled profile's name when the template is one (tool-call ids then take the
            form the family's chat template accepts).
    """

    template: ResponseTemplate
    source: str
    model: str
    profile: str | None = None


_cache: weakref.WeakKeyDictionary[Any, ServingTemplate] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_settings: dict[str, tuple[ResponseTemplate, str | None]] = {}


def serving_template(tokenizer: Any) -> ServingTemplate:
    """The response template for the model of an engine tokenizer (cached per tokenizer object).

    Args:
        tokenizer: the engine's tokenizer (a transformers tokenizer or a wrapper with the same
            attributes: ``response_template``, ``init_kwargs``, ``chat_template``, ``name_or_path``).

    Returns:
        The template and where it came from.

    Raises:
        ResponseTemplateNotFoundError: neither the variable, the tokenizer nor a bundled profile
            gives one; the message names the model and the variable.
        ResponseTemplateError: the template found is invalid (the message says where it came from).
    """
    setting = os.environ.get(ENV_VAR, "").strip()
    if not setting:
        try:
            with _lock:
                cached = _cache.get(tokenizer)
        except TypeError:  # an unhashable tokenizer: no cache
            cached = None
        if cached is not None:
            return cached
    found = _find(tokenizer, setting)
    if not setting:
        try:
            with _lock:
                _cache[tokenizer] = found
        except TypeError:
            pass
    return found


def _model_name(tokenizer: Any) -> str:
    name = getattr(tokenizer, "name_or_path", None) or getattr(tokenizer, "name", None)
    return str(name) if name else type(tokenizer).__name__


def _find(tokenizer: Any, setting: str) -> ServingTemplate:
    model = _model_name(tokenizer)
    if setting:
        found = _settings.get(setting)
        if found is None:  # read once per process: the engines build a parser per request
            found = _settings[setting] = (template_from_setting(setting), _profile_named(setting))
        return ServingTemplate(found[0], f"{ENV_VAR}={setting}", model, found[1])
    own = _tokenizer_template(tokenizer)
    if own is not None:
        return ServingTemplate(_load(own, f"{model}: tokenizer_config.json"), "tokenizer_config.json", model)
    profile = _detected_profile(tokenizer)
    if profile is not None:
        from chatcodec import profiles

        logger.info(
            "chatcodec: %s has no response_template; using the bundled profile %r, detected from "
            "its chat template",
            model,
            profile,
        )
        template = load_response_template(profiles.load(profile).response_template)
        return ServingTemplate(template, f"profile:{profile}", model, profile)
    raise ResponseTemplateNotFoundError(
        f"chatcodec: no response template for {model!r}: its tokenizer_config.json has no "
        f"response_template and its chat template matches no bundled profile. Name one with the "
        f"environment variable {ENV_VAR}: a bundled profile (`chatcodec profiles` lists them), a "
        "response-template JSON file, a tokenizer_config.json or a model directory, e.g. "
        f"{ENV_VAR}=/path/to/response_template.json"
    )


def _profile_named(setting: str) -> str | None:
    """The profile a setting names, when it is a profile name and not a path."""
    from chatcodec import profiles
    from chatcodec.errors import UnknownProfileError

    if Path(setting).expanduser().exists():
        return None
    try:
        return profiles.load(setting).name
    except UnknownProfileError:
        return None


def _tokenizer_template(tokenizer: Any) -> dict[str, Any] | None:
    template = getattr(tokenizer, "response_template", None)
    if not isinstance(template, dict):
        init_kwargs = getattr(tokenizer, "init_kwargs", None)
        template = init_kwargs.get("response_template") if isinstance(init_kwargs, dict) else None
    return template if isinstance(template, dict) else None


def _detected_profile(tokenizer: Any) -> str | None:
    from chatcodec import profiles

    chat_template = getattr(tokenizer, "chat_template", None)
    if isinstance(chat_template, dict):
        chat_template = chat_template.get("default") or next(iter(chat_template.values()), None)
    return profiles.detect(chat_template) if isinstance(chat_template, str) and chat_template else None


def _load(template: Any, where: str) -> ResponseTemplate:
    try:
        return load_response_template(template)
    except ResponseTemplateError as error:
        raise ResponseTemplateError(
            f"{where}: response_template: {error}", field=error.field, key=error.key, path=error.path
        ) from None


def template_from_setting(setting: str) -> ResponseTemplate:
    """The template a :data:`ENV_VAR` value names.

    Args:
        setting: a model directory, a JSON file (a response template, or a configuration with a
            ``response_template`` key), or a bundled profile's name.

    Returns:
        The loaded template.

    Raises:
        ResponseTemplateNotFoundError: the value names nothing usable (the message says why).
        ResponseTemplateError: the template is invalid.
    """
    where = f"{ENV_VAR}={setting}"
    path = Path(setting).expanduser()
    if path.is_dir():
        from chatcodec.model.loading import find_response_template

        template, _ = find_response_template(path)
        if template is None:
            raise ResponseTemplateNotFoundError(
                f"{where}: the directory has no response_template in tokenizer_config.json and its chat "
                "template matches no bundled profile"
            )
        return _load(template, where)
    if path.is_file():
        from chatcodec.model.config import read_json_file

        try:  # not UTF-8, not JSON, or nested past the recursion limit: the model files' errors
            data = read_json_file(path)
        except (OSError, ModelStorageError) as error:
            why = str(error).removeprefix(f"{path}: ")  # ``where`` names the file already
            raise ResponseTemplateNotFoundError(f"{where}: cannot read the file as JSON: {why}") from None
        if (
            isinstance(data, dict)
            and "fields" not in data
            and isinstance(data.get("response_template"), dict)
        ):
            data = data["response_template"]
        return _load(data, where)
    if "/" in setting or "\\" in setting or setting.endswith(".json"):  # a path; profile names hold none
        raise ResponseTemplateNotFoundError(f"{where}: no such file or directory: {setting}")
    from chatcodec import profiles
    from chatcodec.errors import UnknownProfileError

    try:
        return load_response_template(profiles.load(setting).response_template)
    except UnknownProfileError as error:
        raise ResponseTemplateNotFoundError(
            f"{where}: neither a file, a directory nor a bundled profile. {error}"
        ) from None
