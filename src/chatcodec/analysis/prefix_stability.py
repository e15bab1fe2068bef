"""``prefix-stability``: does each prompt extend the one before it?

A server reuses the KV cache of a conversation only when the next prompt starts with the tokens it
already processed: the previous prompt plus what the model generated. Two links are checked on
each probe conversation (plain, with a system prompt, with reasoning, with a tool call):

* the generation prompt ``render(turns, add_generation_prompt=True)`` is a prefix of the same turns
  with the assistant's answer rendered as history (else what the model generated is not what the
  history shows: a ``<think>`` opened by the generation prompt and left out of history, ...);
* that history is a prefix of the next prompt, ``render(turns + [user], add_generation_prompt=True)``
  (else an earlier turn changes when a turn is added: reasoning stripped from earlier turns, a system
  or tools block placed before the last user message, ...).

Each break is reported with the first differing character, the text on both sides, the likely
cause and the template line that writes it. A clock read by the template (``strftime_now``) is
reported too: the prompt then changes from one day to the next.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from chatcodec.analysis.doctor_probes import (
    PROBE_TIME,
    WEATHER_TOOL,
    Probe,
    find_line,
    first_difference,
    render_probe,
    tool_call,
)
from chatcodec.analysis.findings import Finding

__all__ = ["check_prefix_stability"]

CHECK = "prefix-stability"
REASONING = "The user asks for a capital city; I know it is Paris."
QUESTION = {"role": "user", "content": "What is the capital of France?"}
ANSWER = {"role": "assistant", "content": "The capital of France is Paris."}
FOLLOW_UP = {"role": "user", "content": "And the capital of Italy?"}
SYSTEM = "You are a concise assistant."


def _sequences() -> list[tuple[str, list[dict[str, Any]], dict[str, Any], list[dict[str, Any]] | None]]:
    """``(name, turns before the answer, the answer, tools)`` for each probe conversation. The checked
    history of the answer ends with its content: what follows (an end-of-sequence token written only
    after the final message, as for training) is not what a server caches."""
    call = {"role": "assistant", "content": "", "tool_calls": [tool_call("get_weather", {"city": "Paris"})]}
    result = {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
              "content": '{"temperature": 21}'}
    return [
        ("plain", [QUESTION], ANSWER, None),
        ("system prompt", [{"role": "system", "content": SYSTEM}, QUESTION], ANSWER, None),
        ("reasoning", [QUESTION], {**ANSWER, "reasoning_content": REASONING}, None),
        ("tool call", [{"role": "user", "content": "What is the weather in Paris?"}, call, result],
         {"role": "assistant", "content": "It is 21 degrees in Paris."}, [WEATHER_TOOL]),
    ]


def check_prefix_stability(template: str, kwargs: dict[str, Any]) -> list[Finding]:
    """Render each probe conversation turn by turn and report where a prompt stops extending the last.

    Args:
        template: the chat template text.
        kwargs: the template variables every render gets (special tokens, profile variables).

    Returns:
        One ``warning`` per broken link (with its conversation: the longer render), an ``info`` when
        a probe cannot be rendered, and an ``info`` when the prompt depends on the date.
    """
    findings: list[Finding] = []
    sequences = _sequences()
    unrendered = 0
    for name, turns, answer, tools in sequences:
        steps = [Probe(turns, tools, True, kwargs), Probe([*turns, answer], tools, False, kwargs),
                 Probe([*turns, answer, FOLLOW_UP], tools, True, kwargs)]
        outcomes = [render_probe(template, step) for step in steps]
        failed = next((index for index, outcome in enumerate(outcomes) if outcome.text is None), None)
        if failed is not None:
            findings.append(Finding(CHECK, "info", f"the {name} conversation cannot be rendered, so its "
                                    f"prefix stability is not checked: {outcomes[failed].error}",
                                    outcomes[failed].line, steps[failed].conversation()))
            unrendered += 1
            continue
        prompt, history, following = (outcome.text or "" for outcome in outcomes)
        if not history.startswith(prompt) and not _extended_with_reasoning(template, steps[1], answer,
                                                                            prompt):
            findings.append(_break(template, name, 0, prompt, history, steps[1], answer))
        end = history.rfind(answer["content"])
        kept = history[:end + len(answer["content"])] if end >= 0 else history
        if not following.startswith(kept):
            findings.append(_break(template, name, 1, kept, following, steps[2], answer))
    merged = _merged(findings)
    if unrendered == len(sequences) and merged:  # not one probe renders
        first = merged[0]
        # an undefined variable may be one the caller passes (firefunction's `functions`): a warning
        undefined = "UndefinedError" in first.message
        merged[0] = Finding(first.check, "warning" if undefined else "error",
                            "the chat template renders none of the probe conversations"
                            + (" (it may need a template variable the caller passes)"
                               if undefined else "") + f": {first.message}",
                            first.line, first.conversation)
    return merged + _date(template, kwargs)


def _merged(findings: list[Finding]) -> list[Finding]:
    """One finding per (line, cause): the first conversation's, naming the others that show it too."""
    groups: dict[tuple[int | None, str, str], list[Finding]] = {}
    for finding in findings:
        rest = finding.message.partition(": ")[2]
        cause = rest.split("); ", 1)[-1]
        groups.setdefault((finding.line, rest.split(" (first difference")[0], cause), []).append(finding)
    merged = []
    for group in groups.values():
        first = group[0]
        if len(group) > 1:
            others = ", ".join(_conversation_name(finding.message) for finding in group[1:])
            plural = "s" if len(group) > 2 else ""
            first = Finding(first.check, first.severity, f"{first.message} (the same in the {others} "
                            f"conversation{plural})", first.line, first.conversation)
        merged.append(first)
    return merged


