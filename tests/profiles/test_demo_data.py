"""The demo data of each profile: a real output, a conversation its chat template renders, a correct parse."""

from __future__ import annotations

import re

import pytest

from chatcodec import profiles
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import load_json
from tests.profiles.helpers import matches, parse_three_ways, peer_view

VECTORS = {vector["id"]: vector for vector in load_json("peer_vectors.json")["vectors"]}
WITH_DEMO = [name for name in profiles.names() if profiles.load(name).demo is not None]


def test_every_bundled_chat_template_has_a_demo() -> None:
    bundled = [name for name in profiles.names() if profiles.load(name).chat_template is not None]
    assert bundled == WITH_DEMO
    assert "qwen3_coder" in WITH_DEMO


@pytest.mark.parametrize("name", WITH_DEMO)
def test_demo_output_is_a_real_peer_output_that_parses_right(name: str) -> None:
    profile = profiles.load(name)
    demo = profile.demo
    assert demo is not None and profile.chat_template is not None
    found = re.fullmatch(r"peer_vectors\.json (\S+) \((.+)\)", demo.source)
    assert found is not None
    vector = VECTORS[found.group(1)]
    assert (vector["family"], vector["output"], vector["source"]) == (name, demo.output, found.group(2))
    assert demo.prompt_suffix == vector["prompt_suffix"]
    prompt = render_chat_template(
        profile.chat_template,
        demo.messages,
        tools=demo.tools,
        add_generation_prompt=True,
        **profile.special_tokens,
        **demo.template_kwargs,
    )
    assert prompt.endswith(profile.generation_prompt_ending(demo.prompt_suffix))
    message = parse_three_ways(profile.response_template, demo.output, prefix=prompt, tools=demo.tools)
    assert matches(peer_view(message), vector["expected"], exact_whitespace=False)
