"""GLM-style ``tag_pattern`` (glm45, glm47, ling3, longcat): one pass, and what it always read.

Up to 4700d91 GLM's key/value pattern was :data:`BEFORE` (Ling 3's :data:`BEFORE_LING3`, LongCat's
tagged calls' :data:`BEFORE_LONGCAT`: Ling's with ``<longcat_arg_*>`` tags and no ``$``). The
load-time judge (:mod:`chatcodec.response_templates.backtracking`) could not call their heads
linear, and was right: a key (tempered ``(?:(?!</?arg_(?:key|value)>).)*?``, Ling's ``.*?``)
followed by ``\\s*</arg_key>`` reads a whitespace run inside a key again from each of its
characters, and GLM's ``(?:\\s*<arg_key>)*``, ``(?:\\s*</arg_key>)*`` and ``(?:\\\\n\\s*)*`` repeat
sequences that hold a repetition. So every streamed search of the head ran under the regex clock.

The bundled patterns say the same with repetitions of one character each, possessive:

* a run of whitespace and repeated ``<arg_key>`` tags is read a character at a time, a character
  taken when it is whitespace, starts a whole ``<arg_key>``, or continues the tag whose ``<`` was
  taken (``(?<=<[^<>]{0,7})``: at most 7 characters since a ``<``, none of them ``<`` or ``>``);
  likewise the ``</arg_key>`` run and the ``\\n`` (two characters) layout after the key;
* the key stops where the original's lazy key stopped: at a tag (GLM), or where ``</arg_key>``
  (Ling, LongCat: ``</arg_key>`` then ``<arg_value>``) or a whitespace run ending there begins; only a
  run's first character looks ahead over the run (``(?<!\\s)``), so each character is read a
  bounded number of times.

Possessive is the same as greedy here: nothing after those runs can match where a shorter run
would have ended (each ends before a character the next part cannot start with, or the value that
follows stops at the same tag whatever the run gave back). The tests below check that claim
rather than trust it: old and new patterns give the same matches and groups on every real output
of the families (the corpus vectors, the variant vectors) and every prefix of one, on every short
sequence of the format's pieces, and on random ones.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import profiles
from chatcodec.response_templates.backtracking import Verdict, judge
from chatcodec.response_templates.scanners.pattern_split import split_pattern
from tests.conftest import load_json

#: The pattern glm45 and glm47 bundled up to 4700d91, the reference for what the pattern reads.
BEFORE = (r"<arg_key>(?:\s*<arg_key>)*\s*(?P<key>(?:(?!</?arg_(?:key|value)>).)*?)\s*</arg_key>"
          r"(?:\s*</arg_key>)*\s*(?:\\n\s*)*(?:<arg_value>)?(?P<value>(?:(?!<arg_key>|</?arg_value>).)*?)"
          r"(?:</arg_value>(?:\\n)*|(?=<arg_key>)|$)")
#: The pattern ling3 bundled up to 4700d91.
BEFORE_LING3 = (r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>"
                r"(?P<value>(?:(?!<arg_key>|</arg_value>).)*?)(?:</arg_value>|(?=<arg_key>)|$)")
#: The key/value pattern of longcat's tagged calls, up to 4700d91 (Ling 3's, with longcat's tags
#: and no ``$``).
BEFORE_LONGCAT = (r"<longcat_arg_key>\s*(?P<key>.*?)\s*</longcat_arg_key>\s*<longcat_arg_value>"
                  r"(?P<value>(?:(?!<longcat_arg_key>|</longcat_arg_value>).)*?)"
                  r"(?:</longcat_arg_value>|(?=<longcat_arg_key>))")
#: family -> the pattern it bundled before, and the families whose outputs it reads.
CASES = {"glm45": (BEFORE, ("glm45", "glm47")), "ling3": (BEFORE_LING3, ("ling3",)),
         "longcat": (BEFORE_LONGCAT, ("longcat",))}
VARIANTS = Path(__file__).resolve().parent / "variants"

#: The format's pieces: its tags, layout (whitespace, GLM-4.6's two-character ``\n``, pieces of
#: it), key and value characters, and text that starts like a tag or ends like one.
PIECES = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", " ", "  ", "\n", "\t", "\u3000", "\r\n",
          "\\n", "\\", "n", "k", "city", "a b", "<", ">", "/", "<arg_", "</arg_k", "arg_key>", "_key>", "y"]
#: The pieces every sequence of up to four is tried.
SHORT = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", " ", "\n", "\\n", "n", "k", "<"]


def pieces(family: str, chosen: list[str]) -> list[str]:
    """``chosen`` with the family's tags (longcat writes ``<longcat_arg_key>``)."""
    if family != "longcat":
        return chosen
    return [piece.replace("arg_", "longcat_arg_") if "arg_" in piece else piece for piece in chosen]


def bundled(family: str) -> str:
    """The ``tag_pattern`` of ``family``'s tool calls (longcat's: of its tagged-call parser)."""
    args = profiles.load(family).response_template["fields"]["tool_calls"]["content_args"]
    if family == "longcat":
        args = args["parsers"][1]["args"]["value_parsers"]["arguments"]["args"]
    return str(args["tag_pattern"])


