"""QA: a counted repetition in a stranger's response template could take the machine down.

``regex`` compiles ``X{m}`` as ``m`` copies of ``X``: ``open_pattern: "a{1000000000}"`` made one
``parse_response`` take 24 GB before the kernel killed it, and ``(?:ab|cd){300000}`` crashed the
interpreter with a segmentation fault, both while the template loaded. Now the size is estimated
from the text and such a pattern is a ``ResponseTemplateError`` naming the field and the key,
whatever it is compiled for (a delimiter, the start anchor, ``tag_pattern``, ``x-findall``, lint).
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcodec import parse_response
from chatcodec.analysis.lint import response_template_findings
from chatcodec.errors import ResponseTemplateError
from chatcodec.response_templates.pattern_size import expanded_size, group_depth, recursive_call

TOO_BIG = (
    "its counted repetitions ({m}, {m,}, {m,n}) make about 1,000,000,000 elements once compiled (the "
    "regex module writes out m copies of what each one repeats, and nested counts multiply), more than "
    "MAX_PATTERN_SIZE (10,000) in chatcodec.response_templates.limits: compiling it would exhaust memory "
    "or crash"
)
NESTED = "((a{1000}){1000}){1000}"


@pytest.mark.parametrize(("source", "size"), [
    ("a{1000}", 1000),
    ("(?:ab|c){10}", 30),
    (NESTED, 1_000_000_000),
    ("(?:ab|cd){300000}", 1_200_000),
    ("a{0,100000}", 1),  # only the least count is written out
    ("a{3,}b*c+?", 5),
    ("(?(1)ab|c){5}", 15),
    ("x(?#c{99})", 1),
    ("<function=(?P<name>[^>]+)>\\s*", 13),
    ("(a", 1),  # unclosed: closed at the end
])
def test_expanded_size(source: str, size: int) -> None:
    assert expanded_size(source) == size


def _refused(template: dict[str, Any]) -> str:
    with pytest.raises(ResponseTemplateError) as caught:
        parse_response("x", template, prefix="")
    return str(caught.value)


@pytest.mark.parametrize("key", ["open_pattern", "close_pattern"])
def test_a_huge_delimiter_is_refused_naming_field_and_key(key: str) -> None:
    other = "close" if key == "open_pattern" else "open"
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {key: NESTED, other: ">"}}}
    assert _refused(template) == f"fields.x.{key}: invalid {key} regex: {TOO_BIG}"


@pytest.mark.parametrize(("source", "cause"), [
    ("|".join(f"tok{i}" for i in range(20_000)),
     "about 148,890 elements once compiled (one per character, escape or class, over its 20,000 "
     "alternatives)"),
    ("ab" * 6_000, "about 12,000 elements once compiled (one per character, escape or class)"),
])
def test_a_pattern_too_long_as_written_is_refused_for_its_length(source: str, cause: str) -> None:
    """A list of 20,000 tokens, with no counted repetition, was refused for "its counted
    repetitions": the message names its length (and its alternatives) instead; same limit."""
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {"open_pattern": source, "close": ">"}}}
    assert _refused(template) == (
        f"fields.x.open_pattern: invalid open_pattern regex: it is too long: {cause}, more than "
        "MAX_PATTERN_SIZE (10,000) in chatcodec.response_templates.limits (the bundled profiles' "
        "patterns stay under 250): match a family of tokens with a class or a shared prefix, not a "
        "list of each one")


@pytest.mark.parametrize("source", ["(?:ab|cd){3000}", "a{20000}|" + "b" * 9_000])
def test_a_pattern_its_counts_blow_up_is_refused_for_its_counts(source: str) -> None:
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {"open_pattern": source, "close": ">"}}}
    assert _refused(template).startswith(
        "fields.x.open_pattern: invalid open_pattern regex: its counted repetitions ({m}, {m,}, {m,n}) "
        "make about ")


def test_expanded_size_as_written() -> None:
    assert (expanded_size("a{20000}|b", counts=False), expanded_size(NESTED, counts=False)) == (2, 1)


def test_a_huge_start_anchor_pattern_is_refused() -> None:
    template = {"start_anchor_pattern": NESTED, "fields": {"content": {}}}
    assert _refused(template) == f"start_anchor_pattern: invalid start_anchor_pattern regex: {TOO_BIG}"


def test_a_huge_tag_pattern_is_refused() -> None:
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {
        "open": "<", "close": ">", "content": "xml-inline",
        "content_args": {"tag_pattern": f"(?P<key>a)(?P<value>{NESTED})"}}}}
    assert _refused(template) == (
        "fields.x.content_args.tag_pattern: invalid tag_pattern regex: "
        + TOO_BIG.replace("1,000,000,000", "1,000,000,001"))


def test_a_huge_findall_pattern_is_refused() -> None:
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {
        "open": "<", "close": ">", "content": "x-findall", "content_args": {"pattern": f"(?P<v>{NESTED})"}}}}
    assert _refused(template) == f"fields.x.content_args.pattern: invalid regex: {TOO_BIG}"


