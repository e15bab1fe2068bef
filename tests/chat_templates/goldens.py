"""Finding golden render lines by template, conversation, generation prompt and variant."""

from __future__ import annotations

from typing import Any

from tests.conftest import golden_renders


def golden_line(
    template: str, conversation: str, add_generation_prompt: bool = True, **variant: Any
) -> dict[str, Any]:
    """The golden line of ``template`` × ``conversation`` rendered with the variables ``variant``
    beyond the group's base ones (``enable_thinking=False``; none for the base render).

    Raises:
        LookupError: no such line.
    """
    group = [
        line
        for line in golden_renders()
        if (line["template"], line["conversation"], line["add_generation_prompt"])
        == (template, conversation, add_generation_prompt)
    ]
    if group:
        base = group[0]["kwargs"]
        for line in group:
            extra = {key: value for key, value in line["kwargs"].items() if base.get(key, object()) != value}
            if extra == variant:
                return line
    raise LookupError((template, conversation, add_generation_prompt, variant))
