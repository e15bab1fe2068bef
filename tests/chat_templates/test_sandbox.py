"""The sandbox: known escapes are refused, and resource limits stop runaway templates with a clear error.

One class per concern, in the shape of Jinja's own ``test_security.py``. Limits are tested with
their constants lowered (monkeypatch), so the tests stay fast.
"""

from __future__ import annotations

import datetime
import sys
from typing import Any

import jinja2
import pytest

from chatcodec.chat_templates import environment, limits
from chatcodec.chat_templates.errors import (
    ChatTemplateError,
    ChatTemplateLimitError,
    ChatTemplateOverflowError,
    ChatTemplateSecurityError,
    ChatTemplateUndefinedError,
)
from chatcodec.chat_templates.render import render_chat_template

MESSAGES = [{"role": "user", "content": "hi"}]


def render(source: str, **variables: Any) -> str:
    return render_chat_template(source, MESSAGES, **variables)


def assert_refused(source: str) -> None:
    """The template cannot get hold of the object: it raises a sandbox or undefined error."""
    with pytest.raises((ChatTemplateSecurityError, ChatTemplateUndefinedError)) as caught:
        render(source)
    assert isinstance(caught.value, jinja2.TemplateError)


class TestAttributeWalks:
    @pytest.mark.parametrize(
        "source",
        [
            "{{ ''.__class__.__mro__ }}",
            "{{ messages.__class__.__base__ }}",
            "{{ raise_exception.__globals__.os }}",
            "{{ strftime_now.__globals__['__builtins__'] }}",
            "{{ cycler.__init__.__globals__ }}",
            "{{ namespace.__init__.__globals__ }}",
            "{{ dict.__class__.__subclasses__() }}",
            "{{ messages[0].__class__.__subclasses__() }}",
            "{{ (1).__class__.__base__.__subclasses__() }}",
            "{{ lipsum.__globals__.os.popen('id').read() }}",
        ],
    )
    def test_dunder_walks_raise_security_error(self, source: str) -> None:
        with pytest.raises(ChatTemplateSecurityError, match="is unsafe") as caught:
            render(source)
        assert isinstance(caught.value, jinja2.exceptions.SecurityError)

    @pytest.mark.parametrize(
        "source", ["{{ ''.__class__ }}", "{{ messages.__class__ }}", "{{ lipsum.__globals__ }}"]
    )
    def test_printing_an_unsafe_attribute_prints_nothing(self, source: str) -> None:
        # the reference's behaviour: an unsafe attribute is an undefined that prints as ""
        assert render(source + "|end") == "|end"

    def test_missing_dunders_are_undefined_errors(self) -> None:
        with pytest.raises(ChatTemplateUndefinedError, match="has no attribute '__self__'"):
            render("{{ range.__self__.__import__('os') }}")

    def test_private_attributes_are_undefined(self) -> None:
        assert render("{{ messages._x is defined }}") == "False"

    def test_code_objects_are_unreachable(self) -> None:
        with pytest.raises(ChatTemplateSecurityError):
            render("{{ raise_exception.__code__.co_consts }}")


class TestAttrFilter:
    @pytest.mark.parametrize(
        "source",
        [
            "{{ (messages|attr('__class__')).__mro__ }}",
            "{{ (''|attr('__class__')|attr('__mro__'))[1] }}",
            "{{ (raise_exception|attr('__globals__'))['os'] }}",
        ],
    )
    def test_attr_cannot_reach_dunders(self, source: str) -> None:
        assert_refused(source)

    def test_attr_on_a_dunder_prints_nothing(self) -> None:
        assert render("{{ messages|attr('__class__') }}|") == "|"

    def test_attr_still_reads_ordinary_attributes(self) -> None:
        assert render("{{ (namespace(a=1)|attr('a')) }}") == "1"


