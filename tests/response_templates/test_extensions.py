"""The ``x-`` content parsers: what each accepts, what it rejects, and load-time validation."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import parse_response
from chatcodec.response_templates.extensions import EXTENSIONS, Extension, check_parser_spec, run_parser
from chatcodec.response_templates.template import load_response_template


def parse(name: str, text: str, **args: Any) -> Any:
    return EXTENSIONS[name][0](text, args)


def validate(name: str, **args: Any) -> None:
    EXTENSIONS[name][1](args, "fields.tool_calls.content_args")


def test_every_extension_name_starts_with_x() -> None:
    assert sorted(EXTENSIONS) == [
        "x-bare-object",
        "x-findall",
        "x-first",
        "x-json-calls",
        "x-named-call",
        "x-python-literal",
        "x-pythonic",
        "x-switch",
        "x-wrap",
        "x-xml-tree",
    ]


class TestPythonic:
    def test_list_of_calls_with_python_and_json_literals(self) -> None:
        text = "[f(a=1, b='x', c=True, d=None, e=[1, 2.5], g={'k': false}, h=null, i=-3), g()]"
        assert parse("x-pythonic", text) == [
            {
                "name": "f",
                "arguments": {
                    "a": 1,
                    "b": "x",
                    "c": True,
                    "d": None,
                    "e": [1, 2.5],
                    "g": {"k": False},
                    "h": None,
                    "i": -3,
                },
            },
            {"name": "g", "arguments": {}},
        ]

    def test_single_call_tuple_and_dotted_name(self) -> None:
        assert parse("x-pythonic", "tools.search(q=(1, 2))") == [
            {"name": "tools.search", "arguments": {"q": [1, 2]}}
        ]

    def test_escapes_and_unicode(self) -> None:
        assert parse("x-pythonic", "[f(s='Martha\\'s \"x\"\\n', u='東京')]") == [
            {"name": "f", "arguments": {"s": 'Martha\'s "x"\n', "u": "東京"}}
        ]

    def test_json_object_elements_are_calls(self) -> None:
        assert parse("x-pythonic", '{"name": "w", "arguments": {"city": "Rome"}}') == [
            {"name": "w", "arguments": {"city": "Rome"}}
        ]

    def test_empty_text_is_no_calls(self) -> None:
        assert parse("x-pythonic", "  \n") == []
        assert parse("x-pythonic", "[]") == []

    @pytest.mark.parametrize(
        "text, message",
        [
            ("[f(x=b'z')]", "bytes literal"),
            ("[f(x=1e999)]", "not a finite number"),
            ("[f(1)]", "positional arguments"),
            ("[f(**k)]", "'**' unpacking"),
            ("[f(x=y)]", "'y' is not a literal"),
            ("[f(x=__import__('os'))]", "is not a literal"),
            ("[1]", "is not a call"),
            ("[f(a=x)]", "call 'f', argument 'a': 'x' is not a literal"),
            ("[f(a=1+2)]", "call 'f', argument 'a': '1 + 2' is not a literal"),
            ("[f(a=g(b=1))]", "call 'f', argument 'a': 'g(b=1)' is not a literal"),
            ("[f(a=1), 5]", "element 2 of the list: '5' is not a call"),
            ("[bad(x=b'z'), ok(a=1)]", "call 'bad', argument 'x': a bytes literal"),
        ],
    )
    def test_values_without_json_meaning_raise(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match="x-pythonic") as error:
            parse("x-pythonic", text)
        assert message in str(error.value)

    def test_syntax_error_raises_with_offset(self) -> None:
        with pytest.raises(ValueError, match=r"x-pythonic: not a Python list of calls \(offset"):
            parse("x-pythonic", "[f(a='x' 'y)]")  # 'y)] is never closed

    def test_a_broken_later_call_fails_the_whole_list(self) -> None:
        with pytest.raises(ValueError, match=r"x-pythonic: not a Python list of calls"):
            parse("x-pythonic", "[a(x='1'), b(y=2), c(z='broken)]")

    def test_trailing_text_after_the_list_raises(self) -> None:
        with pytest.raises(ValueError, match=r"x-pythonic: not a Python list of calls"):
            parse("x-pythonic", "[f(a=1)] and then some prose")

    def test_calls_one_per_line_with_lines(self) -> None:
        """MiniCPM3 writes its calls one per line in a fenced block, without a list."""
        text = '\nget_weather(city="Paris",days=2)\nget_time(timezone="Asia/Tokyo")\n'
        expected = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
                    {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}]
        assert parse("x-pythonic", text, lines=True) == expected
        assert parse("x-pythonic", "f(a=1); g(b=null)", lines=True) == [
            {"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {"b": None}}]
        assert parse("x-pythonic", "[f(a=1)]", lines=True) == [{"name": "f", "arguments": {"a": 1}}]
        with pytest.raises(ValueError, match=r"x-pythonic: not a Python list of calls \(offset"):
            parse("x-pythonic", text)  # without lines: one list or one call only

    @pytest.mark.parametrize(("text", "message"), [
        ("f(a=1)\n5", "x-pythonic: line 2: '5' is not a call"),
        ("f(a=1)\nx = 2", "x-pythonic: not a Python list of calls (offset"),
        ("f(a=1)\ng(b=x)", "x-pythonic: line 2: call 'g', argument 'b': 'x' is not a literal"),
        ("f(a=1)\n# note\ng()", "x-pythonic: a comment is not part of a call list (offset 7): '# note'"),
    ])
    def test_every_line_must_be_a_call(self, text: str, message: str) -> None:
        with pytest.raises(ValueError) as error:
            parse("x-pythonic", text, lines=True)
        assert str(error.value).startswith(message)

    def test_a_method_call_names_what_precedes_the_method(self) -> None:
        """Llama 3.1 calls its built-in tools as ``NAME.call(...)`` (Meta's prompt format); llama.cpp
        reads ``code_interpreter.call(code=...)`` as a call to ``code_interpreter``."""
        assert parse("x-pythonic", 'brave_search.call(query="Oslo weather")', method="call") == [
            {"name": "brave_search", "arguments": {"query": "Oslo weather"}}]
        assert parse("x-pythonic", "[a.b.call(x=1), call(y=2), f.calls(z=3), g()]", method="call") == [
            {"name": "a.b", "arguments": {"x": 1}}, {"name": "call", "arguments": {"y": 2}},
            {"name": "f.calls", "arguments": {"z": 3}}, {"name": "g", "arguments": {}}]
        assert parse("x-pythonic", "[{'name': 'h.call', 'arguments': {}}]", method="call") == [
            {"name": "h.call", "arguments": {}}]  # a call written as a dict keeps its name
        assert parse("x-pythonic", 'brave_search.call(query="x")') == [
            {"name": "brave_search.call", "arguments": {"query": "x"}}]

    def test_validation(self) -> None:
        validate("x-pythonic")
        validate("x-pythonic", lines=True)
        validate("x-pythonic", method="call")
        with pytest.raises(ValueError, match=r"content_args.method: must be a Python name, got '.call'"):
            validate("x-pythonic", method=".call")
        with pytest.raises(ValueError, match=r"content_args.method: must be a Python name, got 1"):
            validate("x-pythonic", method=1)
        with pytest.raises(ValueError, match=r"tool_calls.content_args: unknown key\(s\) \['strict'\]"):
            validate("x-pythonic", strict=True)
        with pytest.raises(ValueError, match=r"content_args.lines: must be true or false, got 'yes'"):
            validate("x-pythonic", lines="yes")
        with pytest.raises(ValueError, match=r"skip_invalid was removed: a malformed tool call raises"):
            validate("x-pythonic", skip_invalid=True)


class TestPythonLiteral:
    """``x-python-literal``: lists and dicts written by Python's str(), other text as written."""

    @pytest.mark.parametrize(("text", "value"), [
        ("{'units': 'metric', 'alerts': [1, 2.5], 'deep': {'on': True, 'note': None}}",
         {"units": "metric", "alerts": [1, 2.5], "deep": {"on": True, "note": None}}),
        ("['home', 'eco']", ["home", "eco"]),
        (" {'k': \"it's\"}\n", {"k": "it's"}),
        ("[True, None, -3, 'ü\\x00']", [True, None, -3, "ü\x00"]),
        ("[('a', 'b')]", [["a", "b"]]),
    ])
    def test_python_containers_are_read(self, text: str, value: Any) -> None:
        assert parse("x-python-literal", text) == value

    @pytest.mark.parametrize("text", [
        "Paris", "7", "True", "None", "", "  ", '{"a": 1}', "[1, 2]", "{'a': x}", "[", "{'a': 1, 'a': 2}",
        "[1e999]", "{1: 'a'}", "['a'] and more", "('a', 'b')", "[" * 300 + "]" * 300,
    ])
    def test_any_other_text_is_kept_as_written(self, text: str) -> None:
        """Scalars and JSON text are typed by the tool schemas; a malformed literal is not lost."""
        assert parse("x-python-literal", text) == text

    def test_validation(self) -> None:
        validate("x-python-literal")
        with pytest.raises(ValueError, match=r"x-python-literal takes no content_args"):
            validate("x-python-literal", strict=True)

    def test_as_the_value_parser_of_tagged_arguments(self) -> None:
        template = {"version": 1, "start_anchor": "<a>", "fields": {
            "tool_calls": {"open_pattern": "<call=(?P<name>\\w+)>", "close": "</call>", "repeats": True,
                           "content": "xml-inline",
                           "content_args": {"tag_pattern": "<p=(?P<key>\\w+)>(?P<value>.*?)</p>",
                                            "value_parser": {"name": "x-python-literal"}},
                           "transform": {"type": "function",
                                         "function": {"name": "{name}", "arguments": "{content}"}}},
            "content": {}}}
        properties = {"settings": {"type": "object"}, "label": {"type": "string"},
                      "days": {"type": "integer"}, "raw": {"type": "object"}}
        tools = [{"type": "function", "function": {"name": "save", "parameters": {
            "type": "object", "properties": properties}}}]
        text = ("<call=save><p=settings>{'on': True}</p><p=label>{\"a\": 1}</p><p=days>3</p>"
                '<p=raw>{"b": null}</p></call>')
        message = parse_response(text, template, prefix="<a>", tools=tools)
        assert message["tool_calls"][0]["function"]["arguments"] == {
            "settings": {"on": True}, "label": '{"a": 1}', "days": 3, "raw": {"b": None}}


class TestJsonCalls:
    def test_array_semicolons_newlines_and_key_aliases(self) -> None:
        text = '[{"name": "a", "arguments": {"x": 1}}]; {"name": "b", "parameters": {}}\n{"name": "c"}'
        assert parse("x-json-calls", text) == [
            {"name": "a", "arguments": {"x": 1}},
            {"name": "b", "arguments": {}},
            {"name": "c", "arguments": {}},
        ]

    def test_stringified_arguments_are_decoded(self) -> None:
        assert parse("x-json-calls", '{"name": "a", "arguments": "{\\"k\\": \\"v\\"}"}', single=True) == {
            "name": "a",
            "arguments": {"k": "v"},
        }

    def test_custom_keys_separators_and_name_as_key(self) -> None:
        text = (
            '<|python_tag|>{"tool_name": "t", "parameters": {"p": 2}}'
            '<|python_tag|>{"tool_name": "u", "parameters": {}}'
        )
        assert parse("x-json-calls", text, name_keys=["tool_name"], separators=["<|python_tag|>"]) == [
            {"name": "t", "arguments": {"p": 2}},
            {"name": "u", "arguments": {}},
        ]
        assert parse("x-json-calls", '[{"get_time": {"city": "Paris"}}]', name_as_key=True) == [
            {"name": "get_time", "arguments": {"city": "Paris"}}
        ]

    def test_require_arguments(self) -> None:
        with pytest.raises(ValueError, match="at offset 0 is not a tool call"):
            parse("x-json-calls", '{"name": "a"}', require_arguments=True)
        with pytest.raises(ValueError, match="at offset 0 is not a tool call"):
            parse("x-json-calls", '{"name": "a"} {"name": "b", "arguments": {}}', require_arguments=True)

    @pytest.mark.parametrize(
        "text, message",
        [
            ('{"name": "a", "arguments": {x}}', "invalid JSON at offset"),
            ('{"name": "a", "arguments": {}} trailing', "unexpected text at offset 31"),
            ('junk {"name": "a"}', "invalid JSON at offset 0"),
            ("[1]", "is not a tool call"),
            ('[{"name": "a", "arguments": {}}, 5]', "the JSON value at offset 0 is not a tool call: 5"),
            ('{"name": "a", "arguments": "{x"}', "'arguments' is a string that is not a JSON object"),
            ('{"name": "a", "arguments": {}}\n{bad}', "invalid JSON at offset 32"),
        ],
    )
    def test_strict_errors(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match="x-json-calls") as error:
            parse("x-json-calls", text)
        assert message in str(error.value)

    def test_an_id_key_becomes_the_call_id(self) -> None:
        text = (
            '[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}, '
            '{"id": "call_9", "name": "g", "arguments": {}}, {"call_id": "c", "name": "h"}, '
            '{"type": "function", "name": "k", "parameters": {}}]'
        )
        assert parse("x-json-calls", text, name_keys=["tool_name", "name"]) == [
            {"id": "0", "name": "f", "arguments": {"a": 1}},
            {"id": "call_9", "name": "g", "arguments": {}},
            {"id": "c", "name": "h", "arguments": {}},
            {"name": "k", "arguments": {}},
        ]

    @pytest.mark.parametrize(
        "text, problem",
        [
            (
                '{"name": "f", "args": {"city": "Paris"}}',
                "unknown key(s) ['args']; a call object has a name (name), arguments (arguments, "
                "parameters), an id (id, tool_call_id, call_id) and \"type\": \"function\"",
            ),
            (
                '{"name": "f", "arguments": {}, "parameters": {"unit": "c"}}',
                "more than one arguments key: ['arguments', 'parameters']",
            ),
            ('{"name": "f", "id": "a", "call_id": "b"}', "more than one id key: ['id', 'call_id']"),
            ('{"name": "f", "id": 7}', "the id ('id') is not a string"),
            ('{"name": "f", "type": "tool"}', "'type' is not \"function\""),
        ],
    )
    def test_a_key_that_is_not_part_of_a_call_is_an_error(self, text: str, problem: str) -> None:
        with pytest.raises(ValueError) as error:
            parse("x-json-calls", text)
        assert str(error.value).startswith(
            f"x-json-calls: the JSON value at offset 0 is not a tool call ({problem})"
        )

    def test_id_keys_are_configurable(self) -> None:
        assert parse("x-json-calls", '{"name": "f", "ref": "r1"}', id_keys=["ref"], single=True) == {
            "id": "r1",
            "name": "f",
            "arguments": {},
        }
        with pytest.raises(ValueError, match=r"unknown key\(s\) \['id'\]"):
            parse("x-json-calls", '{"name": "f", "id": "r1"}', id_keys=[])

    def test_single_needs_exactly_one_call(self) -> None:
        with pytest.raises(ValueError, match="expected exactly one tool call, found 2"):
            parse("x-json-calls", '{"name": "a"} {"name": "b"}', single=True)
        assert parse("x-json-calls", "") == []

    def test_validation(self) -> None:
        validate("x-json-calls", separators=[";"], single=True)
        with pytest.raises(ValueError, match=r"content_args.separators: must be a list of non-empty strings"):
            validate("x-json-calls", separators=[""])
        with pytest.raises(ValueError, match=r"content_args.single: must be a bool"):
            validate("x-json-calls", single=1)
        with pytest.raises(ValueError, match=r"unknown key\(s\) \['nam_keys'\]"):
            validate("x-json-calls", nam_keys=["name"])
        with pytest.raises(ValueError, match=r"skip_invalid was removed: a malformed tool call raises"):
            validate("x-json-calls", skip_invalid=True)


class TestFindall:
    KIMI = (
        "<\\|tool_call_begin\\|>(?:functions\\.)?(?P<name>[\\w.]+?):\\d+<\\|tool_call_argument_begin\\|>"
        "(?P<arguments>.*?)<\\|tool_call_end\\|>"
    )

    def test_groups_of_every_match(self) -> None:
        text = (
            " \n<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>X<|tool_call_end|>"
            "<|tool_call_begin|>b:1<|tool_call_argument_begin|>Y<|tool_call_end|>"
        )
        assert parse("x-findall", text, pattern=self.KIMI) == [
            {"name": "a", "arguments": "X"},
            {"name": "b", "arguments": "Y"},
        ]

    def test_value_parsers_raise_on_a_bad_match(self) -> None:
        parsers = {"arguments": {"name": "x-pythonic", "args": {}}}
        pattern = "<c>(?P<arguments>.*?)</c>"
        assert parse("x-findall", "<c>f(a=1)</c>\n<c>h()</c>", pattern=pattern, value_parsers=parsers) == [
            {"arguments": [{"name": "f", "arguments": {"a": 1}}]},
            {"arguments": [{"name": "h", "arguments": {}}]},
        ]
        text = "<c>f(a=1)</c><c>g(b=b'x')</c><c>h()</c>"
        message = r"x-findall: match at offset 13, group 'arguments': x-pythonic"
        with pytest.raises(ValueError, match=message) as error:
            parse("x-findall", text, pattern=pattern, value_parsers=parsers)
        assert getattr(error.value, "position", None) == 16  # where the group starts in the region

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("noise<c>1</c>", "text before the first match at offset 0: 'noise'"),
            ("<c>1</c> and <c>2</c>", "text between matches at offset 8: ' and '"),
            ("<c>1</c><c>2", "text after the last match at offset 8: '<c>2'"),
            ("<d>1</d>", "text before the first match at offset 0: '<d>1</d>'"),
        ],
    )
    def test_text_outside_the_matches_raises(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match=re.escape(f"x-findall: {message}")):
            parse("x-findall", text, pattern="<c>(?P<v>.*?)</c>")

    def test_between_allows_declared_framing(self) -> None:
        text = "<calls> <c>1</c>, <c>2</c> </calls>"
        between = r"\s*(?:<calls>|</calls>|,)?\s*"
        assert parse("x-findall", text, pattern="<c>(?P<v>.*?)</c>", between=between) == [
            {"v": "1"},
            {"v": "2"},
        ]

    def test_into_dict_takes_the_first_participating_value_group(self) -> None:
        pattern = '<p k="(?P<key>\\w+)" (?:raw>(?P<text>.*?)|py>(?P<py>.*?))</p>'
        parsers = {"py": {"name": "x-pythonic", "args": {}}}
        text = '<p k="a" raw> 1 </p><p k="b" py>f()</p><p k="c" raw></p>'
        assert parse("x-findall", text, pattern=pattern, value_parsers=parsers, into="dict") == {
            "a": " 1 ",
            "b": [{"name": "f", "arguments": {}}],
            "c": "",
        }

    def test_validation(self) -> None:
        validate("x-findall", pattern="(?P<key>a)(?P<v>b)", into="dict")
        with pytest.raises(ValueError, match=r"content_args.pattern: a non-empty regex string is required"):
            validate("x-findall")
        with pytest.raises(ValueError, match=r"content_args.pattern: invalid regex"):
            validate("x-findall", pattern="(")
        with pytest.raises(ValueError, match=r"value_parsers.nope: the pattern has no group 'nope'"):
            validate("x-findall", pattern="(?P<a>.)", value_parsers={"nope": {"name": "x-pythonic"}})
        with pytest.raises(ValueError, match=r"'into': 'dict' needs a named group 'key'"):
            validate("x-findall", pattern="(?P<a>.)", into="dict")
        with pytest.raises(ValueError, match=r"content_args.into: must be 'list' or 'dict'"):
            validate("x-findall", pattern="(?P<a>.)", into="set")
        bad = {"a": {"name": "x-pythonic", "args": {"x": 1}}}
        with pytest.raises(ValueError, match=r"a.args: unknown key\(s\) \['x'\]; x-pythonic takes only"):
            validate("x-findall", pattern="(?P<a>.)", value_parsers=bad)
        with pytest.raises(ValueError, match=r"content_args.between: invalid regex"):
            validate("x-findall", pattern="(?P<a>.)", between="(")
        with pytest.raises(ValueError, match=r"skip_invalid was removed: a malformed tool call raises"):
            validate("x-findall", pattern="(?P<a>.)", skip_invalid=True)


