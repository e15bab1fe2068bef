"""Round trip: render assistant turns with a chat template, parse them back with a response template.

For every probe of :mod:`chatcodec.analysis.probes` (content; reasoning; one call with string,
number, nested, unicode and empty arguments and with text before it; two parallel calls), in
every variant (one turn, after a multi-turn history, right after a tool result) and every mode
the template has (``enable_thinking`` on and off, ...):

1. the **prompt** is the render of the conversation without its final assistant turn, with
   ``add_generation_prompt=True``; the **full render** is the render of the whole conversation;
2. the **output** is the full render after the prompt, cut before the first end-of-sequence token
   (``eos_token``), as a model stops there;
3. the output is parsed with the response template (``prefix`` = the prompt, ``tools`` = the
   probe tools, so arguments are typed as in SPEC §1.6) and compared with the original message:
   ``content`` and ``reasoning_content`` after stripping surrounding whitespace (``None`` and
   ``""`` alike), tool calls by name and arguments exactly (types included: ``True`` is not ``1``),
   and a parsed call id, when there is one, against the id the template rendered.

Public API (``chatcodec doctor`` and ``chatcodec derive`` build on it)::

    report = round_trip(chat_template, response_template, variables={"eos_token": "<|im_end|>"})
    report.capabilities["one_call"].status      # "pass", "fail", "inconsistent", "render_error", ...
    for case in report.failures():              # CaseResult, each with the exact conversation
        case.conversation.to_json()             # {"messages", "tools", "add_generation_prompt", "kwargs"}
        case.differences                        # [Difference(key, expected, actual)]
    report.to_json()                            # everything above as plain JSON

* :func:`round_trip` (arguments: the chat template text; the response template, a dict or a loaded
  ``ResponseTemplate``; ``variables``, the special tokens and other variables every render gets;
  ``modes``, the mode variables to check, default: found in the template by
  :func:`template_modes`; ``variants``; ``shape``, default: found by :func:`discover_shape`;
  ``capabilities``, which to check) returns a :class:`RoundTripReport`.
* :func:`check_probes` runs given probes (``probes.probe_matrix``) and returns the case results.
* :func:`discover_shape` finds how the template wants tool-call turns (arguments as a mapping or a
  JSON string, the ``content`` of a call turn, call ids, tool schemas): the first
  :func:`~chatcodec.analysis.probes.shape_candidates` entry whose render shows the call.
* :func:`template_modes` lists ``[{}]`` plus each mode setting the template reads and that changes
  its renders.
* :func:`render_case` renders one probe into a :class:`RenderedCase` (prompt, full render, output,
  whether the render continues the prompt); :func:`compare_message` compares a parsed message.

Statuses of a case: ``pass``; ``fail`` (a field differs, or the parser raised: ``error`` holds
its message); ``not_rendered`` (the template does not show what the case tests, e.g. reasoning it
drops; other fields it drops, such as text next to tool calls, are left out of the comparison and
listed in ``dropped``); ``render_error`` (the template raised on the conversation, e.g. it refuses
two calls in one turn); ``inconsistent`` (the full render does not continue the prompt, e.g. the
prompt pre-opens ``<think>`` that the render of the turn leaves out, and parsing the rest after
the whole prompt does not give the message back: the template itself cannot say what a model
writes there). A case that does not continue its prompt but parses back after the whole prompt
passes, with a ``note``.

A capability's status over its cases (the fields each case compares count for their capability;
the ``content`` of the reasoning case counts for ``content`` too): ``fail`` when any field failed,
else ``pass`` when any passed, else ``inconsistent``, ``render_error`` or ``not_rendered``, in
that order.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import regex

from chatcodec.analysis.probes import (
    CAPABILITIES,
    PROBE_TOOLS,
    SCHEMA_FORMS,
    TURN_REASONING,
    VARIANTS,
    Conversation,
    MessageShape,
    Probe,
    mode_variants,
    probe_matrix,
    shape_candidates,
)
from chatcodec.response_templates.template import ResponseTemplate, load_response_template

__all__ = [
    "CONTENT_AS_REASONING",
    "MARKUP_DECODED",
    "CapabilityResult",
    "CaseResult",
    "Difference",
    "RenderedCase",
    "RoundTripReport",
    "check_probes",
    "compare_message",
    "content_rendered_as_reasoning",
    "cut_decoded",
    "cut_output",
    "discover_shape",
    "markup_escaped",
    "render_case",
    "round_trip",
    "template_modes",
    "unescape_markup",
]

#: Case statuses, and the order in which they decide a capability's status (first present wins,
#: ``pass`` only when nothing failed).
STATUS_ORDER = ("fail", "pass", "inconsistent", "render_error", "not_rendered")


@dataclass(frozen=True)
class Difference:
    """One value that did not come back.

    Attributes:
        key: where, e.g. ``content`` or ``tool_calls[1].arguments``.
        expected: the value of the original message (``None``: absent).
        actual: the value of the parsed message (``None``: absent).
    """

    key: str
    expected: Any
    actual: Any

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "expected": self.expected, "actual": self.actual}


@dataclass(frozen=True)
class RenderedCase:
    """One probe rendered with a chat template.

    Attributes:
        prompt: the generation prompt (the conversation without its final turn,
            ``add_generation_prompt=True``).
        full: the render of the whole conversation.
        common: the length of the longest common prefix of ``prompt`` and ``full`` (moved back to
            the start of a ``<...>`` / ``[...]`` marker it would split).
        output: ``full`` after the prompt (after ``common`` when it does not continue the prompt), cut
            before the first end-of-sequence token.
        realigned: the output was found after the prompt's generation prompt further on in ``full``
            (see :func:`cut_output`); ``common`` is then where it starts.
        markup_decoded: the template HTML-escaped its render (:func:`markup_escaped`); ``prompt``,
            ``full`` and ``output`` are the renders with the escapes decoded.
    """

    prompt: str
    full: str
    common: int
    output: str
    realigned: bool = False
    markup_decoded: bool = False

    @property
    def continues_prompt(self) -> bool:
        """Whether the full render starts with the whole prompt, or shows the turn right after the
        prompt's own generation prompt (``realigned``)."""
        return self.realigned or self.common == len(self.prompt)


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one probe.

    Attributes:
        probe: the probe (capability, case, variant, mode and conversation).
        status: ``pass``, ``fail``, ``not_rendered``, ``render_error`` or ``inconsistent`` (module docstring).
        fields: the status of each compared field (``content``, ``reasoning_content``, ``tool_calls``).
        differences: the values that did not come back.
        dropped: fields of the message the template does not render (left out of the comparison).
        reason: one sentence saying why, for anything but a plain pass.
        error: the parser's or the template's error message, when one raised.
        note: what a reader should know about a passing case (a prompt the render does not continue).
        prompt, output: the prefix given to the parser and the text parsed (``None`` when the
            template raised).
        parsed: the parsed message, when parsing succeeded.
    """

    probe: Probe
    status: str
    fields: dict[str, str] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    reason: str = ""
    error: str | None = None
    note: str = ""
    prompt: str | None = None
    output: str | None = None
    parsed: dict[str, Any] | None = None

    @property
    def conversation(self) -> Conversation:
        """The conversation that reproduces the case (its prompt: :meth:`Conversation.prompt`)."""
        return self.probe.conversation

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: capability, case, variant, mode, status, fields, reason, error, note,
        differences, dropped, conversation, prompt_conversation, output, parsed."""
        probe = self.probe
        return {
            "capability": probe.capability, "case": probe.case, "variant": probe.variant, "mode": probe.mode,
            "status": self.status, "fields": dict(self.fields), "reason": self.reason, "error": self.error,
            "note": self.note, "differences": [d.to_json() for d in self.differences],
            "dropped": list(self.dropped), "conversation": self.conversation.to_json(),
            "prompt_conversation": self.conversation.prompt().to_json(), "output": self.output,
            "parsed": self.parsed,
        }


