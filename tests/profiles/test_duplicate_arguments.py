"""Issue 13: a tool-call argument given twice is an error in every profile, never an overwrite.

For every corpus chat template of a profile that renders tool calls, a call with the arguments
``{"dupkey": "KEEP", "zzkey": "second"}`` is rendered in the model's own format, then ``zzkey`` is
renamed ``dupkey`` in the rendered text: the output now gives one argument twice, as a model might.
Strict parsing raises naming the tool-call field; keep mode records it and loses no character
(``KEEP`` and ``second`` stay in the message, in content or in the recorded raw text). Before, about
20 profiles silently kept ``second`` only.
"""

from __future__ import annotations

import copy
import json

import pytest

from chatcodec import parse_response, profiles
from chatcodec.errors import ResponseParseError
from tests.profiles.test_round_trip import MESSAGES, SPECS, TOOLS, split_output

CALL = copy.deepcopy(MESSAGES["one_call"])
CALL["tool_calls"][0]["function"]["arguments"] = {"dupkey": "KEEP", "zzkey": "second"}

FILES = sorted(file for file, spec in SPECS.items()
               if "tool_calls" not in spec.drops.get("one_call", ()) and "one_call" not in spec.unrenderable)


def _output(file: str) -> tuple[str, str, str]:
    spec = SPECS[file]
    prefix, output, _ = split_output(spec, file, CALL)
    assert output.count("zzkey") == 1, output
    return spec.profile, prefix, output.replace("zzkey", "dupkey")


@pytest.mark.parametrize("file", FILES, ids=[file[:-6] for file in FILES])
def test_strict_raises(file: str) -> None:
    profile, prefix, output = _output(file)
    template = profiles.load(profile).response_template
    with pytest.raises(ResponseParseError) as raised:
        parse_response(output, template, prefix=prefix, tools=TOOLS)
    assert raised.value.field == "tool_calls"
    assert "given twice" in str(raised.value) or "repeated name" in str(raised.value)


@pytest.mark.parametrize("file", FILES, ids=[file[:-6] for file in FILES])
def test_keep_loses_nothing(file: str) -> None:
    profile, prefix, output = _output(file)
    message = parse_response(output, profiles.load(profile).response_template, prefix=prefix, tools=TOOLS,
                             errors="keep")
    assert [error["field"] for error in message["parse_errors"]] == ["tool_calls"]
    written = json.dumps(message, ensure_ascii=False)
    assert "KEEP" in written and "second" in written
    assert "tool_calls" not in message


def test_the_cases_cover_the_profiles_that_call_tools() -> None:
    assert len({SPECS[file].profile for file in FILES}) >= 20
