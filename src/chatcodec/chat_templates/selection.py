"""Choosing which of a model's chat templates to render.

A model has one template (a string) or several named ones (a dict such as ``{"default": ...,
"tool_use": ...}``). The rule (reference: ``PreTrainedTokenizerBase.get_chat_template``): an
explicit name wins; otherwise ``tool_use`` when tools are passed and it exists, else ``default``;
otherwise an error listing the names. ``None`` and an empty dict both mean the model has no
template (the reference calls an empty dict "multiple chat templates with no default"). Unlike
the reference, a name that is not one of the model's template names is an error, never rendered
as if it were template text, and an empty list of tools is no tools (it does not select
``tool_use``), as everywhere in chatcodec: ``tools: []`` is what clients send for none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatcodec.errors import ChatTemplateNotFoundError

__all__ = ["looks_like_template_text", "resolve_chat_template", "select_chat_template"]

_JINJA_MARKERS = ("{{", "{%", "{#")


def select_chat_template(templates: str | Mapping[str, str] | None, name: str | None = None,
                         tools: Sequence[Any] | None = None) -> str:
    """Pick the chat template to render.

    Args:
        templates: the model's template (a string) or named templates (a dict), as returned by
            :func:`chatcodec.load_chat_templates`; ``None`` (or an empty dict) when the model has
            none.
        name: the template name to use, if any (``"default"`` names a single template).
        tools: the tools of this render; with tools (a non-empty list), ``tool_use`` is preferred over
            ``default``.

    Returns:
        The template text.

    Raises:
        ChatTemplateNotFoundError: there is no template, no template of that name, or several
            templates and none of them is ``default`` (the message lists the names).
    """
    if not templates and not isinstance(templates, str):  # None or {}: no template at all
        raise ChatTemplateNotFoundError(
            "chat template: this model has no chat template. Pass the template text, or add "
            "chat_template.jinja to the model directory.", name=name,
        )
    if isinstance(templates, str):
        if name in (None, "default"):
            return templates
        raise ChatTemplateNotFoundError(
            f"chat template: no template named {name!r}; this model has a single template, 'default'.",
            name=name, available=["default"],
        )
    available = sorted(templates)
    if name is not None:
        if name in templates:
            return templates[name]
        raise ChatTemplateNotFoundError(
            f"chat template: no template named {name!r}. Available template names are {available}.",
            name=name, available=available,
        )
    if tools and "tool_use" in templates:
        return templates["tool_use"]
    if "default" in templates:
        return templates["default"]
    raise ChatTemplateNotFoundError(
        "chat template: this model has multiple chat templates with no default specified. Pass the name "
        f"of the template to use. Available template names are {available}.",
        available=available,
    )


def looks_like_template_text(value: str) -> bool:
    """Whether ``value`` is Jinja template text (it has ``{{``, ``{%`` or ``{#``) rather than a name."""
    return any(marker in value for marker in _JINJA_MARKERS)


def resolve_chat_template(templates: str | Mapping[str, str] | None, chat_template: str | None = None,
                          tools: Sequence[Any] | None = None) -> str:
    """Resolve the ``chat_template`` argument of ``apply_chat_template``: template text or a name.

    Args:
        templates: the model's templates (see :func:`select_chat_template`).
        chat_template: ``None`` (pick by the rule), the name of one of the model's templates, or
            template text (recognised by its Jinja delimiters; an empty or blank string is template
            text too, which rendering refuses).
        tools: the tools of this render.

    Returns:
        The template text.

    Raises:
        ChatTemplateNotFoundError: as for :func:`select_chat_template`; a string without Jinja
            delimiters that names no template is reported as an unknown name.
    """
    if chat_template is None:
        return select_chat_template(templates, None, tools)
    if isinstance(templates, Mapping) and chat_template in templates:
        return templates[chat_template]
    if looks_like_template_text(chat_template) or not chat_template.strip():
        return chat_template  # empty text too, as in the reference: rendering it reports the problem
    return select_chat_template(templates, chat_template, tools)