@dataclass(frozen=True)
class CapabilityResult:
    """A capability's status over its cases.

    Attributes:
        name: one of ``content``, ``reasoning``, ``one_call``, ``parallel_calls``.
        status: ``pass``, ``fail``, ``inconsistent``, ``render_error`` or ``not_rendered``.
        counts: how many compared fields had each status.
        reason: why, in one sentence (the first failing case for ``fail``).
        cases: the cases that count for the capability.
    """

    name: str
    status: str
    counts: dict[str, int]
    reason: str
    cases: list[CaseResult]

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "counts": dict(self.counts), "reason": self.reason}


@dataclass(frozen=True)
class RoundTripReport:
    """Every case and the status of each capability.

    Attributes:
        shape: the message shape the probes used.
        modes: the mode variables checked (``{}`` is the template's default).
        cases: every case result, in probe order.
        capabilities: capability name -> :class:`CapabilityResult`, for the capabilities checked.
    """

    shape: MessageShape
    modes: list[dict[str, Any]]
    cases: list[CaseResult]
    capabilities: dict[str, CapabilityResult]

    def failures(self) -> list[CaseResult]:
        """The cases that failed (a differing field or a parser error)."""
        return [case for case in self.cases if case.status == "fail"]

    def to_json(self) -> dict[str, Any]:
        """``{"shape", "modes", "capabilities": {name: {...}}, "cases": [...]}``."""
        return {"shape": self.shape.describe(), "modes": self.modes,
                "capabilities": {name: result.to_json() for name, result in self.capabilities.items()},
                "cases": [case.to_json() for case in self.cases]}


