"""What the hostile-input checks of every bundled profile share (issue 13): real outputs, cut-off
and adversarial outputs, and the "nothing is lost" check.

``tests/profiles/test_hostile_outputs.py`` runs these inputs at small sizes;
``bench/bench_bounds.py`` runs the same inputs at two large sizes and prints how the time grows
(linearity is measured there, never asserted in tests).

**Nothing is lost** (:func:`lost_letters`): every letter of the output, apart from the profile's
framing (the words of its delimiters, framing patterns and special tokens), is in the message:
its text fields, its tool calls' names, keys and values, or the ``raw`` text of a recorded
problem. Letters are compared as multisets, lower-cased (Python's ``True`` is JSON's ``true``),
after JSON string escapes are read (``\\u00e9`` is ``é``). Closing tags (``</real>``, which repeat
their opening tag) are framing too, and a tool call's name may be written twice (Step3's header and
invoke tag). The check cannot tell which of two equal letters went where; it catches any text that
vanishes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import regex

from chatcodec import profiles
from chatcodec.response_templates.pattern_tokens import tokens

#: Characters each run is made of: layout, text, the starts of tags and values, escapes, digits
#: (a huge number), NUL, a lone surrogate and a non-ASCII letter.
RUN_CHARACTERS = (" ", "\n", "a", "<", "{", "[", '"', "\\", "9", "\x00", "\ud800", "é")

_LETTER_RUN = regex.compile(r"[^\W\d_]{2,}")
_PATTERN_NOISE = regex.compile(r"\\[pPN]\{[^}]*\}|\\[gL]<[^>]*>|\\.|\(\?P?[<=][\w]*>?|\(\?[a-zA-Z-]+[:)]")
#: Names the parsers read by default, framing too: a call's id, name and arguments keys, and the
#: tag of a list item in XML-like arguments.
_CALL_KEYS = ("tool_call_id", "call_id", "tool_name", "function", "parameters", "arguments", "name", "type",
              "item")
#: A closing tag repeats its opening tag's name (XML-like arguments: ``<real>1.5</real>``).
_CLOSING_TAG = regex.compile(r"</[^<>\s]{1,80}>")
_JSON_ESCAPE = regex.compile(r"\\u[0-9a-fA-F]{4}|\\[nrtbf\"\\/]")
_TEMPLATE_KEYS_WITH_TEXT = ("open", "close", "start_anchor")


@cache
def real_outputs(name: str) -> tuple[tuple[str, str, Any], ...]:
    """``(prompt, output, tools)`` of the profile's demo and of its peer vectors, in corpus order."""
    from tests.conftest import load_json

    profile = profiles.load(name)
    found = []
    if profile.demo is not None:
        found.append((profile.generation_prompt_ending(profile.demo.prompt_suffix), profile.demo.output,
                      profile.demo.tools))
    for vector in load_json("peer_vectors.json")["vectors"]:
        if vector["family"] == name:
            found.append((profile.generation_prompt_ending(vector["prompt_suffix"]), vector["output"],
                          vector["tools"]))
    return tuple(found)


def _strings(value: Any, keys: tuple[str, ...]) -> Iterator[str]:
    """The strings under ``keys`` anywhere in a template (lists of strings included)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in keys and isinstance(item, str):
                yield item
            elif key in keys and isinstance(item, list) and all(isinstance(x, str) for x in item):
                yield from item
            else:
                yield from _strings(item, keys)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, keys)


@cache
def literal_delimiters(name: str) -> tuple[str, ...]:
    """The profile's literal delimiters and special tokens, longest first."""
    profile = profiles.load(name)
    found = set(_strings(profile.response_template, _TEMPLATE_KEYS_WITH_TEXT))
    found.update(token for token in profile.special_tokens.values() if token)
    return tuple(sorted(found, key=lambda text: (-len(text), text)))


def pattern_prefix(source: str) -> str:
    """The literal text every match of ``source`` starts with (``<function=`` of
    ``<function=(?P<name>[^>]+)>``), or ``""``."""
    literal = []
    for token in tokens(source):
        if token in "|?*+{" or token.startswith("{"):
            if token in "?*{" or token.startswith("{"):
                literal = literal[:-1]
            break
        if token.startswith("\\") and len(token) == 2 and not token[1].isalnum():
            literal.append(token[1])
        elif len(token) == 1 and token not in "()[].^$":
            literal.append(token)
        else:
            break
    return "".join(literal)


@cache
def pattern_prefixes(name: str) -> tuple[str, ...]:
    """The literal starts of the profile's regex delimiters (at least two characters)."""
    template = profiles.load(name).response_template
    found = {pattern_prefix(source) for source in _strings(template, ("open_pattern", "close_pattern"))}
    return tuple(sorted(prefix for prefix in found if len(prefix) >= 2))


