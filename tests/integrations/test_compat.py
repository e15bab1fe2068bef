"""Engine releases and conversions the plugins rely on (``chatcodec.integrations.compat``)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from chatcodec.integrations import compat
from chatcodec.integrations.compat import engine_supported, engine_version_problem, example_match, tool_dicts


@pytest.mark.parametrize(
    ("engine", "version", "expected"),
    [
        ("vllm", "0.33.0", None),
        ("vllm", "0.33.2+cpu", None),
        (
            "vllm",
            "0.32.1",
            (
                "error",
                "chatcodec: vllm 0.32.1 is not supported (the plugin needs vllm>=0.33.0,<0.34.0); "
                "the parsers named 'chatcodec' are not registered. Upgrade vllm, or install the "
                "chatcodec release made for it",
            ),
        ),
        (
            "vllm",
            "0.34.0rc1",
            (
                "warning",
                "chatcodec: vllm 0.34.0rc1 is newer than the releases this plugin was tested "
                "with (vllm>=0.33.0,<0.34.0); registering the 'chatcodec' parsers anyway",
            ),
        ),
        ("sglang", "0.5.23", None),
        (
            "sglang",
            "0.5.9",
            (
                "error",
                "chatcodec: sglang 0.5.9 is not supported (the plugin needs sglang>=0.5.23,<0.6.0); "
                "the parsers named 'chatcodec' are not registered. Upgrade sglang, or install the "
                "chatcodec release made for it",
            ),
        ),
    ],
)
def test_engine_versions(engine: str, version: str, expected: tuple[str, str] | None) -> None:
    assert engine_version_problem(engine, version) == expected


def test_a_missing_engine() -> None:
    assert engine_version_problem("vllm") in (("error", "chatcodec: vllm is not installed"), None)


def test_tools_in_every_shape_the_engines_pass() -> None:
    class Model:
        def __init__(self, data: dict[str, object]) -> None:
            self.data = data

        def model_dump(self, exclude_none: bool = False) -> dict[str, object]:
            return self.data

    chat = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    flat = {
        "type": "function",
        "name": "g",
        "description": "G.",
        "parameters": {"type": "object"},
        "strict": True,
    }
    assert tool_dicts([chat, Model(flat), {"type": "web_search"}, "junk"]) == [
        chat,
        {
            "type": "function",
            "function": {"name": "g", "description": "G.", "parameters": {"type": "object"}},
        },
    ]
    assert tool_dicts(None) == []


def test_chat_tool_models_are_read_from_their_attributes() -> None:
    # vLLM's ChatCompletionToolsParam and SGLang's Tool: ``type`` and ``function`` attributes; the
    # fields a parse reads are taken as they are, without dumping the model
    def tool(**function: object) -> SimpleNamespace:
        return SimpleNamespace(type="function", function=SimpleNamespace(**function))

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert tool_dicts([
        tool(name="f", description="F.", parameters=schema, strict=None),
        tool(name="g", description=None, parameters=None),
        SimpleNamespace(type="web_search", function=None),
    ]) == [
        {"type": "function", "function": {"name": "f", "description": "F.", "parameters": schema}},
        {"type": "function", "function": {"name": "g"}},
    ]


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("(?:<think>)+", "<think>"),
        (r"<\|channel\|>\s*analysis\s*<\|message\|>", "<|channel|>analysis<|message|>"),
        (r"(?:<\|channel>)+thought\n?", "<|channel>thought"),
        ("[ab]c|d", "ac"),
        ("(?=Here)", None),
        (r"\w+", None),
    ],
)
def test_a_literal_a_delimiter_pattern_matches(pattern: str, text: str | None) -> None:
    assert example_match(pattern) == text


@pytest.mark.parametrize(("version", "registered", "level", "phrase"), [
    ("0.32.9", False, logging.ERROR, "vllm 0.32.9 is not supported"),
    ("0.34.1", True, logging.WARNING, "vllm 0.34.1 is newer than the releases"),
    ("0.33.2", True, None, None),
])
def test_the_version_gate_logs_at_the_problems_level(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        version: str, registered: bool, level: int | None, phrase: str | None) -> None:
    monkeypatch.setattr(compat.metadata, "version", lambda name: version)
    logger = logging.getLogger("chatcodec.test_gate")
    with caplog.at_level(logging.DEBUG, logger="chatcodec.test_gate"):
        assert engine_supported("vllm", logger) is registered
    assert [(record.levelno, phrase in record.getMessage()) for record in caplog.records] == (
        [] if level is None else [(level, True)])


def test_model_builder_builds_what_the_constructor_builds() -> None:
    from pydantic import BaseModel, ValidationError

    class Function(BaseModel):
        name: str | None = None
        arguments: str | None = None

    class Call(BaseModel):
        index: int
        id: str | None = None
        function: Function | None = None

    class Delta(BaseModel):
        content: str | None = None
        tool_calls: list[Call] = []

    build = compat.model_builder(Delta)
    data = {"content": None, "tool_calls": [{"index": 0, "id": None, "function": {"arguments": '{"a'}}]}
    built = build(data)
    reference = Delta(content=None, tool_calls=[Call(index=0, id=None, function=Function(arguments='{"a'))])
    assert built == reference
    assert built.model_dump(exclude_unset=True) == reference.model_dump(exclude_unset=True) == data
    with pytest.raises(ValidationError):
        build({"tool_calls": [{"id": "x"}]})  # no index: refused as the constructor refuses it
    plain = compat.model_builder(SimpleNamespace)  # not pydantic's: called
    assert plain({"content": "x"}) == SimpleNamespace(content="x")
