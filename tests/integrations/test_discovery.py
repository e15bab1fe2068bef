"""Which response template an engine model gets (``chatcodec.integrations.discovery``).

The engines hand plugins a tokenizer object; these stand-ins carry only the attributes discovery
reads, so this runs without vLLM, SGLang or transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatcodec import load_response_template, profiles
from chatcodec.errors import ResponseTemplateError, ResponseTemplateNotFoundError
from chatcodec.integrations import discovery
from chatcodec.integrations.discovery import ENV_VAR, serving_template
from tests.conftest import corpus_template

OWN = {"start_anchor": "<|assistant|>", "fields": {"content": {"close": "<|end|>"}}}


class Tokenizer:
    def __init__(self, **attributes: Any) -> None:
        self.name_or_path = "org/model"
        self.__dict__.update(attributes)


@pytest.fixture(autouse=True)
def _no_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_the_tokenizers_own_template_comes_first() -> None:
    found = serving_template(
        Tokenizer(response_template=OWN, chat_template=corpus_template("Qwen--Qwen3-0.6B.jinja"))
    )
    assert (found.source, found.model, found.profile) == ("tokenizer_config.json", "org/model", None)
    assert found.template.spec == load_response_template(OWN).spec


def test_init_kwargs_are_read_when_the_attribute_is_missing() -> None:
    found = serving_template(Tokenizer(init_kwargs={"response_template": OWN}))
    assert found.source == "tokenizer_config.json"


def test_else_the_profile_detected_from_the_chat_template() -> None:
    found = serving_template(
        Tokenizer(chat_template=corpus_template("Qwen--Qwen3-Coder-30B-A3B-Instruct.jinja"))
    )
    assert (found.source, found.profile) == ("profile:qwen3_coder", "qwen3_coder")
    assert found.template.spec == load_response_template(profiles.load("qwen3_coder").response_template).spec


def test_named_chat_templates_use_the_default_one() -> None:
    named = {"default": corpus_template("NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja"), "rag": "x"}
    assert serving_template(Tokenizer(chat_template=named)).profile == "hermes"


def test_neither_is_an_error_naming_the_model_and_the_variable() -> None:
    with pytest.raises(ResponseTemplateNotFoundError) as raised:
        serving_template(Tokenizer(chat_template="{{ messages }}"))
    assert str(raised.value) == (
        "chatcodec: no response template for 'org/model': its tokenizer_config.json has no "
        "response_template and its chat template matches no bundled profile. Name one with the "
        "environment variable CHATCODEC_RESPONSE_TEMPLATE: a bundled profile (`chatcodec profiles` "
        "lists them), a response-template JSON file, a tokenizer_config.json or a model directory, e.g. "
        "CHATCODEC_RESPONSE_TEMPLATE=/path/to/response_template.json"
    )


def test_an_invalid_template_of_the_tokenizer_names_where_it_came_from() -> None:
    with pytest.raises(
        ResponseTemplateError, match=r"^org/model: tokenizer_config.json: response_template: "
    ):
        serving_template(Tokenizer(response_template={"fields": {}}))


def test_the_variable_wins_profile_file_config_and_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tokenizer = Tokenizer(response_template=OWN)
    monkeypatch.setenv(ENV_VAR, "kimi_k2")
    found = serving_template(tokenizer)
    assert (found.source, found.profile) == ("CHATCODEC_RESPONSE_TEMPLATE=kimi_k2", "kimi_k2")
    template_file = tmp_path / "rt.json"
    template_file.write_text(json.dumps(OWN), encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, str(template_file))
    assert serving_template(tokenizer).template.spec == load_response_template(OWN).spec
    config = tmp_path / "model" / "tokenizer_config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"response_template": OWN, "eos_token": "<|end|>"}), encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, str(config))
    assert serving_template(tokenizer).source == f"CHATCODEC_RESPONSE_TEMPLATE={config}"
    monkeypatch.setenv(ENV_VAR, str(config.parent))
    assert serving_template(tokenizer).template.spec == load_response_template(OWN).spec


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "no-such-profile",
            r"CHATCODEC_RESPONSE_TEMPLATE=no-such-profile: neither a file, a directory nor a "
            r"bundled profile\. profile 'no-such-profile': no bundled profile",
        ),
        (  # a path was answered with the list of 52 profile names
            "/nonexistent/x.json",
            r"^CHATCODEC_RESPONSE_TEMPLATE=/nonexistent/x\.json: no such file or directory: "
            r"/nonexistent/x\.json$",
        ),
        ("template.json",
         r"^CHATCODEC_RESPONSE_TEMPLATE=template\.json: no such file or directory: template\.json$"),
    ],
)
def test_a_variable_that_names_nothing(monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(ResponseTemplateNotFoundError, match=message):
        serving_template(Tokenizer())


def test_a_file_that_is_not_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "rt.json"
    bad.write_text("{", encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, str(bad))
    with pytest.raises(
        ResponseTemplateNotFoundError, match=rf"^CHATCODEC_RESPONSE_TEMPLATE={bad}: cannot read"
    ):
        serving_template(Tokenizer())


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'{"fields": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "invalid JSON: nested too deeply"),
        (b"\xff{}", "not UTF-8 text (byte 0: invalid start byte)"),
        (b'{"fields": }', "invalid JSON (line 1, column 12): Expecting value"),
    ],
)
def test_a_file_that_is_not_json_names_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           data: bytes, why: str) -> None:
    """JSON nested past the recursion limit raised a bare RecursionError (the CLI and the model
    files name it): the same message as the model files, under the variable's name."""
    bad = tmp_path / "rt.json"
    bad.write_bytes(data)
    monkeypatch.setenv(ENV_VAR, str(bad))
    with pytest.raises(ResponseTemplateNotFoundError) as raised:
        serving_template(Tokenizer())
    assert str(raised.value) == f"CHATCODEC_RESPONSE_TEMPLATE={bad}: cannot read the file as JSON: {why}"


def test_one_lookup_per_tokenizer() -> None:
    tokenizer = Tokenizer(response_template=OWN)
    first = serving_template(tokenizer)
    tokenizer.response_template = {"start_anchor": "x", "fields": {"content": {}}}
    assert serving_template(tokenizer) is first
    assert discovery._cache[tokenizer] is first
