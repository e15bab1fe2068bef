"""The portability linter: chat-template constructs and response-template regex features."""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec.analysis.lint import LintFinding, lint_chat_template, lint_pattern, lint_response_template
from chatcodec.chat_templates.errors import ChatTemplateLimitError, ChatTemplateSyntaxError
from tests.conftest import corpus_path, load_json


def codes(source: str) -> list[tuple[int | None, str]]:
    return [(finding.line, finding.code) for finding in lint_chat_template(source)]


class TestChatTemplates:
    def test_portable_template_is_clean(self) -> None:
        source = (
            "{%- for m in messages %}<|{{ m.role }}|>{{ m.content|trim }}{% if m.tool_calls is defined %}"
            "{{ m.tool_calls|tojson }}{% endif %}{% endfor %}"
            "{% if add_generation_prompt is true %}<|a|>{% endif %}"
        )
        assert lint_chat_template(source) == []

    @pytest.mark.parametrize(
        ("call", "hint"),
        [
            ("x.lower()", "use |lower"),
            ("x.strip()", "use |trim"),
            ("d.items()", "use |items (or |dictitems)"),
            ("x.startswith('a')", "no filter does exactly this"),
            ("d.get('k')", "use x[key] with is defined"),
        ],
    )
    def test_python_methods_both_engines_implement_are_info(self, call: str, hint: str) -> None:
        findings = lint_chat_template(f"\n{{{{ {call} }}}}")
        method = call.split('.')[1].split('(')[0]
        assert findings == [LintFinding(
            "CT001", f"Python method .{method}() (MiniJinja and @huggingface/jinja implement it too); {hint} "
            "for other engines", 2, severity="info")]

    @pytest.mark.parametrize(
        ("call", "engines", "hint"),
        [
            ("'{}'.format(x)", "@huggingface/jinja", "use |format(...)"),
            ("', '.join(x)", "@huggingface/jinja", "use |join(sep)"),
            ("x.splitlines()", "@huggingface/jinja", "no filter does exactly this"),
            ("x.zfill(3)", "MiniJinja or @huggingface/jinja", "no filter does exactly this"),
        ],
    )
    def test_python_methods_an_engine_lacks_are_warnings(self, call: str, engines: str, hint: str) -> None:
        method = call.split('.')[1].split('(')[0]
        assert lint_chat_template(f"{{{{ {call} }}}}") == [LintFinding(
            "CT001", f"Python method .{method}() is not implemented by {engines}; {hint}", 1,
            severity="warning")]

    def test_deterministic_engine_hazards(self) -> None:
        source = ("{% set sizes = {0: 0, 512: 128} %}\r\n"
                  "{% for field, name in [('a', 'A'), ('b', 'B')] %}{{ name }}{% endfor %}\n"
                  "{%- generation -%}x{% endgeneration %}")
        found = [(finding.line, finding.code, finding.severity) for finding in lint_chat_template(source)]
        assert found == [(1, "CT005", "warning"), (1, "CT006", "warning"), (2, "CT007", "warning"),
                         (3, "CT004", "warning")]

    def test_severity_defaults_to_the_code_table_and_is_checked(self) -> None:
        assert LintFinding("RT011", "m").severity == "error"
        assert LintFinding("RT099", "m").severity == "warning"  # a code added later without an entry
        with pytest.raises(ValueError, match="severity must be one of"):
            LintFinding("CT001", "m", severity="fatal")

    def test_jinja_objects_methods_are_not_python_methods(self) -> None:
        source = "{% set c = cycler('a') %}{{ c.next() }}"
        source += "{% for m in messages %}{{ loop.cycle('x', 'y') }}{% endfor %}"
        assert codes(source) == []

    def test_python_literals(self) -> None:
        source = "{% if x == True %}\n{% set y = None %}{{ False }}{% endif %}\n{{ 'True' }}{{ true }}"
        assert codes(source) == [(1, "CT002"), (2, "CT002"), (2, "CT002")]
        assert str(lint_chat_template("{{ None }}")[0]) == (
            "line 1: info CT002 None is Python spelling (MiniJinja and @huggingface/jinja accept it too); "
            "write none for other engines")

    @pytest.mark.parametrize(
        "expression",
        ["tools", "message.tool_calls", "tool_call['arguments']", "{'a': 1}", "[1, 2]", "tools|list"],
    )
    def test_printed_structures(self, expression: str) -> None:
        assert codes(f"{{{{ {expression} }}}}") == [(1, "CT003")]

    @pytest.mark.parametrize(
        "source",
        [
            "{{ tools|tojson }}",
            "{{ tools|length }}",
            "{{ message.content }}",
            "{% if tool_call.arguments is string %}{{ tool_call.arguments }}{% endif %}",
        ],
        ids=["tojson", "length", "content", "guarded-by-is-string"],
    )
    def test_portable_prints(self, source: str) -> None:
        assert codes(source) == []

    def test_string_guard_does_not_cover_the_else_branch(self) -> None:
        source = "{% if args is string %}{{ args }}{% else %}{{ arguments }}{% endif %}"
        assert codes(source) == [(1, "CT003")]

    def test_syntax_errors(self) -> None:
        with pytest.raises(ChatTemplateSyntaxError):
            lint_chat_template("{% if %}")

    @pytest.mark.parametrize(
        ("source", "limit"),
        [
            ("{% for x in [1] %}" * 25 + "{% endfor %}" * 25, "Python's nested-block limit"),
            ("{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}", "recursion limit"),
        ],
        ids=["nested-loops", "parentheses"],
    )
    def test_templates_python_cannot_compile(self, source: str, limit: str) -> None:
        # they lint clean as Jinja but can never render: linting says so
        with pytest.raises(ChatTemplateLimitError) as caught:
            lint_chat_template(source)
        assert caught.value.limit == limit

    @pytest.mark.parametrize(
        "entry", load_json("chat_templates", "MANIFEST.json"), ids=lambda entry: entry["file"]
    )
    def test_corpus_python_methods_are_reported(self, entry: dict[str, Any]) -> None:
        """Every Python method the corpus manifest lists for a template is reported (and no other)."""
        source = corpus_path("chat_templates", entry["file"]).read_text(encoding="utf-8")
        reported = {
            finding.message.split(".")[1].split("(")[0]
            for finding in lint_chat_template(source)
            if finding.code == "CT001"
        }
        assert reported == set(entry["python_methods"])