def render_case(chat_template: str, conversation: Conversation, eos_token: str | None = None,
                prompts: dict[str, str] | None = None) -> RenderedCase:
    """Render a probe conversation's prompt and its full render, and cut the output.

    Args:
        chat_template: the chat template text.
        conversation: the full conversation (its final message is the turn under test).
        eos_token: the output is cut before its first occurrence (``None`` or ``""``: not cut).
        prompts: a cache of prompt renders (many probes share one prompt), keyed by the prompt
            conversation's JSON; filled as prompts are rendered.

    Returns:
        The :class:`RenderedCase`.

    Raises:
        ChatTemplateError, ConversationError: the template raised on either render.
    """
    from chatcodec.chat_templates.render import render_chat_template

    def render(conv: Conversation) -> str:
        return render_chat_template(chat_template, conv.messages, tools=conv.tools,
                                    add_generation_prompt=conv.add_generation_prompt, **conv.kwargs)

    def cached(conv: Conversation) -> str:
        if prompts is None:
            return render(conv)
        key = json.dumps(conv.to_json(), sort_keys=True, default=str)
        if key not in prompts:
            prompts[key] = render(conv)
        return prompts[key]

    prompt_conversation = conversation.prompt()
    prompt, full = cached(prompt_conversation), render(conversation)
    history = None
    if not full.startswith(prompt):
        history = cached(Conversation(prompt_conversation.messages, prompt_conversation.tools, False,
                                      prompt_conversation.kwargs))
    written = json.dumps(conversation.to_json(), ensure_ascii=False, default=str)
    return cut_decoded(prompt, full, eos_token, history, written)


def cut_decoded(prompt: str, full: str, eos_token: str | None, history: str | None,
                written: str) -> RenderedCase:
    """:func:`cut_output`, with Jinja's HTML escapes decoded when the output holds them
    (:func:`markup_escaped`; ``written`` is the conversation's own text); the case then says
    ``markup_decoded``. Escapes elsewhere in the prompt (a system prompt listing the tools) alone do
    not count: they say nothing about what a model writes."""
    rendered = cut_output(prompt, full, eos_token, history)
    if not markup_escaped(rendered.output, written):
        return rendered
    history = unescape_markup(history) if history is not None else None
    decoded = cut_output(unescape_markup(prompt), unescape_markup(full), eos_token, history)
    return replace(decoded, markup_decoded=True)


#: What Jinja writes for the characters it escapes in a ``Markup`` string (markupsafe), in decoding
#: order (``&amp;`` last, so ``&amp;#34;`` stays ``&#34;``).
MARKUP_ESCAPES = (("&#34;", '"'), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))


def markup_escaped(render: str, written: str) -> bool:
    """Whether a render holds Jinja's HTML escapes of quotes that the conversation did not write.

    A template that joins plain text to a ``Markup`` value with ``+`` (``'{"name": "' + name +
    '", "arguments": ' + arguments|tojson|safe``) gets the plain text HTML-escaped by Jinja
    (mistral-common's v3 and v7 reference templates render ``{&#34;name&#34;: ...}``): the render
    in transformers, vLLM or SGLang shows ``&#34;`` where the template's author, and the model's
    tokenizer, write ``"``.

    Args:
        render: a render of the conversation.
        written: the conversation's own text (its JSON), so that an escape it holds is not counted.

    Returns:
        ``True`` when ``&#34;`` or ``&#39;`` (markupsafe's forms, rare in any other text) is in
        ``render`` and not in ``written``.
    """
    return any(code in render and code not in written for code in ("&#34;", "&#39;"))


def unescape_markup(text: str) -> str:
    """``text`` with markupsafe's five HTML escapes (:data:`MARKUP_ESCAPES`) decoded."""
    for code, character in MARKUP_ESCAPES:
        text = text.replace(code, character)
    return text


def cut_output(prompt: str, full: str, eos_token: str | None = None,
               history: str | None = None) -> RenderedCase:
    """The generated part of a full render: after the prompt, before the first eos token.

    When ``full`` does not start with the whole ``prompt``, the output starts where the two part
    (moved back to the start of a ``<...>`` / ``[...]`` marker they would split), unless the render
    of the history (``history``, without the generation prompt) shows that the prompt only adds a
    trailer before its generation prompt ``G`` (a ``G`` that starts with whitespace no rendered turn
    writes is looked for without it): when ``G`` appears whole in ``full`` where ``full``
    leaves the history (``G`` may share its first markers with the trailer) or after it, the output
    starts right after it (**realigned**; Command R+ writes its tool instructions after the last turn;
    inference.md §2.2), and it ends where ``full`` ends with the trailer of the history (the render of
    the turn runs on into the trailer when the template closes that turn with no end-of-turn marker).

    Args:
        prompt: the generation prompt render.
        full: the render with the final turn.
        eos_token: the output is cut before its first occurrence (``None`` or ``""``: not cut).
        history: the render of the conversation before the final turn without the generation
            prompt, when ``full`` does not continue ``prompt``.

    Returns:
        The :class:`RenderedCase`.
    """
    common = _common_prefix(prompt, full)
    realigned = False
    end = len(full)
    if common < len(prompt):
        common = _marker_start(full, common)
        start = _realigned_start(prompt, full, history)
        if start is not None and history is not None:
            common, realigned = start, True
            end = _trailer_start(full, start, history)
    output = full[common:end]
    if eos_token and eos_token in output:
        output = output[:output.index(eos_token)]
    return RenderedCase(prompt, full, common, output, realigned)


