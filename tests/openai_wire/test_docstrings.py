"""The examples in the OpenAI modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest

import pytest

from chatcodec.openai import chat, ids, messages


@pytest.mark.parametrize("module", [chat, ids, messages], ids=lambda m: m.__name__)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)  # type: ignore[arg-type]
    assert result.failed == 0
    assert result.attempted > 0
