"""Whether a chat template hits a sandbox limit on the plain probe conversation.

``doctor`` and ``derive`` render dozens of conversations each. A template that never ends (an
endless loop) waits :data:`~chatcodec.chat_templates.limits.MAX_RENDER_SECONDS` on every one of
them: more than ten minutes. One that builds a string until ``MAX_STRING_LENGTH`` (or a list,
memory, output... until its limit) spends seconds on each before the limit stops it: 97 s for
``doctor``, past 120 s for ``derive``. Both render the plain conversation (one user question, with
the generation prompt) first with :func:`plain_render_limit`, and stop when it hits any sandbox
limit; :func:`limit_phrase` words why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatcodec.chat_templates.errors import ChatTemplateLimitError

__all__ = ["PLAIN_MESSAGES", "TIME_LIMITS", "limit_phrase", "plain_render_limit"]

#: The sandbox limits that stop a render that runs too long.
TIME_LIMITS = ("MAX_RENDER_SECONDS", "MAX_TEMPLATE_STEPS")

#: The plain probe conversation: one user question (rendered with the generation prompt).
PLAIN_MESSAGES: tuple[dict[str, str], ...] = ({"role": "user", "content": "What is the capital of France?"},)


def plain_render_limit(template: str, variables: Mapping[str, Any]) -> ChatTemplateLimitError | None:
    """Render :data:`PLAIN_MESSAGES` once; the limit error when the render hits a sandbox limit.

    Args:
        template: the chat template text.
        variables: the template variables (special tokens, ...), passed to the render.

    Returns:
        The :class:`~chatcodec.chat_templates.errors.ChatTemplateLimitError` of any sandbox limit
        (``MAX_RENDER_SECONDS``, ``MAX_STRING_LENGTH``, ``"memory"``, ...: its ``limit`` names it);
        ``None`` when the render ends within them, whether it succeeds or fails otherwise (every
        other problem is the caller's checks' to report).
    """
    from chatcodec.chat_templates.errors import ChatTemplateLimitError
    from chatcodec.chat_templates.render import render_chat_template

    try:
        render_chat_template(template, [dict(message) for message in PLAIN_MESSAGES],
                             add_generation_prompt=True, **variables)
    except ChatTemplateLimitError as error:
        return error
    except Exception:  # any other failure hit no limit: the caller's checks report it
        return None
    return None


def limit_phrase(error: ChatTemplateLimitError) -> str:
    """How a stop names the limit the plain conversation hit.

    Args:
        error: the error :func:`plain_render_limit` returned.

    Returns:
        ``"runs out of time"`` for :data:`TIME_LIMITS`, else ``"hits the sandbox limit NAME"``
        (``"hits the sandbox limit MAX_STRING_LENGTH"``).
    """
    if error.limit in TIME_LIMITS:
        return "runs out of time"
    return f"hits the sandbox limit {error.limit}"
