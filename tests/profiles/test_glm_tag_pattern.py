"""GLM's ``tag_pattern`` (``glm45``, ``glm47``): read in one pass, and reading what it always read.

Up to 4700d91 the key/value pattern was :data:`BEFORE`. The load-time judge
(:mod:`chatcodec.response_templates.backtracking`) could not call its head linear, and was right:
the tempered key ``(?:(?!</?arg_(?:key|value)>).)*?`` followed by ``\\s*</arg_key>`` reads a
whitespace run inside a key again from each of its characters, and ``(?:\\s*<arg_key>)*``,
``(?:\\s*</arg_key>)*`` and ``(?:\\\\n\\s*)*`` repeat sequences that hold a repetition. So every
streamed search of the head ran under the regex clock.

The bundled pattern says the same with repetitions of one character each, possessive:

* a run of whitespace and repeated ``<arg_key>`` tags is read a character at a time, a character
  taken when it is whitespace, starts a whole ``<arg_key>``, or continues the tag whose ``<`` was
  taken (``(?<=<[^<>]{0,7})``: at most 7 characters since a ``<``, none of them ``<`` or ``>``);
  likewise the ``</arg_key>`` run and the ``\\n`` (two characters) layout after the key;
* the key stops at a tag, or at the first whitespace of a run that ends at ``</arg_key>``
  (``(?<!\\s)\\s*+</arg_key>``: only a run's first character looks ahead over the run, so each
  character is read a bounded number of times).

Possessive is the same as greedy here: nothing after those runs can match where a shorter run
would have ended (each ends before a character the next part cannot start with, or the value that
follows stops at the same tag whatever the run gave back). The tests below check that claim
rather than trust it: the two patterns give the same matches and groups on every real GLM output
(the corpus vectors, the variant vectors) and every prefix of one, on every short sequence of the
format's pieces, and on random ones.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import regex
from hypothesis import given
from hypothesis import strategies as st

from chatcodec import profiles
from chatcodec.response_templates.backtracking import Verdict, judge
from chatcodec.response_templates.scanners.pattern_split import split_pattern
from tests.conftest import load_json

#: The pattern both profiles bundled up to 4700d91, the reference for what the pattern reads.
BEFORE = (r"<arg_key>(?:\s*<arg_key>)*\s*(?P<key>(?:(?!</?arg_(?:key|value)>).)*?)\s*</arg_key>"
          r"(?:\s*</arg_key>)*\s*(?:\\n\s*)*(?:<arg_value>)?(?P<value>(?:(?!<arg_key>|</?arg_value>).)*?)"
          r"(?:</arg_value>(?:\\n)*|(?=<arg_key>)|$)")
FAMILIES = ("glm45", "glm47")
VARIANTS = Path(__file__).resolve().parent / "variants"


def bundled(family: str) -> str:
    return str(profiles.load(family).response_template["fields"]["tool_calls"]["content_args"]["tag_pattern"])


NOW = bundled("glm45")
OLD_RE = regex.compile(BEFORE, regex.DOTALL)
NEW_RE = regex.compile(NOW, regex.DOTALL)

#: The format's pieces: its tags, layout (whitespace, GLM-4.6's two-character ``\n``, pieces of
#: it), key and value characters, and text that starts like a tag.
PIECES = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", " ", "  ", "\n", "\t", "\u3000", "\r\n",
          "\\n", "\\", "n", "k", "city", "a b", "<", ">", "/", "<arg_", "</arg_k", "arg_key>", "_key>", "y"]


def reads(pattern: regex.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    """Every match of ``pattern`` in ``text`` as the xml-inline parser takes them: span and groups."""
    return [(match.span(), match.groupdict()) for match in pattern.finditer(text)]


def real_outputs() -> list[str]:
    """Every GLM output the project holds: corpus peer vectors and the families' variant vectors."""
    vectors: list[dict[str, Any]] = load_json("peer_vectors.json")["vectors"]
    outputs = [vector["output"] for vector in vectors if vector["family"] in FAMILIES]
    for family in FAMILIES:
        data = json.loads((VARIANTS / f"{family}.json").read_text(encoding="utf-8"))
        outputs += [vector["output"] for vector in data["variants"]]
    return outputs


def test_both_profiles_bundle_the_one_pattern() -> None:
    assert bundled("glm47") == NOW
    assert NOW != BEFORE


def test_the_judge_finds_the_streamed_head_linear() -> None:
    split = split_pattern(NOW, "value")
    assert split is not None
    assert split.head.endswith("(?:<arg_value>)?")
    assert split.guard == "<arg_key>|</?arg_value>"
    assert judge(split.head) == Verdict(True)
    assert judge(split_pattern(BEFORE, "value").head).linear is False  # type: ignore[union-attr]
    # the whole pattern is still timed (the value's lazy ``.*?`` meets a ``<``), but it repeats no
    # repetition any more, so loading the profile runs no catastrophe proof on it
    assert judge(NOW) == Verdict(False)
    assert len(judge(BEFORE).nested) == 6


def test_same_reading_of_every_real_output_and_each_prefix() -> None:
    outputs = real_outputs()
    assert len(outputs) >= 40
    assert sum(len(reads(NEW_RE, output)) for output in outputs) >= 80  # the outputs hold arguments
    for output in outputs:
        for end in range(len(output) + 1):
            assert reads(NEW_RE, output[:end]) == reads(OLD_RE, output[:end]), output[:end]


def test_same_reading_of_a_known_output() -> None:
    text = ("get_weather\n<arg_key> <arg_key>city \t</arg_key> </arg_key>\\n\n"
            "<arg_value>Beijing</arg_value>\\n")
    expected = [((12, 93), {"key": "city", "value": "Beijing"})]
    assert reads(OLD_RE, text) == expected
    assert reads(NEW_RE, text) == expected


def test_same_reading_of_every_short_sequence_of_pieces() -> None:
    alphabet = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", " ", "\n", "\\n", "n", "k", "<"]
    for length in range(5):
        for parts in itertools.product(alphabet, repeat=length):
            text = "".join(parts)
            assert reads(NEW_RE, text) == reads(OLD_RE, text), text


@given(st.lists(st.sampled_from(PIECES), max_size=24))
def test_same_reading_of_random_pieces(parts: list[str]) -> None:
    text = "".join(parts)
    assert reads(NEW_RE, text) == reads(OLD_RE, text)


@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=16))
def test_same_reading_of_pieces_and_any_characters(parts: list[str]) -> None:
    text = "".join(parts)
    assert reads(NEW_RE, text) == reads(OLD_RE, text)