class TestFirst:
    def test_first_parser_that_accepts_wins(self) -> None:
        parsers = [{"name": "x-json-calls", "args": {"single": True}}, {"name": "x-pythonic"}]
        assert parse("x-first", '{"name": "a"}', parsers=parsers) == {"name": "a", "arguments": {}}
        assert parse("x-first", "a(b=1)", parsers=parsers) == [{"name": "a", "arguments": {"b": 1}}]
        with pytest.raises(ValueError) as caught:
            parse("x-first", "a(", parsers=parsers)
        assert str(caught.value) == (
            "x-first: no parser accepted the text: x-json-calls: invalid JSON at offset 0: Expecting value; "
            "x-pythonic: not a Python list of calls (offset 2): '(' was never closed")
        assert caught.value.position == 0  # type: ignore[attr-defined]  # x-json-calls' (the only one)

    def test_validation(self) -> None:
        with pytest.raises(ValueError, match=r"content_args.parsers: must be a non-empty list"):
            validate("x-first", parsers=[])
        with pytest.raises(ValueError, match=r"content_args.parsers\[0\]: must be an object"):
            validate("x-first", parsers=["json"])
        with pytest.raises(ValueError, match=r"content_args.parsers\[0\]: unknown key\(s\) \['arg'\]"):
            validate("x-first", parsers=[{"name": "x-pythonic", "arg": {}}])