@cache
def framing_words(name: str) -> tuple[str, ...]:
    """Words the profile's framing is made of (``think``, ``tool_call``, ``invoke``, ``name``), from
    every string of its response template (patterns without their escapes and group names: the
    delimiters, the key names a content parser reads, the transform) and its special tokens,
    longest first."""
    template = profiles.load(name).response_template
    texts = list(literal_delimiters(name))
    texts += [_PATTERN_NOISE.sub(" ", source) for source in _all_strings(template)]
    texts += _CALL_KEYS
    words = {word for text in texts for word in regex.findall(r"[A-Za-z_]{2,}", text)}
    return tuple(sorted(words, key=lambda word: (-len(word), word)))


def _all_strings(value: Any) -> Iterator[str]:
    """Every string of a template (its keys too): delimiters, patterns, key names, transforms."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _all_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _all_strings(item)
    elif isinstance(value, str):
        yield value


def _letters(text: str) -> Counter[str]:
    return Counter(char.lower() for char in text if char.isalpha() or char in "\x00\ud800")


def _message_text(value: Any, key: str | None = None) -> Iterator[str]:
    """Every text a message holds: its strings, keys and scalars, each as written and as JSON."""
    if isinstance(value, Mapping):
        for item_key, item in value.items():
            if item_key in ("id", "role") and ("function" in value or "type" in value or "content" in value):
                continue  # a tool call's generated id, the message's role
            if item_key == "parse_errors":
                yield from (str(record.get("raw", "")) for record in item)
                continue
            yield str(item_key)
            if item_key == "name" and isinstance(item, str):
                yield item  # a format may write a call's name twice (Step3: header and invoke tag)
            yield from _message_text(item, str(item_key))
    elif isinstance(value, list):
        for item in value:
            yield from _message_text(item, key)
    elif isinstance(value, str):
        yield value
    elif value is not None or key is not None:
        yield f"{value!r} {json.dumps(value)}"


def lost_letters(name: str, output: str, message: Mapping[str, Any]) -> Counter[str]:
    """The letters of ``output`` (outside the profile's framing words) that ``message`` lacks.

    Returns:
        The missing letters with how many of each are missing; empty when nothing is lost.
    """
    text = _JSON_ESCAPE.sub(lambda m: json.loads(f'"{m.group()}"'), _CLOSING_TAG.sub(" ", output))
    for word in (*literal_delimiters(name), *framing_words(name)):
        text = text.replace(word, " ")
    held = _letters("\n".join(_message_text(message)))
    return _letters(text) - held


def cut_points(text: str) -> range:
    """Every place ``text`` can be cut: after each character (and before the first)."""
    return range(len(text) + 1)


def adversarial(name: str, size: int) -> dict[str, str]:
    """Hostile outputs of about ``size`` characters for the profile ``name``, by description.

    Runs of one character; the profile's literal delimiters and regex delimiter starts repeated
    complete or cut by one character (unterminated opens); deep nesting, a huge number and a
    garbled real output after the start of a real tool call; a real output repeated.
    """
    found = {f"run of {char!r}": char * size for char in RUN_CHARACTERS}
    for delimiter in (*literal_delimiters(name), *pattern_prefixes(name)):
        found[f"{delimiter!r} repeated"] = delimiter * (size // len(delimiter) + 1)
        if len(delimiter) > 1:
            found[f"{delimiter[:-1]!r} repeated"] = delimiter[:-1] * (size // (len(delimiter) - 1) + 1)
    outputs = [output for _, output, _ in real_outputs(name)]
    if outputs:
        found["a real output repeated"] = outputs[0] * (size // max(1, len(outputs[0])) + 1)
    calls = profiles.load(name).response_template["fields"].get("tool_calls", {})
    opens = [calls["open"]] if isinstance(calls.get("open"), str) else calls.get("open", [])
    called = next((output for output in outputs if "{" in output), None)
    if called is None and opens:
        called = opens[0] + '{"name": "f", "arguments": {"a": 1}}'
    if called is not None:
        head = called[: called.index("{") + 1]
        found["deep lists in a call"] = head + '"a": ' + "[" * size
        found["deep objects in a call"] = head + '"a": {' * (size // 6 + 1)
        found["a huge number in a call"] = head + '"a": ' + "9" * size
        found["a lone surrogate and NUL in a call"] = head + '"a": "\ud800\x00' + "\\" * size
        found["half a call repeated"] = called[: len(called) // 2] * (size // max(1, len(called) // 2) + 1)
    return found