class TestPatterns:
    @pytest.mark.parametrize(
        ("pattern", "code"),
        [
            (r"(?=<tool_call>)", "RT001"),
            (r"(?!x)a", "RT001"),
            (r"(?<=a)b", "RT001"),
            (r"(?<!a)b", "RT001"),
            (r"(a)\1", "RT002"),
            (r"(?P<q>['\"]).*?(?P=q)", "RT002"),
            (r"(?P<q>a)\g<q>", "RT002"),
            (r"(?>a+)b", "RT003"),
            (r"a*+b", "RT004"),
            (r"a++b", "RT004"),
            (r"a?+b", "RT004"),
            (r"a{2,3}+b", "RT004"),
            (r"\((?R)?\)", "RT005"),
            (r"(a(?1)?b)", "RT005"),
            (r"(?P<x>a(?&x)?)", "RT005"),
        ],
    )
    def test_features(self, pattern: str, code: str) -> None:
        assert [finding.code for finding in lint_pattern(pattern, "p")] == [code]

    @pytest.mark.parametrize(
        "pattern",
        [
            r"<tool_call>\s*(?P<json>\{.*?\})\s*</tool_call>",
            r"a+?b*?c??",
            r"[(?=][*+]+\(\?=\)\\1",
            r"(?:x|y)+(?i:z)",
            r"\0\d+",
            r"[]a]+",
        ],
        ids=[
            "named-groups",
            "lazy",
            "escaped-and-classes",
            "non-capturing",
            "octal-and-digit-class",
            "bracket-class",
        ],
    )
    def test_portable_patterns(self, pattern: str) -> None:
        assert lint_pattern(pattern, "p") == []

    def test_response_template_paths(self) -> None:
        template = {
            "start_anchor_pattern": r"(?<=assistant)",
            "fields": {
                "content": {},
                "tool_calls": {
                    "open_pattern": r"<call (?P<name>\w+)>",
                    "close_pattern": r"(?=</call>)",
                    "content": "xml-inline",
                    "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
                    "transform": {"name": "{name}"},
                },
            },
        }
        findings = lint_response_template(template)
        assert [(finding.where, finding.code) for finding in findings] == [
            ("start_anchor_pattern", "RT001"),
            ("fields.tool_calls.close_pattern", "RT001"),
            ("fields.tool_calls.content_args.tag_pattern", "RT002"),
        ]
        assert str(findings[0]) == (
            "start_anchor_pattern: warning RT001 look-behind (?<=...) in '(?<=assistant)'")

    def test_literal_templates_have_no_patterns(self) -> None:
        template = {"start_anchor": "<a>", "fields": {"content": {}, "r": {"open": "x"}}}
        assert lint_response_template(template) == []

    def test_a_placeholder_that_names_no_variable_is_reported(self) -> None:
        """QA: '{nmae}' loaded, linted clean, and failed only when the first tool call closed."""
        template = {"start_anchor": "S", "fields": {
            "tool_calls": {"open_pattern": "<call (?P<name>\\w+)>", "close_pattern": "</(?P<tag>\\w+)>",
                           "content": "json",
                           "transform": {"name": "{nmae}", "tag": "{tag}", "id": "{idd?}",
                                         "args": ["{content.a}", "{argz.b}"]}},
            "content": {}}}
        assert [str(finding) for finding in lint_response_template(template)] == [
            "fields.tool_calls.transform.name: error RT011 placeholder '{nmae}' names no variable of this "
            "field (available: content, name, tag); parsing raises when such a region closes",
            "fields.tool_calls.transform.id: error RT011 placeholder '{idd?}' names no variable of this "
            "field (available: content, name, tag); so its key is always left out",
            "fields.tool_calls.transform.args[1]: error RT011 placeholder '{argz.b}' names no variable of "
            "this field (available: content, name, tag); parsing raises when such a region closes",
            "fields.tool_calls.transform.id: warning RT012 optional placeholder '{idd?}' is a chatcodec "
            "extension, so this response template needs chatcodec: transformers writes the literal text "
            "instead of the value or leaving the key out",
        ]

    def test_chatcodec_extensions_are_reported_as_needing_chatcodec(self) -> None:
        template = {"start_anchor": "S", "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>", "content_args": {"strip": "blank"}},
            "tool_calls": {"open": "<c>", "close": "</c>", "repeats": True, "flatten": True,
                           "content": "x-json-calls", "transform": {"id": "{id?}", "name": "{name}"},
                           "transform_each": True},
            "args": {"open": "<a>", "close": "</a>", "content": "xml-inline", "content_args": {
                "tag_pattern": "<(?P<key>k)>(?P<value>v)", "value_parser": {"name": "x-bare-object"}}},
            "content": {"content_args": {"strip": True}}}}
        assert [(finding.code, finding.where) for finding in lint_response_template(template)] == [
            ("RT012", "fields.reasoning_content.content_args.strip"),
            ("RT012", "fields.tool_calls.content"),
            ("RT012", "fields.tool_calls.flatten"),
            ("RT012", "fields.tool_calls.transform.id"),
            ("RT012", "fields.args.content_args.value_parser.name"),
        ]
        messages = [finding.message for finding in lint_response_template(template)]
        assert messages[1] == ("content parser 'x-json-calls' is a chatcodec extension, so this response "
                               "template needs chatcodec: transformers refuses to load the template")
        assert messages[4].endswith("transformers fails when such a region closes")

    def test_transform_each_variables_are_element_keys_so_they_are_not_checked(self) -> None:
        template = {"start_anchor": "S", "fields": {
            "tool_calls": {"open": "<c>", "close": "</c>", "content": "json", "transform_each": True,
                           "transform": {"name": "{fn}"}},
            "content": {}}}
        assert lint_response_template(template) == []

    def test_a_template_without_an_implicit_field_discards_text(self) -> None:
        """SPEC 1.5 keeps the discarding; the linter says so (QA: 'pre <c>inside</c> post' -> 'inside')."""
        findings = lint_response_template({"start_anchor": "<|im_start|>assistant\n",
                                           "fields": {"content": {"open": "<c>", "close": "</c>"}}})
        assert [str(finding) for finding in findings] == [
            "fields: warning RT010 no implicit field (a field without open/open_pattern), so text outside "
            'every region is discarded; add one (e.g. "content": {}) to keep that text'
        ]


def test_a_finding_without_a_place_starts_with_its_severity() -> None:
    """QA: a finding about a whole template (RT000 of a template that does not load) printed as
    ': error RT000 ...', a separator with nothing before it."""
    assert str(LintFinding("RT000", "fields: missing")) == "error RT000 fields: missing"
    assert str(LintFinding("RT001", "look-ahead", where="fields.x.open_pattern")) == (
        "fields.x.open_pattern: warning RT001 look-ahead")
    assert str(LintFinding("CT000", "cannot compile", 3)) == "line 3: error CT000 cannot compile"