class TestXmlTree:
    MARK = "]<]minimax[>["

    def test_objects_arrays_and_leaves(self) -> None:
        text = (
            "<number><real>1.5</real><imaginary>-2.5</imaginary></number>"
            "<tags><item>a</item><item>b</item></tags>"
        )
        leaf = {"name": "json", "args": {"allow_non_json": True}}
        assert parse("x-xml-tree", text) == {
            "number": {"real": "1.5", "imaginary": "-2.5"},
            "tags": ["a", "b"],
        }
        assert parse("x-xml-tree", "\n<a> 2 </a>\n<b> x </b>", leaf_parser=leaf) == {"a": 2, "b": "x"}

    def test_remove_markers_and_custom_item_tag(self) -> None:
        text = f"{self.MARK}<city>Tokyo{self.MARK}</city>{self.MARK}<ids><i>1</i><i>2</i></ids>\n"
        assert parse("x-xml-tree", text, remove=[self.MARK], item_tag="i") == {
            "city": "Tokyo",
            "ids": ["1", "2"],
        }

    @pytest.mark.parametrize(
        "text, message",
        [
            ("<a><b>x</a>", "</a> at offset 7 does not close an open element (expected </b>)"),
            ("x</a>", "</a> at offset 1 does not close an open element (expected no closing tag)"),
            ("<a><b>x</b>", "<a> is never closed"),
            ("<a>1</a> junk <b>2</b>", "text outside an element at offset 8: ' junk '"),
            ("prose only", "text outside an element at offset 0: 'prose only'"),
            ("<a>x<b>1</b></a>", "text beside child elements in <a> at offset 3: 'x'"),
        ],
    )
    def test_unbalanced_tags_raise(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match=re.escape(f"x-xml-tree: {message}")):
            parse("x-xml-tree", text)

    def test_validation(self) -> None:
        validate("x-xml-tree", remove=["x"], item_tag="li", leaf_parser={"name": "x-pythonic"})
        with pytest.raises(ValueError, match=r"content_args.remove: must be a list of non-empty strings"):
            validate("x-xml-tree", remove="x")
        with pytest.raises(ValueError, match=r"content_args.item_tag: must be a non-empty string"):
            validate("x-xml-tree", item_tag="")
        with pytest.raises(ValueError, match=r"content_args.leaf_parser: must be an object"):
            validate("x-xml-tree", leaf_parser="json")
        with pytest.raises(ValueError, match=r"unknown key\(s\) \['items'\] for x-xml-tree"):
            validate("x-xml-tree", items="x")


