"""The examples in the decoding modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest

import pytest

from chatcodec.response_templates import api, engine, template


@pytest.mark.parametrize("module", [api, engine, template], ids=lambda m: m.__name__)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)  # type: ignore[arg-type]
    assert result.failed == 0
    assert result.attempted > 0