def test_the_crashing_alternation_is_refused() -> None:
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {"open_pattern": "(?:ab|cd){300000}",
                                                                     "close": ">"}}}
    assert _refused(template) == "fields.x.open_pattern: invalid open_pattern regex: " + TOO_BIG.replace(
        "1,000,000,000", "1,200,000")


VERBOSE = (
    "it turns on verbose mode (the x flag), whose ignored whitespace and # comments hide counted "
    "repetitions from the size check (MAX_PATTERN_SIZE in chatcodec.response_templates.limits); write "
    "the pattern without the x flag"
)


@pytest.mark.parametrize("source", [
    "(?x)(?:ab|cd){ 300000 }",  # the count's spaces made it a literal to the estimate: 6 elements
    "(?x)(?:(?:ab|cd){1000}) {1000}",  # the space was the element repeated: about 5,000
    "(?x)(?:(?:ab|cd){1000})#c\n{1000}",  # so was the comment
    "(?ix:a)",
    "(?V1x)a",
])
def test_a_verbose_pattern_is_refused(source: str) -> None:
    """QA: each of the first three took the size check for small and crashed the interpreter
    (segmentation fault) while the template loaded."""
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {"open_pattern": source, "close": ">"}}}
    assert _refused(template) == f"fields.x.open_pattern: invalid open_pattern regex: {VERBOSE}"


@pytest.mark.parametrize("source", ["(?-x)a b", "\\(?x\\) b", "[(?x)] b", "(?i)a b"])
def test_an_x_that_turns_nothing_on_still_loads(source: str) -> None:
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {"open_pattern": source, "close": ">"}}}
    assert parse_response("z", template, prefix="") == {"content": "z"}


def test_many_patterns_within_their_own_limit_are_refused_together() -> None:
    """Two hundred fields of 9,991 elements each took 8 s and 1.6 GB to load."""
    fields = {f"f{i}": {"open_pattern": f"<{i}>a{{9990}}", "close": ">"} for i in range(200)}
    template = {"start_anchor": "A", "fields": {"content": {}, **fields}}
    assert _refused(template) == (  # 200 times 9,992 ("<", ">", a{9990}) and 490 digits
        "the template's regexes together make about 1,998,890 elements once compiled, more than "
        "MAX_TEMPLATE_PATTERN_SIZE (100,000) in chatcodec.response_templates.limits (counted repetitions "
        "such as {1000} are written out that many times)")


def test_transform_keys_named_like_patterns_are_no_regexes() -> None:
    """Eleven transform values of 9,999 characters under keys ending in "pattern" would pass
    MAX_TEMPLATE_PATTERN_SIZE together if they were counted: they are output, not regexes."""
    output = {f"p{i}_pattern": "x" * 9_999 for i in range(11)}
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {
        "open": "<", "close": ">", "transform": {**output, "v": "{content}"}}}}
    assert parse_response("<r>", template, prefix="") == {"x": {**output, "v": "r"}}


def test_patterns_of_real_sizes_still_load() -> None:
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {
        "open_pattern": "<[a-z]{3,8}>", "close_pattern": "</x{1,4}>"}}}
    assert parse_response("hi <abc>r</xx>", template, prefix="") == {"content": "hi", "x": "r"}


def test_lint_reports_it_as_rt000_without_compiling() -> None:
    """Lint read the transform's variables with a plain ``regex.compile`` of the pattern."""
    template = {"start_anchor": "A", "fields": {"content": {}, "x": {
        "open_pattern": NESTED, "close": ">", "transform": {"v": "{content}"}}}}
    assert [(finding.code, finding.message) for finding in response_template_findings(template)] == [
        ("RT000", f"fields.x.open_pattern: invalid open_pattern regex: {TOO_BIG}")]


def test_too_many_fields_are_refused() -> None:
    """QA: 6,000 literal fields took over 20 s to load (a matcher per field over the others)."""
    fields = {f"f{i}": {"open": f"<{i}>", "close": f"</{i}>"} for i in range(300)}
    template = {"start_anchor": "A", "fields": {"content": {}, **fields}}
    assert _refused(template) == (
        "fields: 301 fields, more than MAX_FIELDS (256) in chatcodec.response_templates.limits (loading "
        "builds a matcher per field over the other fields' delimiters: 6,000 fields took over 20 s); real "
        "formats have a handful")


def test_as_many_fields_as_allowed_load() -> None:
    fields = {f"f{i}": {"open": f"<{i}>", "close": f"</{i}>"} for i in range(255)}
    template = {"start_anchor": "A", "fields": {"content": {}, **fields}}
    assert parse_response("a<254>b</254>", template, prefix="") == {"content": "a", "f254": "b"}


#: 500 nested groups: the regex module's parser recursed past Python's limit (a bare RecursionError
#: from load_response_template, "internal error" from chatcodec lint).
DEEP = "(" * 500 + "a" + ")" * 500
DEEP_ERROR = (
    "its groups are nested {depth} deep, more than MAX_GROUP_DEPTH (50) in "
    "chatcodec.response_templates.limits (the bundled profiles' patterns nest 5 at most): the regex "
    "module compiles groups recursively and would pass Python's recursion limit"
)
RECURSION_ERROR = (
    "it calls a group recursively ({call}): a recursive pattern can match without bound (one took 784 MB "
    "before a MemoryError), and no chat format needs one; write it without (?R), (?1), (?-1), (?&name) or "
    "(?P>name)"
)


