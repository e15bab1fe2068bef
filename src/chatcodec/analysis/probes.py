"""Probe conversations: the assistant turns a chat template is rendered with to check a response template.

What lives here: the probe matrix of the round trip (:mod:`chatcodec.analysis.round_trip`), one
assistant message per case, grouped by capability; the conversations around it (variants: one
turn, a multi-turn history, a turn after a tool result); the tools the calls use; the template
modes worth checking (``enable_thinking``, ``reasoning_effort``, ...); and the *message shape* a
template wants (arguments as a mapping or as a JSON string, ``content`` of a tool-call turn,
call ids, tool schemas). Nothing here parses.

Rules kept: every probe value is realistic and unlike the sentinels the derivation learns from
(``chatcodec.analysis.derive`` uses its own), so a response template that learned a probe value
(a name, an id) fails here; a shape is chosen by rendering, never by reading template names.

The capabilities and their cases:

* ``content``: ``content`` (one line), ``multiline`` (lines, markup-like characters, JSON-like text);
* ``reasoning``: ``reasoning`` (``reasoning_content`` and ``content``), ``with_call``
  (``reasoning_content`` and a tool call: some templates render reasoning only on tool-call turns);
* ``one_call``: ``string``, ``number``, ``nested``, ``unicode``, ``empty`` (no arguments),
  ``with_content`` (text before the call);
* ``parallel_calls``: ``two_calls`` (two different tools in one turn).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import regex

__all__ = [
    "CAPABILITIES",
    "MODE_SETTINGS",
    "PROBE_TOOLS",
    "SCHEMA_FORMS",
    "TURN_REASONING",
    "Conversation",
    "MessageShape",
    "Probe",
    "mode_variants",
    "probe_matrix",
    "shape_candidates",
    "used_as_boolean",
]

#: The capabilities a response template is checked for, in report order.
CAPABILITIES = ("content", "reasoning", "one_call", "parallel_calls")

#: The tools every probe conversation passes (JSON schemas, OpenAI shape); the calls use them, and
#: the parser types arguments with them (SPEC §1.6).
PROBE_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather forecast for a city.",
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string", "description": "The city name."},
            "days": {"type": "integer", "description": "How many days to forecast."}}}}},
    {"type": "function", "function": {
        "name": "set_thermostat", "description": "Set the thermostat.",
        "parameters": {"type": "object", "required": ["temperature"], "properties": {
            "temperature": {"type": "number", "description": "Degrees Celsius."}}}}},
    {"type": "function", "function": {
        "name": "save_settings", "description": "Save the user's settings.",
        "parameters": {"type": "object", "required": ["settings"], "properties": {
            "settings": {"type": "object", "description": "The settings."},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."}}}}},
    {"type": "function", "function": {
        "name": "send_message", "description": "Send a message to a contact.",
        "parameters": {"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "description": "The message."}}}}},
    {"type": "function", "function": {
        "name": "get_time", "description": "Get the current time.",
        "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string", "description": "An IANA time zone."}}}}},
]

_NESTED = {"units": "metric", "alerts": [1, 2.5], "deep": {"on": True, "note": None}}

#: ``(capability, case, final assistant message)``; calls as ``(name, arguments)`` until shaped.
_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("content", "content", {"content": "It is sunny in Paris today."}),
    ("content", "multiline", {"content": 'First line.\n\nSecond line: 2 < 3 and {"a": 1} [x].'}),
    ("reasoning", "reasoning", {"reasoning_content": "The user wants the weather, so I answer directly.",
                                "content": "It is sunny in Paris today."}),
    ("reasoning", "with_call", {"reasoning_content": "I need the forecast first, so I call the tool.",
                                "calls": [("get_weather", {"city": "Paris"})]}),
    ("one_call", "string", {"calls": [("get_weather", {"city": "Paris"})]}),
    ("one_call", "number", {"calls": [("set_thermostat", {"temperature": 21.5})]}),
    ("one_call", "nested", {"calls": [("save_settings", {"settings": _NESTED, "tags": ["home", "eco"]})]}),
    ("one_call", "unicode", {"calls": [("send_message", {"text": "Grüße aus 東京 ✓"})]}),
    ("one_call", "empty", {"calls": [("get_time", {})]}),
    ("one_call", "with_content", {"content": "Let me check the forecast.",
                                  "calls": [("get_weather", {"city": "Lyon", "days": 3})]}),
    ("parallel_calls", "two_calls", {"calls": [("get_weather", {"city": "Paris", "days": 2}),
                                               ("get_time", {"timezone": "Asia/Tokyo"})]}),
]

#: The reasoning of every turn when :attr:`MessageShape.reasoning` is set.
TURN_REASONING = "I look at what the user asked first."
_USER = "What is the weather like in Paris?"
_HISTORY = [
    {"role": "user", "content": "Hello there."},
    {"role": "assistant", "reasoning_content": "A greeting; I greet back.",
     "content": "Hello! How can I help?"},
]
_EARLIER_CALL = ("get_weather", {"city": "Madrid"})
_TOOL_RESULT = '{"forecast": "rain", "temperature": 14}'

#: The variants every case is rendered in: the final turn after one user turn, after a history
#: with an earlier assistant turn (with reasoning), and right after a tool result.
VARIANTS = ("single", "multi_turn", "after_tool")

#: Template variables that switch a template's mode, and the values worth rendering with.
MODE_SETTINGS: dict[str, tuple[Any, ...]] = {
    "enable_thinking": (True, False),
    "thinking": (True, False),
    "reasoning": (True, False),
    "reasoning_effort": ("low", "high"),
    "thinking_mode": ("on", "off"),
}

#: A variable name that speaks of thinking or reasoning: a mode switch of the template's own, beside
#: :data:`MODE_SETTINGS`.
OWN_SWITCH = regex.compile(r"think|reason|(?:^|_)cot(?:_|$)", regex.IGNORECASE)


@dataclass(frozen=True)
class MessageShape:
    """How a template wants assistant tool-call turns and tools given (found by rendering).

    Attributes:
        arguments: ``"object"`` (a mapping, the reference's form) or ``"json_string"`` (some
            templates concatenate the arguments with strings and raise on a mapping).
        call_content: ``content`` of a tool-call turn without text: ``""``, ``None`` (left out)
            or ``"blocks"`` (a list with one empty text block; a template that indexes
            ``content[0]`` needs it).
        ids: ``"plain"`` (nine letters and digits, as Mistral templates require) or
            ``"functions"`` (``functions.NAME:INDEX``, which Kimi templates render as the name).
        tools: ``"openai"`` (``{"type": "function", "function": {...}}``) or ``"function"`` (the
            inner object alone).
        reasoning: every assistant turn carries reasoning (a template whose generation prompt
            opens a reasoning block renders a turn without reasoning as something no model
            writes after that prompt).
        calls: ``"openai"`` (``{"id", "type", "function": {"name", "arguments"}}``) or ``"flat"``
            (the same with ``name`` and ``arguments`` beside ``function`` too, for a template that
            reads ``tool_call.name``; tried last).
        schemas: how the parameter schemas of the tools are written (:data:`SCHEMA_FORMS`):
            ``"given"`` (as in :data:`PROBE_TOOLS`), ``"complete"`` (every schema carries the keys
            templates read without checking: ``description``, and ``properties``, ``required``,
            ``additionalProperties`` on objects) or ``"scalar"`` (only the string, number, integer
            and boolean parameters).
    """

    arguments: str = "object"
    call_content: str | None = ""
    ids: str = "plain"
    tools: str = "openai"
    calls: str = "openai"
    reasoning: bool = False
    schemas: str = "given"

    def message(self, spec: Mapping[str, Any], first_id: int = 0,
                ids: Sequence[str] | None = None) -> dict[str, Any]:
        """The assistant message for a probe ``spec`` (``content``, ``reasoning_content``, ``calls``).

        Args:
            spec: the probe's fields; ``calls`` is a list of ``(name, arguments)``.
            first_id: the index of the first call (ids count on from it).
            ids: the call ids of the ``plain`` style (default: ``call0000x``, ``call0001x``, ...).

        Returns:
            The message, in this shape.
        """
        message: dict[str, Any] = {"role": "assistant"}
        if "reasoning_content" in spec:
            message["reasoning_content"] = spec["reasoning_content"]
        elif self.reasoning:
            message["reasoning_content"] = TURN_REASONING
        calls = spec.get("calls") or []
        if "content" in spec:
            message["content"] = spec["content"]
        elif calls:
            message["content"] = ([{"type": "text", "text": ""}] if self.call_content == "blocks"
                                  else self.call_content)
        else:
            message["content"] = ""
        if calls:
            message["tool_calls"] = [
                self._call(name, arguments, first_id + index, ids[index] if ids else None)
                for index, (name, arguments) in enumerate(calls)]
        return message

    def _call(self, name: str, arguments: dict[str, Any], index: int, plain: str | None) -> dict[str, Any]:
        call_id = f"functions.{name}:{index}" if self.ids == "functions" else plain or _plain_id(index)
        value: Any = json.dumps(arguments, ensure_ascii=False) if self.arguments == "json_string" \
            else copy.deepcopy(arguments)
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": value}}
        if self.calls == "flat":
            call.update(name=name, arguments=copy.deepcopy(value))
        return call

    def tool_schemas(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``tools`` in this shape (fresh copies; OpenAI-shaped input)."""
        shaped = copy.deepcopy(tools)
        for tool in shaped:
            parameters = tool["function"].get("parameters")
            if isinstance(parameters, dict) and self.schemas != "given":
                tool["function"]["parameters"] = _SCHEMA_FORMS[self.schemas](parameters)
        if self.tools == "function":
            return [tool["function"] for tool in shaped]
        return shaped

    def describe(self) -> str:
        """A short description for reports, e.g. ``arguments as a JSON string, content None``."""
        parts = []
        if self.arguments != "object":
            parts.append("tool-call arguments as a JSON string")
        if self.call_content != "":
            parts.append("content of a tool-call turn " + ("as text blocks" if self.call_content == "blocks"
                                                           else "left out (None)"))
        if self.ids != "plain":
            parts.append("call ids functions.NAME:INDEX")
        if self.tools != "openai":
            parts.append("tools as bare function objects")
        if self.calls != "openai":
            parts.append("each call's name and arguments beside its function object")
        if self.reasoning:
            parts.append("reasoning in every assistant turn")
        if self.schemas != "given":
            parts.append({"complete": "tool schemas with description, properties, required and "
                                      "additionalProperties everywhere",
                          "scalar": "tool schemas with scalar parameters only"}[self.schemas])
        return ", ".join(parts) or "the standard message shape"


