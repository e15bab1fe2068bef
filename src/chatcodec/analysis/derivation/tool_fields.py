"""The ``tool_calls`` field, from the renders of one sentinel call and of two (inference.md §2.5).

Classification, on the render of one call ``fnqza(keyqza="valqza", keyqzb=7)``:

* **JSON holding the call**: a JSON object around the name with one key whose value is the name
  and one whose value is the arguments (``name`` / ``arguments``, ``tool_name`` / ``parameters``,
  ...), one per call (Hermes), or an array of them (Mistral, Jamba, Command A);
* **name outside, JSON arguments**: the name, some text, then a JSON object equal to the
  arguments (DeepSeek, functionary, Devstral), or a JSON dialect with bare keys and other string
  delimiters (Gemma 4's ``<|"|>``), read by ``json``'s ``unquoted_keys`` / ``string_delims`` or,
  when the template writes values JSON cannot read (``None``), by ``x-bare-object``;
* **name outside, tagged arguments**: ``<parameter=KEY>VALUE</parameter>``-style tags, read by
  ``xml-inline`` with a ``tag_pattern`` made of the common text before the two keys, between key
  and value, and after the two values (Qwen3-Coder, GLM, MiniMax, Seed-OSS, Hy3).

The diff of the one-call and two-call renders gives the per-call opener (the common suffix of the
text before call 1 and the text between the calls), the per-call closer (their common prefix),
and what is left: a section start (optional in the open pattern) and a section end. When the
calls have a closer and a section start, the section end is an optional part of the call's close
(``<｜tool▁call▁end｜>(?:\\s*<｜tool▁calls▁end｜>)?``), never a discard of the content field: a section
end the model writes without a call before it (a malformed section) stays in the content, as text
the model wrote, instead of being dropped. Without a section start it is discarded, as before.
A call whose name is written before its opener too (a recipient, MuseGlimmer's
``to=NAME<|message|>`` before ``<atem:invoke name="NAME">``) opens on the recipient, and its second
writing of the name must be the same (``(?P=name)``).
Every piece is snapped to atoms; a piece that differs between the two calls only in digits gets
``\\d+`` (Kimi's ``functions.NAME:0``), and a call id in it becomes an ``id`` group. Whitespace
runs become ``\\s*``, except a newline touching an argument value, which becomes ``\\n?`` so
values stay exact. A bare JSON call with no opener opens on a look-ahead for its first key.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import regex

from chatcodec.analysis.derivation.atoms import common_prefix_length, common_suffix_length
from chatcodec.analysis.derivation.context import (
    CALL_A,
    CALL_B,
    CALL_NESTED,
    CONTENT,
    PLAIN_IDS,
    REASONING,
    DerivationContext,
)
from chatcodec.analysis.derivation.text_fields import _marker_after

__all__ = ["ToolDerivation", "derive_tool_field"]

_DECODER = json.JSONDecoder()
_NAME = r"(?P<name>[\w.\-]+)"
_ID = r"(?P<id>.+?)"
#: Stands for a call id in the text between calls, so the diff of two calls keeps it as one slot.
ID_MARK = "\ue000"
#: Stands for the argument's key where a template writes it again after the value (``</city>``).
KEY_MARK = "\ue001"
_TRANSFORM = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
#: The transform of each element of a list of ``{"name", "arguments", "id"?}`` calls.
_EACH_CALL = {"id": "{id?}", "type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
#: A call whose text cannot show that it is complete (tagged arguments, Python calls one per line) is
#: a call only when its close was written: one cut off by the end of the output is a parse problem,
#: never a call with half its arguments (the rule every bundled profile keeps, docs/profiles.md
#: "Cut-off calls"). JSON shows it by itself: an unfinished value does not parse.
_CUT_OFF_IS_A_PROBLEM = {"require_close": True}
#: Where a Python-style list of calls opens when no marker comes before it.
_PYTHON_LIST_AHEAD = r"(?=\[\s*[A-Za-z_][\w.\-]*\()"


@dataclass
class ToolDerivation:
    """The derived tool-call field candidates.

    Attributes:
        kind: what the calls look like (for reports), e.g. ``JSON object per call``.
        fields: candidate ``tool_calls`` field specs, best guess first (empty: none derived).
        discards: markers around the calls that the content field must discard (section ends).
        problem: why nothing was derived, when ``fields`` is empty.
    """

    kind: str = ""
    fields: list[dict[str, Any]] = field(default_factory=list)
    discards: list[str] = field(default_factory=list)
    problem: str = ""


@dataclass(frozen=True)
class _Unit:
    """One call (or one array of calls) in a render: ``text[start:end]``, and how it reads."""

    start: int
    end: int
    kind: str
    name_post: str = ""
    info: dict[str, Any] = field(default_factory=dict)


def loose(text: str) -> str:
    """A regex for ``text`` whose whitespace runs, and the places before a ``<...>`` / ``[...]``
    marker, match any whitespace (``\\s*``; models space markers as they like, inference.md §2.5);
    ends stripped."""
    parts = [part for part in regex.split(r"\s+|(?=<[^<>\s]+>|\[[^\[\]\s]+\])", text.strip()) if part]
    return r"\s*".join(regex.escape(part) for part in parts)


def _generalise(first: str, second: str | None, pattern: str) -> str:
    """``pattern`` (for ``first``) with digit runs as ``\\d+`` when ``second`` differs only in digits,
    and the sentinel call ids as an ``id`` group."""
    for sentinel in PLAIN_IDS:
        escaped = regex.escape(sentinel)
        if escaped in pattern:
            pattern = pattern.replace(escaped, _ID, 1)
    digits = regex.compile(r"\d+")
    if second is not None and first != second and digits.sub("0", first) == digits.sub("0", second):
        pattern = regex.sub(r"\d+", lambda _match: r"\d+", pattern)
    return pattern


# --- finding the calls in a render ---------------------------------------------------------------

def _is_call(value: Any, name: str, arguments: dict[str, Any]) -> dict[str, str] | None:
    """The keys of a JSON call object (``name``, ``arguments``, maybe ``id``), or ``None``; a call
    written ``{NAME: {arguments}}`` (Apertus) gives ``{"name_as_key": "yes"}``."""
    if not isinstance(value, dict):
        return None
    if list(value) == [name] and value[name] == arguments:
        return {"name_as_key": "yes", "name": "name", "arguments": "arguments"}
    keys: dict[str, str] = {}
    for key, item in value.items():
        if item == name:
            keys["name"] = key
        elif item == arguments:
            keys["arguments"] = key
        elif isinstance(item, str) and item in PLAIN_IDS:
            keys["id"] = key
        elif isinstance(item, str) and _json_object(item) == arguments:
            keys["arguments"], keys["string_arguments"] = key, "yes"
    return keys if "name" in keys and "arguments" in keys else None


def _wrapped_call(value: dict[str, Any], keys: dict[str, str], name: str,
                  arguments: dict[str, Any]) -> dict[str, str] | None:
    """The keys of a call object wrapped in an OpenAI-style one (``{"id": ..., "type": "function",
    "function": {"name": ..., "arguments": ...}}``: a whole ``tool_calls`` entry written as JSON), as
    paths (``function.name``), or ``None`` when ``value`` holds the call otherwise or holds more.
    Only plain keys are wrapped (no JSON-string arguments, no name used as a key)."""
    if "string_arguments" in keys or "name_as_key" in keys:
        return None
    inner = [key for key, item in value.items()
             if isinstance(item, dict) and _is_call(item, name, arguments) == keys]
    rest = {key: item for key, item in value.items() if key not in inner}
    if len(inner) != 1 or any(item != "function" and not (isinstance(item, str) and item in PLAIN_IDS)
                              for item in rest.values()):
        return None
    wrapped = {role: f"{inner[0]}.{key}" for role, key in keys.items()}
    ids = [key for key, item in rest.items() if isinstance(item, str) and item in PLAIN_IDS]
    if ids:
        wrapped["id"] = ids[0]
    return wrapped


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _lead_keys(value: dict[str, Any]) -> dict[str, str]:
    """``first_key``, and ``second_key`` when the first holds a string (a call's name): what a bare
    call object starts with, for its look-ahead (:func:`_json_open`)."""
    keys = list(value)
    lead = {"first_key": keys[0]}
    if len(keys) > 1 and isinstance(value[keys[0]], str):
        lead["second_key"] = keys[1]
    return lead


def _json_unit(text: str, start: int, name: str, arguments: dict[str, Any]) -> _Unit | None:
    """The JSON object (or array of objects) that holds the call named ``name``."""
    position = text.find(name, start)
    found: _Unit | None = None
    for opener in range(position - 1, start - 1, -1):
        if text[opener] not in "{[":
            continue
        try:
            value, end = _DECODER.raw_decode(text, opener)
        except ValueError:
            continue
        if end <= position:
            continue
        if isinstance(value, dict) and found is None:
            keys = _is_call(value, name, arguments)
            if keys:
                found = _Unit(opener, end, "object", info={"keys": keys, **_lead_keys(value)})
        elif isinstance(value, dict) and found is not None and found.kind == "object":
            wrapped = _wrapped_call(value, found.info["keys"], name, arguments)
            if wrapped:
                found = _Unit(opener, end, "object",
                              info={"keys": wrapped, "plain_keys": found.info["keys"], **_lead_keys(value)})
        elif isinstance(value, list) and value and found is not None:
            keys = _is_call(value[0], name, arguments)
            if keys:
                return _Unit(opener, end, "array", info={"keys": keys})
            plain = found.info.get("plain_keys")
            if plain and isinstance(value[0], dict) and _wrapped_call(value[0], plain, name, arguments):
                # the whole tool_calls list written as JSON (Jibay): one array of OpenAI entries
                return _Unit(opener, end, "array", info={"keys": found.info["keys"], **_lead_keys(value[0])})
    return found


def _outside_unit(ctx: DerivationContext, text: str, start: int, name: str,
                  arguments: dict[str, Any]) -> _Unit | None:
    """The call when its name stands outside its arguments (a Python call, JSON, a JSON dialect, or
    tags)."""
    position = text.find(name, start)
    after = position + len(name)
    if text.startswith("(", after):
        return _python_unit(text, start, position, name, arguments)
    brace = text.find("{", after)
    if 0 <= brace - after <= 64:
        try:
            value, end = _DECODER.raw_decode(text, brace)
        except ValueError:
            value, end = None, -1
        if value == arguments:
            return _Unit(position, end, "json", text[after:brace])
        dialect = _dialect(text, brace, arguments)
        if dialect is not None:
            return _Unit(position, dialect[0], "dialect", text[after:brace], {"delims": dialect[1]})
    return _tagged_unit(ctx, text, position, after, arguments)


def _python_unit(text: str, start: int, position: int, name: str, arguments: dict[str, Any]) -> _Unit | None:
    """A Python-style call ``name(key=value, ...)``: inside a list that ``python-call-list`` reads
    (``python_list``, one region for the list), or on its own (``python``)."""
    from chatcodec.response_templates.ext_pythonic import parse_pythonic
    from chatcodec.response_templates.python_call_list import parse_python_call_list

    wanted = {"name": name, "arguments": arguments}
    end = -1
    for close in (index + 1 for index, char in enumerate(text) if char == ")" and index > position):
        try:
            calls = parse_pythonic(text[position:close], {})
        except ValueError:
            continue
        if len(calls) == 1 and _same_call(calls[0], wanted):
            end = close
            break
    if end < 0:
        return None
    bracket = text.rfind("[", start, position)
    if bracket >= 0 and not text[bracket + 1:position].strip():
        for close in (index + 1 for index, char in enumerate(text) if char == "]" and index >= end):
            try:
                calls = parse_python_call_list(text[bracket:close], {})
            except ValueError:
                continue
            if calls and _same_call(calls[0], wanted):
                return _Unit(bracket, close, "python_list")
    return _Unit(position, end, "python")


def _same_call(call: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a parsed Python-style call is the sentinel call: its name, and each argument either
    as given or written as a string (``keyqzb="7"``: Llama 4's pythonic template quotes every
    value), which the parse types back with the tool schemas (SPEC §1.6), as the round trip checks."""
    if call.get("name") != wanted["name"] or not isinstance(call.get("arguments"), dict):
        return False
    return _same_arguments(call["arguments"], wanted["arguments"])


def _same_arguments(got: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Whether parsed arguments are the sentinel arguments, each as given or written as a string
    (:func:`_same_call`; FunctionGemma's ``keyqzb:<escape>7<escape>`` in a JSON dialect too)."""
    return got.keys() == expected.keys() and all(
        got[key] == value or (isinstance(got[key], str) and not isinstance(value, str)
                              and got[key] == json.dumps(value))
        for key, value in expected.items())


def _dialect(text: str, brace: int, arguments: dict[str, Any]) -> tuple[int, list[list[str]]] | None:
    """``(end, string_delims)`` when ``text[brace:end]`` reads as the arguments in a JSON dialect."""
    from chatcodec.response_templates.content import run_parser

    strings = [value for value in arguments.values() if isinstance(value, str)]
    delims: list[list[str]] = []
    if strings:
        value_at = text.find(strings[0], brace)
        colon = text.rfind(":", brace, value_at)
        if value_at < 0 or colon < 0:
            return None
        opener = text[colon + 1:value_at].strip()
        closer_match = regex.match(r"[^,}\]]*", text[value_at + len(strings[0]):])
        closer = closer_match.group(0).strip() if closer_match else ""
        if opener and closer and opener != '"':
            delims = [[opener, closer]]
    args = {"unquoted_keys": True, **({"string_delims": delims} if delims else {})}
    for end in (index + 1 for index, char in enumerate(text) if char == "}" and index > brace):
        try:
            value = run_parser({"name": "json", "args": args}, text[brace:end])
        except ValueError:
            continue
        if isinstance(value, dict) and _same_arguments(value, arguments):
            return end, delims
    return None


def _tagged_unit(ctx: DerivationContext, text: str, position: int, after: int,
                 arguments: dict[str, Any]) -> _Unit | None:
    """Tagged arguments: ``KEY_PREFIX key SEPARATOR value VALUE_SUFFIX`` for each argument."""
    (key1, value1), (key2, value2) = [(key, str(value)) for key, value in list(arguments.items())[:2]]
    k1 = text.find(key1, after)
    v1 = text.find(value1, k1 + len(key1)) if k1 >= 0 else -1
    k2 = text.find(key2, v1 + len(value1)) if v1 >= 0 else -1
    v2 = text.find(value2, k2 + len(key2)) if k2 >= 0 else -1
    if min(k1, v1, k2, v2) < 0 or k1 - after > 64:
        return None
    between = text[v1 + len(value1):k2]
    key_start = ctx.atoms.snap_end(between, len(between) - common_suffix_length(text[after:k1], between))
    key_prefix = between[key_start:].lstrip()
    separator, separator2 = text[k1 + len(key1):v1], text[k2 + len(key2):v2]
    # a value closed by a tag naming its key (MiniMax-M3's ``<city>Paris</city>``): the key there is a slot
    closing = between[:len(between) - len(key_prefix)]
    rest = text[v2 + len(value2):].replace(key2, KEY_MARK, 1)
    if key1 in closing:
        between = closing.replace(key1, KEY_MARK, 1) + key_prefix
    shared = min(common_prefix_length(between, rest), len(between) - len(key_prefix))
    value_suffix = between[:ctx.atoms.snap_start(between, shared)].rstrip()
    slot = _attribute_slot(separator, separator2)
    if slot is None or not key_prefix or not value_suffix.strip() or key1 in key_prefix:
        return None
    name_post = text[after:k1 - len(key_prefix)]
    if text[position:after] in name_post:  # the name written again: this one was a recipient
        return None
    end = v2 + len(value2) + len(value_suffix.replace(KEY_MARK, key2))
    return _Unit(position, end, "tagged", name_post,
                 {"key_prefix": key_prefix, "separator": slot[0], "separator_rest": slot[1],
                  "value_suffix": value_suffix})


#: A word a template writes in the separator of a tagged argument that differs from one argument to
#: the next (DeepSeek-V3.2's ``string="true"`` / ``string="false"``: whether the value is raw text).
_ATTRIBUTE_WORD = regex.compile(r"\w{1,16}")


def _attribute_slot(separator: str, other: str) -> tuple[str, str] | None:
    """``(separator, "")`` when the two arguments' separators (between key and value) are equal;
    ``(before, after)`` when they differ in one word inside a tag (``" string="true">`` and
    ``" string="false">``), which then matches any such word; ``None`` otherwise."""
    if separator == other:
        return separator, ""
    start = common_prefix_length(separator, other)
    while start and separator[start - 1].isalnum():
        start -= 1
    tail = common_suffix_length(separator[start:], other[start:])
    while tail and separator[len(separator) - tail].isalnum():
        tail -= 1
    end, end2 = len(separator) - tail, len(other) - tail
    words = (separator[start:end], other[start:end2])
    if not all(_ATTRIBUTE_WORD.fullmatch(word) for word in words) or ">" not in separator[end:]:
        return None
    return separator[:start], separator[end:]


def _find_unit(ctx: DerivationContext, text: str, start: int, name: str,
               arguments: dict[str, Any]) -> _Unit | None:
    first = text.find(name, start)
    if first < 0:
        return None
    unit = _json_unit(text, start, name, arguments) or _outside_unit(ctx, text, start, name, arguments)
    position = text.find(name, first + len(name))
    while unit is None and position >= 0:  # the first name was written before the call (a recipient)
        unit = _outside_unit(ctx, text, position, name, arguments)
        position = text.find(name, position + len(name))
    return unit


# --- the field -----------------------------------------------------------------------------------

def _zone_start(ctx: DerivationContext, text: str) -> int:
    """Where calls may start: after the reasoning block when the turn carries reasoning."""
    if REASONING not in text:
        return 0
    index = text.index(REASONING) + len(REASONING)
    closer = _marker_after(ctx, text[index:])
    if closer:
        index = text.index(closer, index) + len(closer)
    return index


def _answer_lead(ctx: DerivationContext, mode: Mapping[str, Any]) -> str:
    """What a turn writes before its answer text in this mode (a pre-closed ``</think>``, an empty
    ``<think></think>``): not part of any tool-call marker."""
    turn = ctx.turn("content", mode)
    if turn is None or CONTENT not in turn.output:
        return ""
    return turn.output[:turn.output.index(CONTENT)]


def _snap_suffix(ctx: DerivationContext, text: str, length: int) -> str:
    """The last ``length`` characters of ``text``, shortened so they start at an atom boundary."""
    start = len(text) - length
    snapped = ctx.atoms.snap_end(text, start)
    return text[snapped:]


def _snap_prefix(ctx: DerivationContext, text: str, length: int) -> str:
    end = ctx.atoms.snap_start(text, length)
    return text[:end]


def derive_tool_field(ctx: DerivationContext) -> ToolDerivation:
    """The ``tool_calls`` field candidates (module docstring)."""
    chosen = None
    for mode in ctx.modes:
        one, two = ctx.turn("one_call", mode), ctx.turn("two_calls", mode)
        if one is not None and CALL_A[0] in one.output:
            chosen = (one, two, mode)
            if one.continues:
                break
    if chosen is None:
        return ToolDerivation(problem=_no_call_problem(ctx))
    one, two, mode = chosen
    out1 = one.output
    lead = _answer_lead(ctx, mode)
    start1 = max(_zone_start(ctx, out1), len(lead) if lead and out1.startswith(lead) else 0)
    unit1 = _find_unit(ctx, out1, start1, *CALL_A)
    if unit1 is None:
        return ToolDerivation(problem="the call's arguments are in no form the derivation reads (JSON, a "
                                      "JSON dialect, tagged arguments, or Python calls with literal values)")
    units2: list[_Unit] = []
    out2 = two.output if two is not None else None
    if out2 is not None:
        start2 = max(_zone_start(ctx, out2), len(lead) if lead and out2.startswith(lead) else 0)
        first = _find_unit(ctx, out2, start2, *CALL_A)
        if first is not None and unit1.kind not in ("array", "python_list"):
            second = _find_unit(ctx, out2, first.end, *CALL_B)
            if second is not None and second.kind == first.kind:
                units2 = [first, second]
        elif first is not None:
            units2 = [first]
    if unit1.kind == "tagged" and _writes_python_str(ctx, mode):
        unit1 = _Unit(unit1.start, unit1.end, unit1.kind, unit1.name_post,
                      {**unit1.info, "value_parser": {"name": "x-python-literal"}})
    elif unit1.kind == "tagged" and KEY_MARK in unit1.info["value_suffix"]:
        item_tag = _child_elements(ctx, mode)
        if item_tag:
            unit1 = _Unit(unit1.start, unit1.end, unit1.kind, unit1.name_post,
                          {**unit1.info, "item_tag": item_tag,
                           "remove": ctx.atoms.texts(unit1.info["key_prefix"])})
    return _build(ctx, out1, start1, unit1, out2, units2)


def _writes_python_str(ctx: DerivationContext, mode: Mapping[str, Any]) -> bool:
    """Whether the template writes a dict or a list argument as Python's ``str()`` does
    (``{'a': True}``, ``['a', 3]``; Qwen3-Coder writes mappings as JSON and every other value with
    ``| string``), which JSON cannot read back: its values need ``x-python-literal``."""
    turn = ctx.turn("nested_call", mode)
    arguments = CALL_NESTED[1]
    return turn is not None and any(str(arguments[key]) in turn.output for key in ("keyqzd", "keyqzf"))


def _child_elements(ctx: DerivationContext, mode: Mapping[str, Any]) -> str:
    """The tag of a list's items when the template writes a dict argument as child elements named
    after its keys and a list as one element per item (MiniMax-M3's ``<deep><on>true</on></deep>``,
    ``<tags><item>a</item></tags>``), which ``x-xml-tree`` reads back; ``""`` otherwise."""
    turn = ctx.turn("nested_call", mode)
    if turn is None:
        return ""
    inner, items = next(iter(CALL_NESTED[1]["keyqzd"])), CALL_NESTED[1]["keyqzf"]
    item = regex.search(r"<(\w{1,24})>\s*" + regex.escape(str(items[0])), turn.output)
    return item.group(1) if f"<{inner}>" in turn.output and item else ""


#: The documents of a retrieval prompt, for templates that render tool calls only next to documents.
PROBE_DOCUMENTS = [{"title": "Sentinel document", "text": "DOCQZ document text"}]


def _no_call_problem(ctx: DerivationContext) -> str:
    """Why no tool-call field is derived when no turn renders a call: the template never renders one,
    or renders one only next to ``documents`` (a retrieval prompt, inference.md F3)."""
    problem = ("the template renders no assistant tool call (with any message shape tried: arguments as "
               "a mapping or a JSON string, content '', None or text blocks)")
    turn = ctx.turn("one_call", {"documents": PROBE_DOCUMENTS})
    if turn is None or CALL_A[0] not in turn.output:
        return problem
    shown = CALL_A[0] in turn.prompt
    return ("the template renders assistant tool calls only when documents are passed (a retrieval "
            "prompt), " + ("and the calls would need a documents mode the round trip does not check"
                           if shown else "and then it does not show the tools to the model: no prompt it "
                           "renders offers tools, so a model is never asked for a call"))


def _mask_ids(text: str) -> str:
    """``text`` with the sentinel call ids replaced by :data:`ID_MARK` (they differ between calls)."""
    for sentinel in PLAIN_IDS:
        text = text.replace(sentinel, ID_MARK)
    return text


def _build(ctx: DerivationContext, out1: str, start1: int, unit: _Unit, out2: str | None,
           units2: list[_Unit]) -> ToolDerivation:
    before1 = _mask_ids(out1[start1:unit.start])
    after1 = _mask_ids(out1[unit.end:])
    if unit.kind in ("array", "python_list") or len(units2) < 2 or out2 is None:
        opener_raw = before1
        closer_raw = _closing_marker(ctx, after1)
        section_open = ""
        between = None
        post2 = None
    else:
        between = _mask_ids(out2[units2[0].end:units2[1].start])
        if unit.kind == "python" and not ctx.atoms.spans(between):
            return _python_block(ctx, before1, _mask_ids(out2[units2[1].end:]))
        closer_raw = _snap_prefix(ctx, after1, common_prefix_length(after1, between))
        rest = between[len(closer_raw):]
        opener_raw = _snap_suffix(ctx, before1, common_suffix_length(before1, rest))
        section_open = before1[:len(before1) - len(opener_raw)]
        post2 = units2[1].name_post
    opener = (_marker_tail(ctx, opener_raw) if unit.kind in ("array", "object", "python_list")
              else opener_raw.strip())
    if unit.kind == "object" and between is not None:  # every marker each call repeats opens it
        opener = _marker_run_end(ctx, opener_raw) or opener
    if unit.kind in ("array", "object", "python_list") and opener and not section_open.strip():
        opener = _with_label(opener_raw, opener)
        opener = _header_run(ctx, opener_raw) or opener
    recipient = _recipient(section_open)
    if recipient and unit.kind in ("json", "dialect", "tagged"):
        unit = _Unit(unit.start, unit.end, unit.kind, unit.name_post, {**unit.info, "recipient": recipient})
    section_open = section_open.strip() if ctx.atoms.only_atoms(section_open) else ""
    section_end = after1[len(closer_raw):]
    discards = [atom for atom in ctx.atoms.texts(section_end) if atom and ID_MARK not in atom]
    closer = closer_raw.strip()
    section_close = discards[0] if closer and section_open and discards else ""
    if section_close:  # it ends the calls: part of the last call's close, not a discard (docstring)
        discards = discards[1:]
    fields = _fields(unit, opener, closer, section_open, post2, between, ctx.eos, section_close)
    if unit.kind == "object" and not opener and section_open and discards:
        fields = [_section_of_objects(unit, section_open, discards[0]), *fields]
    kinds = {"object": "JSON object per call", "array": "JSON array of calls",
             "python_list": "a Python-style list of calls", "python": "Python-style calls",
             "json": "name, then JSON arguments",
             "dialect": "name, then arguments in a JSON dialect", "tagged": "name, then tagged arguments"}
    return ToolDerivation(kinds[unit.kind], fields, discards)


#: A recipient written before the call's opener: a short word ending in ``=`` or ``:`` glued to the
#: call's name (MuseGlimmer's ``to=NAME<|message|>``, the header of a message addressed to the tool).
_RECIPIENT = regex.compile(r"[A-Za-z]{1,8}[=:]")


def _recipient(before: str) -> str:
    """The recipient prefix (``to=``) when the text before a call's opener is that prefix and the
    call's name, else ``""``: the call then opens on the prefix, the name, and the opener naming the
    same tool again (``(?P=name)``), so the recipient never reaches ``content``."""
    text = before.strip()
    if not text.endswith(CALL_A[0]):
        return ""
    prefix = text[:-len(CALL_A[0])]
    return prefix if _RECIPIENT.fullmatch(prefix) else ""


#: A label a template writes before a block of calls (Command R+: ``Action:`` before its fenced JSON).
_LABEL = regex.compile(r"[A-Z][A-Za-z]{1,23}:")


def _with_label(before: str, opener: str) -> str:
    """``opener``, with the label the template writes right before it on its own (``Action:\n```json``):
    the only text of the turn before the calls, one capitalised word and a colon, glued to the marker by
    whitespace alone. A label is never a delimiter alone (a word could be prose); with the marker it
    keeps the label out of ``content``."""
    text = before.strip()
    if not text.endswith(opener):
        return opener
    label = text[:len(text) - len(opener)]
    if not label or not label[-1].isspace() or not _LABEL.fullmatch(label.strip()):
        return opener
    return text


#: A role name a template writes between two markers of a call turn's header (GigaChat's
#: ``<|message_sep|>function call<|role_sep|>``): at most three words.
_ROLE_NAME = regex.compile(r"\w{1,24}(?: \w{1,24}){0,2}")


def _header_run(ctx: DerivationContext, before: str) -> str:
    """The whole text a call-only turn writes before its call when that text is a header: markers
    from its first character to its last, with at most a role name between two of them (GigaChat
    closes the answer turn and opens a ``function call`` turn). A word is never a delimiter alone;
    between two markers it is part of one. ``""`` when ``before`` is anything else."""
    text = before.strip()
    spans = ctx.atoms.spans(text)
    if len(spans) < 2 or spans[0][0] != 0 or spans[-1][1] != len(text):
        return ""
    gaps = [text[end:start].strip() for (_, end), (start, _) in itertools.pairwise(spans)]
    if not any(gaps) or not all(not gap or _ROLE_NAME.fullmatch(gap) for gap in gaps):
        return ""
    return text


def _python_block(ctx: DerivationContext, before: str, after: str) -> ToolDerivation:
    """Python-style calls with no marker of their own (one per line, or ``;`` / ``,`` between them):
    one region from the markers before the first call to the markers after the last, read by
    ``x-pythonic`` with ``lines`` (MiniCPM3's fenced block)."""
    opener, closer = _marker_run_end(ctx, before), _marker_run_start(ctx, after)
    if not opener:
        return ToolDerivation(problem="Python-style calls with no marker before them: a region cannot tell "
                                      "them from prose")
    close = _literal_or_pattern("close", closer) if closer else ({"close": ctx.eos} if ctx.eos else {})
    rest = after.lstrip()[len(closer):]
    discards = [atom for atom in ctx.atoms.texts(rest) if ID_MARK not in atom]
    cut_off = _CUT_OFF_IS_A_PROBLEM if closer else {}
    field_spec = {**_literal_or_pattern("open", opener), **close, **cut_off, "content": "x-pythonic",
                  "content_args": {"lines": True}, "transform": _EACH_CALL, "transform_each": True}
    return ToolDerivation("Python-style calls, one per line", [field_spec], discards)


def _marker_run_end(ctx: DerivationContext, text: str) -> str:
    """The markers that end ``text``: atoms (the last may have a word glued on, as in a code fence
    ```` ```python ````) with only whitespace between them; ``""`` when ``text`` ends otherwise."""
    stripped = text.rstrip()
    spans = ctx.atoms.spans(stripped)
    if not spans or not regex.fullmatch(r"\w{0,24}", stripped[spans[-1][1]:]):
        return ""
    start = spans[-1][0]
    for previous_start, previous_end in reversed(spans[:-1]):
        if stripped[previous_end:start].strip():
            break
        start = previous_start
    return stripped[start:]


def _marker_run_start(ctx: DerivationContext, text: str) -> str:
    """The markers that start ``text`` (leading whitespace ignored): atoms with only whitespace
    between them; ``""`` when ``text`` starts otherwise."""
    stripped = text.lstrip()
    spans = ctx.atoms.spans(stripped)
    if not spans or spans[0][0] != 0:
        return ""
    end = spans[0][1]
    for next_start, next_end in spans[1:]:
        if stripped[end:next_start].strip():
            break
        end = next_end
    return stripped[:end]


def _marker_tail(ctx: DerivationContext, text: str) -> str:
    """The marker right before a JSON value: its last atom (with a word glued on), or a glued word."""
    stripped = text.rstrip()
    spans = ctx.atoms.spans(stripped)
    if spans:
        start = spans[-1][0]
        tail = stripped[spans[-1][1]:]
        if not tail or regex.fullmatch(r"\w{1,24}", tail):
            return stripped[start:]
    word = regex.search(r"\w{2,24}$", stripped)
    return word.group(0) if word else ""


def _closing_marker(ctx: DerivationContext, text: str) -> str:
    """The marker right after a JSON value (its first atom), with the whitespace before it."""
    stripped = text.lstrip()
    spans = ctx.atoms.spans(stripped)
    if spans and spans[0][0] == 0:
        return text[:len(text) - len(stripped) + spans[0][1]]
    return ""


def _open_pattern(section_open: str, opener: str, tail: str) -> str:
    section = rf"(?:{loose(section_open)}\s*)?" if section_open else ""
    return (section + loose(opener) + tail).replace(regex.escape(ID_MARK), _ID, 1)


def _fields(unit: _Unit, opener: str, closer: str, section_open: str, post2: str | None,
            between: str | None, eos: str | None, section_close: str = "") -> list[dict[str, Any]]:
    close: dict[str, Any] = {"close": eos} if eos else {}
    if closer:
        close = _literal_or_pattern("close", closer)
    if closer and section_close:
        close = {"close_pattern": loose(closer) + rf"(?:\s*{loose(section_close)})?"}
    if unit.kind == "object" and opener and not closer:
        close = _next_opener_or_eos(opener, eos)
    if unit.kind in ("object", "array"):
        return _json_fields(unit, opener, close, section_open, between)
    if unit.kind == "python_list":
        open_spec = _json_open(opener, "[", None) if opener else {"open_pattern": _PYTHON_LIST_AHEAD}
        return [{**open_spec, **close, "content": parser, "transform": _EACH_CALL, "transform_each": True}
                for parser in ("python-call-list", "x-pythonic")]
    if unit.kind == "python":  # one call per region, between per-call markers
        if not opener:
            return []
        open_spec = ({"open_pattern": _open_pattern(section_open, opener, "")} if section_open
                     else _literal_or_pattern("open", opener))
        return [{**open_spec, **close, **_CUT_OFF_IS_A_PROBLEM, "repeats": True, "flatten": True,
                 "content": "x-pythonic", "transform": _EACH_CALL, "transform_each": True}]
    name_post = unit.name_post
    post = _generalise(name_post, post2, _post_pattern(name_post, unit.kind))
    open_pattern = _open_pattern(section_open, opener, _NAME + post)
    if "recipient" in unit.info:  # MuseGlimmer's "to=NAME<|message|>" before the call's own name
        open_pattern = (regex.escape(unit.info["recipient"]) + _NAME + r"\s*"
                        + _open_pattern("", opener, "(?P=name)" + post))
    elif _TAG_MARKERS.fullmatch(opener) and ID_MARK not in opener:  # the marker alone opens a call too
        open_pattern += "|" + _open_pattern(section_open, opener, "")
    if not closer:
        close = _next_opener_or_eos(opener, eos)
    transform: dict[str, Any] = dict(_TRANSFORM)
    if "(?P<id>" in open_pattern:
        transform = {"id": "{id}", **transform}
    base = {"open_pattern": open_pattern, **close, "repeats": True}
    if unit.kind == "json":
        return [{**base, "content": "json", "transform": transform}]
    if unit.kind == "dialect":
        delims = unit.info["delims"]
        delim_args: dict[str, Any] = {"string_delims": delims} if delims else {}
        dialect_args: dict[str, Any] = {"unquoted_keys": True, **delim_args}
        return [{**base, "content": "json", "content_args": dialect_args, "transform": transform},
                {**base, "content": "x-bare-object", "content_args": delim_args,
                 "transform": transform}]
    cut_off = _CUT_OFF_IS_A_PROBLEM if closer else {}
    inline = {**base, **cut_off, "content": "xml-inline", "content_args": _tag_args(unit.info),
              "transform": transform}
    if "item_tag" in unit.info:
        return [{**base, **cut_off, "content": "x-xml-tree", "content_args": _tree_args(unit.info),
                 "transform": transform}, inline]
    return [inline]


#: An opener made of tag-like markers only (``<tool_call>``, ``[TOOL_CALLS]``), which the template writes
#: only to open a call: written without a name a region can read, it still opens a call, so a call
#: the model broke there is a parse problem (its text kept in ``errors="keep"``), never prose.
_TAG_MARKERS = regex.compile(r"(?:\s*(?:<[^<>\s]+>|\[[^\[\]\s]+\]))+\s*")


def _tree_args(info: dict[str, Any]) -> dict[str, Any]:
    """``x-xml-tree`` arguments for elements named after their keys: the markers the template writes
    before every tag are removed there (``]<]minimax[>[``), leaves are text typed later by the tool
    schemas (SPEC §1.6), or JSON where they read as JSON inside a dict or list argument."""
    remove: list[str] = info["remove"]
    args: dict[str, Any] = {"leaf_parser": {"name": "json", "args": {"allow_non_json": True, "strip": False}}}
    if remove:
        args["remove"] = remove
    if info["item_tag"] != "item":
        args["item_tag"] = info["item_tag"]
    return args


def _next_opener_or_eos(opener: str, eos: str | None) -> dict[str, Any]:
    """The close of a call that has an opener and no closer (granite-20b-functioncalling's
    ``<function_call> {...}`` one after another): a look-ahead for the next call's opener, or the
    end-of-sequence token, so each region holds one call."""
    ahead = [f"(?={loose(opener)})"] if opener else []
    ahead += [regex.escape(eos)] if eos else []
    return {"close_pattern": "|".join(ahead)} if ahead else {}


def _post_pattern(name_post: str, kind: str) -> str:
    """The regex for the text between the name and the arguments (whitespace loosened)."""
    if not name_post.strip():
        return r"\s*"
    pattern = loose(name_post)
    lead = r"\s*" if name_post[:1].isspace() or name_post[:1] in "<[" else ""
    return lead + pattern + (r"\s*" if kind != "tagged" or name_post[-1:].isspace() else "")


#: The value parser of tagged arguments: the text as written, typed by the tool schemas (SPEC §1.6).
_TEXT_VALUES: dict[str, Any] = {"name": "text", "args": {"strip": False}}


def _tag_args(info: dict[str, Any]) -> dict[str, Any]:
    """``xml-inline`` arguments: values exact (a newline touching a value is ``\\n?``), typed later
    by the tool schemas (SPEC §1.6); lists and dicts the template writes with Python's ``str()`` are
    read back by ``x-python-literal`` (``info["value_parser"]``)."""
    separator: str = info["separator"]
    value_suffix: str = info["value_suffix"]
    rest: str = info.get("separator_rest", "")
    lead = trail = ""
    if (rest or separator).endswith("\n"):
        lead = r"\n?"
        rest, separator = (rest[:-1], separator) if rest else ("", separator[:-1])
    if value_suffix.startswith("\n"):
        value_suffix, trail = value_suffix[1:], r"\n?"
    # a word that differs between arguments (_attribute_slot): any word there
    separator_pattern = loose(separator) + (r"\w+" + loose(rest) if info.get("separator_rest") else "")
    suffix = loose(value_suffix).replace(regex.escape(KEY_MARK), "(?P=key)").replace(KEY_MARK, "(?P=key)")
    pattern = (loose(info["key_prefix"]) + r"(?P<key>[^\s<>=\"']+)" + separator_pattern + lead
               + "(?P<value>.*?)" + trail + suffix)
    return {"tag_pattern": pattern, "value_parser": dict(info.get("value_parser", _TEXT_VALUES))}


def _section_of_objects(unit: _Unit, section_open: str, section_close: str) -> dict[str, Any]:
    """JSON call objects with no marker of their own inside a section (MiniMax-M1's ``<tool_calls>``
    with one object per line): one region from the section's start to its end, read by
    ``x-json-calls``, which takes objects back to back and refuses any other text between them."""
    return {**_literal_or_pattern("open", section_open), "close": section_close,
            "content": "x-json-calls", "content_args": _calls_args(unit.info["keys"]),
            "transform": {"id": "{id?}", "type": "function",
                          "function": {"name": "{name}", "arguments": "{arguments}"}},
            "transform_each": True}


def _json_fields(unit: _Unit, opener: str, close: dict[str, Any], section_open: str,
                 between: str | None = None) -> list[dict[str, Any]]:
    keys: dict[str, str] = unit.info["keys"]
    strings = "string_arguments" in keys or "name_as_key" in keys  # x-json-calls reads both
    if unit.kind == "array":
        element = {"type": "function", "function": {"name": "{" + keys["name"] + "}",
                                                    "arguments": "{" + keys["arguments"] + "}"}}
        if "id" in keys:
            element = {"id": "{" + keys["id"] + "?}", **element}
        open_spec = _json_open(opener, "[", unit.info.get("first_key"), "", unit.info.get("second_key"))
        if strings:
            return [{**open_spec, **close, "content": "x-json-calls", "content_args": _calls_args(keys),
                     "transform": {"id": "{id?}", "type": "function",
                                   "function": {"name": "{name}", "arguments": "{arguments}"}},
                     "transform_each": True}]
        return [{**open_spec, **close, "content": "json", "transform": element, "transform_each": True}]
    element = {"type": "function", "function": {"name": "{content." + keys["name"] + "}",
                                                "arguments": "{content." + keys["arguments"] + "}"}}
    if "id" in keys:
        element = {"id": "{content." + keys["id"] + "?}", **element}
    open_spec = _json_open(opener, "{", unit.info.get("first_key"), section_open,
                           unit.info.get("second_key"))
    if strings:
        return [{**open_spec, **close, "repeats": True, "content": "x-json-calls",
                 "content_args": {**_calls_args(keys), "single": True},
                 "transform": {"id": "{content.id?}", "type": "function",
                               "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}}]
    fields = [{**open_spec, **close, "repeats": True, "content": "json", "transform": element}]
    if not opener:  # bare objects: a region cannot end where one object does; one region reads them all
        fields.append({**open_spec, **close, "content": "x-json-calls",
                       "content_args": {**_calls_args(keys), **_separators(between)},
                       "transform": {"id": "{id?}", "type": "function",
                                     "function": {"name": "{name}", "arguments": "{arguments}"}},
                       "transform_each": True})
    return fields


def _separators(between: str | None) -> dict[str, Any]:
    """``x-json-calls``' ``separators`` for bare call objects the template joins with punctuation
    (vLLM's Phi-4-mini writes ``{...},{...}``): the text between two calls, whitespace aside, when it
    is a short run of punctuation (not a bracket or quote, which would be JSON); ``{}`` otherwise (the
    parser's default, ``;``)."""
    text = (between or "").strip()
    if text and regex.fullmatch(r"[^\w\s\[\]{}\"']{1,3}", text):
        return {"separators": [text]}
    return {}


def _literal_or_pattern(key: str, text: str) -> dict[str, str]:
    """``{key: text}``, or ``{key_pattern: regex}`` with whitespace loosened when ``text`` holds some."""
    if regex.search(r"\s", text):
        return {f"{key}_pattern": loose(text)}
    return {key: text}


def _calls_args(keys: dict[str, str]) -> dict[str, Any]:
    if "name_as_key" in keys:
        return {"name_as_key": True}
    args: dict[str, Any] = {"name_keys": [keys["name"]], "arguments_keys": [keys["arguments"]]}
    if "id" in keys:
        args["id_keys"] = [keys["id"]]
    return args


def _json_open(opener: str, bracket: str, first_key: str | None, section_open: str = "",
               second_key: str | None = None) -> dict[str, Any]:
    """How a JSON region opens: its marker, a word glued to the bracket, or a look-ahead alone.

    A bare call object has no marker: the keys it starts with are its marker, so the look-ahead
    reads the first key and, when the first holds a string (the name), the second (Llama 3's
    ``{"name": "...", "parameters":``); an object with a name alone, or a JSON object in prose that
    starts with ``"name"``, is not a call the template writes and stays text (vLLM's reading of
    ``{"name": "toolWithoutParams"}``)."""
    if opener and regex.fullmatch(r"\w+", opener):
        return {"open_pattern": regex.escape(opener) + rf"(?=\s*{regex.escape(bracket)})"}
    if opener:
        if section_open:
            return {"open_pattern": _open_pattern(section_open, opener, "")}
        if loose(opener) != regex.escape(opener):  # several markers: any whitespace between them
            return {"open_pattern": loose(opener)}
        return _literal_or_pattern("open", opener)
    lead = r"\{\s*" if bracket == "{" else r"\[\s*\{\s*"
    if first_key and second_key:  # an array's look-ahead reads its first element's keys
        return {"open_pattern": "(?=" + lead + regex.escape(json.dumps(first_key))
                + r'\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*' + regex.escape(json.dumps(second_key)) + r"\s*:)"}
    if bracket == "{" and first_key:
        return {"open_pattern": r"(?=\{\s*" + regex.escape(json.dumps(first_key)) + r"\s*:)"}
    return {"open_pattern": r"(?=\[\s*\{)"}
