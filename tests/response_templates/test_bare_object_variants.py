"""``x-bare-object``'s readings of what real Gemma 4 outputs write besides the template's form.

* With ``bare_strings``, a bare value of an object runs on past a ``,`` that no key follows
  (``{location:San Francisco, CA}``).
* With ``inner_close_as``, the string token written inside a string is text (vLLM #48678: the
  triple quotes of a SQL string), and a key may follow a string without its ``,`` (yzma #243).
* With ``single_quotes``, a value written as a Python single-quoted string is that string
  (vLLM #51284: ``data_refs:['ds_1']``), where a bare word would keep the quotes.
* With ``equals_keys``, a key whose span holds no ``:`` may end at ``=`` (a captured Gemma 4 output
  in a vLLM #51307 comment: ``,data_refs=["ds_1"],note="..."``).

The first two only read what were errors: every text the parser reads without them is read alike with
them; and the value scanner streams what the parser returns at every chunking (property tests).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.scanners.shadow import Shadow
from tests.response_templates.test_bare_strings import BARE, STRICT, Q, parse, scan

GEMMA: dict[str, Any] = {**BARE, "inner_close_as": '"', "single_quotes": True, "equals_keys": True}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{location:San Francisco, CA}", {"location": "San Francisco, CA"}),
        ("{location:Tokyo, Japan,unit:celsius}", {"location": "Tokyo, Japan", "unit": "celsius"}),
        ("{a:5, Japan}", {"a": "5, Japan"}),
        ("{q:hello, world: hi}", {"q": "hello", "world": "hi"}),
        ("{a:{b:New York, NY},c:[x, y]}", {"a": {"b": "New York, NY"}, "c": ["x", "y"]}),
    ],
)
def test_a_comma_that_no_key_follows_is_part_of_a_bare_value(text: str, expected: dict[str, Any]) -> None:
    assert parse(text, BARE) == expected
    assert parse(text, GEMMA) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a:x,}", "x-bare-object: ':' expected after the key at offset 5"),
        (f"{{a:x, {Q}y{Q}}}", "x-bare-object: ':' expected after the key at offset 17"),
        ("{a:x, y", "x-bare-object: ':' expected after the key at offset 6"),
    ],
)
def test_a_comma_before_blank_or_string_text_still_separates(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse(text, BARE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{{code:{Q}sql({Q}{Q}{Q} SELECT 1 {Q}{Q}{Q}){Q},n:1}}", {"code": 'sql(""" SELECT 1 """)', "n": 1}),
        (f"{{a:{Q}x{Q}b{Q}, c:1}}", {"a": 'x"b', "c": 1}),
        (f"{{a:[{Q}say {Q}hi{Q} now{Q}]}}", {"a": ['say "hi" now']}),
        (f"{{{Q}k k{Q}:1}}", {"k k": 1}),
        (f"{{command:{Q}look{Q}angle:90}}", {"command": "look", "angle": 90}),
        (f"{{a:{Q}{Q},b:{Q}y{Q}}}", {"a": "", "b": "y"}),
    ],
)
def test_inner_close_as_reads_the_string_token_inside_a_string(text: str, expected: dict[str, Any]) -> None:
    assert parse(text, GEMMA) == expected
    assert scan(text, list(text), GEMMA) == scan(text, [text], GEMMA)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{{a:{Q}x{Q}b c:1}}", "x-bare-object: a string opened at offset 3 is never closed"),
        (f"{{a:{{b:{Q}x{Q}}}c:1}}", "x-bare-object: '}' expected at offset 18"),
        (f"{{a:{Q}x{Q}]}}", "x-bare-object: '}' expected at offset 14"),
    ],
)
def test_inner_close_as_refuses_what_still_is_no_object(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse(text, GEMMA)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{data_refs:['ds_152a4bfd970b4313']}", {"data_refs": ["ds_152a4bfd970b4313"]}),
        ("{pattern:':\\s*\\w+'}", {"pattern": ":\\s*\\w+"}),
        (f"{{include:{Q}*.py{Q},pattern:'abc',path:{Q}/tmp{Q}}}",
         {"include": "*.py", "pattern": "abc", "path": "/tmp"}),
        ("{a:'it's', b:['x, y', 'z']}", {"a": "it's", "b": ["x, y", "z"]}),
        ("{ns:k:'v'}", {"ns:k": "v"}),
    ],
)
def test_single_quotes_read_a_python_string_value(text: str, expected: dict[str, Any]) -> None:
    assert parse(text, GEMMA) == expected
    assert scan(text, list(text), GEMMA) == scan(text, [text], GEMMA)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("{a:'x'y}", {"a": "'x'y"}), ("{pattern:'abc}", {"pattern": "'abc"}),
     ("{a:'x, b:1}", {"a": "'x", "b": 1})],
)
def test_a_quote_that_nothing_ends_begins_a_bare_word(text: str, expected: dict[str, Any]) -> None:
    """As without the option (Ollama's preserves_unterminated_single_quote keeps 'abc too)."""
    assert parse(text, GEMMA) == expected
    assert scan(text, list(text), GEMMA) == scan(text, [text], GEMMA)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'{{code:{Q}x = 1\n{Q},data_refs=["ds_1"],note="Smith et al., \\"Fraud\\", 2024"}}',
         {"code": "x = 1\n", "data_refs": ["ds_1"], "note": 'Smith et al., "Fraud", 2024'}),
        ("{url:https://site.com/page?id=42}", {"url": "https://site.com/page?id=42"}),
        ("{q:a=1}", {"q": "a=1"}),
        ("{a=1,b=2}", {"a": 1, "b": 2}),
        ("{a:x, b=1}", {"a": "x", "b": 1}),
    ],
)
def test_equals_keys_ends_a_key_at_equals_where_no_colon_could(text: str, expected: dict[str, Any]) -> None:
    assert parse(text, GEMMA) == expected
    assert scan(text, list(text), GEMMA) == scan(text, [text], GEMMA)


def test_the_scanner_holds_a_string_token_until_what_follows_it_decides() -> None:
    from chatcodec.response_templates.scanners import scanner_for

    scanner = scanner_for("x-bare-object", GEMMA)
    assert scanner is not None
    assert scanner.feed(f"{{a:{Q}x{Q}") == [("begin", (), "object"), ("begin", ("a",), "string"),
                                            ("text", ("a",), "x")]
    assert scanner.feed(" ") == []
    assert scanner.feed("b") == []  # a key may still follow ('b:') or text of the string
    assert scanner.feed(" c") == [("text", ("a",), '"'), ("text", ("a",), " b c")]
    assert scanner.feed(f"{Q},") == [("end", ("a",), None)]


_PIECES = ["{", "}", "[", "]", ",", ":", " ", "a", "b c", "1", "k:", Q, f"{Q}{Q}", '"x"', "\n", "'", "'s'",
           "=", "k="]
TEXTS = st.lists(st.sampled_from(_PIECES), max_size=16).map(lambda pieces: "{" + "".join(pieces))


@given(TEXTS, st.data())
def test_the_scanner_agrees_with_the_parser_at_every_chunking(text: str, data: st.DataObject) -> None:
    try:
        value = parse(text, GEMMA)
    except ValueError:
        return
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=6)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if a < b]
    whole = scan(text, [text], GEMMA)
    assert scan(text, chunks, GEMMA) == whole
    assert scan(text, list(text), GEMMA) == whole
    shadow = Shadow()
    assert all(shadow.apply(delta) for delta in whole)
    consistent, _ = shadow.complete(value)
    assert consistent


@given(TEXTS)
def test_the_options_read_every_text_they_did_not_need_alike(text: str) -> None:
    for narrow, wide in ((STRICT, BARE), (STRICT, GEMMA),
                         (BARE, {**GEMMA, "single_quotes": False, "equals_keys": False})):
        try:
            before = parse(text, narrow)
        except ValueError:
            continue
        assert parse(text, wide) == before
