"""Every deliberate difference from the reference (transformers 5.24), one named test each.

docs/compatibility.md lists these tests. Where a corpus vector shows the reference's behaviour,
its id is named in the docstring; the values asserted here are chatcodec's, and every case also
goes through the three-way streaming check (one-shot, whole, 1 char, 20 random splits). The corpus
vectors were recorded with 5.23; where 5.24 changed the result to chatcodec's, the case is in
``test_reference_524.py`` instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import ResponseParseError, ResponseTemplateError, parse_response
from tests.conftest import load_json
from tests.helpers import QWEN_RESPONSE_TEMPLATE as QWEN
from tests.response_templates.helpers import assert_same, check_stream, stream

ANCHOR = "<|im_start|>assistant\n"
VECTORS = {v["id"]: v for v in load_json("response_vectors.json")["vectors"]}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def vector(case_id: str) -> dict[str, Any]:
    case = VECTORS[case_id]
    assert case.get("quirk") or case_id in {
        "x-non-repeating-last-wins", "x-zero-width-empty-open-pattern", "x-same-open-two-fields-alphabetical",
        "x-json-duplicate-keys", "x-merge-duplicates-off-last-wins"}
    return case


# -- nothing is lost ---------------------------------------------------------------------------


def test_text_before_and_after_tool_calls_is_kept() -> None:
    """Issue example; the reference returns no content (a later whitespace segment overwrites it)."""
    output = (
        'Let me look that up.\n\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n'
        '<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call><|im_end|>'
    )
    expected = {
        "role": "assistant",
        "content": "Let me look that up.",
        "tool_calls": [call("a", x=1), call("b")],
    }
    joined = check_stream(QWEN, output, expected)
    assert joined["content"] == "Let me look that up.\n\n\n"


def test_interleaved_content_segments_are_concatenated() -> None:
    """x-implicit-segments-last-wins: the reference keeps only 'C'."""
    case = vector("x-implicit-segments-last-wins")
    check_stream(
        case["template"],
        case["output"],
        {"role": "assistant", "content": "ABC", "tool_calls": [call("f"), call("g")]},
    )


def test_a_non_repeating_text_field_keeps_every_region() -> None:
    """x-non-repeating-last-wins: the reference keeps the last region."""
    case = vector("x-non-repeating-last-wins")
    check_stream(case["template"], case["output"], {"role": "assistant", "reasoning_content": "firstsecond"})


@pytest.mark.parametrize(("case_id", "key"), [("x-zero-width-empty-open-pattern", "fields.x.open_pattern"),
                                             ("x-zero-width-implicit-empty-close", "fields.c.close_pattern")])
def test_a_delimiter_that_matches_the_empty_string_is_refused_at_load(case_id: str, key: str) -> None:
    """Issue 13: an empty-matching delimiter shreds the output into empty regions (the reference
    opens '' everywhere and keeps the last region, or never consumes any text and returns {})."""
    case = vector(case_id)
    with pytest.raises(ResponseTemplateError) as raised:
        parse_response(case["output"], case["template"], prefix="")
    assert raised.value.path == key
    assert str(raised.value) == (
        f"{key}: this pattern matches the empty string almost everywhere (e.g. between 'x' and ' '), so it "
        "would open or close a region between any two characters and shred the output. A delimiter must "
        "match text (a look-ahead must wait for specific text, such as (?=<tool_call>))")


@pytest.mark.parametrize(("case_id", "parser", "problem"), [
    ("x-json-duplicate-keys", "json",
     "could not parse region as JSON: key 'a' is given twice in one object (a dict would keep only the last "
     "value)"),
    ("x-merge-duplicates-off-last-wins", "xml-inline",
     "xml-inline: key 'x' is given twice (the second at offset 10); a dict would keep only the last value. "
     "Set merge_duplicates to collect repeated keys into a list"),
])
def test_a_key_given_twice_is_an_error_not_an_overwrite(case_id: str, parser: str, problem: str) -> None:
    """Issue 13: the reference keeps the last value ({"a": "KEEP", "a": "x"} gives {"a": "x"}); the
    docs promised an error. Strict raises naming the field; keep records it and loses nothing."""
    case = vector(case_id)
    with pytest.raises(ResponseParseError) as raised:
        parse_response(case["output"], case["template"], prefix="")
    assert (raised.value.field, raised.value.parser) == ("a", parser)
    assert problem in str(raised.value)
    kept = parse_response(case["output"], case["template"], prefix="", errors="keep")
    assert kept["parse_errors"][0]["raw"] == case["output"]
    assert problem in kept["parse_errors"][0]["error"]


def test_text_after_the_implicit_close_is_kept() -> None:
    """x-implicit-text-after-close-overwrites: the reference replaces 'Hello' with 'garbage'."""
    case = vector("x-implicit-text-after-close-overwrites--whole")
    check_stream(case["template"], case["output"], {"role": "assistant", "content": "Hellogarbage"})


STRUCTURED = {
    "start_anchor": "x",
    "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}, "c": {}},
}


def test_a_structured_field_matched_twice_is_an_error_not_an_overwrite() -> None:
    """No vector: the reference silently keeps the second value."""
    with pytest.raises(ResponseParseError) as raised:
        parse_response("<n>1</n> and <n>2</n>", STRUCTURED, prefix="")
    assert (raised.value.field, raised.value.text) == ("n", "2")
    assert raised.value.partial_message == {"n": 1, "c": "and"}
    assert "matched a second time" in str(raised.value)
    kept = check_stream(STRUCTURED, "<n>1</n> and <n>2</n>", errors="keep")
    assert kept == {"n": "12", "c": " and <n>2</n>"}
    assert parse_response("<n>1</n> and <n>2</n>", STRUCTURED, prefix="", errors="keep") == {
        "n": 1,
        "c": "and <n>2</n>",
        "parse_errors": [
            {
                "field": "n",
                "parser": "int",
                "offset": 16,
                "text": "2",
                "error": "field 'n' (content parser 'int'): matched a second time, but the field has no "
                "'repeats', so it holds one value (the earlier one is kept). "
                'Set "repeats": true to collect every match',
                "raw": "<n>2</n>",
                "span": [13, 21],
            }
        ],
    }


QUOTED_THINK = "<think>plan</think>Use the <think> tag like this: <think>x</think> done<|im_end|>"


def test_a_quoted_reasoning_open_after_the_reasoning_closed_loses_nothing() -> None:
    """No vector. transformers 5.24 on QUOTED_THINK with this template (without ``opens_once``, which it
    refuses) reopens reasoning at the quoted ``<think>`` and overwrites both fields:
    ``{"reasoning_content": "tag like this: <think>x", "content": "done"}``: "plan" and "Use the" are
    lost. chatcodec keeps every region's text; with ``opens_once`` (every bundled reasoning field) the
    quoted markers are the answer's text, as vLLM's and SGLang's reasoning parsers read it."""
    fields = {"reasoning_content": {"open": "<think>", "close": "</think>"},
              "content": {"close": "<|im_end|>"}}
    template = {"start_anchor": "<|im_start|>assistant\n", "fields": fields}
    check_stream(template, QUOTED_THINK, {"reasoning_content": "plan tag like this: <think>x",
                                          "content": "Use the  done"})
    once = {**template, "fields": {**fields, "reasoning_content": {**fields["reasoning_content"],
                                                                   "opens_once": True}}}
    check_stream(once, QUOTED_THINK, {"reasoning_content": "plan",
                                      "content": "Use the <think> tag like this: <think>x</think> done"})