def _complete_schema(schema: dict[str, Any], description: str = "The arguments.") -> dict[str, Any]:
    """``schema`` with the keys templates often read without checking them filled in (a template
    that types parameters with a ``json_to_python_type``-style macro reads ``additionalProperties``
    of every object; others read every ``description``); nested schemas too."""
    schema.setdefault("description", description)
    if schema.get("type") == "object":
        properties = schema.setdefault("properties", {})
        schema.setdefault("required", [])
        schema.setdefault("additionalProperties", {})
        for key, value in properties.items():
            if isinstance(value, dict):
                _complete_schema(value, f"The {key}.")
    if schema.get("type") == "array" and isinstance(schema.setdefault("items", {}), dict):
        _complete_schema(schema["items"], "An item.")
    return schema


def _scalar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a parameters object) with only its scalar parameters."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    kept = {key: value for key, value in properties.items()
            if isinstance(value, dict) and value.get("type") in _SCALAR_TYPES}
    schema["properties"] = kept
    if isinstance(schema.get("required"), list):
        schema["required"] = [key for key in schema["required"] if key in kept]
    return schema


_SCALAR_TYPES = ("string", "number", "integer", "boolean")

#: The ways probe tool schemas are written, in the order they are tried (a template that raises on
#: the schemas as given gets the next form before the probes give up; inference.md §2).
SCHEMA_FORMS = ("given", "complete", "scalar")
_SCHEMA_FORMS = {"complete": _complete_schema, "scalar": _scalar_schema}


