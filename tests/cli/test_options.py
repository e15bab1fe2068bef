"""The shared argument types of ``chatcodec.cli.options``: values in, argparse errors out."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from chatcodec.cli.options import positive_int, seconds


@pytest.mark.parametrize(
    ("convert", "text", "expected"),
    [
        (positive_int, "1", 1),
        (positive_int, " 12 ", 12),
        (seconds, "0", 0.0),
        (seconds, "0.25", 0.25),
    ],
)
def test_good_values(convert: Any, text: str, expected: Any) -> None:
    assert convert(text) == expected


@pytest.mark.parametrize(
    ("convert", "text", "message"),
    [
        (positive_int, "0", "expected a whole number of at least 1, got '0'"),
        (positive_int, "1.5", "expected a whole number of at least 1, got '1.5'"),
        (seconds, "-0.1", "expected seconds, a finite number of at least 0, got '-0.1'"),
        (seconds, "1e999", "expected seconds, a finite number of at least 0, got '1e999'"),
    ],
)
def test_bad_values_are_argument_type_errors(convert: Any, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        convert(text)
    assert str(raised.value) == message
