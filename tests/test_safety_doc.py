"""``docs/safety.md`` lists every bound with its value (issue 13: one place to read them all).

Every public upper-case constant of the modules that hold the bounds must be named in the document
next to its value as the document writes numbers (``1,000,000``, ``256 MiB``, ``1.0 s``).
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from chatcodec.chat_templates import limits as chat_limits
from chatcodec.cli import io as cli_io
from chatcodec.response_templates import backtracking
from chatcodec.response_templates import limits as response_limits

DOC = (Path(__file__).resolve().parent.parent / "docs" / "safety.md").read_text(encoding="utf-8")
MODULES = [chat_limits, response_limits, backtracking, cli_io]
#: Constants that are not bounds (error texts, the set of sized types).
NOT_BOUNDS = {"NESTING_ERROR", "RENDER_TIME_HINT", "SIZED_TYPES"}


def _written(value: float) -> set[str]:
    """The ways the document may write ``value``."""
    forms = {f"{value:,}", str(value)}
    if isinstance(value, float):
        forms |= {f"{value:g} s", f"{value} s", f"| {value:g} |"}
    if isinstance(value, int) and value % (1024 * 1024) == 0:
        forms.add(f"{value // (1024 * 1024)} MiB")
    return forms


def _bounds(module: types.ModuleType) -> list[tuple[str, float]]:
    return [(name, value) for name, value in vars(module).items()
            if name.isupper() and not name.startswith("_") and name not in NOT_BOUNDS
            and isinstance(value, int | float) and not isinstance(value, bool)]


BOUNDS = [(module.__name__, name, value) for module in MODULES for name, value in _bounds(module)]


def test_the_modules_hold_bounds() -> None:
    assert {name for _, name, _ in BOUNDS} >= {"MAX_RENDER_MEMORY", "REGEX_TIMEOUT", "MAX_NESTING_DEPTH",
                                               "MAX_OUTPUT_BYTES", "MAX_COMPARED_ITEMS"}


@pytest.mark.parametrize(("module", "name", "value"), BOUNDS, ids=[name for _, name, _ in BOUNDS])
def test_every_bound_is_listed_with_its_value(module: str, name: str, value: float) -> None:
    lines = [line for line in DOC.splitlines() if f"`{name}`" in line]
    assert lines, f"{module}.{name} is not in docs/safety.md"
    assert any(form in line for line in lines for form in _written(value)), (name, value)