class TestBareObject:
    Q = '<|"|>'
    ARGS: ClassVar[dict[str, Any]] = {"string_delims": [[Q, Q]]}

    def test_bare_keys_of_any_text_and_every_value_kind(self) -> None:
        q = self.Q
        text = (
            f"{{Content-Type:{q}text/html{q},user.name:{q}a, b: {{c}}{q},$ref:{q}#/x{q},@t:1,"
            f"my key:-70,-70:2.5e-07,🙂:true,n:None,z:null,f:False,"
            f'nested:{{a-b:[1,None,{q}x{q}],{q}quoted key{q}:{{}}}},e:[],j:"json \\"s\\"",ns:tag:1}}'
        )
        assert parse("x-bare-object", text, **self.ARGS) == {
            "Content-Type": "text/html",
            "user.name": "a, b: {c}",
            "$ref": "#/x",
            "@t": 1,
            "my key": -70,
            "-70": 2.5e-07,
            "🙂": True,
            "n": None,
            "z": None,
            "f": False,
            "nested": {"a-b": [1, None, "x"], "quoted key": {}},
            "e": [],
            "j": 'json "s"',
            "ns:tag": 1,
        }

    def test_whitespace_around_tokens_and_an_empty_object(self) -> None:
        q = self.Q
        assert parse("x-bare-object", f" {{ city : {q}Paris{q} , days : 3 }}\n", **self.ARGS) == {
            "city": "Paris",
            "days": 3,
        }
        assert parse("x-bare-object", "{}", **self.ARGS) == {}

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("{city:Paris}", "must be true, false, null, None or a number, got 'Paris' at offset 6"),
            ('{a:<|"|>open}', "a string opened at offset 3 is never closed"),
            ("{a:1", "'}' expected at offset 4"),
            ("{a:1} tail", "unexpected text after the object at offset 6: 'tail'"),
            ("{a}", "':' expected after the key at offset 1"),
            ("{a:inf}", "a bare value must be true, false, null, None or a number, got 'inf'"),
            ("[1]", "'{' expected at offset 0"),
            ("{a:[1,}", "a value expected at offset 6"),
        ],
    )
    def test_malformed_text_raises_with_the_offset(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match=re.escape(message)) as error:
            parse("x-bare-object", text, **self.ARGS)
        assert str(error.value).startswith("x-bare-object: ")
        assert isinstance(getattr(error.value, "position", None), int)

    def test_deep_nesting_is_a_value_error(self) -> None:
        with pytest.raises(ValueError, match="x-bare-object: nested too deeply"):
            parse("x-bare-object", "{a:" * 5000 + "1" + "}" * 5000, **self.ARGS)

    def test_validation(self) -> None:
        validate("x-bare-object", string_delims=[["<|", "|>"]])
        validate("x-bare-object")
        with pytest.raises(ValueError, match=r"string_delims: must be a list of \[open, close\]"):
            validate("x-bare-object", string_delims=[["<|"]])
        with pytest.raises(ValueError, match=r"unknown key\(s\) \['delims'\] for x-bare-object"):
            validate("x-bare-object", delims=[])


