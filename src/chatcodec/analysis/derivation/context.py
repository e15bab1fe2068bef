"""What the derivation renders: sentinel probes, their renders (cached), and the generation prompts.

The derivation learns from renders of *sentinel* turns, values that cannot collide with markers
(``CNTQZ``, ``RSNQZ``, tool names ``fnqza`` / ``fnqzb``, keys ``keyqza``..., ids ``idqzaaaa1``);
the verification (:mod:`chatcodec.analysis.round_trip`) then uses different, realistic values, so
nothing learned from a sentinel can pass it (inference.md §10, F16). A derived delimiter that
still holds ``qz`` is refused (:func:`leaks_sentinel`).

A render that Jinja HTML-escaped (``round_trip.markup_escaped``: mistral-common's ``{&#34;name&#34;: ...}``)
is read with the escapes decoded, as the round trip reads it.

Rule kept: each distinct render happens once per derivation (:class:`RenderCache`), however many
candidate templates are tried.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chatcodec.analysis.derivation.atoms import Atoms
from chatcodec.analysis.probes import MessageShape
from chatcodec.analysis.round_trip import RenderedCase, cut_decoded, unescape_markup

__all__ = [
    "CALL_A",
    "CALL_B",
    "CONTENT",
    "REASONING",
    "SENTINEL_TOOLS",
    "USER",
    "DerivationContext",
    "Turn",
    "leaks_sentinel",
]

USER = "USRQZ question"
CONTENT = "CNTQZ answer text"
REASONING = "RSNQZ chain of thought"
TOOL_RESULT = "TRSQZ tool result"
#: ``(name, arguments)`` of the sentinel calls.
CALL_A: tuple[str, dict[str, Any]] = ("fnqza", {"keyqza": "valqza", "keyqzb": 7})
CALL_B: tuple[str, dict[str, Any]] = ("fnqzb", {"keyqzc": "valqzc", "keyqze": 9})
#: The call ids of the ``plain`` id style (nine letters and digits, as Mistral templates require).
PLAIN_IDS = ("idqzaaaa1", "idqzbbbb2", "idqzcccc3")

#: A call with nested arguments (an object and a list), to choose between parsers that read the same
#: flat arguments and to see how the template writes each container (JSON, or Python's ``str()``).
CALL_NESTED: tuple[str, dict[str, Any]] = (
    "fnqza", {"keyqza": "valqzn", "keyqzb": 8, "keyqzd": {"qzx": [1, 2.5, None], "qzy": True, "qzz": "ü"},
              "keyqzf": ["qzl", 3]})

SENTINEL_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "fnqza", "description": "Sentinel tool A.", "parameters": {
        "type": "object", "required": ["keyqza"], "properties": {
            "keyqza": {"type": "string", "description": "A string."},
            "keyqzb": {"type": "integer", "description": "A number."},
            "keyqzd": {"type": "object", "description": "An object."},
            "keyqzf": {"type": "array", "description": "A list."}}}}},
    {"type": "function", "function": {"name": "fnqzb", "description": "Sentinel tool B.", "parameters": {
        "type": "object", "properties": {"keyqzc": {"type": "string", "description": "A string."},
                                         "keyqze": {"type": "integer", "description": "A number."}}}}},
]

#: The sentinel turns, by name.
SPECS: dict[str, dict[str, Any]] = {
    "content": {"content": CONTENT},
    "reasoning": {"reasoning_content": REASONING, "content": CONTENT},
    "reasoning_call": {"reasoning_content": REASONING, "calls": [CALL_A]},
    "one_call": {"calls": [CALL_A]},
    "two_calls": {"calls": [CALL_A, CALL_B]},
    "nested_call": {"calls": [CALL_NESTED]},
}


def leaks_sentinel(text: str) -> bool:
    """Whether a derived delimiter holds a sentinel (it would only match the probes)."""
    return "qz" in text.lower()


@dataclass(frozen=True)
class Turn:
    """One sentinel turn rendered.

    Attributes:
        rendered: the prompt, the full render and the output (see ``round_trip.cut_output``).
        generation_prompt: what ``add_generation_prompt`` appended to the history (``G``).
    """

    rendered: RenderedCase
    generation_prompt: str

    @property
    def prompt(self) -> str:
        return self.rendered.prompt

    @property
    def output(self) -> str:
        return self.rendered.output

    @property
    def continues(self) -> bool:
        """Whether the render with the turn starts with the whole prompt."""
        return self.rendered.continues_prompt


@dataclass
class RenderCache:
    """Renders of one chat template, each computed once (``None``: the template raised)."""

    chat_template: str
    renders: dict[str, str | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
               add_generation_prompt: bool, variables: Mapping[str, Any]) -> str | None:
        from chatcodec.chat_templates.render import render_chat_template
        from chatcodec.errors import ChatCodecError

        key = json.dumps([messages, tools, add_generation_prompt, dict(variables)], sort_keys=True,
                         default=str)
        if key not in self.renders:
            try:
                self.renders[key] = render_chat_template(self.chat_template, messages, tools=tools,
                                                         add_generation_prompt=add_generation_prompt,
                                                         **variables)
            except ChatCodecError as error:
                self.renders[key] = None
                self.errors[key] = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        return self.renders[key]


@dataclass
class DerivationContext:
    """Everything the derivation steps share about one chat template.

    Attributes:
        chat_template: the template text.
        variables: special tokens and required variables of every render.
        shape: the message shape (from :func:`chatcodec.analysis.round_trip.discover_shape`).
        modes: the template's modes (``{}`` first).
        atoms: the atom finder (knows the special tokens).
        eos: the end-of-sequence token (outputs are cut before it), or ``None``.
        cache: the render cache.
    """

    chat_template: str
    variables: dict[str, Any]
    shape: MessageShape
    modes: list[dict[str, Any]]
    atoms: Atoms
    eos: str | None
    cache: RenderCache

    @classmethod
    def create(cls, chat_template: str, variables: Mapping[str, Any], shape: MessageShape,
               modes: list[dict[str, Any]]) -> DerivationContext:
        tokens = [value for key, value in variables.items()
                  if key.endswith("_token") and isinstance(value, str)]
        eos = variables.get("eos_token")
        return cls(chat_template, dict(variables), shape, modes, Atoms.for_tokens(tokens),
                   eos if isinstance(eos, str) and eos else None, RenderCache(chat_template))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.shape.tool_schemas(SENTINEL_TOOLS)

    def history(self, variant: str) -> list[dict[str, Any]]:
        """The messages before the turn: ``single`` (one user turn) or ``after_tool``."""
        user = {"role": "user", "content": USER}
        if variant == "single":
            return [user]
        earlier = self.shape.message({"calls": [CALL_B]}, first_id=5, ids=[PLAIN_IDS[2]])
        call = earlier["tool_calls"][0]
        return [user, earlier, {"role": "tool", "tool_call_id": call["id"], "name": CALL_B[0],
                                "content": TOOL_RESULT}]

    def message(self, spec_name: str, variant: str = "single") -> dict[str, Any]:
        """The sentinel assistant message :data:`SPECS` names, in the template's shape."""
        return self._message(SPECS[spec_name], variant)

    def _message(self, spec: Mapping[str, Any], variant: str) -> dict[str, Any]:
        return self.shape.message(spec, first_id=len(self.history(variant)), ids=list(PLAIN_IDS))

    def turn(self, spec_name: str, mode: Mapping[str, Any], variant: str = "single") -> Turn | None:
        """Render a sentinel turn (:data:`SPECS`) in a mode; ``None`` when the template raises."""
        return self.turn_for(SPECS[spec_name], mode, variant)

    def turn_for(self, spec: Mapping[str, Any], mode: Mapping[str, Any],
                 variant: str = "single") -> Turn | None:
        """Render the sentinel turn ``spec`` (fields as in a :data:`SPECS` entry: ``content``,
        ``reasoning_content``, ``calls``) in a mode; ``None`` when the template raises."""
        variables = {**self.variables, **mode}
        history = self.history(variant)
        message = self._message(spec, variant)
        prompt = self.cache.render(history, self.tools, True, variables)
        past = self.cache.render(history, self.tools, False, variables)
        full = self.cache.render([*history, message], self.tools, False, variables)
        if prompt is None or full is None:
            return None
        written = json.dumps([history, message], ensure_ascii=False, default=str)
        rendered = cut_decoded(prompt, full, self.eos, past, written)  # Jinja's HTML escapes decoded
        if rendered.markup_decoded:
            prompt, past = unescape_markup(prompt), unescape_markup(past) if past is not None else None
        generation = prompt[len(past):] if past is not None and prompt.startswith(past) else ""
        return Turn(rendered, generation)