def _plain_id(index: int) -> str:
    """A nine-character alphanumeric call id (Mistral templates insist on that form)."""
    return f"call{index:04d}x"[:9].ljust(9, "0")


def shape_candidates(schemas: str = "given") -> list[MessageShape]:
    """The message shapes to try, most common first (the first that renders a call wins).

    Args:
        schemas: how the tool schemas are written (one of :data:`SCHEMA_FORMS`).
    """
    base = []
    for arguments in ("object", "json_string"):
        for call_content in ("", None, "blocks"):
            base.append(MessageShape(arguments=arguments, call_content=call_content, schemas=schemas))
    shapes = base + [replace(shape, ids="functions") for shape in base[:2]]
    # bare function objects with every arguments and content form (Apertus: bare tools and arguments
    # as a JSON string, inference.md §2); then, last, a call's name and arguments at its top level too
    # (a template that reads ``tool_call.name`` and renders nothing of a standard call)
    flat = [replace(shape, calls="flat") for shape in (base[0], base[3])]
    return shapes + [replace(shape, tools="function") for shape in base] + flat


@dataclass(frozen=True)
class Conversation:
    """A render's inputs, enough to reproduce it: ``render_chat_template(template, messages,
    tools=tools, add_generation_prompt=add_generation_prompt, **kwargs)``.

    Attributes:
        messages: the messages (plain JSON data).
        tools: the tool schemas, or ``None``.
        add_generation_prompt: whether the generation prompt is appended.
        kwargs: the other template variables (special tokens, mode switches such as ``enable_thinking``).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    add_generation_prompt: bool
    kwargs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"messages", "tools", "add_generation_prompt", "kwargs"}`` (fresh copies)."""
        return {"messages": copy.deepcopy(self.messages), "tools": copy.deepcopy(self.tools),
                "add_generation_prompt": self.add_generation_prompt, "kwargs": copy.deepcopy(self.kwargs)}

    def prompt(self) -> Conversation:
        """The generation prompt's conversation: no final message, ``add_generation_prompt=True``."""
        return Conversation(self.messages[:-1], self.tools, True, self.kwargs)


