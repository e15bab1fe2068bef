"""The conversations ``chatcodec doctor`` renders, and one render's outcome.

A :class:`Probe` is everything one render takes (messages, tools, ``add_generation_prompt``, the
other template variables), so a finding can carry it as the conversation that reproduces it. An
:class:`Outcome` is the prompt, or the error the template raised with its line. Every render uses
the same pinned clock (:data:`PROBE_TIME`), so only the checks that vary the clock see it move.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "PROBE_TIME",
    "WEATHER_TOOL",
    "Outcome",
    "Probe",
    "find_line",
    "first_difference",
    "render_probe",
    "tool_call",
]

#: The time ``strftime_now()`` reports in every probe render (the corpus goldens' clock).
PROBE_TIME = datetime(2026, 1, 15, 12, 0, 0)

#: The tool every tool probe offers.
WEATHER_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}},
                   "required": ["city"]}}}


def tool_call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    """A tool call in the messages API's shape (``arguments`` a mapping or a JSON string)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass(frozen=True)
class Probe:
    """The inputs of one render.

    Attributes:
        messages: the conversation.
        tools: the tool schemas, ``[]`` or ``None``.
        add_generation_prompt: whether the prompt ends with the assistant's header.
        kwargs: the other template variables (special tokens, ``enable_thinking``, ...).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    add_generation_prompt: bool = False
    kwargs: dict[str, Any] = field(default_factory=dict)

    def conversation(self) -> dict[str, Any]:
        """``{"messages", "tools", "add_generation_prompt", "kwargs"}``: JSON that reproduces the render."""
        return {"messages": copy.deepcopy(self.messages), "tools": copy.deepcopy(self.tools),
                "add_generation_prompt": self.add_generation_prompt, "kwargs": dict(self.kwargs)}


@dataclass(frozen=True)
class Outcome:
    """What one render gave.

    Attributes:
        text: the prompt, or ``None`` when the template raised.
        error: ``"<ErrorType>: message"`` when it raised, else ``None``.
        line: the template line of the error, when known.
    """

    text: str | None
    error: str | None = None
    line: int | None = None


def render_probe(template: str, probe: Probe, *, now: datetime = PROBE_TIME) -> Outcome:
    """Render one probe with chatcodec's renderer (the reference's behaviour).

    Args:
        template: the chat template text.
        probe: the inputs.
        now: the time ``strftime_now()`` reports.

    Returns:
        The prompt, or the error (a ``ChatTemplateError`` or an unusable input) with its line.
    """
    from chatcodec.chat_templates.errors import ChatTemplateError
    from chatcodec.chat_templates.inputs import ConversationError
    from chatcodec.chat_templates.render import render_chat_template

    try:
        text = render_chat_template(template, probe.messages, tools=probe.tools, now=now,
                                    add_generation_prompt=probe.add_generation_prompt, **probe.kwargs)
    except ChatTemplateError as error:
        return Outcome(None, f"{type(error).__name__}: {error.message}", error.lineno)
    except ConversationError as error:
        return Outcome(None, f"{type(error).__name__}: {error}")
    return Outcome(text)


def first_difference(first: str, second: str) -> int:
    """The index of the first character where the texts differ (the shorter length when one is a
    prefix of the other)."""
    return next((index for index, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
                min(len(first), len(second)))


def find_line(template: str, text: str, *, shortest: int = 3) -> int | None:
    """The template line that most likely writes ``text``: the line of the longest prefix of ``text``
    (at least ``shortest`` characters, at most 40) found literally in the template.

    Args:
        template: the chat template text.
        text: the rendered text to attribute (from the position of interest on).
        shortest: the shortest prefix worth searching.

    Returns:
        The 1-based line, or ``None`` when no such prefix occurs in the template (the text came from
        a variable).
    """
    for length in range(min(len(text), 40), shortest - 1, -1):
        found = template.find(text[:length])
        if found >= 0 and text[:length].strip():
            return template.count("\n", 0, found) + 1
    return None