# -- stream equals one-shot ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "case_id", sorted(i for i in VECTORS if i.startswith("x-split-overlapping-close-at-"))
)
def test_overlapping_close_literals_wait_for_the_longer_one(case_id: str) -> None:
    """x-split-overlapping-close-at-*: with 'ENDX' at a chunk end the reference commits 'END'."""
    case = vector(case_id)
    message, _ = stream(case["template"], case["chunks"])
    assert message == {"x": "hi", "c": "tail"}
    check_stream(case["template"], case["output"], {"x": "hi", "c": "tail"})


def test_overlapping_open_literals_wait_for_the_longer_one() -> None:
    """x-open-list-overlap--c1: split after '<to' the reference opens on '<t' and keeps 'ool>hi'."""
    case = vector("x-open-list-overlap--c1")
    assert stream(case["template"], case["chunks"])[0] == {"x": "hi"}
    check_stream(case["template"], case["output"], {"x": "hi"})


def test_an_optional_regex_tail_cut_by_a_chunk_boundary_waits() -> None:
    """Issue example: '[TOOL_CALLS]read' then '[ARGS]' (the reference commits the shorter match)."""
    template = {
        "start_anchor": "[/INST]",
        "fields": {
            "tool_calls": {
                "open_pattern": r"\[TOOL_CALLS\](?P<name>\w+)(?:\[ARGS\])?",
                "close": "</s>",
                "repeats": True,
                "content": "json",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {},
        },
    }
    output = '[TOOL_CALLS]read[ARGS]{"path": "a.txt"}</s>'
    expected = {"tool_calls": [call("read", path="a.txt")]}
    assert stream(template, ["[TOOL_CALLS]read", "[ARGS]", '{"path": "a.txt"}</s>'])[0] == expected
    assert stream(template, ["[TOOL_CALLS]read", "[", "ARGS]", '{"path": "a.txt"}</s>'])[0] == expected
    check_stream(template, output, expected)


def test_a_pending_match_anywhere_before_a_complete_one_holds_it() -> None:
    """No vector: inside one regex delimiter the reference prefers a later complete match ('nd')
    over an earlier partial one ('<en'), so the split below closed the region inside '<end>' (5.23
    and 5.24)."""
    template = {"start_anchor": "x", "fields": {"c": {"close_pattern": "<end>|nd", "repeats": True}}}
    assert stream(template, ["a<end", ">b"])[0] == {"c": ["a", "b"]}
    check_stream(template, "a<end>b", {"c": ["a", "b"]})
    # the same in 5.24 with an end-of-input alternative: \Z at the buffer edge is the later complete
    # match, so fed one character at a time the pending \n\n streams as text ({"x": "ab\n\ncd"})
    template = {"start_anchor": "S", "fields": {"x": {"open": "<x>", "close_pattern": r"\n\n|\Z"}, "c": {}}}
    assert stream(template, list("<x>ab\n\ncd"))[0] == {"x": "ab", "c": "cd"}
    check_stream(template, "<x>ab\n\ncd", {"x": "ab", "c": "cd"})


@pytest.mark.parametrize(
    "case_id",
    [
        "x-dollar-close-before-newline--whole",
        "x-dollar-close-before-newline--c1",
        "x-dollar-close-before-newline--step3",
        "x-dollar-close-before-newline--step2",
    ],
)
def test_dollar_means_the_end_of_the_input(case_id: str) -> None:
    """x-dollar-close-*: Python's $ also matches before a final newline. 5.23 closed the region at
    chunks ending in a newline (these vectors); 5.24 waits, as chatcodec does, so the messages
    agree, but at the end of the input 5.24 still ends the region before the final newline (which
    goes to the implicit field) and holds a chunk-final newline back. chatcodec reads $ as the end
    of the input (SPEC §1.2): the newline is the region's and streams at once."""
    case = vector(case_id)
    assert stream(case["template"], case["chunks"])[0] == {"x": "line1\nline2"}
    check_stream(case["template"], case["output"], {"x": "line1\nline2"})


def test_dollar_at_a_chunk_final_newline_does_not_split_the_body() -> None:
    """x-dollar-close-stream-split-newline: 5.23 streamed body '\\n world' only (5.24 gives the
    whole body too, holding the newline back until ' world' comes)."""
    case = vector("x-dollar-close-stream-split-newline")
    assert stream(case["template"], case["chunks"])[0] == {"role": "assistant", "body": "hello\n world"}
    check_stream(case["template"], case["output"], {"role": "assistant", "body": "hello\n world"})


def test_dollar_keeps_a_final_newline_in_its_region() -> None:
    """x-dollar-close-drops-final-newline (held-back corpus): 5.24 still ends a ``$`` region before
    the output's final newline, which goes to the implicit field (``{"x": "ab", "c": "\\n"}``) or,
    when the region is the implicit field or there is none, is lost (``"hello"``, ``{"x": "ab"}``)."""
    kept = {"content_args": {"strip": False}}
    dollar = {"close_pattern": "$", **kept}
    check_stream({"start_anchor": "S", "fields": {"x": {"open": "<x>", **dollar}, "c": kept}}, "<x>ab\n",
                 {"x": "ab\n"})
    check_stream({"start_anchor": "S", "fields": {"x": {"open": "<x>", **dollar}}}, "<x>ab\n", {"x": "ab\n"})
    check_stream({"start_anchor": "S", "fields": {"tag": {"open": "<t>", "close": "</t>"}, "body": dollar}},
                 "hello\n", {"body": "hello\n"})


def test_a_json_close_inside_a_string_is_text() -> None:
    """Issue example; the reference closes the region inside the string and fails on the JSON."""
    output = '<tool_call>{"name": "a", "arguments": {"s": "</tool_call>"}}</tool_call>'
    check_stream(QWEN, output, {"role": "assistant", "tool_calls": [call("a", s="</tool_call>")]})


# -- values ---------------------------------------------------------------------------------------


def test_join_replaces_a_string_default() -> None:
    """x-join-with-string-default: the reference appended to the '' default (' a b')."""
    case = vector("x-join-with-string-default")
    check_stream(
        case["template"], case["output"], {"role": "assistant", "reasoning_content": "a b", "content": "x"}
    )


def test_a_required_field_that_matched_stays_even_when_empty() -> None:
    """x-optional-false-empty-region: the reference passed the check, then dropped the key."""
    case = vector("x-optional-false-empty-region")
    check_stream(case["template"], case["output"], {"content": ""})


def test_numbers_are_ascii_decimal() -> None:
    """x-typing-python-numeric-quirks and x-int-content-python-quirks: Python's int()/float() accept
    '1_000' and non-ASCII digits."""
    case = vector("x-typing-python-numeric-quirks")
    check_stream(
        case["template"],
        case["output"],
        {"role": "assistant", "tool_calls": [call("t", a="1_000", b="\u0663", c="\uff17", d="1_000.5")]},
        tools=case["tools"],
    )
    case = vector("x-int-content-python-quirks")
    with pytest.raises(ResponseParseError, match="invalid literal for int: '4_2'"):
        parse_response(case["output"], case["template"], prefix="")


def test_a_string_type_in_a_union_keeps_scalar_text() -> None:
    """x-typing-string-first-union-still-casts: the reference skips 'string' and casts anyway."""
    case = vector("x-typing-string-first-union-still-casts")
    check_stream(
        case["template"],
        case["output"],
        {"role": "assistant", "tool_calls": [call("t", a="5", b="1.50", c="true")]},
        tools=case["tools"],
    )


@pytest.mark.parametrize("case_id", ["x-typing-nan-json-value-untouched", "x-json-nan-token"])
def test_json_has_no_nan_or_infinity(case_id: str) -> None:
    """x-json-nan-token, x-typing-nan-json-value-untouched: Python's json accepts NaN/Infinity."""
    case = vector(case_id)
    with pytest.raises(ResponseParseError, match="NaN is not valid JSON"):
        parse_response(case["output"], case["template"], prefix="", tools=case["tools"])
    kept = parse_response(case["output"], case["template"], prefix="", tools=case["tools"], errors="keep")
    assert [e["error"].split(": ", 2)[-1] for e in kept["parse_errors"]] == [
        "NaN is not valid JSON (JSON has no NaN or Infinity)"
    ]


# -- load-time validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case_id", "path", "fragment"),
    [
        (
            "x-xml-inline-missing-tag-pattern-unused",
            "fields.a.content_args.tag_pattern",
            "requires 'tag_pattern'",
        ),
        (
            "x-xml-inline-missing-tag-pattern-used",
            "fields.a.content_args.tag_pattern",
            "requires 'tag_pattern'",
        ),
        ("x-xml-inline-pattern-without-key", "fields.a.content_args.tag_pattern", "named group 'key'"),
        (
            "x-value-parser-unknown-name",
            "fields.a.content_args.value_parser.name",
            "unknown content parser 'nope'",
        ),
    ],
)
def test_content_args_are_validated_when_the_template_loads(case_id: str, path: str, fragment: str) -> None:
    """The reference checks these only when a region closes (and raises KeyError for the last)."""
    case = vector(case_id)
    with pytest.raises(ResponseTemplateError) as raised:
        parse_response(case["output"], case["template"], prefix="")
    assert raised.value.path == path
    assert fragment in str(raised.value)


