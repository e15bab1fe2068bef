"""``profiles.detect`` over all 59 corpus chat templates: the right family, or ``None``.

Markers count only where they are template structure: not inside Jinja comments, and not as a
word in prose (``Never write <think> tags.``).

The expected family of each template is decided here by reading the template's tool-call and
reasoning format (not by asking ``detect``). ``None`` marks templates without a tool-call or
reasoning format of a bundled profile (plain chat templates, and formats no profile covers:
GLM-4 9B, MiniCPM3, Hy3, Solar Open, Phi-4-reasoning, ...).
"""

from __future__ import annotations

import pytest

from chatcodec import profiles
from tests.conftest import corpus_path, load_json

EXPECTED: dict[str, str | None] = {
    "01-ai--Yi-1.5-6B-Chat.jinja": None,
    "ByteDance-Seed--Seed-OSS-36B-Instruct.jinja": "seed_oss",
    "CohereForAI--c4ai-command-r-plus-tool_use.jinja": "command_r_plus",
    "CohereForAI--c4ai-command-r-v01.jinja": None,
    "CohereLabs--c4ai-command-a-03-2025.jinja": "command_r7b",
    "CohereLabs--command-a-reasoning-08-2025.jinja": "cohere2",
    "HuggingFaceTB--SmolLM2-135M-Instruct.jinja": None,
    "HuggingFaceTB--SmolLM3-3B.jinja": "qwen3",
    "LGAI-EXAONE--EXAONE-3.5-7.8B-Instruct.jinja": None,
    "MiniMaxAI--MiniMax-M2.jinja": "minimax_m2",
    "NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja": "hermes",
    "Qwen--Qwen2.5-7B-Instruct.jinja": "hermes",
    "Qwen--Qwen2.5-VL-7B-Instruct.jinja": None,
    "Qwen--Qwen3-0.6B.jinja": "qwen3",
    "Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja": "qwen3_coder",
    "Qwen--Qwen3-Next-80B-A3B.jinja": "qwen3",
    "Qwen--Qwen3.5-4B.jinja": "qwen3_coder",
    "THUDM--glm-4-9b-chat.jinja": None,
    "XiaomiMiMo--MiMo-VL.jinja": "hermes",
    "ai21labs--AI21-Jamba-Large-1.6.jinja": "jamba",
    "databricks--dbrx-instruct.jinja": None,
    "deepseek-ai--DeepSeek-R1-Distill-Qwen-32B.jinja": "deepseek_r1",
    "deepseek-ai--DeepSeek-R1.jinja": "deepseek_r1",
    "deepseek-ai--DeepSeek-V2.5.jinja": "deepseek_v3",
    "deepseek-ai--DeepSeek-V3.1.jinja": "deepseek_v31",
    "deepseek-ai--deepseek-coder-33b-instruct.jinja": None,
    "fireworks-ai--llama-3-firefunction-v2.jinja": "firefunction_v2",
    "google--gemma-3-1b-it.jinja": None,
    "google--gemma-3-270m-it.jinja": None,
    "google--gemma-4-31B-it.jinja": "gemma4",
    "ibm-granite--granite-3.1-1b-a400m-instruct.jinja": "granite",
    "ibm-granite--granite-3.3-2b-instruct.jinja": "granite33_think",
    "ibm-granite--granite-4.0.jinja": "granite4",
    "meetkai--functionary-medium-v3.1.jinja": "functionary_v3_1",
    "meta-llama--Llama-3.1-8B-Instruct.jinja": "llama3_json",
    "meta-llama--Llama-3.2-11B-Vision-Instruct.jinja": "llama3_json",
    "meta-llama--Llama-4-Scout-17B-16E-Instruct.jinja": "llama4_pythonic",
    "meta-llama--Llama-Guard-3-11B-Vision.jinja": None,
    "microsoft--Phi-3-mini-4k-instruct.jinja": None,
    "microsoft--Phi-3.5-mini-instruct.jinja": None,
    "microsoft--Phi-4-reasoning.jinja": None,
    "microsoft--phi-4.jinja": None,
    "mistralai--Ministral-3-14B-Reasoning-2512.jinja": "mistral_reasoning",
    "mistralai--Mistral-7B-Instruct-v0.1.jinja": None,
    "mistralai--Mistral-Nemo-Instruct-2407.jinja": "mistral",
    "mistralai--Mistral-Small-24B-Instruct-2501.jinja": None,
    "mistralai--Mixtral-8x7B-Instruct-v0.1.jinja": None,
    "moonshotai--Kimi-K2-Instruct.jinja": "kimi_k2",
    "nvidia--Llama-3.1-Nemotron-70B-Instruct.jinja": "llama3_json",
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": "nemotron3",
    "nvidia--NVIDIA-Nemotron-Nano-9B-v2.jinja": "nemotron_v2",
    "openai--gpt-oss-120b.jinja": "gpt_oss",
    "openbmb--MiniCPM3-4B.jinja": None,
    "swiss-ai--Apertus-8B-Instruct.jinja": "apertus",
    "tencent--Hy3.jinja": None,
    "tiiuae--falcon-11B.jinja": None,
    "unsloth--Devstral-Small-2507.jinja": "mistral_args",
    "upstage--Solar-Open-100B.jinja": None,
    "zai-org--GLM-4.6.jinja": "glm45",
}


def test_expectations_cover_every_corpus_template() -> None:
    files = sorted(entry["file"] for entry in load_json("chat_templates", "MANIFEST.json"))
    assert len(files) == 59
    assert sorted(EXPECTED) == files


@pytest.mark.parametrize("file", sorted(EXPECTED))
def test_detect_names_the_family(file: str) -> None:
    chat_template = corpus_path("chat_templates", file).read_text(encoding="utf-8")
    assert profiles.detect(chat_template) == EXPECTED[file]


def test_every_profile_with_markers_detects_a_corpus_template() -> None:
    detectable = {name for name in profiles.names() if profiles.load(name).markers.all}
    assert detectable == {family for family in EXPECTED.values() if family is not None}


def test_bundled_chat_templates_are_detected_as_their_profile() -> None:
    bundled = [name for name in profiles.names() if profiles.load(name).chat_template is not None]
    assert len(bundled) >= 15
    for name in bundled:
        assert profiles.detect(profiles.load(name).chat_template or "") == name


def _corpus(file: str) -> str:
    return corpus_path("chat_templates", file).read_text(encoding="utf-8")


def test_markers_in_jinja_comments_do_not_count() -> None:
    gemma3 = _corpus("google--gemma-3-1b-it.jinja")
    assert profiles.detect("{# Gemma 4 would use <|tool_call> #}\n" + gemma3) is None
    qwen3 = _corpus("Qwen--Qwen3-0.6B.jinja")
    assert profiles.detect("{#- not the <function=...> format -#}\n" + qwen3) == "qwen3"
    assert profiles.detect(qwen3 + "{# multi-line\n<function=f> #}") == "qwen3"


def test_markers_in_prose_do_not_count() -> None:
    qwen25 = _corpus("Qwen--Qwen2.5-7B-Instruct.jinja")
    default_system = "You are a helpful assistant."
    assert default_system in qwen25
    prose = qwen25.replace(default_system, default_system + " Never write <think> tags.")
    assert profiles.detect(prose) == "hermes"
    structural = qwen25.replace(default_system, default_system + "' + '<think>\\n' + '")
    assert profiles.detect(structural) == "qwen3"


def test_a_template_without_markers_is_not_detected() -> None:
    assert profiles.detect("") is None
    assert profiles.detect("{{ messages[0].content }}") is None
