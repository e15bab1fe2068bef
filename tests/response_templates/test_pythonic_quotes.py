"""``x-pythonic``: a string's own quote written unescaped inside it, and set literals.

vLLM's LFM2 parser reads ``bash(command='sed -n '360,450p' f.py')`` as the command with its quotes
(``nested_quote``) and ``label(tags={'urgent', 'bug'})`` as a list (``set_arg``). A quote ends a
string only where what follows it (after whitespace) can follow a value; the parser
(:mod:`chatcodec.response_templates.pythonic_repair`) and the value scanner decide alike, so the
streamed values and the message agree at any chunking (``check_values``).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.ext_pythonic import parse_pythonic
from chatcodec.response_templates.pythonic_repair import ends_string, repair
from tests.response_templates.value_helpers import check_values

TEMPLATE = {"start_anchor": "A:", "fields": {
    "calls": {"open": "<c>", "close": "</c>", "repeats": True, "flatten": True, "content": "x-pythonic"},
    "content": {}}}


@pytest.mark.parametrize(("text", "arguments"), [
    ("[bash(command='sed -n '360,450p' /testbed/f.py')]", {"command": "sed -n '360,450p' /testbed/f.py"}),
    ("[send(text='It's done, isn't it?', to='Bob')]", {"text": "It's done, isn't it?", "to": "Bob"}),
    ('[search(q="the "best" pizza", n=3)]', {"q": 'the "best" pizza', "n": 3}),
    ("[f(a='x' 'y')]", {"a": "xy"}),  # Python joins adjacent strings: both quotes end a string
    ("[f(d={'it's': 'a 'b' c'})]", {"d": {"it's": "a 'b' c"}}),
    ("[label(tags={'urgent', 'bug'}, n={1, 2.5})]", {"tags": ["urgent", "bug"], "n": [1, 2.5]}),
])
def test_what_is_read(text: str, arguments: dict[str, object]) -> None:
    name = text[1 : text.index("(")]
    assert parse_pythonic(text, {}) == [{"name": name, "arguments": arguments}]
    check_values(TEMPLATE, f"<c>{text}</c>")


def test_a_set_that_gives_an_element_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="set element 'bug' is given twice"):
        parse_pythonic("[label(tags={'bug', 'bug'})]", {})


def test_repair_escapes_only_the_quotes_that_do_not_end_the_string() -> None:
    assert repair("[f(a='x 'y', b='z')]") == "[f(a='x \\'y', b='z')]"
    assert repair("[f(a=r'x 'y')]") is None  # a raw string keeps its text: nothing to escape
    assert ends_string("'a' ,", 3) and ends_string("'a'", 3) and not ends_string("'a' b", 3)


_TEXT = st.text(alphabet=st.sampled_from(list("ab '\",:)]}x")), max_size=12)


@given(_TEXT)
def test_a_quote_is_text_unless_a_value_could_end_there(inner: str) -> None:
    """Whatever a single-quoted argument holds, the parse is the string up to the first quote that
    is followed (after spaces) by what may follow a value, and streaming agrees."""
    source = f"[f(a='{inner}')]"
    start = len("[f(a='")
    end = next(at for at in range(start, len(source)) if source[at] == "'" and ends_string(source, at + 1))
    if source[end + 1 :].lstrip()[:1] in ("'", '"'):
        return  # Python joins adjacent strings ('a' 'b'): test_what_is_read has it
    try:
        value = parse_pythonic(source, {})
    except ValueError:
        return  # the rest after that quote is no Python call: an error, never a shortened string
    assert value[0]["arguments"]["a"] == source[start:end]
    check_values(TEMPLATE, f"<c>{source}</c>", splits=2)
