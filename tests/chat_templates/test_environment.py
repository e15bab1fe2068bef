"""The rendering environment: the reference's settings, globals and filters, errors and the cache."""

from __future__ import annotations

import pickle
from typing import Any

import jinja2
import pytest

from chatcodec.chat_templates import environment
from chatcodec.chat_templates.environment import compile_chat_template
from chatcodec.chat_templates.errors import (
    ChatTemplateError,
    ChatTemplateKeyError,
    ChatTemplateSyntaxError,
    ChatTemplateTypeError,
    ChatTemplateUndefinedError,
    ChatTemplateZeroDivisionError,
)
from chatcodec.chat_templates.render import render_chat_template

MESSAGES = [{"role": "user", "content": "hi"}]


def render(source: str, **variables: Any) -> str:
    return render_chat_template(source, MESSAGES, **variables)


class TestWhitespaceAndSyntax:
    def test_trim_blocks_and_lstrip_blocks(self) -> None:
        source = "<s>\n    {% for m in messages %}\n    [{{ m.role }}]\n    {% endfor %}\n</s>"
        assert render(source) == "<s>\n    [user]\n</s>"

    def test_final_newline_is_dropped_as_in_jinja(self) -> None:
        assert render("{{ messages[0].content }}\n") == "hi"

    def test_loop_controls(self) -> None:
        assert (
            render(
                "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}"
                "{% endif %}{{ i }}{% endfor %}"
            )
            == "02"
        )

    def test_generation_block_renders_its_body(self) -> None:
        assert render("a{% generation %}{{ messages[0].content }}{% endgeneration %}b") == "ahib"

    def test_autoescape_is_off(self) -> None:
        assert render("{{ '<b>&' }}") == "<b>&"


class TestFilters:
    def test_tojson_keeps_unicode_and_html(self) -> None:
        assert render("{{ {'a': '<é>&\\'', 'b': [1, 2.5, none, true]}|tojson }}") == (
            '{"a": "<é>&\'", "b": [1, 2.5, null, true]}'
        )

    def test_tojson_arguments(self) -> None:
        assert render("{{ {'b': 1, 'a': [1]}|tojson(indent=2, sort_keys=true) }}") == (
            '{\n  "a": [\n    1\n  ],\n  "b": 1\n}'
        )
        assert render("{{ {'a': 1, 'b': 2}|tojson(separators=(',', ':')) }}") == '{"a":1,"b":2}'
        assert render("{{ 'é'|tojson(ensure_ascii=true) }}") == '"\\u00e9"'

    def test_tojson_of_an_undefined_is_a_type_error(self) -> None:
        with pytest.raises(ChatTemplateTypeError, match="Object of type Undefined is not JSON serializable"):
            render("{{ nothing|tojson }}")

    def test_checked_filters_behave_like_jinjas(self) -> None:
        assert render(
            "{{ 'ab'|center(6) }}|{{ 'a\\nb'|indent(2, first=true) }}|{{ '%s-%s'|format(1, 2) }}"
        ) == ("  ab  |  a\n  b|1-2")
        assert (
            render("{{ ['a', 'b']|join(', ') }}|{{ [{'n': 1}, {'n': 2}]|join('+', attribute='n') }}")
            == "a, b|1+2"
        )
        assert (
            render(
                "{{ 'aaa'|replace('a', 'b', 2) }}|{{ [1, 2, 3]|batch(2, 0)|list }}|"
                "{{ [1, 2, 3]|slice(2)|list }}"
            )
            == "bba|[[1, 2], [3, 0]]|[[1, 2], [3]]"
        )


class TestGlobals:
    def test_raise_exception_message_is_verbatim(self) -> None:
        with pytest.raises(ChatTemplateError) as caught:
            render("{{ raise_exception('Roles must alternate: user/assistant/...') }}")
        error = caught.value
        assert type(error) is ChatTemplateError
        assert error.message == "Roles must alternate: user/assistant/..."
        assert str(error) == (
            "Roles must alternate: user/assistant/...\n  line 1 of the chat template:\n"
            "    {{ raise_exception('Roles must alternate: user/assistant/...') }}"
        )
        assert error.original_type == "TemplateError"

    def test_strftime_now_without_now_is_the_local_time(self) -> None:
        assert len(render("{{ strftime_now('%Y-%m-%d') }}")) == 10

    def test_lipsum_cycler_joiner_are_jinjas(self) -> None:
        assert render("{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}") == "aba"
        assert render("{% set j = joiner(',') %}{{ j() }}x{{ j() }}y") == "x,y"
        assert render("{{ lipsum(1, html=false, min=3, max=4)|wordcount < 5 }}") == "True"

    def test_range_and_loop_variables(self) -> None:
        assert (
            render(
                "{% for i in range(3) %}{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}"
                "{% endfor %}"
            )
            == "1/3,2/3,3/3"
        )

    def test_loops_over_generators_keep_loop_length(self) -> None:
        assert (
            render("{% for m in messages|selectattr('role', 'eq', 'user') %}{{ loop.length }}{% endfor %}")
            == "1"
        )