def _conversation_name(message: str) -> str:
    """``"tool call"`` for a finding's message that starts ``"the tool call conversation ..."``."""
    match = re.match(r"the (.+?) conversation\b", message)
    return match.group(1) if match else message


def _extended_with_reasoning(template: str, history: Probe, answer: dict[str, Any], prompt: str) -> bool:
    """Whether the turn with reasoning extends the generation prompt (a reasoning model's generation
    prompt may open a block that only an answer with reasoning continues)."""
    if "reasoning_content" in answer:
        return False
    with_reasoning = Probe([*history.messages[:-1], {**answer, "reasoning_content": REASONING}],
                           history.tools, False, history.kwargs)
    text = render_probe(template, with_reasoning).text
    return text is not None and text.startswith(prompt)


def _break(template: str, name: str, link: int, before: str, after: str, probe: Probe,
           answer: dict[str, Any]) -> Finding:
    """The finding for ``after`` not starting with ``before``."""
    index = first_difference(before, after)
    old, new = before[index:index + 40], after[index:index + 40]
    if link == 0:
        what = ("the generation prompt is not a prefix of the same turn rendered as history, so what the "
                "model generated after it is not what the next prompt holds")
    else:
        what = "adding a user turn changes the text of the earlier turns"
    cause = _cause(before[index:], after[index:], answer, link)
    line = find_line(template, old) or find_line(template, new)
    return Finding(CHECK, "warning", f"{name} conversation: {what} (first difference at character {index}: "
                   f"{old!r} became {new!r}); {cause}. Servers cannot reuse the KV cache of the earlier "
                   "prompt past that point", line, probe.conversation())


def _cause(old: str, new: str, answer: dict[str, Any], link: int) -> str:
    """Why the text changed, from what the earlier render had and the later one lacks."""
    content = answer["content"]
    if REASONING in old and REASONING not in new:
        return ("the reasoning of an earlier assistant turn is dropped once a later user turn exists; "
                "keep it (render reasoning_content for every assistant turn) if the model was trained so")
    if link == 0 and answer["content"] not in old:
        return ("the generation prompt ends with text the rendered turn does not have (often an opened or "
                "empty reasoning block); render the assistant turn with the same opening")
    if link == 1 and old.find(content) > 0 and 0 <= new.find(content) < old.find(content):
        return (f"the text {old[:old.find(content)]!r} before the answer is written only while the "
                "assistant turn is the last one (an empty reasoning block, typically); write it for every "
                "assistant turn or for none")
    if "get_weather" in old or "get_weather" in new:
        return ("the tool definitions (or a block built from them) are placed relative to the last message; "
                "put them in the system block at the start")
    if SYSTEM in old + new:
        return "the system block depends on the last message; render it the same whatever follows"
    return "change the template so that earlier turns render the same whatever follows them"


def _date(template: str, kwargs: dict[str, Any]) -> list[Finding]:
    """``info`` when the prompt changes with the date (``strftime_now``)."""
    probe = Probe([QUESTION], None, True, kwargs)
    today = render_probe(template, probe)
    tomorrow = render_probe(template, probe, now=PROBE_TIME + timedelta(days=1))
    if today.text is None or tomorrow.text is None or today.text == tomorrow.text:
        return []
    index = first_difference(today.text, tomorrow.text)
    line = next((number for number, text in enumerate(template.splitlines(), 1) if "strftime_now" in text),
                None)
    snippet = today.text[max(0, index - 20):index + 20]
    return [Finding(CHECK, "info", f"the prompt holds the date (strftime_now; character {index}, "
                    f"{snippet!r}), so a cached prompt prefix is not reused from one day to the next; pass "
                    "the date as a variable if the cache must survive midnight", line, probe.conversation())]