class TestStrFormat:
    @pytest.mark.parametrize(
        "source",
        [
            "{{ '{0.__class__.__mro__}'.format(messages) }}",
            "{{ '{m.__class__.__base__}'.format_map({'m': messages}) }}",
        ],
    )
    def test_format_cannot_walk_attributes(self, source: str) -> None:
        assert_refused(source)

    @pytest.mark.parametrize(
        "source",
        ["{{ '[{0.__class__}]'.format(messages) }}", "{{ '[{0.__globals__}]'.format(raise_exception) }}"],
    )
    def test_format_of_a_dunder_prints_nothing(self, source: str) -> None:
        assert render(source) == "[]"

    def test_format_still_works(self) -> None:
        assert render("{{ '{}-{:>4}-{x}'.format('a', 7, x=messages[0].role) }}") == "a-   7-user"
        assert render("{{ '{a}'.format_map({'a': 1}) }}") == "1"

    def test_a_doubled_percent_is_not_a_width(self) -> None:
        # '%%200000d' is the text "%200000d", not a conversion with a width (reference output)
        assert render("{{ '%%200000d' % () }}|{{ '%%200000d'|format() }}|{{ '%d%%%5d' % (1, 2) }}") == (
            "%200000d|%200000d|1%    2"
        )

    def test_percent_format_still_works(self) -> None:
        assert render("{{ '%s=%03d' % ('n', 7) }}{{ '%s'|format('x') }}") == "n=007x"


class TestNamespaceAndDict:
    @pytest.mark.parametrize(
        "source",
        [
            "{% set ns = namespace(_x=1) %}",
            "{% set ns = namespace() %}{% set ns._private = 1 %}",
            "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
            "{{ namespace(**{'__init__': 1}) }}",
        ],
    )
    def test_namespace_refuses_underscore_names(self, source: str) -> None:
        with pytest.raises(ChatTemplateSecurityError, match="underscore-prefixed attributes"):
            render(source)

    @pytest.mark.parametrize("attribute", ["__dict__", "_Namespace__attrs", "__class__.__init__"])
    def test_namespace_internals_are_unreachable(self, attribute: str) -> None:
        assert_refused(f"{{% set ns = namespace(a=1) %}}{{{{ ns.{attribute}.items() }}}}")

    def test_namespace_still_works(self) -> None:
        source = (
            "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
            "{{ ns.n }}"
        )
        assert render(source) == "1"

    def test_dict_global_builds_dicts_only(self) -> None:
        assert (
            render("{{ dict(a=1, b=2)|tojson }}{{ dict.fromkeys(['x'], 0)|tojson }}")
            == '{"a": 1, "b": 2}{"x": 0}'
        )
        with pytest.raises(ChatTemplateSecurityError):
            render("{{ dict.__call__.__globals__ }}")
        assert render("{{ dict.items is defined }}") == "False"

    def test_dict_dunders_on_data(self) -> None:
        with pytest.raises(ChatTemplateSecurityError):
            render("{{ messages[0].__class__.__dict__ }}")


class TestMutation:
    @pytest.mark.parametrize(
        "source",
        [
            "{{ messages.append({'role': 'x'}) }}",
            "{{ messages.pop() }}",
            "{{ messages.clear() }}",
            "{{ messages[0].update({'content': 'changed'}) }}",
            "{{ messages[0].pop('content') }}",
            "{{ messages[0].setdefault('x', 1) }}",
            "{{ tools.extend([1]) }}",
        ],
    )
    def test_mutating_methods_are_refused(self, source: str) -> None:
        with pytest.raises(ChatTemplateSecurityError, match="is unsafe"):
            render(source, tools=[])

    def test_callers_objects_are_never_handed_to_the_template(self) -> None:
        messages = [{"role": "user", "content": "hi", "meta": {"k": [1, 2]}}]
        tools = [{"type": "function", "function": {"name": "f"}}]
        render_chat_template(
            "{% set ns = namespace(m=messages[0]) %}{% set ns.m = 1 %}{{ messages[0].meta.k|join }}",
            messages,
            tools=tools,
        )
        assert messages == [{"role": "user", "content": "hi", "meta": {"k": [1, 2]}}]
        assert tools == [{"type": "function", "function": {"name": "f"}}]

    def test_rich_objects_become_inert_placeholders(self) -> None:
        class Secret:
            def delete_everything(self) -> str:
                return "deleted"

        out = render_chat_template(
            "{% set image = messages[0].content[0].image %}"
            "{{ image }}|{{ image.delete_everything is defined }}",
            [{"role": "user", "content": [{"type": "image", "image": Secret()}]}],
        )
        assert out == "<Secret>|False"


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_TEMPLATE_STEPS", 20_000)
    monkeypatch.setattr(limits, "MAX_STRING_LENGTH", 10_000)
    monkeypatch.setattr(limits, "MAX_LIST_LENGTH", 1_000)
    monkeypatch.setattr(limits, "MAX_OUTPUT_LENGTH", 50_000)
    monkeypatch.setattr(limits, "MAX_FORMAT_WIDTH", 100)
    monkeypatch.setattr(limits, "MAX_INT_BITS", 1_000)