class TestErrors:
    def test_syntax_error_names_the_line(self) -> None:
        with pytest.raises(ChatTemplateSyntaxError) as caught:
            compile_chat_template("line one\n{% if messages %}\nno end")
        error = caught.value
        assert isinstance(error, jinja2.TemplateSyntaxError)
        assert error.lineno == 3
        assert "Jinja was looking for the following tags: 'elif' or 'else' or 'endif'" in error.message
        assert str(error).endswith("\n  line 3 of the chat template (TemplateSyntaxError):\n    no end")

    @pytest.mark.parametrize(
        ("source", "cls", "builtin", "message"),
        [
            ("{{ 1 / 0 }}", ChatTemplateZeroDivisionError, ZeroDivisionError, "division by zero"),
            ("{{ messages[0] + 1 }}", ChatTemplateTypeError, TypeError, "unsupported operand"),
            (
                "{{ {'a': 1}.keys()|list|first|int + messages[5].x }}",
                ChatTemplateUndefinedError,
                jinja2.UndefinedError,
                "list object has no element 5",
            ),
            ("{{ {}.__getitem__ }}{{ dict()['k'] }}", None, None, None),
        ],
        ids=["zero-division", "type", "undefined", "missing-key-is-undefined"],
    )
    def test_runtime_errors_keep_their_type(self, source: str, cls: Any, builtin: Any, message: Any) -> None:
        if cls is None:
            assert render(source) == ""
            return
        with pytest.raises(cls) as caught:
            render(source)
        assert isinstance(caught.value, builtin)
        assert isinstance(caught.value, jinja2.TemplateError)
        assert message in caught.value.message

    def test_error_inside_a_macro_names_the_macro_line(self) -> None:
        source = "{% macro show(m) %}\n{{ m.content + 1 }}\n{% endmacro %}\n"
        source += "{% for m in messages %}{{ show(m) }}{% endfor %}"
        with pytest.raises(ChatTemplateTypeError) as caught:
            render(source)
        assert caught.value.lineno == 2
        assert caught.value.source_line == "{{ m.content + 1 }}"

    def test_key_error_message_is_not_quoted(self) -> None:
        error = ChatTemplateKeyError("no such key", lineno=3, source_line="{{ x }}")
        assert isinstance(error, KeyError)
        assert str(error) == "no such key\n  line 3 of the chat template:\n    {{ x }}"

    @pytest.mark.parametrize(
        ("source", "message"), [("{{ '%(a)s' % {} }}", "'a'"), ("{{ '{x}'.format() }}", "'x'")]
    )
    def test_key_errors_read_as_the_references(self, source: str, message: str) -> None:
        # the golden error lines read "KeyError: 'a'": str() of the KeyError, quotes included
        with pytest.raises(ChatTemplateKeyError) as caught:
            render(source)
        assert caught.value.message == message
        assert str(caught.value).startswith(message + "\n  line 1 of the chat template (KeyError):")

    def test_errors_pickle(self) -> None:
        with pytest.raises(ChatTemplateTypeError) as caught:
            render("{{ messages[0] + 1 }}")
        copy = pickle.loads(pickle.dumps(caught.value))
        assert type(copy) is ChatTemplateTypeError
        assert (copy.message, copy.lineno, copy.original_type) == (caught.value.message, 1, "TypeError")
        assert str(copy) == str(caught.value)

    def test_long_source_lines_are_cut(self) -> None:
        with pytest.raises(ChatTemplateError) as caught:
            render("{{ raise_exception('x') }}" + "y" * 500)
        assert str(caught.value).endswith("...")
        assert len(str(caught.value).splitlines()[-1]) == 4 + 160


class TestCompileCache:
    def test_a_template_is_compiled_once(self) -> None:
        source = "{{ messages|length }} cache test"
        assert compile_chat_template(source) is compile_chat_template(source)

    def test_the_cache_is_bounded(self) -> None:
        info = compile_chat_template.cache_info()
        assert info.maxsize == environment.TEMPLATE_CACHE_SIZE == 128

    def test_rendering_does_not_recompile(self) -> None:
        source = "{{ messages[0].content }} cache test 2"
        render(source)
        before = compile_chat_template.cache_info()
        for _ in range(3):
            render(source)
        after = compile_chat_template.cache_info()
        assert (after.hits - before.hits, after.misses - before.misses) == (3, 0)


@pytest.mark.parametrize("name", ["Qwen--Qwen3-0.6B.jinja",
                                  "meta-llama--Llama-4-Scout-17B-16E-Instruct.jinja",
                                  "mistralai--Ministral-3-14B-Reasoning-2512.jinja"])
def test_the_parsed_tree_is_compiled_as_a_copy_and_stays_as_parsed(name: str) -> None:
    from jinja2 import nodes

    from tests.conftest import corpus_template

    source = corpus_template(name)
    tree = environment.parse_chat_template(source)
    fresh = environment.ENVIRONMENT.parse(source)
    copied = environment.copy_tree(tree)
    assert copied == tree == fresh
    originals = {id(node) for node in [tree, *tree.find_all(nodes.Node)]}
    assert not originals & {id(node) for node in [copied, *copied.find_all(nodes.Node)]}
    environment.compile_chat_template.cache_clear()
    compile_chat_template(source)  # the code generator wraps every loop iterable in the loop guard
    assert environment.parse_chat_template(source) is tree
    assert tree == fresh
    guard = environment.LOOP_GUARD_FILTER
    assert not any(node.name == guard for node in tree.find_all(nodes.Filter))
    environment.ENVIRONMENT.compile(copied)  # what compile_chat_template does to its copy
    assert any(node.name == guard for node in copied.find_all(nodes.Filter))
    assert copied != tree == fresh
    environment.compile_chat_template.cache_clear()


def test_a_template_that_does_not_parse_is_a_syntax_error_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ChatTemplateSyntaxError) as error:
            compile_chat_template("{% for x in y %}{{ x }}")
        assert error.value.lineno == 1