@dataclass(frozen=True)
class Probe:
    """One round-trip case: a conversation whose final message is the assistant turn under test.

    Attributes:
        capability: one of :data:`CAPABILITIES`.
        case: the case name (see the module docstring).
        variant: one of :data:`VARIANTS`.
        mode: the mode variables of the render (``{}`` for the template's default).
        conversation: the full conversation (``add_generation_prompt=False``).
    """

    capability: str
    case: str
    variant: str
    mode: dict[str, Any]
    conversation: Conversation

    @property
    def message(self) -> dict[str, Any]:
        """The final assistant message (the one the response template must give back)."""
        return self.conversation.messages[-1]

    @property
    def label(self) -> str:
        """``capability/case/variant`` and the mode: ``one_call/nested/single [enable_thinking=False]``."""
        mode = ", ".join(f"{key}={value!r}" for key, value in self.mode.items())
        return f"{self.capability}/{self.case}/{self.variant}" + (f" [{mode}]" if mode else "")


def _history(variant: str, shape: MessageShape) -> list[dict[str, Any]]:
    if variant == "single":
        return [{"role": "user", "content": _USER}]
    if variant == "multi_turn":
        return [*copy.deepcopy(_HISTORY), {"role": "user", "content": _USER}]
    earlier = shape.message({"calls": [_EARLIER_CALL]}, first_id=7)
    call = earlier["tool_calls"][0]
    return [{"role": "user", "content": _USER}, earlier,
            {"role": "tool", "tool_call_id": call["id"], "name": _EARLIER_CALL[0], "content": _TOOL_RESULT}]


