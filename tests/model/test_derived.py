"""``from_pretrained`` derives a response template for a directory with neither one nor a profile."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from chatcodec import ChatCodec, profiles
from chatcodec.errors import ResponseTemplateNotFoundError
from chatcodec.model.derived import UnverifiedCapabilityWarning
from chatcodec.model.loading import find_response_template
from tests.analysis.corpus_split import is_held_out
from tests.analysis.helpers import template_and_variables
from tests.model.helpers import make_model_dir

HY3 = "tencent--Hy3.jinja"
PHI4_REASONING = "microsoft--Phi-4-reasoning.jinja"


def corpus_dir(tmp_path: Path, name: str) -> Path:
    template, variables = template_and_variables(name)
    return make_model_dir(tmp_path / "model", chat_template=template, special_tokens=variables)


def no_template_reason(codec: ChatCodec) -> str:
    """The error parse_response gives on a codec that loaded without a response template (which
    says why none was derived)."""
    assert (codec.response_template, codec.response_template_capabilities) == (None, None)
    with pytest.raises(ResponseTemplateNotFoundError) as caught:
        codec.parse_response("Hi", prefix="")
    return str(caught.value)


def test_the_templates_are_development_templates_no_profile_detects() -> None:
    for name in (HY3, PHI4_REASONING):
        assert not is_held_out(name)
        assert profiles.detect(template_and_variables(name)[0]) is None


def test_a_derived_template_with_every_capability_verified(tmp_path: Path) -> None:
    codec = ChatCodec.from_pretrained(corpus_dir(tmp_path, HY3))
    assert codec.response_template_source == "derived"
    assert codec.profile is None
    labels = codec.response_template_capabilities or {}
    assert {name: label["status"] for name, label in labels.items()} == \
        dict.fromkeys(("content", "reasoning", "one_call", "parallel_calls"), "verified")
    output = ("Let me look.</think:opensource><tool_calls:opensource>\n<tool_call:opensource>get_time"
              "<tool_sep:opensource>\n<arg_key:opensource>zone</arg_key:opensource>\n<arg_value:opensource>UTC"
              "</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        message = codec.parse_response(output, prefix="<｜hy_Assistant:opensource｜><think:opensource>")
    assert message == {"role": "assistant", "reasoning_content": "Let me look.", "tool_calls": [
        {"type": "function", "function": {"name": "get_time", "arguments": {"zone": "UTC"}}}]}
    assert find_response_template(corpus_dir(tmp_path / "again", HY3)) == (codec.response_template, "derived")


def test_a_heuristic_capability_warns_once_when_a_parse_uses_it(tmp_path: Path) -> None:
    codec = ChatCodec.from_pretrained(corpus_dir(tmp_path, PHI4_REASONING))
    labels = codec.response_template_capabilities or {}
    assert (labels["content"]["status"], labels["reasoning"]["status"]) == ("verified", "heuristic")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert codec.parse_response("Hi.", prefix="") == {"role": "assistant", "content": "Hi."}
        assert caught == []
        first = codec.parse_response("<think>Hm.</think>Hi.", prefix="")
        again = codec.parse_response(["<think>Hm.</think>Hi.", "<think>Ok.</think>Yes."], prefix="")
    assert first == {"role": "assistant", "reasoning_content": "Hm.", "content": "Hi."}
    assert len(again) == 2
    assert [warning.category for warning in caught] == [UnverifiedCapabilityWarning]
    assert str(caught[0].message) == (
        f"{codec.name_or_path}: the response template was derived from the chat template and its reasoning "
        "capability is heuristic: h2: the rendered prompt names the pair '<think>' / '</think>'; no turn "
        "renders reasoning; check this message, or give the model a response template")


def test_a_streaming_parser_warns_at_finalize(tmp_path: Path) -> None:
    codec = ChatCodec.from_pretrained(corpus_dir(tmp_path, PHI4_REASONING))
    parser = codec.get_response_parser(prefix="")
    parser.feed("<think>Hm.</think>")
    parser.feed("Hi.")
    with pytest.warns(UnverifiedCapabilityWarning, match="its reasoning capability is heuristic"):
        message, _ = parser.finalize()
    assert message == {"role": "assistant", "reasoning_content": "Hm.", "content": "Hi."}


def test_an_assigned_template_drops_the_labels(tmp_path: Path) -> None:
    codec = ChatCodec.from_pretrained(corpus_dir(tmp_path, PHI4_REASONING))
    codec.response_template = {"start_anchor": "x", "fields": {"content": {}}}
    assert (codec.response_template_source, codec.response_template_capabilities) == ("assigned", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert codec.parse_response("<think>a</think>", prefix="") == {"content": "<think>a</think>"}


def test_no_template_when_the_content_does_not_verify(tmp_path: Path) -> None:
    directory = make_model_dir(tmp_path / "model", chat_template="{{ messages[0].content }}")
    codec = ChatCodec.from_pretrained(directory)
    assert (codec.response_template, codec.response_template_source) == (None, None)
    assert (codec.response_template_capabilities or {})["content"]["status"] == "unsupported"
    with pytest.raises(ResponseTemplateNotFoundError) as caught:
        codec.parse_response("Hi", prefix="")
    assert str(caught.value).startswith(
        "parse_response: this model has no response template (none in tokenizer_config.json, and no bundled "
        "profile matched its chat template; a response template derived from its chat template does not "
        "verify its content (the round trip fails: ")


def test_a_template_that_runs_out_of_time_is_the_reason_there_is_no_template(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: the derivation waited MAX_RENDER_SECONDS on each of dozens of probe renders of an endless
    loop (over ten minutes); it stops after the plain conversation, and parse_response says why."""
    from chatcodec.chat_templates import limits

    monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 0.2)
    directory = make_model_dir(
        tmp_path / "model", special_tokens={"eos_token": "</s>"},
        chat_template="{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    codec = ChatCodec.from_pretrained(directory)
    assert no_template_reason(codec) == (
        "parse_response: this model has no response template (none in tokenizer_config.json, and no bundled "
        "profile matched its chat template; its chat template could not be analysed (derive: the chat "
        "template runs out of time on the plain conversation: chat template sandbox: the render time exceeds "
        "MAX_RENDER_SECONDS (0.2). if the template is trusted, raise "
        "chatcodec.chat_templates.limits.MAX_RENDER_SECONDS; nothing was derived (the derivation renders "
        "dozens of conversations), line 1 of the chat template)). Pass one (schema= / response_template=), "
        "set codec.response_template, or load a bundled profile: ChatCodec.from_pretrained('qwen3').")


def test_a_special_token_too_long_to_derive_with_is_the_reason_there_is_no_template(tmp_path: Path) -> None:
    """QA: from_pretrained on a directory whose eos_token was 100,000 characters ran the derivation for
    over 100 s (10,000 characters: 4 s); a token over MAX_DERIVE_TOKEN_CHARS (1,000) is not derived with."""
    template, variables = template_and_variables(HY3)
    directory = make_model_dir(tmp_path / "model", chat_template=template,
                               special_tokens={**variables, "eos_token": "x" * 100_000})
    codec = ChatCodec.from_pretrained(directory)  # returns at once: the token is checked before deriving
    assert no_template_reason(codec) == (
        "parse_response: this model has no response template (none in tokenizer_config.json, and no bundled "
        "profile matched its chat template; its special token eos_token is 100,000 characters long, more "
        "than MAX_DERIVE_TOKEN_CHARS (1,000) allows deriving with (real special tokens are a few dozen "
        "characters)). Pass one (schema= / response_template=), set codec.response_template, or load a "
        "bundled profile: ChatCodec.from_pretrained('qwen3').")


def test_a_derivation_past_max_derive_seconds_is_the_reason_there_is_no_template(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a chat template that worked on every render and then raised kept from_pretrained deriving
    for minutes (over a hundred renders, each allowed MAX_RENDER_SECONDS: 1.6 s of work each took
    190 s; 59 s each would take nearly two hours). The renders share MAX_DERIVE_SECONDS."""
    from chatcodec.model import derived

    monkeypatch.setattr(derived, "MAX_DERIVE_SECONDS", 0.2)
    directory = make_model_dir(
        tmp_path / "model", special_tokens={"eos_token": "</s>"},
        chat_template="{% for i in range(100000) %}{% for j in range(2) %}{% endfor %}{% endfor %}"
                      "{{ raise_exception('refused') }}")
    codec = ChatCodec.from_pretrained(directory)
    assert no_template_reason(codec) == (
        "parse_response: this model has no response template (none in tokenizer_config.json, and no bundled "
        "profile matched its chat template; deriving one from its chat template took longer than "
        "MAX_DERIVE_SECONDS (0.2 s of renders); run `chatcodec derive` on it). Pass one (schema= / "
        "response_template=), set codec.response_template, or load a bundled profile: "
        "ChatCodec.from_pretrained('qwen3').")