def test_nested_specs_resolve_like_field_content() -> None:
    assert run_parser({"name": "x-pythonic"}, "f()") == [{"name": "f", "arguments": {}}]
    with pytest.raises(ValueError, match=r"where.args: must be an object"):
        check_parser_spec({"name": "x-pythonic", "args": []}, "where")


def test_nested_parsers_are_resolved_when_the_template_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    def shout(text: str, args: Any) -> str:
        return text.upper()

    def accept(args: Any, where: str) -> None:
        return None

    monkeypatch.setitem(EXTENSIONS, "x-shout", Extension(shout, accept))
    first = {"parsers": [
        {"name": "x-xml-tree", "args": {"leaf_parser": {"name": "x-shout"}}},
        {"name": "x-findall", "args": {"pattern": r"(?P<key>\w+)=(?P<value>[^;]*);", "into": "dict",
                                       "value_parsers": {"value": {"name": "x-shout"}}}},
    ]}
    template = load_response_template({"version": 1, "start_anchor": "<a>", "fields": {
        "tool_calls": {"open_pattern": "<call=(?P<name>\\w+)>", "close": "</call>", "repeats": True,
                       "content": "x-first", "content_args": first,
                       "transform": {"type": "function",
                                     "function": {"name": "{name}", "arguments": "{content}"}}},
        "content": {}}})
    monkeypatch.delitem(EXTENSIONS, "x-shout")  # a region close no longer looks the name up
    message = parse_response("<call=f><a>hi</a></call><call=g>b=yo;c=x;</call>", template, prefix="<a>")
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {"a": "HI"}}},
        {"type": "function", "function": {"name": "g", "arguments": {"b": "YO", "c": "X"}}},
    ]