def _realigned_start(prompt: str, full: str, history: str | None) -> int | None:
    """Where the turn starts in ``full`` when the prompt is the history, a trailer, then ``G``."""
    if history is None or not prompt.startswith(history):
        return None
    generation = prompt[len(history):]
    if not generation.strip():
        return None
    leaves = _marker_start(full, _common_prefix(history, full))
    position = full.find(generation, max(0, leaves - len(generation) + 1))
    if position < 0 and generation != generation.lstrip():
        # whitespace the prompt writes before its generation prompt and a turn does not
        # (vLLM's Llama 4 JSON template: "\n<|header_start|>assistant..." after the last turn)
        generation = generation.lstrip()
        position = full.find(generation, max(0, leaves - len(generation) + 1))
    return None if position < 0 else position + len(generation)


def _trailer_start(full: str, start: int, history: str) -> int:
    """Where ``full`` ends with the text the history ends with after leaving ``full`` (its trailer),
    at or after ``start``; the trailer may begin with whole markers that ``full`` and the history
    share before that point (``<|START|>`` of ``<|START|><|SYSTEM|>...``). ``len(full)`` when
    ``full`` does not end with any of that text but whitespace."""
    tail = history[_marker_start(full, _common_prefix(history, full)):]
    length = 0
    limit = min(len(tail), len(full) - start)
    while length < limit and full[-1 - length] == tail[-1 - length]:
        length += 1
    if not tail[len(tail) - length:].strip():
        return len(full)
    if length == len(tail):
        while (marker := _ENDING_MARKER.search(full, start, len(full) - length)) is not None \
                and history[:len(history) - length].endswith(marker.group()):
            length += len(marker.group())
    return max(start, _marker_start(full, len(full) - length))


#: A ``<...>`` or ``[...]`` marker at the end of a text.
_ENDING_MARKER = regex.compile(r"(?:<[^<>\s]{1,46}>|\[[^\[\]\s]{1,46}\])$")


def _common_prefix(a: str, b: str) -> int:
    if b.startswith(a):
        return len(a)
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search on the prefix length (renders can be long)
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _marker_start(text: str, position: int) -> int:
    """``position``, moved back to the start of a ``<...>`` or ``[...]`` marker it falls inside of.

    Two renders that part inside a marker (``<|channel>`` vs ``<|tool_call>``) share its first
    characters; the output must start with the whole marker.
    """
    window = text[max(0, position - _MARKER_REACH):position]
    for opener, closer in (("<", ">"), ("[", "]")):
        start = window.rfind(opener)
        if start != -1 and closer not in window[start:]:
            return position - len(window) + start
    return position


#: How far back :func:`_marker_start` looks for the start of a marker.
_MARKER_REACH = 48


def _expected_view(message: Mapping[str, Any]) -> dict[str, Any]:
    """The compared fields of an original message: stripped text, calls as ``{"name", "arguments", "id"}``."""
    view: dict[str, Any] = {}
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(block.get("text", "") for block in content if isinstance(block, Mapping))
    view["content"] = (content or "").strip() or None
    view["reasoning_content"] = (message.get("reasoning_content") or "").strip() or None
    calls = []
    for call in message.get("tool_calls") or []:
        function = call["function"]
        arguments = function["arguments"]
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        calls.append({"name": function["name"], "arguments": arguments, "id": call.get("id")})
    view["tool_calls"] = calls or None
    return view