def _with_pattern(key: str, source: str) -> dict[str, Any]:
    """A template with ``source`` at ``key`` (a delimiter, the start anchor, or a content argument)."""
    if key == "start_anchor_pattern":
        return {"start_anchor_pattern": source, "fields": {"content": {}}}
    if key in ("open_pattern", "close_pattern"):
        other = {"close": ">"} if key == "open_pattern" else {"open": "<"}
        return {"start_anchor": "A", "fields": {"content": {}, "x": {key: source, **other}}}
    args = ({"tag_pattern": f"(?P<key>a)(?P<value>{source})"} if key == "tag_pattern"
            else {"pattern": f"(?P<v>{source})"} if key == "pattern"
            else {"pattern": "(?P<v>a)", key: source})
    content = "xml-inline" if key == "tag_pattern" else "x-findall"
    return {"start_anchor": "A", "fields": {"content": {}, "x": {
        "open": "<", "close": ">", "content": content, "content_args": args}}}


#: Each regex key, and how the load error names it (field and key) and the extra group it wraps
#: the pattern in (tag_pattern and x-findall's pattern need named groups around it).
WHERE = [
    ("open_pattern", "fields.x.open_pattern: invalid open_pattern regex", 0),
    ("close_pattern", "fields.x.close_pattern: invalid close_pattern regex", 0),
    ("start_anchor_pattern", "start_anchor_pattern: invalid start_anchor_pattern regex", 0),
    ("tag_pattern", "fields.x.content_args.tag_pattern: invalid tag_pattern regex", 1),
    ("pattern", "fields.x.content_args.pattern: invalid regex", 1),
    ("between", "fields.x.content_args.between: invalid regex", 0),
]


@pytest.mark.parametrize(("key", "where", "wrap"), WHERE, ids=[key for key, _, _ in WHERE])
def test_groups_nested_past_the_limit_are_refused_naming_field_and_key(key: str, where: str,
                                                                      wrap: int) -> None:
    template = _with_pattern(key, DEEP)
    message = f"{where}: {DEEP_ERROR.format(depth=500 + wrap)}"
    assert _refused(template) == message
    assert [(finding.code, finding.message) for finding in response_template_findings(template)
            if finding.code == "RT000"] == [("RT000", message)]


@pytest.mark.parametrize(("key", "where", "wrap"), WHERE, ids=[key for key, _, _ in WHERE])
@pytest.mark.parametrize("call", ["(?R)", "(?1)", "(?-1)", "(?&n)", "(?P>n)"])
def test_a_recursive_pattern_is_refused_naming_field_and_key(key: str, where: str, wrap: int,
                                                             call: str) -> None:
    """QA: ``(?R)?a`` as a delimiter took 3-6 s and 784 MB before a MemoryError (the load-time
    check for empty matches ran it)."""
    source = f"(?P<n>a{call}?b)" if call != "(?R)" else "(?R)?a"
    assert _refused(_with_pattern(key, source)) == f"{where}: {RECURSION_ERROR.format(call=call)}"


def test_groups_nested_as_deep_as_allowed_load() -> None:
    source = "(" * 50 + "a" + ")" * 50
    template = _with_pattern("open_pattern", source)
    assert parse_response("b<a>c", {**template, "fields": {**template["fields"], "x": {
        "open_pattern": "<" + source + ">", "close": "!"}}}, prefix="") == {"content": "b", "x": "c"}


@pytest.mark.parametrize("source", ["[(?R)]", "\\(\\?R\\)", "(a)?(?(1)b|c)", "(a)\\g<1>", "(?#R)x"])
def test_what_only_looks_like_a_recursive_call_still_loads(source: str) -> None:
    assert parse_response("x", _with_pattern("close_pattern", f"{source}!"), prefix="") == {"content": "x"}


@pytest.mark.parametrize(("source", "depth"), [
    ("ab", 0), ("(a)|(?:b)", 1), ("((a))", 2), ("(?(1)(a)|b)", 2), ("(?i)a(?1)", 0), ("[((]\\((a)", 1),
    ("(a", 1), ("a)", 0),
])
def test_group_depth(source: str, depth: int) -> None:
    assert group_depth(source) == depth


@pytest.mark.parametrize(("source", "call"), [
    ("(?R)?a", "(?R)"), ("(a(?1)?b)", "(?1)"), ("(a(?+1))(b)", "(?+1)"), ("(?P<n>a(?&n)?b)", "(?&n)"),
    ("(?P<n>a(?P>n)?b)", "(?P>n)"), ("(?0)", "(?0)"), ("[(?R)](a)\\g<1>(?(1)x|y)", None),
])
def test_recursive_call(source: str, call: str | None) -> None:
    assert recursive_call(source) == call
