"""``chatcodec profiles``: the list with coverage, one profile in full, JSON, the response template."""

from __future__ import annotations

import json

import pytest

from chatcodec import profiles
from chatcodec.cli import main


def test_list_has_one_line_per_profile_with_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["profile", "peer", "vectors", "chat", "template", "format"]
    rows = {line.split()[0]: line for line in lines[1:53]}
    assert list(rows) == profiles.names()
    assert rows["qwen3"].split()[1:4] == ["7/7", "(100%)", "Qwen3-0.6B"]
    assert rows["hermes"].split()[1:4] == ["11/11", "(100%)", "Qwen2.5-7B-Instruct"]
    assert rows["lfm2"].split()[1:4] == ["15/15", "(100%)", "-"]
    assert rows["granite"].split()[1:4] == ["6/6", "(100%)", "granite-3.1-1b-a400m-instruct"]
    assert rows["kimi_k2"].split()[3] == "Kimi-K2-Instruct"
    with_demo = [name for name in profiles.names() if profiles.load(name).demo is not None]
    assert lines[-2:] == [
        "52 profiles, 40 pass >= 95 % of their peer vectors. `chatcodec profiles NAME` shows one.",
        f"{len(with_demo)} have a demo, `chatcodec demo --profile NAME`: {', '.join(with_demo)}.",
    ]


def test_one_profile_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "Qwen3-Coder"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("qwen3_coder: Qwen3-Coder / Qwen3.5 XML tool calls")
    assert "  generation prompt:  '<|im_start|>assistant\\n<think>\\n'\n" in out
    assert "  chat template:      Qwen/Qwen3.5-4B (Apache-2.0, redistributable)\n" in out
    assert "  demo:               chatcodec demo --profile qwen3_coder\n" in out


def test_json_list_and_detail(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [entry["name"] for entry in listed] == profiles.names()
    gpt_oss = next(entry for entry in listed if entry["name"] == "gpt_oss")
    assert gpt_oss["peer_vectors"] == {"passed": 9, "total": 9}
    assert gpt_oss["needs_chatcodec"] is True and gpt_oss["demo"] is True  # strip "blank"
    assert main(["profiles", "deepseek_v31", "--json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["generation_prompt"] == "<｜Assistant｜></think>" and detail["license"] == "MIT"


def test_response_template_is_printed_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    """With the end-of-sequence token, as a tokenizer_config.json holds them (issue 13: the export
    alone parsed an output differently from the profile name, which stops at that token)."""
    assert main(["profiles", "qwen3", "--response-template"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "eos_token": "<|im_end|>", "response_template": profiles.load("qwen3").response_template}


def test_response_template_needs_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--response-template"]) == 1
    assert (
        capsys.readouterr().err
        == "chatcodec: ValueError: profiles: --response-template needs a profile NAME\n"
    )
