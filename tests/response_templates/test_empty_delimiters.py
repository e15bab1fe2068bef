"""Issue 13: a delimiter that matches the empty string almost everywhere is refused at load.

``a*``, ``x?``, ``""``, ``\\s*``, ``(?=.)`` and ``\\b`` were accepted and shredded the output into
empty regions (text landed in odd places or vanished). Look-aheads that wait for specific text
(``(?=<tool_call>)``, ``(?=<)``) and anchors (``^``, ``\\Z``) keep working; lint flags the refused
ones (``RT013``) next to the load error.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import load_response_template, parse_response
from chatcodec.analysis.lint import lint_response_template
from chatcodec.errors import ResponseTemplateError

EMPTY = ["", "a*", "x?", r"\s*", "(?=.)", r"(?=\S)", r"\b", r"\n?", "(?:a|)"]
TEXT_BOUND = ["(?=<tool_call>)", "(?=<)", "^", r"\Z", "$", r"(?<=\)\])", r"(?:^|<think>\s*)", "</x>|(?=<y>)"]


def template(key: str, pattern: str) -> dict[str, Any]:
    if key == "start_anchor_pattern":
        return {"start_anchor_pattern": pattern, "fields": {"content": {}}}
    field: dict[str, Any] = {"open": "<x>", "close": "</x>"}
    field.pop(key.removesuffix("_pattern"))
    field[key] = pattern
    return {"start_anchor": "S", "fields": {"x": field, "content": {}}}


@pytest.mark.parametrize("pattern", EMPTY)
@pytest.mark.parametrize("key", ["open_pattern", "close_pattern", "start_anchor_pattern"])
def test_an_empty_matching_pattern_is_refused_naming_its_key(key: str, pattern: str) -> None:
    path = key if key == "start_anchor_pattern" else f"fields.x.{key}"
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template(template(key, pattern))
    assert raised.value.path == path
    assert str(raised.value).startswith(f"{path}: this pattern matches the empty string almost everywhere")
    assert [finding.code for finding in lint_response_template(template(key, pattern))
            if finding.code == "RT013"] == ["RT013"]


@pytest.mark.parametrize("pattern", TEXT_BOUND)
@pytest.mark.parametrize("key", ["open_pattern", "close_pattern"])
def test_zero_width_patterns_that_wait_for_text_still_load(key: str, pattern: str) -> None:
    load_response_template(template(key, pattern))
    assert "RT013" not in [finding.code for finding in lint_response_template(template(key, pattern))]


def test_a_look_ahead_close_still_splits_where_it_should() -> None:
    spec = {"start_anchor": "S", "fields": {"x": {"open": "<x>", "close_pattern": "(?=<)"}, "content": {}}}
    assert parse_response("a<x>b<y>c", spec, prefix="") == {"content": "a<y>c", "x": "b"}