# ------------------------------------------------------------------------------------------- properties

_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
_CALLS = st.lists(
    st.fixed_dictionaries({"name": _NAMES, "arguments": st.dictionaries(_NAMES, _JSON_VALUES, max_size=4)}),
    max_size=4,
)


@given(_CALLS)
def test_pythonic_reads_back_any_call_list_written_with_python_literals(calls: list[dict[str, Any]]) -> None:
    text = (
        "["
        + ", ".join(
            f"{call['name']}("
            + ", ".join(f"{key}={value!r}" for key, value in call["arguments"].items())
            + ")"
            for call in calls
        )
        + "]"
    )
    assert parse("x-pythonic", text) == calls


@given(_CALLS, st.sampled_from(["; ", "\n", ";", " "]))
def test_json_calls_reads_back_any_separated_call_sequence(
    calls: list[dict[str, Any]], separator: str
) -> None:
    assert parse("x-json-calls", separator.join(json.dumps(call) for call in calls)) == calls
    assert parse("x-json-calls", json.dumps(calls)) == calls


@given(st.text(alphabet="[](){}=,'\"\\abf0123 .-:eE+_\n", max_size=60))
def test_strict_parsers_fail_only_with_value_error(text: str) -> None:
    for name in ("x-pythonic", "x-json-calls"):
        with contextlib.suppress(ValueError):
            parse(name, text)