def _parsed_view(message: Mapping[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {}
    for key in ("content", "reasoning_content"):
        value = message.get(key)
        view[key] = (value.strip() or None) if isinstance(value, str) else value
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        view["tool_calls"] = [_parsed_call(call) for call in calls] or None
    else:
        view["tool_calls"] = calls
    return view


def _parsed_call(call: Any) -> Any:
    if not isinstance(call, Mapping):
        return call
    function = call.get("function", call)
    if not isinstance(function, Mapping):
        return call
    return {"name": function.get("name"), "arguments": function.get("arguments"), "id": call.get("id")}


def _same(a: Any, b: Any) -> bool:
    """Equality of JSON values that tells ``True`` from ``1`` and ``1`` from ``1.0``'s string."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def compare_message(expected: Mapping[str, Any], parsed: Mapping[str, Any], output: str
                    ) -> tuple[dict[str, str], list[Difference], list[str]]:
    """Compare a parsed message with the original one, field by field.

    Args:
        expected: the original assistant message (``content`` as text or text blocks,
            ``reasoning_content``, ``tool_calls`` with arguments as a mapping or a JSON string).
        parsed: the message the response template gave.
        output: the text that was parsed; a field whose text the template never wrote into it is
            not compared (it is listed as dropped).

    Returns:
        ``(fields, differences, dropped)``: ``fields`` maps ``content``, ``reasoning_content`` and
        ``tool_calls`` to ``pass``, ``fail``, ``not_rendered`` or ``empty`` (nothing expected and
        nothing parsed: it checks that nothing leaked, and proves nothing else).
    """
    want, got = _expected_view(expected), _parsed_view(parsed)
    fields: dict[str, str] = {}
    differences: list[Difference] = []
    dropped: list[str] = []
    for key in ("content", "reasoning_content"):
        value = want[key]
        if value is not None and value not in output:
            fields[key] = "not_rendered"
            dropped.append(key)
            continue
        if not _same(value, got[key]):
            differences.append(Difference(key, value, got[key]))
        fields[key] = ("fail" if not _same(value, got[key]) else "empty" if value is None else "pass")
    calls = want["tool_calls"]
    if calls is not None and not all(call["name"] in output for call in calls):
        fields["tool_calls"] = "not_rendered"
        dropped.append("tool_calls")
    else:
        fields["tool_calls"] = "pass"
        differences_before = len(differences)
        _compare_calls(calls, got["tool_calls"], output, differences)
        if len(differences) > differences_before:
            fields["tool_calls"] = "fail"
        elif calls is None:
            fields["tool_calls"] = "empty"
    return fields, differences, dropped


def _compare_calls(want: list[dict[str, Any]] | None, got: Any, output: str,
                   differences: list[Difference]) -> None:
    if want is None or not isinstance(got, list) or len(want) != len(got):
        if not _same(_strip_ids(want), _strip_ids(got)):
            differences.append(Difference("tool_calls", _strip_ids(want), _strip_ids(got)))
        return
    for index, (call, parsed) in enumerate(zip(want, got, strict=True)):
        if not isinstance(parsed, Mapping):
            differences.append(Difference(f"tool_calls[{index}]", _strip_ids([call])[0], parsed))
            continue
        for key in ("name", "arguments"):
            if not _same(call[key], parsed.get(key)):
                differences.append(Difference(f"tool_calls[{index}].{key}", call[key], parsed.get(key)))
        parsed_id = parsed.get("id")
        if parsed_id is not None and call["id"] in output and parsed_id != call["id"]:
            differences.append(Difference(f"tool_calls[{index}].id", call["id"], parsed_id))


def _strip_ids(calls: Any) -> Any:
    if not isinstance(calls, list):
        return calls
    return [{key: value for key, value in call.items() if key != "id"} if isinstance(call, Mapping) else call
            for call in calls]


def _field_capabilities(probe: Probe, field_name: str) -> tuple[str, ...]:
    """Which capabilities a compared field counts for."""
    if probe.capability == "reasoning" and field_name == "content":
        return ("reasoning", "content")
    return (probe.capability,)


def check_probes(chat_template: str, template: Mapping[str, Any] | ResponseTemplate, probes: Iterable[Probe],
                 *, eos_token: str | None = None,
                 tools: list[dict[str, Any]] | None = None) -> list[CaseResult]:
    """Round-trip each probe (module docstring, steps 1-3).

    Args:
        chat_template: the chat template text.
        template: the response template (dict or loaded).
        probes: the probes (:func:`chatcodec.analysis.probes.probe_matrix`).
        eos_token: where each output is cut (default: none).
        tools: the schemas the parser types arguments with (default: the probe tools).

    Returns:
        One :class:`CaseResult` per probe, in order.

    Raises:
        ResponseTemplateError: the response template does not load.
    """
    loaded = load_response_template(template)
    prompts: dict[str, str] = {}
    return [_check_one(chat_template, loaded, probe, eos_token, tools or PROBE_TOOLS, prompts)
            for probe in probes]


def _check_one(chat_template: str, template: ResponseTemplate, probe: Probe, eos_token: str | None,
               tools: list[dict[str, Any]], prompts: dict[str, str]) -> CaseResult:
    from chatcodec.errors import ChatCodecError

    try:
        rendered = render_case(chat_template, probe.conversation, eos_token, prompts)
    except ChatCodecError as error:
        return CaseResult(probe, "render_error", reason="the chat template raised on this conversation",
                          error=_first_line(error))
    prompt, output = rendered.prompt, rendered.output
    parsed, error_text = _parse(template, output, prompt, tools)
    notes = [MARKUP_DECODED] if rendered.markup_decoded else []
    if rendered.realigned:
        notes.append("the template renders text between the history and the generation prompt that the "
                     "render of this turn puts elsewhere; the turn was read after its own generation prompt")
    elif not rendered.continues_prompt:
        skipped = rendered.prompt[rendered.common:]
        notes.append(f"the render of this turn does not continue the generation prompt (the prompt has "
                     f"{skipped!r} where the render differs); the output was parsed after the whole prompt")
    note = "; ".join(notes)
    if parsed is None:
        fields = {"content": "fail", "reasoning_content": "fail", "tool_calls": "fail"}
        differences: list[Difference] = []
        dropped: list[str] = []
        _, _, dropped = compare_message(probe.message, {}, output)
        for key in dropped:
            fields[key] = "not_rendered"
    else:
        fields, differences, dropped = compare_message(probe.message, parsed, output)
        if fields.get("tool_calls") == "fail" and _renders_without_nulls(chat_template, probe, rendered,
                                                                         eos_token, prompts):
            fields, differences, dropped = compare_message(_without_nulls(probe.message), parsed, output)
            note = f"{note}; {NULLS_NOT_RENDERED}" if note else NULLS_NOT_RENDERED
    status, reason = _case_status(probe, fields, differences, error_text, rendered)
    if content_rendered_as_reasoning(probe.message, parsed):
        fields = {key: ("inconsistent" if value == "fail" and key in _TEXT_FIELDS else value)
                  for key, value in fields.items()}
        if status == "fail":
            status, reason = "inconsistent", CONTENT_AS_REASONING
    if not rendered.continues_prompt:  # a field that does not come back says nothing here (module docstring)
        fields = {key: ("inconsistent" if value == "fail" else value) for key, value in fields.items()}
    return CaseResult(probe, status, fields, differences, dropped, reason, error_text, note, prompt, output,
                      parsed)


#: The note of a case whose render the template HTML-escaped (:func:`markup_escaped`).
MARKUP_DECODED = ("the chat template HTML-escapes text it joins to a `|safe` value with `+` (the render "
                  "shows '&#34;' for '\"'); the turn was read with the escapes decoded, as a model writes it")


#: The note of a case compared without the null arguments its template leaves out.
NULLS_NOT_RENDERED = ("the template leaves arguments whose value is null out of the render (the render "
                      "without them is the same text), so they were compared as absent")


def _without_nulls(value: Any) -> Any:
    """``value`` with every mapping entry whose value is ``None`` removed inside the tool calls'
    arguments (a message), or inside ``value`` itself (arguments)."""
    if isinstance(value, Mapping) and "tool_calls" in value:
        calls = [{**call, "function": {**call["function"],
                                       "arguments": _without_nulls(call["function"]["arguments"])}}
                 for call in value["tool_calls"] or []]
        return {**value, "tool_calls": calls}
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _renders_without_nulls(chat_template: str, probe: Probe, rendered: RenderedCase, eos_token: str | None,
                           prompts: dict[str, str]) -> bool:
    """Whether the probe's message holds null arguments that its template does not render: the
    message without them renders the same output (MiniMax-M3 skips ``None`` values). A parser
    cannot give back what the render does not hold; the model never sees such a value written."""
    from chatcodec.errors import ChatCodecError

    message = probe.message
    stripped = _without_nulls(message)
    if stripped == message or any(isinstance(call["function"]["arguments"], str)
                                  for call in message.get("tool_calls") or []):
        return False
    conversation = replace(probe.conversation, messages=[*probe.conversation.messages[:-1], stripped])
    try:
        other = render_case(chat_template, conversation, eos_token, prompts)
    except ChatCodecError:
        return False
    return other.output == rendered.output


#: Why a case whose content came back as reasoning is ``inconsistent``.
CONTENT_AS_REASONING = (
    "the template renders this turn's content where a model writes its reasoning (a reasoning channel, or "
    "after a reasoning block the generation prompt opens and the turn never closes), so the render cannot "
    "say where a model writes its answer")
_TEXT_FIELDS = ("content", "reasoning_content")


def content_rendered_as_reasoning(message: Mapping[str, Any], parsed: Mapping[str, Any] | None) -> bool:
    """Whether a turn came back with its content, and not its own reasoning, inside ``reasoning_content``: the
    template wrote the content as reasoning (gpt-oss renders the content of a tool-call turn in its
    analysis channel; Nemotron-Nano-9B-v2 renders the final turn after the ``<think>`` its prompt
    opens, with no ``</think>``). Neither template nor response template is then shown wrong.

    Args:
        message: the assistant message the case rendered.
        parsed: the message the response template gave back (``None`` when it raised).

    Returns:
        ``True`` when the content (stripped) is in the parsed ``reasoning_content`` and not in the
        parsed ``content``, and the message's own reasoning (if any) did not come back.
    """
    content = message.get("content")
    if parsed is None or not isinstance(content, str) or not content.strip():
        return False
    reasoning = parsed.get("reasoning_content")
    written = message.get("reasoning_content")
    return (isinstance(reasoning, str) and content.strip() in reasoning
            and not (isinstance(written, str) and written.strip() and written.strip() in reasoning)
            and content.strip() not in (parsed.get("content") or ""))


def _parse(template: ResponseTemplate, output: str, prompt: str, tools: list[dict[str, Any]]
           ) -> tuple[dict[str, Any] | None, str | None]:
    from chatcodec.errors import ChatCodecError
    from chatcodec.response_templates.api import parse_response

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parsed = parse_response(output, template, prefix=prompt, tools=tools)
    except (ChatCodecError, ValueError) as error:
        return None, _first_line(error)
    anchor_missing = any("start anchor" in str(warning.message) for warning in caught)
    if anchor_missing:
        return parsed, ("the prompt does not contain the start anchor, so all of it was parsed as the start "
                        "of the message")
    return parsed, None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _case_status(probe: Probe, fields: dict[str, str], differences: list[Difference], error: str | None,
                 rendered: RenderedCase) -> tuple[str, str]:
    tested = {"content": "content", "reasoning": "reasoning_content"}.get(probe.capability, "tool_calls")
    if fields.get(tested) == "not_rendered":
        return "not_rendered", f"the template does not render the {tested} of this turn"
    failed = error is not None or any(value == "fail" for value in fields.values())
    if not failed:
        return "pass", ""
    if not rendered.continues_prompt:
        skipped = rendered.prompt[rendered.common:]
        reason = (f"the template renders this turn without {skipped!r}, which its generation prompt ends "
                  "with, so the render cannot say what a model writes after the prompt")
        return "inconsistent", reason
    if error is not None:
        return "fail", f"parsing failed: {error}"
    first = differences[0]
    return "fail", f"{first.key}: expected {first.expected!r}, parsed {first.actual!r}"


def _capability_results(cases: list[CaseResult], capabilities: Sequence[str]) -> dict[str, CapabilityResult]:
    results = {}
    for name in capabilities:
        counts = dict.fromkeys(STATUS_ORDER, 0)
        mine: list[CaseResult] = []
        first_fail: CaseResult | None = None
        for case in cases:
            statuses = [status for key, status in case.fields.items()
                        if name in _field_capabilities(case.probe, key) and status != "empty"
                        and (case.probe.capability == name or key == "content")]
            if case.status == "render_error" and case.probe.capability == name:
                statuses = ["render_error"]
            if case.status == "not_rendered" and case.probe.capability == name:
                statuses = ["not_rendered"]
            if not statuses:
                continue
            mine.append(case)
            status = _worst(statuses)
            counts[status] += 1
            if status == "fail" and first_fail is None:
                first_fail = case
        status = next((s for s in STATUS_ORDER if counts[s]), "not_rendered")
        results[name] = CapabilityResult(name, status, {k: v for k, v in counts.items() if v},
                                         _capability_reason(name, status, first_fail, mine), mine)
    return results


def _fail_reason(case: CaseResult, name: str) -> str:
    """Why ``case`` fails capability ``name``: the parse error, or its first differing value there."""
    if case.status == "fail" and case.probe.capability == name:
        return case.reason
    if case.error is not None:
        return f"parsing failed: {case.error}"
    failed = {key for key, status in case.fields.items() if status == "fail"
              and name in _field_capabilities(case.probe, key)}
    for difference in case.differences:
        if regex.split(r"[\[.]", difference.key)[0] in failed:
            return f"{difference.key}: expected {difference.expected!r}, parsed {difference.actual!r}"
    return case.reason


def _worst(statuses: list[str]) -> str:
    for status in ("fail", "inconsistent", "render_error", "pass"):
        if status in statuses:
            return status
    return "not_rendered"


def _capability_reason(name: str, status: str, first_fail: CaseResult | None, cases: list[CaseResult]) -> str:
    if status == "fail" and first_fail is not None:
        return f"{first_fail.probe.label}: {_fail_reason(first_fail, name)}"
    if status == "pass":
        return ""
    example = next((case for case in cases if case.status == status), None)
    return f"{example.probe.label}: {example.reason}" + (f" ({example.error})" if example.error else "") \
        if example else "no case renders it"


def discover_shape(chat_template: str, variables: Mapping[str, Any] | None = None) -> MessageShape:
    """The message shape the template renders tool calls with.

    Each of :func:`~chatcodec.analysis.probes.shape_candidates` renders a one-call turn; the first
    whose output shows the call's name and its string argument wins. When none does (a template
    without tool calls, or one that raises on all), the first shape the template renders without
    raising, else the standard one. When the template raises on every shape with the tool schemas
    as given (it reads a schema key they lack, such as ``additionalProperties``), the next form of
    :data:`~chatcodec.analysis.probes.SCHEMA_FORMS` is tried (inference.md §2: simpler schemas
    before giving up).

    Args:
        chat_template: the chat template text.
        variables: the template variables (special tokens, ...).

    A template that prints the arguments as given (a mapping comes out as ``{'city': 'Paris'}``, a
    JSON string as JSON) gets them as a JSON string, the form it was written for.

    When the render of a plain answer does not continue the generation prompt but the render of an
    answer with reasoning does (the prompt opens ``<think>``), or leaves out only the prompt's last
    line and starts with the reasoning there (the prompt opens reasoning with words: Apriel 1.6),
    every probe turn carries reasoning.

    Returns:
        The :class:`MessageShape`.
    """
    chosen: MessageShape | None = None
    fallback: MessageShape | None = None
    for schemas in SCHEMA_FORMS:
        for shape in shape_candidates(schemas):
            rendered = _render_probe(chat_template, shape, variables, "one_call", "string")
            if rendered is None:
                continue
            fallback = fallback or shape
            tail = rendered.full[rendered.common:]
            if "get_weather" in tail and "Paris" in tail:
                chosen = shape
                break
        if fallback is not None:  # the template takes these schemas: calls or not, no other form
            break
    shape = chosen or fallback or MessageShape()
    if chosen is not None and chosen.arguments == "object":
        shape = _json_string_when_printed(chat_template, shape, variables)
    plain = _render_probe(chat_template, shape, variables, "content", "content")
    if plain is not None and not plain.continues_prompt:
        thinking = replace(shape, reasoning=True)
        rendered = _render_probe(chat_template, thinking, variables, "content", "content")
        if rendered is not None and (rendered.continues_prompt or _reasoning_follows_prompt(rendered)):
            shape = thinking
    return shape


def _json_string_when_printed(chat_template: str, shape: MessageShape,
                              variables: Mapping[str, Any] | None) -> MessageShape:
    """``shape`` with arguments as a JSON string when the template prints the arguments as given: a
    mapping comes out as Python's ``str()`` (``{'city': 'Paris'}``), a JSON string as JSON. Such a
    template was written for OpenAI-style arguments (a JSON string), which is what its model writes;
    the ``str()`` of a mapping is an accident of the caller's message form."""
    printed = str(_PROBE_ARGUMENTS)
    rendered = _render_probe(chat_template, shape, variables, "one_call", "string")
    if rendered is None or printed not in rendered.full[rendered.common:]:
        return shape
    other = replace(shape, arguments="json_string")
    again = _render_probe(chat_template, other, variables, "one_call", "string")
    if again is not None and json.dumps(_PROBE_ARGUMENTS) in again.full[again.common:]:
        return other
    return shape


#: The arguments of the ``one_call/string`` probe.
_PROBE_ARGUMENTS = {"city": "Paris"}


def _reasoning_follows_prompt(rendered: RenderedCase) -> bool:
    """Whether a render that leaves out the last line of its prompt starts with the turn's reasoning
    right there: the prompt opens the reasoning with words its turns do not repeat (Apriel 1.6's
    ``Here are my reasoning steps:``), so every turn a model writes there starts with reasoning. A
    left-out tag (a ``</think>`` the prompt pre-closes when thinking is off) does not count: the
    model writes no reasoning after such a prompt."""
    skipped = rendered.prompt[rendered.common:].strip()
    words = bool(regex.search(r"\w", skipped)) and not _MARKER.search(skipped)  # a tag is not words: h1's
    return words and "\n" not in skipped and rendered.output.lstrip().startswith(TURN_REASONING)


#: A ``<...>`` or ``[...]`` marker anywhere in a text.
_MARKER = regex.compile(r"<[^<>\s]{1,80}>|\[[^\[\]\s]{1,40}\]")


def _render_probe(chat_template: str, shape: MessageShape, variables: Mapping[str, Any] | None,
                  capability: str, case: str) -> RenderedCase | None:
    """The ``single`` variant of one probe case rendered, or ``None`` when the template raises."""
    from chatcodec.errors import ChatCodecError

    probe = probe_matrix(shape, variables=variables, variants=("single",), capabilities=(capability,),
                         keep=lambda _capability, name: name == case)[0]
    try:
        return render_case(chat_template, probe.conversation)
    except ChatCodecError:
        return None


def template_modes(chat_template: str, variables: Mapping[str, Any] | None = None,
                   shape: MessageShape | None = None) -> list[dict[str, Any]]:
    """``[{}]`` (the default mode) plus each mode setting the template reads whose renders differ.

    Args:
        chat_template: the chat template text.
        variables: the template variables; a mode variable already set there is not varied.
        shape: the message shape to render with (default: the standard one).

    Returns:
        The modes, the default first.
    """
    import jinja2.meta

    from chatcodec.chat_templates.environment import ENVIRONMENT
    from chatcodec.errors import ChatCodecError

    names = jinja2.meta.find_undeclared_variables(ENVIRONMENT.parse(chat_template)) - set(variables or {})
    probe = probe_matrix(shape, variables=variables, variants=("single",), capabilities=("reasoning",))[0]
    seen: set[tuple[str, str]] = set()
    modes: list[dict[str, Any]] = []
    for mode in [{}, *mode_variants(frozenset(names), chat_template)]:
        conversation = Conversation(probe.conversation.messages, probe.conversation.tools, False,
                                    {**(variables or {}), **mode})
        try:
            rendered = render_case(chat_template, conversation)
        except ChatCodecError:
            continue
        key = (rendered.prompt, rendered.full)
        if key not in seen:
            seen.add(key)
            modes.append(mode)
    return modes or [{}]


def round_trip(chat_template: str, response_template: Mapping[str, Any] | ResponseTemplate, *,
               variables: Mapping[str, Any] | None = None, modes: Sequence[Mapping[str, Any]] | None = None,
               variants: tuple[str, ...] = VARIANTS, shape: MessageShape | None = None,
               capabilities: tuple[str, ...] = CAPABILITIES, eos_token: str | None = None) -> RoundTripReport:
    """Round-trip the probe matrix through a chat template and a response template.

    Args:
        chat_template: the chat template text.
        response_template: the response template (dict or loaded ``ResponseTemplate``).
        variables: variables of every render: the special tokens (``eos_token``, ``bos_token``, ...)
            and anything the template requires.
        modes: mode variables to check (default: :func:`template_modes`).
        variants: which conversation variants (default: all of ``probes.VARIANTS``).
        shape: the message shape (default: :func:`discover_shape`).
        capabilities: which capabilities to check (default: all four).
        eos_token: where outputs are cut (default: ``variables["eos_token"]``).

    Returns:
        The :class:`RoundTripReport`.

    Raises:
        ResponseTemplateError: the response template does not load.
    """
    variables = dict(variables or {})
    shape = shape or discover_shape(chat_template, variables)
    mode_list = ([dict(mode) for mode in modes] if modes is not None
                 else template_modes(chat_template, variables, shape))
    probes = probe_matrix(shape, variables=variables, modes=mode_list, variants=variants,
                          capabilities=capabilities)
    eos = eos_token if eos_token is not None else variables.get("eos_token")
    cases = check_probes(chat_template, response_template, probes,
                         eos_token=eos if isinstance(eos, str) else None,
                         tools=shape.tool_schemas(PROBE_TOOLS))
    return RoundTripReport(shape, mode_list, cases, _capability_results(cases, capabilities))
