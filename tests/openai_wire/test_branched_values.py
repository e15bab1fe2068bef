"""Values whose regex group stands in an alternation stream as written (``pattern_split.split_branches``).

DeepSeek V3.2 writes each parameter as ``string="true">text``, ``string="false">json`` or (without
the attribute) ``>text``, MiniCPM5 a parameter as ``<![CDATA[...]]>`` or plain text, LongCat a
tagged call as its name and then, if it has
arguments, everything up to the region's end. The scanner matches the head, reads which branch the
text after it opens, and streams that branch's group once no other branch can still be the one the
regex takes. A MiniCPM5 CDATA value is the exception: until ``]]>`` closes it the same text may be a
plain value that starts with ``<![CDATA[``, so it is set whole.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatcodec import ResponseParser, profiles
from chatcodec.response_templates.scanners.pattern_split import Branch, Branched, split_branches
from tests.openai_wire.test_stream_properties import check_profile_output

DSML = "｜DSML｜"


def content_args(name: str) -> dict[str, Any]:
    args: dict[str, Any] = profiles.load(name).response_template["fields"]["tool_calls"]["content_args"]
    return args


def events(name: str, output: str, size: int) -> list[tuple[int, str, list[Any], Any]]:
    """``(feed, op, path, payload)`` of every ``region_value`` event, feeding ``size`` characters
    at a time (feed ``-1``: ``finalize``)."""
    parser = ResponseParser(profiles.load(name).response_template, prefix="", value_deltas=True)
    feeds = [parser.feed(output[start : start + size]) for start in range(0, len(output), size)]
    out = []
    for number, found in enumerate([*feeds, parser.finalize()[1]]):
        for event in found:
            if event["type"] == "region_value":
                payload = event.get("kind", event.get("text", event.get("value")))
                out.append((number if number < len(feeds) else -1, event["op"], event["path"], payload))
    return out


def test_the_bundled_patterns_split_into_branches() -> None:
    dsml = content_args("deepseek_v32")["value_parsers"]["arguments"]["args"]["parsers"][1]["args"]["pattern"]
    assert split_branches(dsml, ("text", "json")) == Branched(
        f'<(?:{DSML})?parameter name="(?P<key>[^"]*)"',
        (Branch(' string="true">', "text", 15, "", f"</{DSML}parameter>"),
         Branch(' string="false">', "json", 16, "", f"</{DSML}parameter>"),
         Branch(">", "text", 1, "", f"</{DSML}parameter>")))
    tagged = content_args("longcat")["parsers"][1]["args"]["pattern"]
    assert split_branches(tagged, ("arguments",)) == Branched(
        r"(?P<name>[^\s<{\[]+)\s*", (Branch("<longcat_arg_key>", "arguments", to_end=True), Branch("", None)))
    param = content_args("minicpm5")["tag_pattern"]
    assert split_branches(param, ("value",)) == Branched(
        r"""<param\s*name=["'](?P<key>[^"']+)["']\s*>""",
        (Branch("<![CDATA[", "value", 9, "", r"\]\]>(?:</param>|(?=<param(?:\s|name=))|$)"),
         Branch("", "value", 0, "", r"(?:</param>|(?=<param(?:\s|name=))|$)",
                guard=r"<param(?:\s|name=)|</param>")))


def test_a_pattern_without_the_shapes_does_not_split() -> None:
    assert split_branches(r"<a>(?:x(?P<v>.*?)|y(?P<v2>.+))</a>", ("v", "v2")) is None  # a greedy body
    assert split_branches(r"<a>(?P<v>(?:<b>.*)?)</a>", ("v",)) is None  # text after the to-the-end group
    assert split_branches(r"(?:x(?P<v>.*?)|y(?P<w>.*?))</a>", ("v", "w")) is None  # no head
    assert split_branches(r"<a>(?:x|y)(?P<v>.*?)</a>", ("v",)) is None  # the group is not in the alternation


def test_deepseek_v32_parameters_stream_by_their_string_attribute() -> None:
    output = (f'<{DSML}function_calls>\n<{DSML}invoke name="get_weather">\n'
              f'<{DSML}parameter name="city" string="true">Paris</{DSML}parameter>\n'
              f'<{DSML}parameter name="days" string="false">3</{DSML}parameter>\n'
              f'</{DSML}invoke>\n</{DSML}function_calls>')
    arguments = [0, "function", "arguments"]
    assert [event for event in events("deepseek_v32", output, 8) if event[2][:3] == arguments] == [
        (7, "begin", arguments, "object"),
        (12, "begin", [*arguments, "city"], "string"),  # the feed that completes string="true">
        (12, "text", [*arguments, "city"], "Pari"),
        (13, "text", [*arguments, "city"], "s"),
        (15, "end", [*arguments, "city"], None),
        (23, "set", [*arguments, "days"], 3),  # JSON: decided by the closing tag
        (25, "end", arguments, None),
    ]


def test_longcat_tagged_arguments_stream_to_the_region_end() -> None:
    output = ("<longcat_tool_call>multiply\n<longcat_arg_key>a</longcat_arg_key>\n"
              "<longcat_arg_value>two words</longcat_arg_value>\n</longcat_tool_call>")
    assert events("longcat", output, 8) == [
        (2, "begin", [], "array"),
        (5, "begin", [0], "object"),  # the name is known once <longcat_arg_key> opens the arguments
        (5, "set", [0, "type"], "function"),
        (5, "begin", [0, "function"], "object"),
        (5, "set", [0, "function", "name"], "multiply"),
        (5, "begin", [0, "function", "arguments"], "object"),
        (10, "begin", [0, "function", "arguments", "a"], "string"),
        (10, "text", [0, "function", "arguments", "a"], "two "),
        (11, "text", [0, "function", "arguments", "a"], "words"),
        (14, "end", [0, "function", "arguments", "a"], None),
        (16, "end", [0, "function", "arguments"], None),
        (16, "end", [0, "function"], None),
        (16, "end", [0], None),
        (16, "end", [], None),
    ]


def test_minicpm5_streams_a_plain_value_and_sets_a_cdata_value_whole() -> None:
    output = ('<function name="w"><param name="a">one two</param>'
              '<param name="b"><![CDATA[x<y]]></param><param name="c"><b></param></function>')
    arguments = ["function", "arguments"]
    assert [event for event in events("minicpm5", output, 4) if event[2][:2] == arguments] == [
        (5, "begin", arguments, "object"),
        (8, "begin", [*arguments, "a"], "string"),
        (8, "text", [*arguments, "a"], "o"),  # the feed that delivers it ("o" is not "<![CDATA[")
        (9, "text", [*arguments, "a"], "ne t"),
        (10, "text", [*arguments, "a"], "wo"),
        (12, "end", [*arguments, "a"], None),
        (22, "set", [*arguments, "b"], "x<y"),  # whole, once "]]></param><p" shows the CDATA closed
        (26, "begin", [*arguments, "c"], "string"),  # "<b" is not "<!": a plain value
        (26, "text", [*arguments, "c"], "<b>"),
        (31, "end", [*arguments, "c"], None),
        (31, "end", arguments, None),
    ]


#: Characters that open, close or look like the formats' markers, so values test the branch choice.
MARKUP = st.lists(st.sampled_from([*"ab <>/![]CDAT=\"'\n", "<![CDATA[", "]]>", "</param>", "<param ",
                                   "<longcat_arg_key>", "</longcat_arg_value>", 'string="',
                                   f"</{DSML}parameter>"]), max_size=6).map("".join)
KEYS = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3, unique=True)


def deepseek_v32(keys: list[str], values: list[str], flags: list[bool]) -> str:
    params = "".join(f'<{DSML}parameter name="{key}" string="{"true" if flag else "false"}">{value}'
                     f"</{DSML}parameter>\n" for key, value, flag in zip(keys, values, flags, strict=True))
    return (f'<{DSML}function_calls>\n<{DSML}invoke name="f">\n{params}'
            f"</{DSML}invoke>\n</{DSML}function_calls>")


def minicpm5(keys: list[str], values: list[str], flags: list[bool]) -> str:
    params = "".join(f'<param name="{key}">{f"<![CDATA[{value}]]>" if flag else value}</param>'
                     for key, value, flag in zip(keys, values, flags, strict=True))
    return f'<function name="f">{params}</function>'


def longcat(keys: list[str], values: list[str], flags: list[bool]) -> str:
    params = "".join(f"<longcat_arg_key>{key}</longcat_arg_key>\n"
                     f"<longcat_arg_value>{value}</longcat_arg_value>\n"
                     for key, value in zip(keys, values, strict=True))
    return f"<longcat_tool_call>f\n{params}</longcat_tool_call>"


FORMATS = {"deepseek_v32": deepseek_v32, "minicpm5": minicpm5, "longcat": longcat}


@settings(max_examples=40)
@given(data=st.data())
def test_any_values_in_any_feeds_stream_to_the_parsed_message(data: st.DataObject) -> None:
    """Generated calls whose values hold pieces of the markers: both OpenAI streams fold back to
    ``to_chat_message`` (``check_output``, ``errors="keep"``: a value that holds its own closing tag
    makes a call that cannot be read); when the output parses, the events replay to each region's
    value for every chunking, are the same for every chunking and never stop with a
    ``ValueStreamWarning`` (``check_values``; a region that fails may have begun a value in one
    chunking and not in another: ``docs/streaming_values.md``)."""
    name = data.draw(st.sampled_from(sorted(FORMATS)), label="profile")
    keys = data.draw(KEYS, label="keys")
    values = data.draw(st.lists(MARKUP, min_size=len(keys), max_size=len(keys)), label="values")
    flags = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)), label="flags")
    output = FORMATS[name](keys, values, flags)
    check_profile_output(data, name, output)


def test_a_clean_value_comes_back_as_written() -> None:
    """The generator's plain case parses to the values it wrote (the property test's outputs are the
    formats' own)."""
    for name, write in FORMATS.items():
        parser = ResponseParser(profiles.load(name).response_template, prefix="")
        parser.feed(write(["a", "b"], ["x y", "7"], [True, False]))
        arguments = parser.finalize()[0]["tool_calls"][0]["function"]["arguments"]
        expected = {"a": "x y", "b": 7 if name == "deepseek_v32" else "7"}
        assert arguments == expected, (name, json.dumps(arguments))