@pytest.mark.parametrize(
    ("name", "message"),
    [("x-pythonic", "too many nested parentheses"), ("x-json-calls", "the JSON is nested too deeply")],
)
def test_deep_nesting_is_a_value_error(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(name, "[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"name": "f", "arguments": {"x": NaN}}',
         "x-json-calls: invalid JSON at offset 0: NaN is not valid JSON (JSON has no NaN or Infinity)"),
        ('[{"name": "f", "arguments": {"x": -Infinity}}]',
         "x-json-calls: invalid JSON at offset 0: -Infinity is not valid JSON (JSON has no NaN or Infinity)"),
        ('{"name": "f", "arguments": "{\\"x\\": Infinity}"}',
         "x-json-calls: the JSON value at offset 0 is not a tool call ('arguments' is a string that is not "
         "a JSON object)"),
    ],
)
def test_json_calls_have_no_nan_or_infinity(text: str, message: str) -> None:
    """Round-2 QA: the same JSON as the json parser (SPEC: JSON has no NaN/Infinity)."""
    with pytest.raises(ValueError) as raised:
        parse("x-json-calls", text)
    assert str(raised.value).startswith(message)


def test_pythonic_refuses_a_keyword_given_twice() -> None:
    """Round-2 QA: f(a=1, a=2) kept only a=2; nothing is lost, so it is an error."""
    with pytest.raises(ValueError) as raised:
        parse("x-pythonic", "[f(a=1, a=2)]")
    assert str(raised.value) == "x-pythonic: element 1 of the list: call 'f': argument 'a' is given twice"