def test_two_fields_with_the_same_open_are_a_load_error() -> None:
    """x-same-open-two-fields-alphabetical: the reference opens 'alpha' (ties break on the field
    name), so 'zeta' can never open; chatcodec refuses the template, naming both fields."""
    case = vector("x-same-open-two-fields-alphabetical")
    assert case["expected"] == {"alpha": "a"}
    with pytest.raises(ResponseTemplateError) as raised:
        parse_response(case["output"], case["template"], prefix="")
    assert str(raised.value) == (
        "fields.zeta.open: '<x>' is also the open of field 'alpha', which wins ties (opens are ranked by "
        "field name), so field 'zeta' could never open there"
    )


# -- same as the reference, decided -------------------------------------------------------------


def test_a_caret_start_pattern_opens_at_the_start_of_the_prefix_remainder() -> None:
    """x-ernie-prefix-newline-flips-to-thinking: kept as the reference does it. '^' marks the start
    of the assistant message (right after the start anchor, where the prefix remainder begins), so
    a newline left after 'Assistant:' opens thinking there. Nothing is lost and streaming agrees;
    a template for such prompts should put the newline in the start anchor."""
    case = vector("x-ernie-prefix-newline-flips-to-thinking")
    expected = {"role": "assistant", "thinking": "<response>\nHello\n</response>"}
    check_stream(case["template"], case["output"], expected, prefix=case["prefix"])
    fixed = {**case["template"], "start_anchor": "Assistant:\n"}
    assert_same(
        parse_response(case["output"], fixed, prefix=case["prefix"]),
        {"role": "assistant", "content": "Hello"},
    )