def compiled(family: str) -> tuple[regex.Pattern[str], regex.Pattern[str]]:
    """The pattern ``family`` bundled before, and the one it bundles now, compiled as the parser does."""
    return regex.compile(CASES[family][0], regex.DOTALL), regex.compile(bundled(family), regex.DOTALL)


def reads(pattern: regex.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    """Every match of ``pattern`` in ``text`` as the xml-inline parser takes them: span and groups."""
    return [(match.span(), match.groupdict()) for match in pattern.finditer(text)]


def real_outputs(families: tuple[str, ...]) -> list[str]:
    """Every output of ``families`` the project holds: corpus peer vectors and variant vectors."""
    vectors: list[dict[str, Any]] = load_json("peer_vectors.json")["vectors"]
    outputs = [vector["output"] for vector in vectors if vector["family"] in families]
    for family in families:
        data = json.loads((VARIANTS / f"{family}.json").read_text(encoding="utf-8"))
        outputs += [vector["output"] for vector in data["variants"]]
    return outputs


def test_glm47_bundles_glm45s_pattern() -> None:
    assert bundled("glm47") == bundled("glm45")


@pytest.mark.parametrize("family", list(CASES))
def test_the_judge_finds_the_streamed_head_linear(family: str) -> None:
    before, now = CASES[family][0], bundled(family)
    split = split_pattern(now, "value")
    assert split is not None
    assert split.head.endswith({"glm45": "(?:<arg_value>)?", "ling3": "\\s*+<arg_value>",
                                "longcat": "\\s*+<longcat_arg_value>"}[family])
    assert judge(split.head) == Verdict(True)
    assert judge(split_pattern(before, "value").head).linear is False  # type: ignore[union-attr]
    # the whole pattern is still timed (the value's lazy ``.*?`` meets a ``<``), but it repeats no
    # repetition, so loading the profile runs no catastrophe proof on it
    assert judge(now) == Verdict(False)


def test_the_glm_pattern_no_longer_holds_catastrophe_candidates() -> None:
    assert len(judge(BEFORE).nested) == 6
    assert judge(bundled("glm45")).nested == ()


#: family -> how many outputs it has at least, and how many arguments they hold at least (as the
#: old pattern reads them): the test reads real data (other branches may add vectors).
HELD = {"glm45": (72, 97), "ling3": (18, 17), "longcat": (16, 4)}


@pytest.mark.parametrize("family", list(CASES))
def test_same_reading_of_every_real_output_and_each_prefix(family: str) -> None:
    old, new = compiled(family)
    outputs = real_outputs(CASES[family][1])
    assert len(outputs) >= HELD[family][0]
    assert sum(len(reads(old, output)) for output in outputs) >= HELD[family][1]
    for output in outputs:
        for end in range(len(output) + 1):
            assert reads(new, output[:end]) == reads(old, output[:end]), output[:end]


@pytest.mark.parametrize(("family", "text", "expected"), [
    ("glm45", "get_weather\n<arg_key> <arg_key>city \t</arg_key> </arg_key>\\n\n"
              "<arg_value>Beijing</arg_value>\\n",
     [((12, 93), {"key": "city", "value": "Beijing"})]),
    ("glm45", "<arg_key>a b  </arg_key><arg_value>1<arg_key>>x</arg_key>2",
     [((0, 36), {"key": "a b", "value": "1"}), ((36, 58), {"key": ">x", "value": "2"})]),
    ("ling3", "<arg_key> a </arg_key> b </arg_key>\n<arg_value>1</arg_value><arg_key>k</arg_key><arg_value>",
     [((0, 60), {"key": "a </arg_key> b", "value": "1"}), ((60, 91), {"key": "k", "value": ""})]),
    ("longcat", "<longcat_arg_key>a b </longcat_arg_key><longcat_arg_value>1</longcat_arg_value>"
                "<longcat_arg_key>c</longcat_arg_key><longcat_arg_value>2",
     [((0, 79), {"key": "a b", "value": "1"})]),
])
def test_same_reading_of_known_texts(family: str, text: str, expected: list[Any]) -> None:
    old, new = compiled(family)
    assert reads(old, text) == expected
    assert reads(new, text) == expected


@pytest.mark.parametrize("family", list(CASES))
def test_same_reading_of_every_short_sequence_of_pieces(family: str) -> None:
    old, new = compiled(family)
    for length in range(5):
        for parts in itertools.product(pieces(family, SHORT), repeat=length):
            text = "".join(parts)
            assert reads(new, text) == reads(old, text), text


@pytest.mark.parametrize("family", list(CASES))
@given(parts=st.lists(st.sampled_from(PIECES), max_size=24))
def test_same_reading_of_random_pieces(family: str, parts: list[str]) -> None:
    old, new = compiled(family)
    text = "".join(pieces(family, parts))
    assert reads(new, text) == reads(old, text)


@pytest.mark.parametrize("family", list(CASES))
@given(parts=st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=16))
def test_same_reading_of_pieces_and_any_characters(family: str, parts: list[str]) -> None:
    old, new = compiled(family)
    text = "".join(pieces(family, parts))
    assert reads(new, text) == reads(old, text)
