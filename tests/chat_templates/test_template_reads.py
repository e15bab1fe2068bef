"""What a chat template reads, from its syntax: content as parts or text, arguments as text, variables."""

from __future__ import annotations

import pytest

from chatcodec.chat_templates.errors import ChatTemplateSyntaxError
from chatcodec.chat_templates.template_reads import (
    reads_arguments_as_text,
    reads_content_parts,
    template_variables,
)
from tests.conftest import corpus_path, corpus_template, golden_renders

TEMPLATES = sorted(path.name for path in corpus_path("chat_templates").glob("*.jinja"))

#: The corpus templates that read a message's content as a list of parts (read from each template).
PARTS_TEMPLATES = [
    "CohereLabs--command-a-reasoning-08-2025.jinja",
    "MiniMaxAI--MiniMax-M2.jinja",
    "Qwen--Qwen2.5-VL-7B-Instruct.jinja",
    "Qwen--Qwen3.5-4B.jinja",
    "google--gemma-3-1b-it.jinja",
    "google--gemma-3-270m-it.jinja",
    "google--gemma-4-31B-it.jinja",
    "ibm-granite--granite-4.0.jinja",
    "meta-llama--Llama-3.2-11B-Vision-Instruct.jinja",
    "meta-llama--Llama-4-Scout-17B-16E-Instruct.jinja",
    "meta-llama--Llama-Guard-3-11B-Vision.jinja",
    "mistralai--Ministral-3-14B-Reasoning-2512.jinja",
    "moonshotai--Kimi-K2-Instruct.jinja",
    "tencent--Hy3.jinja",
    "unsloth--Devstral-Small-2507.jinja",
    "zai-org--GLM-4.6.jinja",
]

#: The corpus templates that join a call's arguments to text (``'...' + arguments``) and never read
#: them as a mapping.
ARGUMENTS_AS_TEXT_TEMPLATES = [
    "deepseek-ai--DeepSeek-R1-Distill-Qwen-32B.jinja",
    "deepseek-ai--DeepSeek-R1.jinja",
    "deepseek-ai--DeepSeek-V2.5.jinja",
    "deepseek-ai--DeepSeek-V3.1.jinja",
    "fireworks-ai--llama-3-firefunction-v2.jinja",
    "meetkai--functionary-medium-v3.1.jinja",
    "swiss-ai--Apertus-8B-Instruct.jinja",
]


def test_the_corpus_has_59_templates() -> None:
    assert len(TEMPLATES) == 59


@pytest.mark.parametrize("name", TEMPLATES)
def test_content_parts_on_the_corpus(name: str) -> None:
    assert reads_content_parts(corpus_template(name)) is (name in PARTS_TEMPLATES)


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_parts_templates_are_those_that_render_the_multimodal_text(name: str) -> None:
    # the reference's own renders of the corpus's multimodal conversation ([image, text]): only a
    # template that reads parts writes the text; the others fail, print the list, or lose the text
    outcomes = set()
    for line in golden_renders():
        if line["template"] == name and line["conversation"] == "multimodal":
            text = line.get("rendered", "")
            listed = "'type'" in text or '"type"' in text  # the list printed as it is
            shown = "What animal is in this picture?" in text and not listed
            outcomes.add("error" if "error" in line else "text" if shown else "other")
    if name in PARTS_TEMPLATES:
        assert outcomes == {"text"}
    else:
        assert outcomes and "text" not in outcomes


@pytest.mark.parametrize("name", TEMPLATES)
def test_arguments_as_text_on_the_corpus(name: str) -> None:
    assert reads_arguments_as_text(corpus_template(name)) is (name in ARGUMENTS_AS_TEXT_TEMPLATES)