def test_a_zero_width_open_right_after_a_zero_width_close_at_the_same_place() -> None:
    """QA round 2 (the reference agrees): a zero-width close then another field's zero-width open,
    both at the '[{' that starts the tool calls."""
    template = {
        "start_anchor": "S",
        "fields": {
            "reasoning_content": {"open": "<think>", "close_pattern": r"(?=\[\{)"},
            "tool_calls": {"open_pattern": r"(?=\[\{)", "content": "json"},
            "content": {},
        },
    }
    check_stream(template, '<think>I should call it.[{"name": "f"}]',
                 {"reasoning_content": "I should call it.", "tool_calls": [{"name": "f"}]})


def test_the_same_zero_width_delimiter_never_commits_twice_at_one_place() -> None:
    """No vector (the reference loops forever): a field whose open and close are the same
    look-ahead would reopen at the same place again and again; the second open there is refused,
    so the parse ends."""
    template = {"start_anchor": "S", "fields": {"x": {"open_pattern": "(?=a)", "close_pattern": "(?=a)"}}}
    message, events = stream(template, ["ab"])
    assert message == {}
    assert events == [{"type": "region_open", "field": "x"},
                      {"type": "region_close", "field": "x", "value": ""}]
    check_stream(template, "abab", {})


# -- round-2 QA: values the reference gives differently (or crashes on) --------------------------


