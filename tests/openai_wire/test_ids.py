"""``ToolCallIds``: id forms, seeded ids, and each profile's form."""

from __future__ import annotations

import re

import pytest

from chatcodec import profiles
from chatcodec.openai import DEFAULT_FORM, ToolCallIds


def test_forms() -> None:
    assert ToolCallIds("functions.{name}:{index}")("get_weather", 2) == "functions.get_weather:2"
    assert ToolCallIds("functions.{name}:{index}", start=3)("f", 0) == "functions.f:3"
    assert re.fullmatch(r"[A-Za-z0-9]{9}", ToolCallIds("{alnum:9}")("f", 0))
    assert re.fullmatch(r"chatcmpl-tool-[0-9a-f]{32}", ToolCallIds("chatcmpl-tool-{hex:32}")("f", 0))
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", ToolCallIds()("f", 0))
    assert DEFAULT_FORM == "call_{alnum:24}"


def test_seeded_ids_are_a_function_of_seed_name_and_index() -> None:
    ids = ToolCallIds(seed=0)
    assert ids("f", 0) == ToolCallIds(seed=0)("f", 0) == ToolCallIds(seed="0")("f", 0)
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", ids("f", 0))
    assert len({ids("f", 0), ids("f", 1), ids("g", 0), ToolCallIds(seed=1)("f", 0)}) == 4
    unseeded = ToolCallIds()
    assert unseeded("f", 0) != unseeded("f", 0)


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ("call_{alnum}", "unknown placeholder at offset 5"),
        ("{hex:0}", "unknown placeholder at offset 0"),
        ("id_{idx}", "unknown placeholder at offset 3"),
        ("id}", "unknown placeholder at offset 2"),
        ("", "expected a non-empty string"),
    ],
)
def test_bad_forms_are_clear_errors(form: str, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        ToolCallIds(form)


def test_negative_start_is_an_error() -> None:
    with pytest.raises(ValueError, match="start must be 0 or more"):
        ToolCallIds(start=-1)


def test_every_profiles_form_is_valid_and_mistral_and_kimi_declare_theirs() -> None:
    forms = {name: profiles.load(name).tool_call_id for name in profiles.names()}
    declared = {name: form for name, form in forms.items() if form is not None}
    assert declared == {
        "kimi_k2": "functions.{name}:{index}",
        "mistral": "{alnum:9}",
        "mistral_args": "{alnum:9}",
        "mistral_reasoning": "{alnum:9}",
        "mistral_v11": "{alnum:9}",
    }
    for name in forms:
        ToolCallIds.for_profile(name)("f", 0)
    assert ToolCallIds.for_profile("kimi_k2")("f", 1) == "functions.f:1"
    assert ToolCallIds.for_profile(None).form == DEFAULT_FORM