def probe_matrix(shape: MessageShape | None = None, *, variables: Mapping[str, Any] | None = None,
                 modes: list[dict[str, Any]] | None = None, variants: tuple[str, ...] = VARIANTS,
                 capabilities: tuple[str, ...] = CAPABILITIES,
                 keep: Callable[[str, str], bool] | None = None) -> list[Probe]:
    """Every probe: each case of each capability, in each variant and each mode.

    Args:
        shape: the message shape (default: the standard one).
        variables: template variables every render gets (special tokens, required variables).
        modes: the mode variables to render with (default ``[{}]``, the template's default mode).
        variants: which of :data:`VARIANTS` to include.
        capabilities: which capabilities to include.
        keep: ``keep(capability, case)`` filters the cases (default: all).

    Returns:
        The probes, ordered by mode, variant, then case order.
    """
    shape = shape or MessageShape()
    tools = shape.tool_schemas(PROBE_TOOLS)
    probes = []
    for mode in modes or [{}]:
        kwargs = {**(variables or {}), **mode}
        for variant in variants:
            history = _history(variant, shape)
            for capability, case, spec in _CASES:
                if capability not in capabilities or (keep is not None and not keep(capability, case)):
                    continue
                final = shape.message(spec, first_id=len(history))
                conversation = Conversation([*copy.deepcopy(history), final], tools, False, dict(kwargs))
                probes.append(Probe(capability, case, variant, dict(mode), conversation))
    return probes


def mode_variants(variable_names: set[str] | frozenset[str],
                  source: str | None = None) -> list[dict[str, Any]]:
    """The non-default modes to render a template in, from the variables it reads.

    Args:
        variable_names: the template's undeclared variables (``jinja2.meta.find_undeclared_variables``).
        source: the template text; when given, a switch of the template's own counts only where the
            template uses it as a boolean (:func:`used_as_boolean`).

    Returns:
        One ``{name: value}`` per value of each mode variable of :data:`MODE_SETTINGS` the template
        reads; then each other variable whose name speaks of thinking or reasoning (:data:`OWN_SWITCH`:
        a template's own switch, Vivianna's ``auto_disable_thinking_with_tools``, ``preserve_thinking``)
        set to ``True`` and ``False``, alone and together with each value of each
        :data:`MODE_SETTINGS` variable it reads (that switch may turn thinking off whatever
        ``enable_thinking`` says), in sorted name order.
    """
    known = [{name: value} for name, values in MODE_SETTINGS.items() if name in variable_names
             for value in values]
    own = sorted(name for name in variable_names if name not in MODE_SETTINGS and OWN_SWITCH.search(name)
                 and (source is None or used_as_boolean(source, name)))
    combined = [{name: value, **mode} for name in own for value in (True, False) for mode in [{}, *known]]
    return [*known, *combined]


def used_as_boolean(source: str, name: str) -> bool:
    """Whether a template uses the variable ``name`` as a boolean: defaulted to ``true`` / ``false``
    (``| default(false)``, ``x if x is defined else false``), tested with ``is true`` / ``is false``
    / ``==`` against them, or a bare operand of ``if``, ``and``, ``or`` or ``not`` (``{% if
    auto_disable_thinking_with_tools and tools %}``). A variable read as a number or a string
    (``thinking_budget``, ``reasoning_format``) is no on/off switch, and ``True`` would send its
    template down a branch no caller takes."""
    word = regex.escape(name)
    literal = r"(?:true|false|True|False)"
    return bool(regex.search(
        rf"\b{word}\s*\|\s*default\(\s*{literal}"
        rf"|\b{word}\s+is\s+(?:not\s+)?(?:true|false|sameas)\b"
        rf"|\b{word}\s+is\s+defined\s+else\s+{literal}\b"
        rf"|\b{word}\s*[=!]=\s*{literal}\b"
        rf"|\b(?:if|and|or|not)\s+{word}\s*(?:-?%}}|\)|and\b|or\b|else\b)", source))