@pytest.mark.parametrize(("template", "expected"), [
    ("{% for m in messages %}{% for p in m['content'] %}{{ p.text }}{% endfor %}{% endfor %}", True),
    ("{% for m in messages %}{% for p in m.content|selectattr('type', 'eq', 'text') %}{% endfor %}"
     "{% endfor %}", True),
    ("{% for m in messages %}{% set c = m.content %}{% for p in c %}{{ p }}{% endfor %}{% endfor %}", True),
    ("{% macro show(c) %}{% for p in c %}{{ p }}{% endfor %}{% endmacro %}"
     "{% for m in messages %}{{ show(m.content) }}{% endfor %}", True),
    ("{% macro show(x, c=none) %}{% for p in c %}{{ p }}{% endfor %}{% endmacro %}"
     "{% for m in messages %}{{ show(1, c=m.content) }}{% endfor %}", True),
    ("{{ messages[0]['content'][0]['text'] }}", True),
    ("{{ messages[0].content|map(attribute='text')|join }}", True),
    ("{% for m in messages %}{{ m.content if m.content is string else '' }}{% endfor %}", False),
    ("{% for m in messages %}{{ m['content']|trim }}{% endfor %}", False),
    ("{% for m in messages %}{% for t in m.tool_calls %}{{ t }}{% endfor %}{% endfor %}", False),
])
def test_content_parts_on_written_templates(template: str, expected: bool) -> None:
    assert reads_content_parts(template) is expected


@pytest.mark.parametrize(("template", "expected"), [
    ("{% for t in messages[0].tool_calls %}{{ t.function.name + ' ' + t.function.arguments }}{% endfor %}",
     True),
    ("{% for t in messages[0].tool_calls %}{{ t.function.arguments }}{% endfor %}", True),
    ("{% for t in messages[0].tool_calls %}{{ t.name ~ t.arguments }}{% endfor %}", True),
    ("{% for t in messages[0].tool_calls %}{{ t.function.arguments|tojson }}{% endfor %}", False),
    ("{% for t in messages[0].tool_calls %}{% if t.function.arguments is string %}{{ t.function.arguments }}"
     "{% else %}{{ t.function.arguments|tojson }}{% endif %}{% endfor %}", False),
    ("{% for t in messages[0].tool_calls %}{% set a = t.arguments or {} %}{{ 'x' + a }}"
     "{% for k, v in a.items() %}{{ k }}{% endfor %}{% endfor %}", False),
    ("{% for t in messages[0].tool_calls %}{{ '{' + t.arguments['city'] + '}' }}{% endfor %}", False),
    ("{% for m in messages %}{{ m.content }}{% endfor %}", False),
])
def test_arguments_as_text_on_written_templates(template: str, expected: bool) -> None:
    assert reads_arguments_as_text(template) is expected


def test_template_variables() -> None:
    template = corpus_template("Qwen--Qwen3-0.6B.jinja")
    assert {"enable_thinking", "tools", "messages", "add_generation_prompt"} <= template_variables(template)
    assert "reasoning_effort" not in template_variables(template)
    assert "reasoning_effort" in template_variables(corpus_template("openai--gpt-oss-120b.jinja"))
    assert "thinking" in template_variables(corpus_template("deepseek-ai--DeepSeek-V3.1.jinja"))
    # set from its own value: still read from the caller first
    assert "reasoning" in template_variables(corpus_template("CohereLabs--command-a-reasoning-08-2025.jinja"))
    assert template_variables("{% set x = 1 %}{{ x }}{{ y }}") == frozenset({"y"})


def test_a_template_that_does_not_compile_raises_as_rendering_would() -> None:
    with pytest.raises(ChatTemplateSyntaxError, match="line 1"):
        reads_content_parts("{% for %}")
    with pytest.raises(ChatTemplateSyntaxError):
        reads_arguments_as_text("{{ x")


@pytest.mark.parametrize("name", TEMPLATES)
def test_one_walk_finds_what_find_all_finds(name: str) -> None:
    from jinja2 import nodes

    from chatcodec.chat_templates.environment import ENVIRONMENT
    from chatcodec.chat_templates.template_reads import _Nodes

    tree = ENVIRONMENT.parse(corpus_template(name))
    walked = _Nodes(tree)
    for cls in (nodes.Macro, nodes.Assign, nodes.Call, nodes.For, nodes.Getitem, nodes.Filter, nodes.Add,
                nodes.Concat, nodes.Output, nodes.Test, nodes.Getattr, nodes.Name, nodes.Expr, nodes.Stmt):
        assert [id(node) for node in walked.all(cls)] == [id(node) for node in tree.find_all(cls)], cls
    assert walked.all(nodes.Template) == []