def _repeats(default: Any, **field: Any) -> dict[str, Any]:
    spec = {"open": "<r>", "close": "</r>", "repeats": True, **field}
    return {"start_anchor": "S", "defaults": {"r": default}, "fields": {"r": spec, "c": {}}}


@pytest.mark.parametrize(
    ("template", "output", "expected"),
    [
        (_repeats(["d"]), "<r>a</r>", {"r": ["a"]}),  # reference: ['d', 'a']
        (_repeats(None), "<r>a</r>", {"r": ["a"]}),  # reference: AttributeError
        (_repeats("d"), "<r>a</r>", {"r": ["a"]}),  # reference: AttributeError
        (_repeats(5, join=" "), "<r>a</r><r>b</r>", {"r": "a b"}),  # reference: TypeError
        (_repeats(["d"]), "no match", {"r": ["d"], "c": "no match"}),  # unmatched: the default stays
    ],
    ids=["list-default", "none-default", "string-default", "join-int-default", "unmatched"],
)
def test_the_first_match_of_a_repeating_field_replaces_its_default(
    template: dict[str, Any], output: str, expected: dict[str, Any]
) -> None:
    check_stream(template, output, expected)


def _number(content: str) -> dict[str, Any]:
    field = {"open": "<n>", "close": "</n>", "content": content, "content_args": {"strip": False}}
    return {"start_anchor": "S", "fields": {"n": field, "c": {}}}


@pytest.mark.parametrize(("content", "kind"), [("int", "int"), ("float", "float")])
def test_a_number_with_strip_false_keeps_its_whitespace_and_is_not_a_number(content: str, kind: str) -> None:
    """The reference's int()/float() ignore the whitespace strip: false asked to keep (5, 5.5)."""
    with pytest.raises(ResponseParseError, match=rf"invalid literal for {kind}: ' 5\\n'"):
        parse_response("<n> 5\n</n>", _number(content), prefix="")
    check_stream(_number(content), "<n>5</n>", {"n": 5 if content == "int" else 5.0})


def test_an_xml_inline_tag_whose_value_group_did_not_take_part_has_an_empty_value() -> None:
    """The reference gives None, and with a value_parser crashes (AttributeError on None.strip)."""
    field = {"open": "<x>", "close": "</x>", "content": "xml-inline",
             "content_args": {"tag_pattern": r"<(?P<key>\w+)(?:=(?P<value>\w+))?/>"}}
    template = {"start_anchor": "S", "fields": {"x": field, "c": {}}}
    check_stream(template, "<x><a/><b=1/></x>", {"x": {"a": "", "b": "1"}})
    field["content_args"]["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
    check_stream(template, "<x><a/><b=1/></x>", {"x": {"a": "", "b": 1}})
