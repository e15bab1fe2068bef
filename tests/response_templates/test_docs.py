"""``docs/response_templates.md``: every example in it runs as written and prints what it says."""

from __future__ import annotations

import doctest

from tests.conftest import ROOT


def test_the_template_reference_examples() -> None:
    result = doctest.testfile(str(ROOT / "docs" / "response_templates.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10
    assert result.failed == 0