def _limit(source: str, limit: str) -> ChatTemplateLimitError:
    with pytest.raises(ChatTemplateLimitError) as caught:
        render(source)
    error = caught.value
    assert error.limit == limit
    if limit == "recursion limit":
        assert error.value == sys.getrecursionlimit()
    else:
        assert error.value == getattr(limits, limit)
    assert f"exceeds {limit} ({error.value:,})" in str(error)
    # the output limit is checked between pieces of output, outside any template line
    assert error.lineno == (None if limit == "MAX_OUTPUT_LENGTH" else 1)
    return error


@pytest.mark.usefixtures("small_limits")
class TestLimits:
    def test_huge_range_is_jinjas_overflow_error(self) -> None:
        with pytest.raises(ChatTemplateOverflowError, match="MAX_RANGE"):
            render("{{ range(100001)|list|length }}")

    @pytest.mark.parametrize(
        "source", ["{{ 'ab' * 6000 }}", "{{ 6000 * 'ab' }}", "{% set n = 6000 %}{{ ('a' ~ 'b') * n }}"]
    )
    def test_string_repetition(self, source: str) -> None:
        _limit(source, "MAX_STRING_LENGTH")

    def test_list_repetition(self) -> None:
        _limit("{{ ([1, 2] * 600)|length }}", "MAX_LIST_LENGTH")

    @pytest.mark.parametrize(
        ("operator", "limit"),
        [("+", "MAX_STRING_LENGTH"), ("~", "MAX_STRING_LENGTH")],
    )
    def test_doubling_a_string(self, operator: str, limit: str) -> None:
        source = (
            "{% set ns = namespace(s='xxxxxxxxxx') %}{% for i in range(40) %}"
            f"{{% set ns.s = ns.s {operator} ns.s %}}{{% endfor %}}{{{{ ns.s|length }}}}"
        )
        _limit(source, limit)

    def test_unrolled_doubling(self) -> None:
        chain = "".join(f"{{% set s{i + 1} = s{i} + s{i} %}}" for i in range(20))
        _limit("{% set s0 = 'x' %}" + chain, "MAX_STRING_LENGTH")

    def test_doubling_a_list(self) -> None:
        source = (
            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"
        )
        _limit(source, "MAX_LIST_LENGTH")

    def test_buffered_output(self) -> None:
        source = (
            "{% set big = 'x' * 5000 %}{% set out %}{% for i in range(10) %}{{ big }}{% endfor %}{% endset %}"
        )
        _limit(source, "MAX_STRING_LENGTH")

    def test_macro_output(self) -> None:
        source = "{% macro m(s) %}{% for i in range(10) %}{{ s }}{% endfor %}{% endmacro %}"
        source += "{{ m('x' * 5000)|length }}"
        _limit(source, "MAX_STRING_LENGTH")

    def test_output_size(self) -> None:
        _limit("{% set big = 'x' * 9000 %}{% for i in range(10) %}{{ big }}{% endfor %}", "MAX_OUTPUT_LENGTH")

    @pytest.mark.parametrize(
        "source",
        [
            "{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}",
            "{% set l = range(300)|list %}{% for a in l %}{% for b in l %}{% endfor %}{% endfor %}",
            "{% for a in range(300)|map('string') %}{% for b in range(300)|map('string') %}"
            "{% endfor %}{% endfor %}",
            "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(30) }}",
        ],
        ids=["nested-range", "nested-list", "nested-generators", "exponential-recursion"],
    )
    def test_steps(self, source: str) -> None:
        _limit(source, "MAX_TEMPLATE_STEPS")

    def test_time(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(limits, "MAX_TEMPLATE_STEPS", 10**12)
        monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 0.0)
        _limit("{% for a in range(1000) %}{{ a }}{% endfor %}", "MAX_RENDER_SECONDS")

    def test_deep_recursion(self) -> None:
        error = _limit("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursion limit")
        assert "recurses too deeply" in str(error)

    def test_recursive_loop(self) -> None:
        _limit("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "recursion limit")

    def test_syntax_tokens_of_a_trusted_template(self, monkeypatch: pytest.MonkeyPatch) -> None:
        source = "{{ messages[0].content }}" * 3 + " " * 40  # 3 x 8 tokens and a run of text
        monkeypatch.setattr(limits, "MAX_TEMPLATE_SYNTAX_TOKENS", 24)
        with pytest.raises(ChatTemplateLimitError) as caught:  # the whole template: no line is named
            render(source)
        assert (caught.value.limit, caught.value.value, caught.value.lineno) == (
            "MAX_TEMPLATE_SYNTAX_TOKENS", 24, None)
        monkeypatch.setattr(limits, "MAX_TEMPLATE_SYNTAX_TOKENS", 25)
        assert render(source) == "hihihi" + " " * 40

    @pytest.mark.parametrize(
        "source",
        [
            "{{ '%500d' % 1 }}",
            "{{ '%*d' % (500, 1) }}",
            "{{ '%500s'|format('x') }}",
            "{{ '{:>500}'.format('x') }}",
            "{{ '{:>{w}}'.format('x', w=500) }}",
            "{{ 'x'.ljust(500) }}",
            "{{ 'x'.rjust(500) }}",
            "{{ 'x'.center(500) }}",
            "{{ 'x'.zfill(500) }}",
            "{{ '\\tx'.expandtabs(500) }}",
            "{{ 'x'|center(500) }}",
            "{{ 'a\\nb'|indent(500) }}",
            "{{ messages|tojson(indent=500) }}",
        ],
    )
    def test_widths(self, source: str) -> None:
        _limit(source, "MAX_FORMAT_WIDTH")

    def test_integer_power(self) -> None:
        _limit("{{ 2 ** 5000 }}", "MAX_INT_BITS")

    @pytest.mark.parametrize(
        "source",
        [
            "{{ ('x' * 2000)|replace('x', 'yyyyyyyy') }}",
            "{{ ('x' * 2000).replace('', 'yyyyyy') }}",
            "{{ (['x' * 5000] * 3)|join }}",
            "{{ ''.join(['x' * 5000] * 3) }}",
            "{{ lipsum(n=100, min=20, max=100) }}",
        ],
    )
    def test_growing_filters_and_methods(self, source: str) -> None:
        _limit(source, "MAX_STRING_LENGTH")

    @pytest.mark.parametrize("source", ["{{ [1]|batch(5000, 0)|list }}", "{{ [1]|slice(5000)|list }}"])
    def test_batch_and_slice(self, source: str) -> None:
        _limit(source, "MAX_LIST_LENGTH")

    def test_within_the_limits_everything_renders(self) -> None:
        source = (
            "{% set ns = namespace(s='') %}{% for i in range(100) %}{% set ns.s = ns.s + 'ab' %}{% endfor %}"
            "{{ ns.s|length }} {{ '%5d' % 3 }} {{ 'x'.ljust(3) }}| {{ 2 ** 10 }} {{ ([1] * 3)|length }}"
        )
        assert render(source) == "200     3 x  | 1024 3"

    def test_limit_errors_are_template_errors(self) -> None:
        error = _limit("{{ 'ab' * 6000 }}", "MAX_STRING_LENGTH")
        assert isinstance(error, ChatTemplateError)
        assert isinstance(error, jinja2.TemplateError)
        assert "raise chatcodec.chat_templates.limits.MAX_STRING_LENGTH" in str(error)

    def test_steps_are_counted_per_render(self) -> None:
        source = "{% for a in range(100) %}{% for b in range(100) %}{% endfor %}{% endfor %}"
        for _ in range(5):  # 10,100 steps each: fine every time, never accumulated across renders
            assert render(source) == ""


@pytest.mark.usefixtures("small_limits")
class TestGrowth:
    """Values that grow past a limit through filters, str methods and nesting (QA reproducers,
    scaled down to the small limits)."""

    @pytest.mark.parametrize(
        "source",
        [
            "{{ ('\\t' * 200).expandtabs(100)|length }}",
            "{{ ('a ' * 500)|wordwrap(1, wrapstring='x' * 30)|length }}",
            "{{ ('&' * 3000)|forceescape|length }}",
            "{{ ('&' * 3000)|e|length }}",
            "{{ ('%' * 4000)|urlencode|length }}",
            "{{ {'k': '%' * 4000}|urlencode|length }}",
            "{{ ('x\\n' * 200)|indent(100)|length }}",
            "{{ ('a' * 10).translate({97: 'x' * 2000})|length }}",
            "{{ ('\u00df' * 6000).upper()|length }}",
            "{{ ('\u00df' * 6000)|upper|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a]|tojson|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a]|pprint|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a]|join|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a] }}",
            "{% set a = [0] * 1000 %}{{ ([a, a, a, a] ~ '')|length }}",
            "{% set a = [0] * 1000 %}{{ ('%s' % ([a, a, a, a],))|length }}",
            "{% set a = [0] * 1000 %}{{ '{}'.format([a, a, a, a])|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a]|string|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a]|trim|length }}",
            "{{ ([[0] * 1000] * 1000)|length }}",
            "{% set big = 'x' * 5000 %}{{ [{'a': big}, {'a': big}, {'a': big}]|join(attribute='a')|length }}",
            "{{ (range(200)|list)|tojson(indent=100)|length }}",
            "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}"
            "{{ ns.x }}",
            "{% autoescape true %}{% set ns = namespace(s='xxxxxxxxxx') %}{% for i in range(40) %}"
            "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{% endautoescape %}",
        ],
        ids=["expandtabs", "wordwrap", "forceescape", "escape", "urlencode", "urlencode-dict", "indent",
             "translate", "upper-method", "upper-filter", "tojson-nested", "pprint-nested", "join-nested",
             "print-nested", "concat-nested", "percent-nested", "format-nested", "string-nested",
             "trim-nested", "repeated-nested-list", "join-attribute", "tojson-indent", "doubling-namespace",
             "autoescape-concat"],
    )
    def test_strings(self, source: str) -> None:
        _limit(source, "MAX_STRING_LENGTH")

    @pytest.mark.parametrize(
        "source",
        [
            "{{ ('a' * 5000)|list|length }}",
            "{{ ('a' * 5000)|batch(1)|list|length }}",
            "{{ ('a' * 5000)|batch(1)|join|length }}",
            "{{ ('a' * 5000)|sort|length }}",
            "{{ ('a' * 5000)|map('upper')|unique|list|length }}",
            "{% set a = [0] * 1000 %}{{ [a, a, a, a]|sum(start=[])|length }}",
            "{{ ('a ' * 2000).split()|length }}",
            "{{ ('a\\n' * 2000).splitlines()|length }}",
            "{{ ('a' * 5000)|map('upper')|reverse|length }}",
            "{{ ('a ' * 2000)|wordwrap(1)|length }}",
        ],
        ids=["list", "batch-list", "batch-join", "sort", "unique", "sum-of-lists", "split", "splitlines",
             "reverse-generator", "wordwrap-words"],
    )
    def test_lists(self, source: str) -> None:
        _limit(source, "MAX_LIST_LENGTH")

    @pytest.mark.parametrize(
        ("name", "length", "limit"),
        [("wordwrap", "5063", "MAX_WORDWRAP_INPUT"), ("title", "5000", "MAX_TEXT_FILTER_INPUT"),
         ("striptags", "5000", "MAX_TEXT_FILTER_INPUT"), ("urlize", "5000", "MAX_URLIZE_INPUT")],
    )
    def test_word_by_word_filters_take_texts_up_to_a_limit(
        self, monkeypatch: pytest.MonkeyPatch, name: str, length: str, limit: str
    ) -> None:
        # wordwrap of one long word is quadratic: 50 million characters would run for minutes
        monkeypatch.setattr(limits, limit, 5000)
        monkeypatch.setattr(limits, "MAX_STRING_LENGTH", 100_000)
        error = _limit(f"{{{{ ('a' * 6000)|{name}|length }}}}", limit)
        assert error.message.startswith(
            f"chat template sandbox: a string of 6,000 characters given to {name} exceeds {limit} (5,000)"
        )
        assert render(f"{{{{ ('a' * 5000)|{name}|length }}}}") == length  # 63 line breaks for wordwrap

    def test_wordwrap_and_urlize_have_bounds_one_call_stays_within(
            self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Issue 13: at MAX_TEXT_FILTER_INPUT (5 million) one wordwrap or urlize call ran past
        MAX_RENDER_SECONDS two to four times (40,000 non-ASCII spaces wrapped at width 1 take about 5
        seconds: quadratic); a call cannot be interrupted, so their inputs have lower bounds."""
        assert (limits.MAX_WORDWRAP_INPUT, limits.MAX_URLIZE_INPUT) == (20_000, 1_000_000)
        monkeypatch.setattr(limits, "MAX_STRING_LENGTH", 100_000)
        error = _limit("{{ ('\u00a0' * 20001)|wordwrap(1) }}", "MAX_WORDWRAP_INPUT")
        assert error.message.startswith("chat template sandbox: a string of 20,001 characters given to "
                                        "wordwrap exceeds MAX_WORDWRAP_INPUT (20,000)")

    def test_integer_products(self) -> None:
        source = (
            "{% set ns = namespace(x=3) %}{% for i in range(26) %}{% set ns.x = ns.x * ns.x %}{% endfor %}"
            "{{ ns.x > 5 }}"
        )
        _limit(source, "MAX_INT_BITS")

    def test_a_memory_error_is_a_limit_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def exhausted(value: object) -> str:
            raise MemoryError

        monkeypatch.setitem(environment.ENVIRONMENT.filters, "exhausted", exhausted)
        with pytest.raises(ChatTemplateLimitError) as caught:
            render("{{ 1|exhausted }} memory test")
        assert (caught.value.limit, caught.value.value) == ("memory", 0)
        assert caught.value.message == (
            "chat template sandbox: the render ran out of memory (MemoryError). Render templates you do "
            "not trust in a process with an operating-system memory limit"
        )

    def test_within_the_limits_filters_give_jinjas_output(self) -> None:
        source = (
            "{{ ('a b' * 3)|wordwrap(3) }}|{{ '&<'|forceescape }}|{{ 'a b'|urlencode }}|"
            "{{ 'x\\ny'|indent(2) }}|{{ [[1, 2], [3]]|sum(start=[]) }}|{{ 'cba'|list|sort|join }}|"
            "{{ 'ab'|map('upper')|reverse|list }}|{{ [{'a': 'x'}, {'a': 'y'}]|join(',', attribute='a') }}|"
            "{{ [1, [2]]|tojson(indent=1) }}|{{ 'a.b c'|wordcount }}|{{ ('\\tx').expandtabs(2) }}|"
            "{{ 'ab'.translate({97: 'xy'}) }}"
        )
        assert render(source) == (
            "a\nba\nba\nb|&amp;&lt;|a%20b|x\n  y|[1, 2, 3]|abc|['B', 'A']|x,y|[\n 1,\n [\n  2\n ]\n]|3|"
            "  x|xyb"
        )


DOUBLED = ("{% set ns = namespace(t=(1,), u=(1,), l=[1], m=[1]) %}{% for i in range(60) %}"
           "{% set ns.t = (ns.t, ns.t) %}{% set ns.u = (ns.u, ns.u) %}{% set ns.l = [ns.l, ns.l] %}"
           "{% set ns.m = [ns.m, ns.m] %}{% endfor %}")


class TestComparedItems:
    """Issue 13: tuples (or lists) doubled 60 times cost 60 objects to build but 2**60 steps to hash
    or compare; ``|unique`` or ``==`` never ended. Such a comparison or hash is now refused before it
    runs (MAX_COMPARED_ITEMS), with the template line."""

    @pytest.mark.parametrize(("source", "what"), [
        ("{{ ns.t == ns.u }}", "a comparison or hash"),
        ("{{ ns.l == ns.m }}", "a comparison or hash"),
        ("{{ ns.l in [ns.m] }}", "a comparison or hash"),
        ("{{ {ns.t: 1}|length }}", "a comparison or hash"),
        ("{{ [ns.t, ns.u]|unique|list|length }}", "|unique"),
        ("{{ [ns.l, ns.m]|sort|length }}", "|sort"),
        ("{{ [ns.l, ns.m]|max|length }}", "|max"),
        ("{{ {'a': ns.l, 'b': ns.m}|dictsort|length }}", "|dictsort"),
    ], ids=["tuple ==", "list ==", "in", "dict key", "unique", "sort", "max", "dictsort"])
    def test_a_doubled_structure_is_refused(self, source: str, what: str) -> None:
        error = _limit(DOUBLED + source, "MAX_COMPARED_ITEMS")
        assert error.message.startswith(
            f"chat template sandbox: {what} of a value of more than 1,000,000 items (shared items counted "
            "each time they appear) exceeds MAX_COMPARED_ITEMS (1,000,000)")

    def test_ordinary_comparisons_are_unchanged(self) -> None:
        assert render("{% set t = (1, [2]) %}{{ t == (1, [2]) }}|{{ [3, 1]|sort|list }}|"
                      "{{ {(1, 2): 'a'}[(1, 2)] }}|{{ 'a' in ['a'] }}") == "True|[1, 3]|a|True"


class TestMemory:
    """Issue 13: a loop appending distinct 40 MB strings to a list reached 2.95 GB in 24 s (about
    40 GB without an OS limit): every value was under its own limit. The memory a render adds to the
    process is bounded (MAX_RENDER_MEMORY), read every MEMORY_CHECK_STEPS steps and whenever a big
    string or list is built."""

    def test_accumulating_distinct_strings_is_refused(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(limits, "MAX_RENDER_MEMORY", 60_000_000)
        error = _limit("{% set ns = namespace(l=[]) %}{% for i in range(100) %}"
                       "{% set ns.l = ns.l + [('x' * 5000000) ~ i] %}{% endfor %}{{ ns.l|length }}",
                       "MAX_RENDER_MEMORY")
        assert error.message.startswith("chat template sandbox: the memory the render holds (")
        assert "exceeds MAX_RENDER_MEMORY (60,000,000)" in error.message

    def test_the_default_leaves_room_for_real_renders(self) -> None:
        assert limits.MAX_RENDER_MEMORY == 1_000_000_000
        assert limits.process_memory() > 0


@pytest.mark.usefixtures("small_limits")
class TestTime:
    """Filters, str methods and operators count steps, so the clock is read whatever the template
    spends its time on (QA: a filter chain over a long string ran for minutes unchecked)."""

    @pytest.mark.parametrize(
        "source",
        [
            "{{ ('ab' * 400)|list|map('upper')|map('lower')|select|list|length }}",
            "{{ ('ab' * 400)|map('upper')|first }}",
            "{% for i in range(10) %}{{ ('ab ' * 3000)|title|length }}{% endfor %}",
            "{% for i in range(10) %}{{ ('ab ' * 3000).upper()|length }}{% endfor %}",
            "{% for i in range(10) %}{% set x = ('ab ' * 3000) ~ 'c' %}{% endfor %}",
        ],
        ids=["filter-chain", "first-of-a-long-map", "text-filter", "str-method", "concat"],
    )
    def test_the_clock_is_read(self, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
        monkeypatch.setattr(limits, "MAX_TEMPLATE_STEPS", 10**12)
        monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 0.0)
        _limit(source, "MAX_RENDER_SECONDS")

    def test_items_filters_read_are_steps(self) -> None:
        _limit("{{ range(30000)|sum }}", "MAX_TEMPLATE_STEPS")


class TestRenderDeadline:
    """``limits.render_deadline``: a time budget for all the renders of a block (deriving a response
    template while a model loads renders dozens of conversations, each allowed MAX_RENDER_SECONDS)."""

    LOOP = "{% for i in range(100000) %}{% for j in range(100) %}{% endfor %}{% endfor %}"

    def test_a_render_past_the_block_deadline_names_the_blocks_limit(self) -> None:
        with limits.render_deadline(0.0, "MAX_EXAMPLE_SECONDS", "the time of the example's renders",
                                    "raise example.MAX_EXAMPLE_SECONDS"), \
                pytest.raises(ChatTemplateLimitError) as caught:
            render(self.LOOP)
        assert (caught.value.limit, caught.value.value) == ("MAX_EXAMPLE_SECONDS", 0.0)
        assert caught.value.message == ("chat template sandbox: the time of the example's renders exceeds "
                                        "MAX_EXAMPLE_SECONDS (0.0). raise example.MAX_EXAMPLE_SECONDS")

    def test_render_time_still_applies_inside_a_longer_block(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 0.0)
        with limits.render_deadline(3600.0, "MAX_EXAMPLE_SECONDS", "the example's renders"):
            _limit(self.LOOP, "MAX_RENDER_SECONDS")

    def test_the_deadline_ends_with_the_block_and_stays_in_its_thread(self) -> None:
        import threading

        seen: list[str] = []
        with limits.render_deadline(0.0, "MAX_EXAMPLE_SECONDS", "the example's renders"):
            loop = "{% for i in range(3000) %}{% endfor %}ok"
            thread = threading.Thread(target=lambda: seen.append(render(loop)))
            thread.start()
            thread.join()
        assert seen == ["ok"]
        assert render(loop) == "ok"


class TestCompileLimits:
    """Templates too deeply nested for Python to compile fail with a limit error, not a raw one."""

    def test_too_many_nested_loops(self) -> None:
        source = "{% for x in [1] %}" * 21 + "{% endfor %}" * 21
        with pytest.raises(ChatTemplateLimitError) as caught:
            render(source)
        assert (caught.value.limit, caught.value.value) == ("Python's nested-block limit", 20)
        assert caught.value.message == (
            "chat template sandbox: the nesting of {% for %} loops exceeds Python's nested-block limit (20). "
            "Nest fewer loops inside one another (a macro starts a new count)"
        )
        assert render("{% for x in [1] %}" * 20 + "{{ x }}" + "{% endfor %}" * 20) == "1"

    @pytest.mark.parametrize(
        "source",
        [
            "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
            "{% if true %}" * 300 + "{% endif %}" * 300,
            "{{ " + " + ".join(["1"] * 20000) + " }}",
        ],
        ids=["parentheses", "nested-ifs", "long-sum"],
    )
    def test_too_deep_to_compile(self, source: str) -> None:
        with pytest.raises(ChatTemplateLimitError) as caught:
            render(source)
        assert (caught.value.limit, caught.value.value) == ("recursion limit", sys.getrecursionlimit())
        assert caught.value.message == (
            f"chat template sandbox: the nesting depth of the template exceeds recursion limit "
            f"({sys.getrecursionlimit():,}). The template nests too deeply to compile (parentheses, "
            "blocks or a chain of operators); split it up"
        )


def test_strftime_now_reads_the_render_clock() -> None:
    moment = datetime.datetime(2026, 1, 15, 12, 0, 0)
    assert render("{{ strftime_now('%Y-%m-%d %H:%M') }}", now=moment) == "2026-01-15 12:00"


class TestTemplateSize:
    """The real bound on syntax tokens (no lowered limits: it is checked before anything renders)."""

    def test_syntax_tokens_are_counted_before_parsing(self) -> None:
        """QA: a 3.8 MB template of 130,000 {% if %} blocks compiled for over 5 minutes in 1.8 GB (the
        clock only runs while rendering). At the real bound, a template over it is refused in well
        under a second; whitespace inside tags is not counted, and text outside tags is one token."""
        blocks = "{% if messages %}a{% endif %}"  # 8 tokens
        with pytest.raises(ChatTemplateLimitError) as caught:
            render(blocks * 6251)
        assert str(caught.value) == (
            "chat template sandbox: a template of more than 50,000 syntax tokens (names, operators, "
            "literals, runs of text) exceeds MAX_TEMPLATE_SYNTAX_TOKENS (50,000). if the template is "
            "trusted, raise chatcodec.chat_templates.limits.MAX_TEMPLATE_SYNTAX_TOKENS")
        assert (caught.value.limit, caught.value.value) == ("MAX_TEMPLATE_SYNTAX_TOKENS", 50_000)
        spaced = "{%   if   messages   %}a{%   endif   %}"  # the same 8 tokens
        environment._check_token_count(spaced * 6250)  # exactly 50,000
        assert render("plain text of a long system prompt. " * 100_000).startswith("plain text")
