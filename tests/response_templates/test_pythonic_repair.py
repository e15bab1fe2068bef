"""x-pythonic reads the spellings models write that Python's grammar rejects (``pythonic_repair``).

The cases come from vLLM's LFM2 parser tests (``tests/tool_parsers/test_lfm2_tool_parser.py``:
``multiline_string_arg``, ``leading_zero_int``, ``nul_byte_string_arg``), which read them
from real agentic outputs; each is checked through the ``x-pythonic`` parser and through
:func:`repair` itself, and text Python already accepts is never rewritten.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.extensions import EXTENSIONS
from chatcodec.response_templates.pythonic_repair import repair


def parse(text: str) -> object:
    return EXTENSIONS["x-pythonic"][0](text, {})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[exec(command='cat > f.py << EOF\nimport csv\nprint(1)\nEOF')]",
            [{"name": "exec", "arguments": {"command": "cat > f.py << EOF\nimport csv\nprint(1)\nEOF"}}],
        ),
        ("[set_date(month=07, day=05)]", [{"name": "set_date", "arguments": {"month": 7, "day": 5}}]),
        ("[f(a='x' 'y', b='1\r\n2')]", [{"name": "f", "arguments": {"a": "xy", "b": "1\r\n2"}}]),
        (
            "[f(n=007.5, m=0x1F, k=00, s='07')]",
            [{"name": "f", "arguments": {"n": 7.5, "m": 31, "k": 0, "s": "07"}}],
        ),
    ],
)
def test_x_pythonic_reads_what_models_write(text: str, expected: object) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "repaired"),
    [
        ("[f(a='x\ny')]", "[f(a='x\\ny')]"),
        ("[f(a=\"x\ry\")]", "[f(a=\"x\\ry\")]"),
        ("[f(a=07, b=-0012, c=x07)]", "[f(a=7, b=-12, c=x07)]"),
        ("[f(a='''x\ny''', b=07)]", "[f(a='''x\ny''', b=7)]"),
        ("[f(a='\\'', b=07)]", "[f(a='\\'', b=7)]"),
    ],
)
def test_repair_rewrites_only_those_spellings(text: str, repaired: str) -> None:
    assert repair(text) == repaired


def test_repair_leaves_raw_strings_and_valid_text() -> None:
    assert repair("[f(a=r'x\ny')]") is None  # an escape would add a backslash to a raw string
    assert repair("[f(a='x', b=0.5, c=0e1, d=0)]") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[f(a=r'x\ny')]", "x-pythonic: not a Python list of calls (offset"),
        ("[f(a='unterminated)]", "x-pythonic: not a Python list of calls (offset"),
        # every quote is followed by what cannot follow a value, so the string is never closed
        ("[bash(command='sed -n '1,2p' f.txt' x)]", "x-pythonic: not a Python list of calls (offset"),
        ("[f(a=07, b=g(c=1))]", "call 'f', argument 'b': 'g(c=1)' is not a literal"),
    ],
)
def test_what_the_repairs_cannot_make_valid_still_raises(text: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse(text)
    assert message in str(error.value)


_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\\'\r"), max_size=30)


@given(st.lists(_TEXT, min_size=1, max_size=4))
def test_strings_with_raw_line_breaks_read_as_written(values: list[str]) -> None:
    """Every string written between quotes with its line breaks raw reads back as the same string."""
    arguments = ", ".join(f"a{index}='{value}'" for index, value in enumerate(values))
    text = f"[f({arguments})]"
    expected = [{"name": "f", "arguments": {f"a{index}": value for index, value in enumerate(values)}}]
    assert parse(text) == expected


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=1, max_value=4))
def test_leading_zeros_read_as_the_decimal_number(number: int, zeros: int) -> None:
    assert parse(f"[f(n={'0' * zeros}{number})]") == [{"name": "f", "arguments": {"n": number}}]


def test_repaired_text_is_python() -> None:
    repaired = repair("[exec(command='a\nb', n=08)]")
    assert repaired is not None
    assert isinstance(ast.parse(repaired, mode="eval").body, ast.List)
