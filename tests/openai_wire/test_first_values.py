"""``x-first`` streams what its parsers still possible read alike: JSON calls in Python-call profiles.

LFM2 and Llama 4 write Python calls, and sometimes a JSON call in the same markers; their profiles
try ``python-call-list``, ``x-json-calls`` and ``x-pythonic`` in turn. ``x-pythonic`` accepts a call
written as a dict, so its scanner follows one (``name``, then ``arguments`` or ``parameters``) and
streams it as ``x-json-calls`` does; the two then agree and the JSON call streams as written.
Anything else in such a dict stops the ``x-pythonic`` scanner (the call then arrives whole).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatcodec import profiles
from chatcodec.response_templates.content import get_parser
from chatcodec.response_templates.scanners import scanner_for
from chatcodec.response_templates.scanners.first_scan import FirstScanner
from chatcodec.response_templates.scanners.protocol import Delta
from chatcodec.response_templates.scanners.shadow import Shadow
from tests.openai_wire.test_stream_properties import check_profile_output


def merged(name: str, args: dict[str, Any], chunks: list[str]) -> list[Delta]:
    scanner = scanner_for(name, args)
    assert scanner is not None
    out: list[Delta] = []
    for delta in [delta for chunk in chunks for delta in scanner.feed(chunk)] + scanner.end():
        if out and delta[0] == "text" and out[-1][0] == "text" and out[-1][1] == delta[1]:
            out[-1] = ("text", delta[1], out[-1][2] + delta[2])
        else:
            out.append(delta)
    return out


CALL = '[{"name": "f", "parameters": {"a": "x y", "b": [1, true]}}, {"name": "g", "arguments": {}}]'
CALL_DELTAS: list[Delta] = [
    ("begin", (), "array"), ("begin", (0,), "object"), ("begin", (0, "name"), "string"),
    ("text", (0, "name"), "f"), ("end", (0, "name"), None), ("begin", (0, "arguments"), "object"),
    ("begin", (0, "arguments", "a"), "string"), ("text", (0, "arguments", "a"), "x y"),
    ("end", (0, "arguments", "a"), None), ("begin", (0, "arguments", "b"), "array"),
    ("set", (0, "arguments", "b", 0), 1), ("set", (0, "arguments", "b", 1), True),
    ("end", (0, "arguments", "b"), None), ("end", (0, "arguments"), None), ("end", (0,), None),
    ("begin", (1,), "object"), ("begin", (1, "name"), "string"), ("text", (1, "name"), "g"),
    ("end", (1, "name"), None), ("begin", (1, "arguments"), "object"), ("end", (1, "arguments"), None),
    ("end", (1,), None)]


def test_x_pythonic_follows_a_call_written_as_a_dict() -> None:
    for chunks in ([CALL], list(CALL)):
        assert merged("x-pythonic", {}, chunks) == [*CALL_DELTAS, ("end", (), None)]
    shadow = Shadow()
    assert all(shadow.apply(delta) for delta in CALL_DELTAS)
    assert shadow.complete(get_parser("x-pythonic").parse(CALL, {}))[0]


def test_x_json_calls_reads_the_same_call_alike() -> None:
    assert merged("x-json-calls", {}, list(CALL)) == CALL_DELTAS


def test_a_dict_with_other_keys_or_order_stops_x_pythonic() -> None:
    begun: list[Delta] = [("begin", (), "array"), ("begin", (0,), "object")]
    assert merged("x-pythonic", {}, list('[{"type": "function", "name": "f", "arguments": {}}]')) == begun
    assert merged("x-pythonic", {}, list('[{"arguments": {}, "name": "f"}]')) == begun
    assert merged("x-pythonic", {}, list('[{"name": "f", "arguments": {}, "id": "1"}]')) == [
        *begun, ("begin", (0, "name"), "string"), ("text", (0, "name"), "f"), ("end", (0, "name"), None),
        ("begin", (0, "arguments"), "object"), ("end", (0, "arguments"), None)]
    assert merged("x-pythonic", {}, list('[{"name": f, "arguments": {}}]')) == begun  # a name, not a string


def test_lfm2_streams_a_json_call_as_its_parsers_agree() -> None:
    args = profiles.load("lfm2").response_template["fields"]["tool_calls"]["content_args"]
    scanner = scanner_for("x-first", args)
    assert scanner is not None
    assert scanner.feed('{"name": "get_weather", "arguments": {"city": "Ro') == [
        ("begin", (), "array"), ("begin", (0,), "object"), ("begin", (0, "name"), "string"),
        ("text", (0, "name"), "get_weather"), ("end", (0, "name"), None),
        ("begin", (0, "arguments"), "object"),
        ("begin", (0, "arguments", "city"), "string"), ("text", (0, "arguments", "city"), "Ro")]
    assert scanner.feed("me") == [("text", (0, "arguments", "city"), "me")]


#: JSON values; with ``ensure_ascii`` an emoji is written as a surrogate pair, which JSON joins and
#: Python does not, so there the two parsers stop agreeing (and ``x-json-calls``, tried first, wins).
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.text(st.sampled_from(list('ab "\\/\n\té😀{}[]')), max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(["p", "q", "r"]), inner, max_size=3), max_leaves=6)
MARKERS = {"lfm2": ("<|tool_call_start|>", "<|tool_call_end|>"),
           "llama4_pythonic": ("<|python_start|>", "<|python_end|>")}


@settings(max_examples=40)
@given(data=st.data())
def test_any_json_call_in_any_feeds_streams_to_the_parsed_message(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(MARKERS)), label="profile")
    arguments = data.draw(st.dictionaries(st.sampled_from(["city", "n", "x"]), VALUES, max_size=3),
                          label="arguments")
    key = data.draw(st.sampled_from(["arguments", "parameters"]), label="key")
    calls = [{"name": "get_weather", key: arguments}] * data.draw(st.integers(1, 2), label="calls")
    text = json.dumps(calls[0] if len(calls) == 1 and data.draw(st.booleans(), label="bare") else calls,
                      ensure_ascii=data.draw(st.booleans(), label="ascii"))
    start, end = MARKERS[name]
    output = f"{start}{text}{end}"
    check_profile_output(data, name, output)


def test_agreed_text_is_not_kept_so_a_long_string_costs_linear_time() -> None:
    """Two parsers that read a 20,000-character string alike: each feed's text goes out at once and
    the scanner keeps none of it (it used to keep and re-compare all of it on every feed)."""
    scanner = scanner_for("x-first", {"parsers": [{"name": "python-call-list"}, {"name": "x-pythonic"}]})
    assert isinstance(scanner, FirstScanner)
    assert scanner.feed('[f(a="ab') == [("begin", (), "array"), ("begin", (0,), "object"),
                                        ("set", (0, "name"), "f"), ("begin", (0, "arguments"), "object"),
                                        ("begin", (0, "arguments", "a"), "string"),
                                        ("text", (0, "arguments", "a"), "ab")]
    for _ in range(5_000):
        assert scanner.feed("abcd") == [("text", (0, "arguments", "a"), "abcd")]
        assert max(len(str(entry[2])) for merged in scanner._merged for entry in merged) <= 6


def test_the_parser_left_passes_its_deltas_through() -> None:
    """DeepSeek V3.2's arguments: ``json`` is ruled out by ``<``, the DSML parameters stream alone."""
    args = content_args_of("deepseek_v32")["value_parsers"]["arguments"]["args"]
    scanner = scanner_for("x-first", args)
    assert isinstance(scanner, FirstScanner)
    assert scanner.feed('\n<｜DSML｜parameter name="a" string="true">x') == [
        ("begin", (), "object"), ("begin", ("a",), "string"), ("text", ("a",), "x")]
    assert scanner._merged == [[], []]  # nothing kept: the x-findall scanner's deltas pass through
    assert scanner.feed("yz") == [("text", ("a",), "yz")]


def content_args_of(name: str) -> dict[str, Any]:
    args: dict[str, Any] = profiles.load(name).response_template["fields"]["tool_calls"]["content_args"]
    return args