class TestNothingLostAudit:
    """Round-3 QA audit (SPEC 1.5): no key, group or text of an ``x-`` region vanishes silently."""

    Q = '<|"|>'

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("{a:1,a:2}", "x-bare-object: key 'a' is given twice (the second at offset 5)"),
            ('{o:{a:1, <|"|>a<|"|>:2}}', "x-bare-object: key 'a' is given twice (the second at offset 9)"),
            ("{a : 1, a:2}", "x-bare-object: key 'a' is given twice (the second at offset 8)"),
        ],
    )
    def test_bare_object_duplicate_key_raises(self, text: str, message: str) -> None:
        with pytest.raises(ValueError) as raised:
            parse("x-bare-object", text, string_delims=[[self.Q, self.Q]])
        assert str(raised.value) == message
        assert getattr(raised.value, "position", None) == int(message.rsplit(" ", 1)[1].rstrip(")"))

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                '[f(a={"k": 1, "k": 2})]',
                "x-pythonic: element 1 of the list: call 'f', argument 'a': dict key 'k' is given twice",
            ),
            (
                "[f(a=1)  # secret\n]",
                "x-pythonic: a comment is not part of a call list (offset 9): '# secret'",
            ),
            (
                "f(a=1) # done",
                "x-pythonic: a comment is not part of a call list (offset 7): '# done'",
            ),
            (
                '[{"name": "f", "arguments": {}, "extra": 1}]',
                "x-pythonic: element 1 of the list: call 'f': unknown key(s) ['extra']; a call object has "
                "'name', one of 'arguments'/'parameters', an optional string 'id' and \"type\": \"function\"",
            ),
            (
                '[{"name": "f", "arguments": {"a": 1}, "parameters": {"b": 2}}]',
                "x-pythonic: element 1 of the list: call 'f': both 'arguments' and 'parameters' are given",
            ),
            (
                '[{"name": "f", "type": "code"}]',
                "x-pythonic: element 1 of the list: call 'f': 'type' is not \"function\"",
            ),
            (
                '[{"name": "f", "id": 7}]',
                "x-pythonic: element 1 of the list: call 'f': 'id' is not a string",
            ),
        ],
    )
    def test_pythonic_loss_raises(self, text: str, message: str) -> None:
        with pytest.raises(ValueError) as raised:
            parse("x-pythonic", text)
        assert str(raised.value) == message

    def test_pythonic_dict_element_keeps_id_and_accepts_type_function(self) -> None:
        text = '[{"id": "call_1", "type": "function", "name": "f", "parameters": {"a": 1}}, g()]'
        assert parse("x-pythonic", text) == [
            {"id": "call_1", "name": "f", "arguments": {"a": 1}},
            {"name": "g", "arguments": {}},
        ]

    def test_pythonic_hash_inside_a_string_is_not_a_comment(self) -> None:
        assert parse("x-pythonic", "[f(a='# x')]") == [{"name": "f", "arguments": {"a": "# x"}}]

    PATTERN = '<p(?: k="(?P<key>\\w+)")?(?: t="(?P<t>\\w+)")?>(?P<v>.*?)</p>'

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                '<p k="a">1</p><p k="a">2</p>',
                "x-findall: match at offset 14: key 'a' is given twice (into: dict)",
            ),
            ("<p>1</p>", "x-findall: match at offset 0: the group 'key' did not take part (into: dict)"),
            (
                '<p k="a" t="int">1</p>',
                "x-findall: match at offset 0: key 'a' has more than one value group ['t', 'v'] "
                "(into: dict takes one)",
            ),
        ],
    )
    def test_findall_into_dict_loss_raises(self, text: str, message: str) -> None:
        with pytest.raises(ValueError) as raised:
            parse("x-findall", text, pattern=self.PATTERN, into="dict")
        assert str(raised.value) == message
        assert getattr(raised.value, "position", None) == int(message.split("offset ")[1].split(":")[0])

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                "<a>1</a><a>2</a>",
                "x-xml-tree: element <a> is given twice at the top level (the second at offset 8)",
            ),
            (
                "<o><a>1</a> <a>2</a></o>",
                "x-xml-tree: element <a> is given twice in <o> (the second at offset 12)",
            ),
            (
                "<o><item>1</item><b>2</b><item>3</item></o>",
                "x-xml-tree: element <item> is given twice in <o> (the second at offset 25)",
            ),
        ],
    )
    def test_xml_tree_duplicate_element_raises(self, text: str, message: str) -> None:
        with pytest.raises(ValueError) as raised:
            parse("x-xml-tree", text)
        assert str(raised.value) == message

    def test_xml_tree_arrays_still_repeat_items(self) -> None:
        assert parse("x-xml-tree", "<o><item>1</item><item>1</item></o>") == {"o": ["1", "1"]}


def test_xml_tree_removes_a_marker_only_before_a_tag() -> None:
    """Round-3 audit: ``remove`` deleted the marker everywhere, also out of an argument's value."""
    mark = "]<]minimax[>["
    text = f"{mark}<note>x{mark}y{mark}</note>{mark}<b>1</b>"
    assert parse("x-xml-tree", text, remove=[mark]) == {"note": f"x{mark}y", "b": "1"}
    assert parse("x-xml-tree", f"<b>1</b>{mark}\n", remove=[mark]) == {"b": "1"}  # before </invoke>
    with pytest.raises(ValueError, match=re.escape("x-xml-tree: text outside an element at offset 0")):
        parse("x-xml-tree", f"{mark} <b>1</b>", remove=[mark])
