"""``tool-call-forms``: the shapes callers really send, and what the template does with each.

Callers disagree on three details of a tool-calling conversation, and a template should accept all
of them the same way:

* a tool call's ``arguments`` as a mapping (transformers' documented form) or as the JSON string
  the OpenAI API carries: a template that raises on the mapping is wrong (``error``); one that
  raises on the string, or prints it quoted a second time, breaks OpenAI-style callers
  (``warning``);
* an assistant tool-call turn's ``content`` as ``None`` (the OpenAI API's value) or ``""``: the
  prompts should agree (``warning`` when one raises, ``info`` when they differ);
* ``tools=[]`` (what servers pass without tools) and no tools: a template that renders a tools
  block for an empty list puts an empty tool section in every prompt (``warning``).
"""

from __future__ import annotations

import json
from typing import Any

from chatcodec.analysis.doctor_probes import (
    WEATHER_TOOL,
    Outcome,
    Probe,
    find_line,
    first_difference,
    render_probe,
    tool_call,
)
from chatcodec.analysis.findings import Finding

__all__ = ["check_tool_call_forms"]

CHECK = "tool-call-forms"
ARGUMENTS = {"city": "Paris"}
QUESTION = {"role": "user", "content": "What is the weather in Paris?"}
STRING_FORM = "a JSON string (the OpenAI API's form)"
RESULT = {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"temperature": 21}'}


def _call_turn(arguments: Any, content: Any = "") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": [tool_call("get_weather", arguments)]}


def check_tool_call_forms(template: str, kwargs: dict[str, Any]) -> list[Finding]:
    """Render each pair of forms and report which the template accepts and which render differently.

    Args:
        template: the chat template text.
        kwargs: the template variables every render gets.

    Returns:
        The findings (none when every form renders and the pairs agree).
    """
    def probe(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Probe:
        return Probe(messages, [WEATHER_TOOL] if tools is None else tools, False, kwargs)

    mapping = probe([QUESTION, _call_turn(ARGUMENTS), RESULT])
    string = probe([QUESTION, _call_turn(json.dumps(ARGUMENTS)), RESULT])
    none = probe([QUESTION, _call_turn(ARGUMENTS, None), RESULT])
    findings = _arguments(template, mapping, string)
    if findings and findings[0].severity == "info":
        return findings  # the template renders no tool calls at all
    findings += _pair(template, "content", mapping, none, "content \"\"", "content None")
    plain = [QUESTION]
    findings += _tools(template, Probe(plain, None, True, kwargs), Probe(plain, [], True, kwargs))
    return findings


def _arguments(template: str, mapping: Probe, string: Probe) -> list[Finding]:
    as_mapping, as_string = render_probe(template, mapping), render_probe(template, string)
    if as_mapping.text is None and as_string.text is None:
        return [Finding(CHECK, "info", "the template renders no tool-call conversation (a tool call with "
                        f"either form of arguments raises: {as_mapping.error}); it may not support tools",
                        as_mapping.line, mapping.conversation())]
    if as_mapping.text is None:
        return [Finding(CHECK, "error", "a tool call whose arguments are a mapping (the form transformers "
                        f"documents and passes) raises: {as_mapping.error}; accept a mapping (print it with "
                        "|tojson), and a JSON string too", as_mapping.line, mapping.conversation())]
    if as_string.text is None:
        return [Finding(CHECK, "warning", f"a tool call whose arguments are {STRING_FORM} raises: "
                        f"{as_string.error}; accept both forms ({{% if arguments is string %}})",
                        as_string.line, string.conversation())]
    quoted = json.dumps(json.dumps(ARGUMENTS))[1:-1]
    if quoted in as_string.text and quoted not in as_mapping.text:
        return [Finding(CHECK, "warning", f"a tool call whose arguments are {STRING_FORM} "
                        f"is printed quoted a second time ({quoted!r}): the model sees a string where it was "
                        "trained on an object; print a string as it is ({% if arguments is string %})",
                        _line_of_tojson(template), string.conversation())]
    if as_string.text != as_mapping.text:
        return [_differ(template, "arguments as a mapping", "arguments as a JSON string", as_mapping,
                        as_string, string, "info")]
    return []


def _pair(template: str, what: str, first: Probe, second: Probe, first_name: str,
          second_name: str) -> list[Finding]:
    one, other = render_probe(template, first), render_probe(template, second)
    if one.text is not None and other.text is None:
        return [Finding(CHECK, "warning", f"an assistant tool-call turn with {second_name} raises "
                        f"({other.error}) where {first_name} renders (a None key is left out before "
                        "rendering, as transformers' apply_chat_template does); the OpenAI API sends content "
                        "None with tool calls, so test `message.content is defined` (or use "
                        "`message.content|default('')`)", other.line, second.conversation())]
    if one.text is None and other.text is not None:
        return [Finding(CHECK, "warning", f"an assistant tool-call turn with {first_name} raises "
                        f"({one.error}) where {second_name} renders; accept both", one.line,
                        first.conversation())]
    if one.text is not None and other.text is not None and one.text != other.text:
        return [_differ(template, first_name, second_name, one, other, second, "info")]
    return []


def _tools(template: str, without: Probe, empty: Probe) -> list[Finding]:
    absent, listed = render_probe(template, without), render_probe(template, empty)
    if absent.text is None or listed.text is None or absent.text == listed.text:
        if absent.text is not None and listed.text is None:
            return [Finding(CHECK, "warning", "tools=[] (what servers pass when a request has no tools) "
                            f"raises ({listed.error}) where no tools renders", listed.line,
                            empty.conversation())]
        return []
    finding = _differ(template, "no tools", "tools=[]", absent, listed, empty, "warning")
    return [Finding(CHECK, "warning", f"{finding.message}; servers pass tools=[] for requests without "
                    "tools, so every such prompt gets this text: test `tools` with `|length` rather than "
                    "`is not none`",
                    finding.line, finding.conversation)]


def _differ(template: str, first_name: str, second_name: str, one: Outcome, other: Outcome, probe: Probe,
            severity: str) -> Finding:
    first, second = one.text or "", other.text or ""
    index = first_difference(first, second)
    old, new = first[index:index + 40], second[index:index + 40]
    line = find_line(template, new) or find_line(template, old)
    return Finding(CHECK, severity, f"{first_name} and {second_name} render differently (first difference at "
                   f"character {index}: {old!r} vs {new!r})", line, probe.conversation())


def _line_of_tojson(template: str) -> int | None:
    """The first line printing tool-call arguments with ``tojson``, if any."""
    for number, text in enumerate(template.splitlines(), 1):
        if "arguments" in text and "tojson" in text:
            return number
    return None
