"""load_response_template: every load-time check of SPEC §1.1, with its path, field and key."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from chatcodec import ResponseTemplate, ResponseTemplateError, load_response_template
from chatcodec.response_templates import extensions
from tests.helpers import QWEN_RESPONSE_TEMPLATE


def with_field(name: str, spec: Any) -> dict[str, Any]:
    template = copy.deepcopy(QWEN_RESPONSE_TEMPLATE)
    template["fields"][name] = spec
    return template


def with_top(**changes: Any) -> dict[str, Any]:
    template = copy.deepcopy(QWEN_RESPONSE_TEMPLATE)
    for key, value in changes.items():
        if value is ...:
            del template[key]
        else:
            template[key] = value
    return template


# (id, template, expected path, expected field, expected key, expected substring)
LOAD_ERRORS = [
    ("not-an-object", [1], "response_template", None, None, "A response template must be a JSON object"),
    ("version-2", with_top(version=2), "version", None, "version", "version"),
    ("version-true", with_top(version=True), "version", None, "version", "version"),
    (
        "unknown-top-key",
        with_top(extra=1),
        "response_template",
        None,
        None,
        "Unknown keys in response_template",
    ),
    ("defaults-not-object", with_top(defaults=[]), "defaults", None, "defaults", "must be an object"),
    ("fields-empty", with_top(fields={}), "fields", None, "fields", "non-empty"),
    ("no-anchor", with_top(start_anchor=...), "start_anchor", None, "start_anchor", "start_anchor"),
    (
        "both-anchors",
        with_top(start_anchor_pattern="x"),
        "start_anchor_pattern",
        None,
        "start_anchor_pattern",
        "cannot specify both",
    ),
    ("empty-anchor-list", with_top(start_anchor=[]), "start_anchor", None, "start_anchor", "at least one"),
    (
        "empty-anchor",
        with_top(start_anchor=""),
        "start_anchor",
        None,
        "start_anchor",
        "cannot be empty strings",
    ),
    (
        "bad-anchor-regex",
        with_top(start_anchor=..., start_anchor_pattern="("),
        "start_anchor_pattern",
        None,
        "start_anchor_pattern",
        "invalid start_anchor_pattern regex",
    ),
    ("field-not-object", with_field("x", "open"), "fields.x", "x", None, "must be an object"),
    (
        "unknown-field-key",
        with_field("x", {"open": "<x>", "closing": "</x>"}),
        "fields.x",
        "x",
        None,
        "unknown keys ['closing']",
    ),
    (
        "open-and-pattern",
        with_field("x", {"open": "<x>", "open_pattern": "<x>"}),
        "fields.x.open_pattern",
        "x",
        "open_pattern",
        "cannot specify both",
    ),
    (
        "close-and-pattern",
        with_field("x", {"open": "<x>", "close": "a", "close_pattern": "b"}),
        "fields.x.close_pattern",
        "x",
        "close_pattern",
        "cannot specify both",
    ),
    (
        "open-dict",
        with_field("x", {"open": {"a": 1}}),
        "fields.x.open",
        "x",
        "open",
        "must be a string or list",
    ),
    (
        "open-list-non-string",
        with_field("x", {"open": ["<x>", 3]}),
        "fields.x.open",
        "x",
        "open",
        "only strings",
    ),
    ("open-empty-list", with_field("x", {"open": []}), "fields.x.open", "x", "open", "at least one literal"),
    (
        "close-empty-string",
        with_field("x", {"open": "<x>", "close": ["", "a"]}),
        "fields.x.close",
        "x",
        "close",
        "cannot be empty strings",
    ),
    (
        "bad-close-regex",
        with_field("x", {"open": "<x>", "close_pattern": "(?P<"}),
        "fields.x.close_pattern",
        "x",
        "close_pattern",
        "invalid close_pattern regex",
    ),
    (
        "pattern-not-string",
        with_field("x", {"open_pattern": 3}),
        "fields.x.open_pattern",
        "x",
        "open_pattern",
        "must be a regex string",
    ),
    (
        "join-not-string",
        with_field("x", {"open": "<x>", "repeats": True, "join": 7}),
        "fields.x.join",
        "x",
        "join",
        "must be a string",
    ),
    (
        "flatten-without-repeats",
        with_field("x", {"open": "<x>", "flatten": True}),
        "fields.x.flatten",
        "x",
        "flatten",
        "'flatten' requires 'repeats': true",
    ),
    (
        "flatten-with-join",
        with_field("x", {"open": "<x>", "repeats": True, "flatten": True, "join": ","}),
        "fields.x.flatten",
        "x",
        "flatten",
        "'flatten' and 'join' exclude each other",
    ),
    (
        "flatten-not-bool",
        with_field("x", {"open": "<x>", "repeats": True, "flatten": "yes"}),
        "fields.x.flatten",
        "x",
        "flatten",
        "'flatten' must be true or false",
    ),
    (
        "join-without-repeats",
        with_field("x", {"open": "<x>", "join": ","}),
        "fields.x.join",
        "x",
        "join",
        "requires 'repeats'",
    ),
    (
        "repeats-not-bool",
        with_field("x", {"open": "<x>", "repeats": "yes"}),
        "fields.x.repeats",
        "x",
        "repeats",
        "true or false",
    ),
    (
        "optional-not-bool",
        with_field("x", {"open": "<x>", "optional": 0}),
        "fields.x.optional",
        "x",
        "optional",
        "true or false",
    ),
    (
        "transform-each-not-bool",
        with_field("x", {"open": "<x>", "transform": {}, "transform_each": 1}),
        "fields.x.transform_each",
        "x",
        "transform_each",
        "true or false",
    ),
    (
        "transform-each-without-transform",
        with_field("x", {"open": "<x>", "transform_each": True}),
        "fields.x.transform_each",
        "x",
        "transform_each",
        "no transform",
    ),
    (
        "mixed-transform",
        with_field("x", {"open": "<x>", "transform": {"a": ["ok", "pre {content}"]}}),
        "fields.x.transform.a[1]",
        "x",
        "transform",
        "transform string 'pre {content}' mixes",
    ),
    (
        "near-placeholder-open-brace",
        with_field("x", {"open": "<x>", "transform": {"function": {"arguments": "{content"}}}),
        "fields.x.transform.function.arguments",
        "x",
        "transform",
        "transform string '{content' looks like a placeholder but is not one",
    ),
    (
        "near-placeholder-close-brace",
        with_field("x", {"open": "<x>", "transform": ["content}"]}),
        "fields.x.transform[0]",
        "x",
        "transform",
        "transform string 'content}' looks like a placeholder but is not one",
    ),
    (
        "near-placeholder-spaces",
        with_field("x", {"open": "<x>", "transform": {"name": " { name.first } "}}),
        "fields.x.transform.name",
        "x",
        "transform",
        "transform string ' { name.first } ' looks like a placeholder",
    ),
    (
        "near-placeholder-bad-path",
        with_field("x", {"open": "<x>", "transform": {"x": "{content.a?.b}"}}),
        "fields.x.transform.x",
        "x",
        "transform",
        "transform string '{content.a?.b}' looks like a placeholder but is not one",
    ),
    (
        "keep-out-in-open",
        with_field("x", {"open_pattern": "<t>\\K"}),
        "fields.x.open_pattern",
        "x",
        "open_pattern",
        "fields.x.open_pattern: \\K (keep out) cannot be used in a delimiter: it moves where the match "
        "starts, so the delimiter would never match as written. Match the whole delimiter instead",
    ),
    (
        "reverse-in-close",
        with_field("x", {"open": "<x>", "close_pattern": "(?r)</x>"}),
        "fields.x.close_pattern",
        "x",
        "close_pattern",
        "fields.x.close_pattern: the reverse flag (?r) cannot be used in a delimiter: delimiters are "
        "searched forwards, so it would never match. Remove the flag",
    ),
    (
        "reverse-in-anchor",
        with_top(start_anchor=..., start_anchor_pattern="(?r)<\\|im_start\\|>assistant"),
        "start_anchor_pattern",
        None,
        "start_anchor_pattern",
        "start_anchor_pattern: the reverse flag (?r) cannot be used",
    ),
    (
        "lookbehind-unbounded",
        with_field("f", {"open_pattern": "(?<=BEGIN[^#]{300,})#", "close": "!"}),
        "fields.f.open_pattern",
        "f",
        "open_pattern",
        "fields.f.open_pattern: a look-behind in a delimiter may look back at most 256 characters "
        "(LOOKBEHIND_CONTEXT), this one an unbounded number of characters: streaming keeps only that much "
        "text before the unparsed text, so streamed and one-shot parsing would differ. Bound its "
        "repetitions so that it spans at most 256 characters",
    ),
    (
        "lookbehind-too-long",
        with_field("x", {"open": "<x>", "close_pattern": "(?<=a{100}(?:b|c{200}))</x>"}),
        "fields.x.close_pattern",
        "x",
        "close_pattern",
        "fields.x.close_pattern: a look-behind in a delimiter may look back at most 256 characters "
        "(LOOKBEHIND_CONTEXT), this one 300 characters",
    ),
    (
        "lookbehind-caret",
        with_field("f", {"open_pattern": "(?<=^[^#]*)#", "close": "!"}),
        "fields.f.open_pattern",
        "f",
        "open_pattern",
        "fields.f.open_pattern: ^ or \\A inside a look-behind cannot be used in a delimiter: streaming keeps "
        "only the last 256 characters before the unparsed text, so the start of the output is not there. "
        "Use the start anchor or a bounded look-behind instead",
    ),
    (
        "lookbehind-start-of-input",
        with_field("f", {"open_pattern": "(?<=\\A.{0,3})#", "close": "!"}),
        "fields.f.open_pattern",
        "f",
        "open_pattern",
        "fields.f.open_pattern: ^ or \\A inside a look-behind cannot be used in a delimiter",
    ),
    (
        "same-open-literal",
        with_field("x", {"open": ["<a>", "<tool_call>"]}),
        "fields.x.open",
        "x",
        "open",
        "fields.x.open: '<tool_call>' is also the open of field 'tool_calls', which wins ties (opens are "
        "ranked by field name), so field 'x' could never open there",
    ),
    (
        "same-open-pattern",
        {"start_anchor": "A", "fields": {"b": {"open_pattern": "<b\\d>"}, "a": {"open_pattern": "<b\\d>"},
                                         "c": {}}},
        "fields.b.open_pattern",
        "b",
        "open_pattern",
        "fields.b.open_pattern: the same pattern is the open_pattern of field 'a', which wins ties",
    ),
    (
        "named-group-open",
        with_field("x", {"open_pattern": "<x (?P<n>\\w+)>"}),
        "fields.x.open_pattern",
        "x",
        "open_pattern",
        "named group(s) ['n']",
    ),
    (
        "named-group-close",
        with_field("x", {"open": "<x>", "close_pattern": "</(?P<n>x)>"}),
        "fields.x.close_pattern",
        "x",
        "close_pattern",
        "named group",
    ),
    (
        "unknown-parser",
        with_field("x", {"open": "<x>", "content": "yaml"}),
        "fields.x.content",
        "x",
        "content",
        "unknown content parser 'yaml'. Available: "
        "['text', 'int', 'float', 'bool', 'json', 'xml-inline', 'kv-lines', 'python-call-list'",  # then x-
    ),
    (
        "unregistered-extension",
        with_field("x", {"open": "<x>", "content": "x-nope"}),
        "fields.x.content",
        "x",
        "content",
        "unknown content parser 'x-nope'",
    ),
    (
        "content-args-not-object",
        with_field("x", {"open": "<x>", "content_args": []}),
        "fields.x.content_args",
        "x",
        "content_args",
        "must be an object",
    ),
    (
        "unknown-content-arg",
        with_field("x", {"open": "<x>", "content_args": {"stripp": True}}),
        "fields.x.content_args",
        "x",
        "content_args",
        "unknown keys ['stripp']. Allowed keys: strip",
    ),
    (
        "strip-not-bool",
        with_field("x", {"open": "<x>", "content_args": {"strip": "no"}}),
        "fields.x.content_args.strip",
        "x",
        "content_args",
        'must be true, false or "blank"',
    ),
    (
        "strip-blank-is-for-text-only",
        with_field("x", {"open": "<x>", "content": "int", "content_args": {"strip": "blank"}}),
        "fields.x.content_args.strip",
        "x",
        "content_args",
        "must be true or false",
    ),
    (
        "missing-tag-pattern",
        with_field("x", {"open": "<x>", "content": "xml-inline"}),
        "fields.x.content_args.tag_pattern",
        "x",
        "content_args",
        "requires 'tag_pattern'",
    ),
    (
        "tag-pattern-without-key",
        with_field(
            "x", {"open": "<x>", "content": "xml-inline", "content_args": {"tag_pattern": "<(?P<k>\\w)>"}}
        ),
        "fields.x.content_args.tag_pattern",
        "x",
        "content_args",
        "named group 'key'",
    ),
    (
        "bad-tag-pattern",
        with_field("x", {"open": "<x>", "content": "xml-inline", "content_args": {"tag_pattern": "("}}),
        "fields.x.content_args.tag_pattern",
        "x",
        "content_args",
        "invalid tag_pattern regex",
    ),
    (
        "unknown-value-parser",
        with_field(
            "x", {"open": "<x>", "content": "kv-lines", "content_args": {"value_parser": {"name": "nope"}}}
        ),
        "fields.x.content_args.value_parser.name",
        "x",
        "content_args",
        "unknown content parser 'nope'. Known parsers: text, int, float, bool, json, xml-inline, kv-lines",
    ),
    (
        "nested-value-parser-args",
        with_field(
            "x",
            {
                "open": "<x>",
                "content": "kv-lines",
                "content_args": {"value_parser": {"name": "json", "args": {"allow_non_jsn": True}}},
            },
        ),
        "fields.x.content_args.value_parser.args",
        "x",
        "content_args",
        "unknown keys ['allow_non_jsn']",
    ),
    (
        "bad-string-delims",
        with_field("x", {"open": "<x>", "content": "json", "content_args": {"string_delims": [["<"]]}}),
        "fields.x.content_args.string_delims",
        "x",
        "content_args",
        "[open, close] pairs",
    ),
    (
        "empty-kv-sep",
        with_field("x", {"open": "<x>", "content": "kv-lines", "content_args": {"kv_sep": ""}}),
        "fields.x.content_args.kv_sep",
        "x",
        "content_args",
        "non-empty string",
    ),
    (
        "two-implicit",
        with_field("extra", {"close": "</e>"}),
        "fields",
        None,
        "fields",
        "at most one field may omit 'open'/'open_pattern'",
    ),
]


@pytest.mark.parametrize(
    ("spec", "path", "field", "key", "fragment"),
    [pytest.param(*case[1:], id=case[0]) for case in LOAD_ERRORS],
)
def test_load_error(spec: Any, path: str, field: str | None, key: str | None, fragment: str) -> None:
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template(spec)
    error = raised.value
    assert isinstance(error, ValueError)
    assert (error.path, error.field, error.key) == (path, field, key)
    # a key's or field's problem starts with its path; one of the whole template is a sentence
    assert str(error).startswith(f"{path}: ") or (path == "response_template" and str(error)[0].isupper())
    assert fragment in str(error)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([1], "A response template must be a JSON object, got list"),
        (with_top(extra=1), "Unknown keys in response_template: ['extra']. Allowed keys: defaults, fields, "
         "start_anchor, start_anchor_pattern, version"),
        (with_top(version=2), "version: unsupported version 2 (only 1 exists)"),
        (with_top(defaults=[]), "defaults: must be an object, got list"),
        (with_top(fields={}), "fields: must be a non-empty object (output key -> field spec)"),
        (with_top(fields=[1]), "fields: must be a non-empty object (output key -> field spec), got list"),
        (with_top(fields=...),
         "fields: missing: a response template needs fields (output key -> field spec)"),
        (with_field("x", {}), "fields: at most one field may omit 'open'/'open_pattern' (that field is the "
         "implicit one, which collects text outside every region); found: content, x"),
    ],
)
def test_messages_never_repeat_their_path(spec: Any, message: str) -> None:
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template(spec)
    assert str(raised.value) == message


@pytest.mark.parametrize("literal", ["{", "}", "{}", '{"a": 1}', "{{", "x}y{", "f(x) {"])
def test_brace_literals_that_look_like_no_placeholder_are_fine(literal: str) -> None:
    spec = with_field("x", {"open": "<x>", "transform": {"t": literal}})
    assert load_response_template(spec).fields["x"].transform == {"t": literal}


def test_the_top_level_shape_is_checked_before_the_fields() -> None:
    spec = with_top(start_anchor=...)
    spec["fields"]["tool_calls"]["close_pattern"] = "("  # also wrong, but the anchor comes first
    with pytest.raises(ResponseTemplateError) as raised:
        load_response_template(spec)
    assert str(raised.value) == (
        "start_anchor: a response template needs start_anchor (or start_anchor_pattern): where the "
        'assistant message starts in the prompt, e.g. "<|im_start|>assistant\\n". It is required even '
        'when parsing without a prompt (prefix="", chatcodec parse --no-prefix)'
    )


def test_a_valid_template_compiles_every_field() -> None:
    template = load_response_template(QWEN_RESPONSE_TEMPLATE)
    assert list(template.fields) == ["reasoning_content", "tool_calls", "content"]
    assert template.implicit is not None and template.implicit.name == "content"
    tool_calls = template.fields["tool_calls"]
    assert (tool_calls.repeats, tool_calls.dirty, tool_calls.concatenates, tool_calls.content) == (
        True,
        True,
        False,
        "json",
    )
    reasoning = template.fields["reasoning_content"]
    assert (reasoning.dirty, reasoning.concatenates, reasoning.optional) == (False, True, True)
    assert template.extensions_used == frozenset()
    assert template.outside_matcher is not None
    assert [d.field for d in template.outside_matcher.delimiters] == [
        "reasoning_content",
        "tool_calls",
        "content",
    ]


def test_the_spec_is_copied_both_ways() -> None:
    source = copy.deepcopy(QWEN_RESPONSE_TEMPLATE)
    template = load_response_template(source)
    source["fields"]["content"]["close"] = "changed"
    assert template.to_dict() == QWEN_RESPONSE_TEMPLATE
    exported = template.to_dict()
    exported["defaults"]["role"] = "user"
    assert template.to_dict()["defaults"] == {"role": "assistant"}


def test_a_loaded_template_is_returned_as_is() -> None:
    template = load_response_template(QWEN_RESPONSE_TEMPLATE)
    assert load_response_template(template) is template
    assert isinstance(template, ResponseTemplate)


def test_version_one_as_a_float_is_accepted() -> None:
    assert load_response_template(with_top(version=1.0)).fields["content"].name == "content"


def test_truncate_prefix_cuts_after_the_last_anchor() -> None:
    template = load_response_template(with_top(start_anchor=["<|a|>", "<|b|>"]))
    assert template.truncate_prefix("x<|a|>one<|b|>two<|a|>three") == "three"
    assert template.truncate_prefix("no anchor here") == "no anchor here"


def _fake_parse(text: str, args: Any) -> Any:
    return text.split()


def _fake_validate(args: Any, where: str) -> None:
    if args:
        raise ValueError(f"{where}: takes no arguments")


def test_registered_x_parsers_load_and_mark_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extensions.EXTENSIONS, "x-words", (_fake_parse, _fake_validate))
    template = load_response_template(with_field("x", {"open": "<x>", "content": "x-words"}))
    assert template.extensions_used == frozenset({"x-words"})
    assert template.fields["x"].dirty is True
    nested = load_response_template(
        with_field(
            "x", {"open": "<x>", "content": "kv-lines", "content_args": {"value_parser": {"name": "x-words"}}}
        )
    )
    assert nested.extensions_used == frozenset({"x-words"})
    with pytest.raises(ResponseTemplateError, match=r"^fields\.x\.content_args: takes no arguments$"):
        load_response_template(
            with_field("x", {"open": "<x>", "content": "x-words", "content_args": {"a": 1}})
        )


def test_extension_names_must_start_with_x(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extensions.EXTENSIONS, "words", (_fake_parse, _fake_validate))
    with pytest.raises(ResponseTemplateError, match="unknown content parser 'words'"):
        load_response_template(with_field("x", {"open": "<x>", "content": "words"}))


class TestCompiledTemplateCache:
    """Equal template dicts share one compiled, read-only template (bounded LRU)."""

    def test_equal_dicts_give_the_same_compiled_template(self) -> None:
        first = load_response_template(copy.deepcopy(QWEN_RESPONSE_TEMPLATE))
        assert load_response_template(copy.deepcopy(QWEN_RESPONSE_TEMPLATE)) is first

    def test_a_different_field_order_is_a_different_template(self) -> None:
        reordered = copy.deepcopy(QWEN_RESPONSE_TEMPLATE)
        reordered["fields"] = dict(reversed(list(reordered["fields"].items())))
        template = load_response_template(reordered)
        assert template is not load_response_template(QWEN_RESPONSE_TEMPLATE)
        assert list(template.fields) == ["content", "tool_calls", "reasoning_content"]

    def test_json_equal_but_differently_typed_dicts_are_not_confused(self) -> None:
        good = with_field("x", {"open": "<x>"})
        load_response_template(good)
        bad = copy.deepcopy(QWEN_RESPONSE_TEMPLATE)
        bad["fields"][1] = {"open": "<x>"}  # dumps like "1", but is not a string
        with pytest.raises(ResponseTemplateError, match=r"^fields: field names must be strings, got int"):
            load_response_template(bad)

    def test_a_cached_template_is_read_only(self) -> None:
        template = load_response_template(copy.deepcopy(QWEN_RESPONSE_TEMPLATE))
        with pytest.raises(TypeError):
            template.fields["content"] = template.fields["tool_calls"]  # type: ignore[index]
        with pytest.raises(TypeError):
            template.defaults["role"] = "user"  # type: ignore[index]
        with pytest.raises(TypeError):
            template.fields["tool_calls"].content_args["x"] = 1  # type: ignore[index]
        template.spec["defaults"]["role"] = "user"  # a copy: the template is unchanged
        again = load_response_template(copy.deepcopy(QWEN_RESPONSE_TEMPLATE))
        assert again.to_dict() == QWEN_RESPONSE_TEMPLATE

    def test_parse_response_compiles_an_equal_dict_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from chatcodec import parse_response
        from chatcodec.response_templates import template as template_module

        builds: list[int] = []
        build = template_module._compile
        monkeypatch.setattr(template_module, "_compile", lambda spec: builds.append(1) or build(spec))
        spec = with_top(defaults={"role": "assistant", "marker": "cache-test"})
        for _ in range(3):
            assert parse_response("Hi<|im_end|>", copy.deepcopy(spec), prefix="") == {
                "role": "assistant", "marker": "cache-test", "content": "Hi"}
        assert builds == [1]

    def test_the_cache_is_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from chatcodec.response_templates import template as template_module

        monkeypatch.setattr(template_module, "TEMPLATE_CACHE_SIZE", 2)
        specs = [with_top(defaults={"n": n}) for n in range(3)]
        first = load_response_template(specs[0])
        load_response_template(specs[1])
        load_response_template(specs[2])  # evicts specs[0], the least recently used
        assert load_response_template(specs[2]) is load_response_template(specs[2])
        assert load_response_template(specs[0]) is not first

    def test_a_template_pickles_and_compares_by_its_spec(self) -> None:
        import pickle

        template = load_response_template(copy.deepcopy(QWEN_RESPONSE_TEMPLATE))
        restored = pickle.loads(pickle.dumps(template))
        assert restored.to_dict() == QWEN_RESPONSE_TEMPLATE


@pytest.mark.parametrize("name", ["qwen3", "path/to/response_template.json"])
def test_a_name_or_path_instead_of_a_template_says_how_to_load_one(name: str) -> None:
    import chatcodec

    with pytest.raises(ResponseTemplateError) as caught:
        chatcodec.parse_response("Hi", name, prefix="")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "A response template must be a JSON object, got str; to use a file, load it first "
        "(json.load), and for a bundled profile or a model use "
        "chatcodec.profiles.load(name).response_template or ChatCodec.from_pretrained(name)")
