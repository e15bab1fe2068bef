"""Whether a chat template runs out of render time on the plain probe conversation.

``doctor`` and ``derive`` render dozens of conversations each. A template that never ends (an
endless loop) waits :data:`~chatcodec.chat_templates.limits.MAX_RENDER_SECONDS` on every one of
them: more than ten minutes. Both render the plain conversation (one user question, with the
generation prompt) first with :func:`plain_render_stall`, and stop when it runs out of time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatcodec.chat_templates.errors import ChatTemplateLimitError

__all__ = ["PLAIN_MESSAGES", "TIME_LIMITS", "plain_render_stall"]

#: The sandbox limits that stop a render that runs too long.
TIME_LIMITS = ("MAX_RENDER_SECONDS", "MAX_TEMPLATE_STEPS")

#: The plain probe conversation: one user question (rendered with the generation prompt).
PLAIN_MESSAGES: tuple[dict[str, str], ...] = ({"role": "user", "content": "What is the capital of France?"},)


def plain_render_stall(template: str, variables: Mapping[str, Any]) -> ChatTemplateLimitError | None:
    """Render :data:`PLAIN_MESSAGES` once; the limit error when the render runs out of time.

    Args:
        template: the chat template text.
        variables: the template variables (special tokens, ...), passed to the render.

    Returns:
        The :class:`~chatcodec.chat_templates.errors.ChatTemplateLimitError` for
        ``MAX_RENDER_SECONDS`` or ``MAX_TEMPLATE_STEPS``; ``None`` when the render ends in time,
        whether it succeeds or fails otherwise (every other problem is the caller's checks' to report).
    """
    from chatcodec.chat_templates.errors import ChatTemplateLimitError
    from chatcodec.chat_templates.render import render_chat_template

    try:
        render_chat_template(template, [dict(message) for message in PLAIN_MESSAGES],
                             add_generation_prompt=True, **variables)
    except ChatTemplateLimitError as error:
        return error if error.limit in TIME_LIMITS else None
    except Exception:  # any other failure is not a stall: the caller's checks report it
        return None
    return None
