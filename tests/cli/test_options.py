"""The shared argument types of ``chatcodec.cli.options``: values in, argparse errors out."""

from __future__ import annotations

import argparse
import datetime
from typing import Any

import pytest

from chatcodec.cli.options import iso_datetime, positive_int, seconds, template_variable


@pytest.mark.parametrize(
    ("convert", "text", "expected"),
    [
        (positive_int, "1", 1),
        (positive_int, " 12 ", 12),
        (seconds, "0", 0.0),
        (seconds, "0.25", 0.25),
        (iso_datetime, "2026-01-15T12:00:00", datetime.datetime(2026, 1, 15, 12, 0)),
        (iso_datetime, "2026-01-15", datetime.datetime(2026, 1, 15)),
        (template_variable, "enable_thinking=false", ("enable_thinking", False)),
        (template_variable, "name=Ada", ("name", "Ada")),
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
        (iso_datetime, "notadate",
         "expected an ISO date and time such as 2026-01-15T12:00:00, got 'notadate'"),
        (template_variable, "foo", "expected KEY=VALUE with a template variable name as KEY, got 'foo'"),
        (template_variable, "1x=2", "expected KEY=VALUE with a template variable name as KEY, got '1x=2'"),
    ],
)
def test_bad_values_are_argument_type_errors(convert: Any, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        convert(text)
    assert str(raised.value) == message
