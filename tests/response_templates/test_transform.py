"""Transforms: whole-string placeholders with dotted paths, literals, transform_each (SPEC §1.4)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec.response_templates.transform import (
    apply_transform,
    apply_transform_each,
    compile_transform,
    validate_transform,
)


def test_placeholders_keep_the_type_of_what_they_name() -> None:
    scope = {"content": {"name": "f", "args": {"x": [1, 2]}}, "id": "7"}
    transform = {
        "type": "function",
        "id": "{id}",
        "function": {"name": "{content.name}", "arguments": "{content.args}"},
        "all": ["{content.args.x}", 3, None, True, "{}", "{not a placeholder"],
    }
    assert apply_transform(transform, scope) == {
        "type": "function",
        "id": "7",
        "function": {"name": "f", "arguments": {"x": [1, 2]}},
        "all": [[1, 2], 3, None, True, "{}", "{not a placeholder"],
    }


def test_a_transform_may_be_a_list_or_a_bare_placeholder() -> None:
    assert apply_transform(["{content}", "{content}"], {"content": 1}) == [1, 1]
    assert apply_transform("{content}", {"content": {"a": 1}}) == {"a": 1}


def test_unicode_names_work() -> None:
    assert apply_transform("{引数.名前}", {"引数": {"名前": "値"}}) == "値"


def test_an_undefined_root_is_a_key_error_listing_the_variables() -> None:
    with pytest.raises(KeyError) as raised:
        apply_transform({"a": "{missing}"}, {"content": 1, "name": "x"})
    assert (
        raised.value.args[0]
        == "transform placeholder '{missing}' is not defined. Available: ['content', 'name']"
    )


@pytest.mark.parametrize(
    ("path", "scope", "message"),
    [
        (
            "{content.args}",
            {"content": {"name": "n"}},
            "transform placeholder '{content.args}' is missing key 'args'. Available: ['name']",
        ),
        (
            "{content.a.b}",
            {"content": {"a": [1]}},
            "transform placeholder '{content.a.b}' cannot index into list at 'b'",
        ),
    ],
)
def test_dotted_paths_fail_loudly(path: str, scope: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        apply_transform(path, scope)
    assert str(raised.value) == message


def test_transform_each_uses_element_keys_over_captures() -> None:
    content = [
        {"tool_name": "a", "parameters": {"x": 1}},
        {"tool_name": "b", "parameters": {}, "name": "own"},
    ]
    transform = {"name": "{tool_name}", "arguments": "{parameters}", "from": "{name}"}
    assert apply_transform_each(transform, content, {"name": "captured"}) == [
        {"name": "a", "arguments": {"x": 1}, "from": "captured"},
        {"name": "b", "arguments": {}, "from": "own"},
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"a": 1}, "transform_each requires the parsed content to be a list, got dict"),
        ([{"a": 1}, 2], "transform_each requires each list element to be an object, got int"),
    ],
)
def test_transform_each_needs_a_list_of_objects(content: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        apply_transform_each({"a": "{a}"}, content, {})
    assert str(raised.value) == message


def test_validation_names_the_path_of_a_mixed_string() -> None:
    validate_transform({"a": ["{content}", "literal", 1], "b": {"c": "{x.y}"}}, "fields.f.transform")
    with pytest.raises(ValueError) as raised:
        validate_transform({"a": {"b": ["ok", "name: {name}"]}}, "fields.f.transform")
    assert str(raised.value).startswith(
        "fields.f.transform.a.b[1]: transform string 'name: {name}' mixes a {placeholder} with literal text; "
        "string interpolation is not supported."
    )


def test_an_optional_placeholder_omits_its_key_when_the_value_is_absent() -> None:
    function = {"name": "{name}", "arguments": "{arguments}"}
    transform = {"id": "{id?}", "type": "function", "function": function}
    assert apply_transform(transform, {"name": "f", "arguments": {}}) == {
        "type": "function",
        "function": {"name": "f", "arguments": {}},
    }
    assert apply_transform(transform, {"id": "c1", "name": "f", "arguments": {}}) == {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": {}},
    }
    assert apply_transform({"id": "{content.id?}"}, {"content": {"name": "f"}}) == {}
    assert apply_transform({"id": "{content.id?}"}, {"content": {"id": "x"}}) == {"id": "x"}
    content = [{"name": "a"}, {"name": "b", "id": "2"}]
    assert apply_transform_each({"n": "{name}", "i": "{id?}"}, content, {}) == [
        {"n": "a"},
        {"n": "b", "i": "2"},
    ]


def test_an_optional_placeholder_still_fails_on_a_path_through_a_non_object() -> None:
    with pytest.raises(ValueError) as raised:
        apply_transform({"id": "{content.a.b?}"}, {"content": {"a": [1]}})
    assert str(raised.value) == "transform placeholder '{content.a.b?}' cannot index into list at 'b'"


@pytest.mark.parametrize("where", [["{id?}"], "{id?}"])
def test_an_optional_placeholder_is_only_allowed_as_an_object_value(where: Any) -> None:
    with pytest.raises(ValueError) as raised:
        validate_transform(where, "fields.f.transform")
    assert "an optional placeholder ('{id?}') is only allowed as the value of an object key" in str(
        raised.value
    )


@pytest.mark.parametrize(
    "text",
    ["{content.a?.b}", "{a?.b}", "{id??}", "{content.}", "{content..x}", "{content[0]}", "{.content}",
     "{ id? }", "{tool name}", "{a.b[0].c}"],
)
def test_a_near_placeholder_with_a_bad_path_is_a_load_error(text: str) -> None:
    with pytest.raises(ValueError) as raised:
        validate_transform({"x": text}, "fields.f.transform")
    assert str(raised.value) == (
        f"fields.f.transform.x: transform string {text!r} looks like a placeholder but is not one (a "
        'placeholder is exactly "{name}", "{name.key}" or, as an object value, "{name?}": no spaces, '
        "no [index], one ? at the end); as written it would be kept as literal text"
    )


@pytest.mark.parametrize(
    "text", ["{}", "{ }", "{[]}", "{.}", "{?}", "{?}x", "{not a placeholder", "{a: 1}", "{a-b}"]
)
def test_braces_around_no_name_or_other_text_stay_literal(text: str) -> None:
    validate_transform({"x": text}, "fields.f.transform")
    assert apply_transform({"x": text}, {"content": {"a": {"b": 1}}}) == {"x": text}


_NAMES = st.sampled_from(["content", "id", "name", "x"])
_PLACEHOLDERS = st.builds(
    lambda root, keys, optional: "{" + ".".join([root, *keys]) + ("?" if optional else "") + "}",
    _NAMES, st.lists(st.sampled_from(["a", "b"]), max_size=2), st.booleans())
_TRANSFORMS = st.recursive(
    st.one_of(_PLACEHOLDERS, st.sampled_from(["function", "{}", "", "{x"]), st.integers(0, 3), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)),
    max_leaves=8)
_SCOPE_VALUES = st.recursive(st.one_of(st.integers(0, 3), st.text(max_size=2)),
                             lambda inner: st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
                             max_leaves=4)


def _outcome(build: Any, scope: dict[str, Any]) -> Any:
    try:
        return ("value", build(scope))
    except (KeyError, ValueError) as error:
        return (type(error).__name__, str(error))


@given(transform=_TRANSFORMS, scope=st.dictionaries(_NAMES, _SCOPE_VALUES, max_size=4))
def test_a_compiled_transform_builds_what_apply_transform_builds(transform: Any,
                                                                 scope: dict[str, Any]) -> None:
    """Compiled at load or walked at each close: the same value, or the same error and message
    (optional placeholders outside an object are load errors, but both agree on them too)."""
    walked = _outcome(lambda s: apply_transform(transform, s), scope)
    compiled = _outcome(compile_transform(transform), scope)
    assert compiled == walked
    assert repr(compiled) == repr(walked)  # the keys in the same order too


def test_a_compiled_object_keeps_the_transforms_key_order_around_constants_and_absent_keys() -> None:
    build = compile_transform({"id": "{id?}", "type": "function", "function": "{content}", "n": 2,
                               "extra": "{extra?}", "last": None})
    assert list(build({"content": "c"}).items()) == [
        ("type", "function"), ("function", "c"), ("n", 2), ("last", None)]
    assert list(build({"content": "c", "id": "7", "extra": "e"}).items()) == [
        ("id", "7"), ("type", "function"), ("function", "c"), ("n", 2), ("extra", "e"), ("last", None)]


def test_a_compiled_transform_builds_new_containers_each_time() -> None:
    build = compile_transform({"type": "function", "function": "{content}", "ids": ["{id}"]})
    first, second = build({"content": {"n": 1}, "id": "7"}), build({"content": {"n": 1}, "id": "7"})
    assert first == {"type": "function", "function": {"n": 1}, "ids": ["7"]}
    assert first is not second and first["ids"] is not second["ids"]
    assert compile_transform({"id": "{id?}", "n": "{content.n?}"})({"content": {}}) == {}
