"""``ChatCodec`` on model directories built here: loading in every storage format, saving,
parsing text and token ids (whole, batched, streamed).

The directories hold a small byte-level BPE with Qwen3's special tokens, the real Qwen3 chat
template from the corpus and a response template written for these tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcodec.errors import (
    ModelStorageError,
    ResponseTemplateError,
    ResponseTemplateNotFoundError,
    TokenizerUnavailableError,
    UnknownProfileError,
)
from chatcodec.events import join_chunks
from chatcodec.model.codec import ChatCodec
from tests.conftest import ROOT, corpus_template
from tests.helpers import QWEN_RESPONSE_TEMPLATE
from tests.model.helpers import (
    QWEN3_TEMPLATE,
    chatml_tokenizer,
    make_model_dir,
    write_json,
)

QWEN3_TOKENS = {"eos_token": {"__type": "AddedToken", "content": "<|im_end|>", "special": True},
                "pad_token": "<|endoftext|>"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                   "required": ["city"]}}}]
PROMPT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
OUTPUT = ('<think>\nThe user wants the weather. 😀\n</think>\n\nLet me check.\n<tool_call>\n'
          '{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call><|im_end|>')
MESSAGE = {
    "role": "assistant",
    "reasoning_content": "The user wants the weather. 😀",
    "content": "Let me check.",
    "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                      "arguments": {"city": "Paris", "days": 3}}}],
}
LAYOUTS = ["jinja", "config", "processor"]


def qwen3_dir(path: Path, *, layout: str = "jinja", response_template: dict[str, Any] | None = None,
              tokenizer: bool = True, **extra: Any) -> Path:
    return make_model_dir(path, layout=layout, chat_template=corpus_template(QWEN3_TEMPLATE),
                          response_template=response_template, special_tokens=QWEN3_TOKENS,
                          tokenizer=chatml_tokenizer() if tokenizer else None, **extra)


@pytest.fixture
def codec(tmp_path: Path) -> ChatCodec:
    return ChatCodec.from_pretrained(qwen3_dir(tmp_path / "qwen", response_template=QWEN_RESPONSE_TEMPLATE))


@pytest.fixture(scope="module")
def shared_codec(tmp_path_factory: pytest.TempPathFactory) -> ChatCodec:
    """A codec the test only reads (Hypothesis tests cannot use function-scoped fixtures)."""
    directory = tmp_path_factory.mktemp("qwen")
    return ChatCodec.from_pretrained(qwen3_dir(directory, response_template=QWEN_RESPONSE_TEMPLATE))


def profile_data(name: str, file: str) -> Any:
    return json.loads((ROOT / "src" / "chatcodec" / "profiles" / name / file).read_text(encoding="utf-8"))


class TestLoading:
    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_every_storage_format(self, tmp_path: Path, layout: str) -> None:
        codec = ChatCodec.from_pretrained(qwen3_dir(tmp_path, layout=layout,
                                                    response_template=QWEN_RESPONSE_TEMPLATE))
        assert codec.chat_template == corpus_template(QWEN3_TEMPLATE)
        assert codec.special_tokens_map == {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
        assert (codec.eos_token, codec.pad_token, codec.bos_token) == ("<|im_end|>", "<|endoftext|>", None)
        assert codec.response_template == QWEN_RESPONSE_TEMPLATE
        assert codec.response_template_source == "tokenizer_config.json"
        assert codec.tokenizer is not None
        assert codec.name_or_path == str(tmp_path)

    @pytest.mark.parametrize("layout", ["jinja", "config"])
    def test_named_templates(self, tmp_path: Path, layout: str) -> None:
        templates = {"default": "D{{ messages|length }}", "tool_use": "T{{ tools|length }}"}
        codec = ChatCodec.from_pretrained(make_model_dir(tmp_path, layout=layout, chat_template=templates))
        assert codec.chat_template == templates
        chat = [{"role": "user", "content": "x"}]
        assert codec.apply_chat_template(chat, tools=TOOLS, tokenize=False) == "T1"
        assert codec.apply_chat_template(chat, tokenize=False) == "D1"

    def test_a_detected_profile_supplies_the_missing_response_template(self, tmp_path: Path) -> None:
        codec = ChatCodec.from_pretrained(qwen3_dir(tmp_path))
        assert codec.response_template_source == "profile:qwen3"
        assert codec.profile == "qwen3"
        assert codec.response_template == profile_data("qwen3", "response_template.json")

    def test_the_source_follows_the_response_template(self, codec: ChatCodec) -> None:
        assert ChatCodec(response_template=QWEN_RESPONSE_TEMPLATE).response_template_source == "argument"
        codec.response_template = {"start_anchor": "x", "fields": {"content": {}}}
        assert codec.response_template_source == "assigned"
        codec.response_template = None
        assert codec.response_template_source is None

    def test_no_response_template_and_no_profile(self, tmp_path: Path) -> None:
        codec = ChatCodec.from_pretrained(make_model_dir(tmp_path, chat_template="{{ messages[0].content }}"))
        assert (codec.response_template, codec.response_template_source, codec.profile) == (None, None, None)
        with pytest.raises(ResponseTemplateNotFoundError) as caught:
            codec.parse_response("Hi", prefix="")
        assert str(caught.value).startswith("parse_response: this model has no response template")
        assert isinstance(caught.value, AttributeError)
        with pytest.raises(ResponseTemplateNotFoundError, match=r"^get_response_parser: "):
            codec.get_response_parser(prefix="")

    def test_an_invalid_stored_response_template_names_the_file(self, tmp_path: Path) -> None:
        broken = {"start_anchor": "x", "fields": {"a": {"join": ","}}}
        directory = qwen3_dir(tmp_path, response_template=broken)
        with pytest.raises(ResponseTemplateError) as caught:
            ChatCodec.from_pretrained(directory)
        assert str(caught.value).startswith(f"{directory / 'tokenizer_config.json'}: response_template: ")

    def test_without_the_tokenizers_package(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        directory = qwen3_dir(tmp_path, response_template=QWEN_RESPONSE_TEMPLATE)
        monkeypatch.setitem(sys.modules, "tokenizers", None)
        codec = ChatCodec.from_pretrained(directory)
        assert codec.tokenizer is None
        chat = [{"role": "user", "content": "Weather in Paris?"}]
        assert codec.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) == PROMPT
        assert codec.parse_response(OUTPUT, prefix=PROMPT, tools=TOOLS) == MESSAGE
        with pytest.raises(TokenizerUnavailableError) as caught:
            codec.apply_chat_template(chat)
        assert "(the tokenizers package is not installed)" in str(caught.value)
        with pytest.raises(TokenizerUnavailableError):
            codec.parse_response([1, 2, 3], prefix="")
        with pytest.raises(TokenizerUnavailableError):
            codec.get_response_parser(prefix="").feed([1, 2])

    def test_without_tokenizer_json(self, tmp_path: Path) -> None:
        codec = ChatCodec.from_pretrained(qwen3_dir(tmp_path, tokenizer=False))
        with pytest.raises(TokenizerUnavailableError) as caught:
            codec.encode("hi")
        assert f"({tmp_path / 'tokenizer.json'} does not exist)" in str(caught.value)

    def test_a_directory_without_chat_template(self, tmp_path: Path) -> None:
        codec = ChatCodec.from_pretrained(make_model_dir(tmp_path, tokenizer=chatml_tokenizer()))
        assert codec.chat_template is None
        assert codec.decode(codec.encode("<|im_start|>x")) == "<|im_start|>x"

    def test_a_bundled_profile_by_name(self) -> None:
        codec = ChatCodec.from_pretrained("qwen3")
        assert codec.response_template_source == "profile:qwen3"
        assert codec.chat_template == (ROOT / "src/chatcodec/profiles/qwen3/chat_template.jinja").read_text(
            encoding="utf-8")
        assert codec.special_tokens_map == profile_data("qwen3", "profile.json")["special_tokens"]
        chat = [{"role": "user", "content": "Weather in Paris?"}]
        assert codec.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) == PROMPT
        with pytest.raises(TokenizerUnavailableError) as caught:
            codec.apply_chat_template(chat)
        assert str(caught.value) == (
            "token ids: no tokenizer is available (the bundled profile 'qwen3' has no tokenizer). Load a "
            "model directory that has a tokenizer.json; for the prompt text alone pass tokenize=False.")

    def test_neither_a_directory_nor_a_profile(self) -> None:
        with pytest.raises(UnknownProfileError) as caught:
            ChatCodec.from_pretrained("Qwen3-0.6B")
        assert str(caught.value) == (
            "from_pretrained: 'Qwen3-0.6B' is neither a model directory nor a bundled profile, nor a Hub "
            "model id ('org/name'; `chatcodec profiles` lists the bundled profiles). Did you mean 'qwen3'?")
        assert "qwen3" in caught.value.available

    def test_conflicting_processor_files(self, tmp_path: Path) -> None:
        directory = qwen3_dir(tmp_path, layout="processor")
        (directory / "chat_template.jinja").write_text("x", encoding="utf-8")
        with pytest.raises(ModelStorageError, match="conflicting files"):
            ChatCodec.from_pretrained(directory)


class TestSaving:
    def test_in_place_migrates_and_keeps_other_keys(self, tmp_path: Path) -> None:
        directory = qwen3_dir(tmp_path, layout="config", extra_config={"model_max_length": 32768, "zz": [1]})
        tokenizer_bytes = (directory / "tokenizer.json").read_bytes()
        codec = ChatCodec.from_pretrained(directory)
        with pytest.warns(UserWarning, match="uses chatcodec extensions, so it needs chatcodec"):
            written = codec.save_pretrained(directory)
        assert str(directory / "chat_template.jinja") in written
        config = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert config == {"tokenizer_class": "PreTrainedTokenizerFast", **QWEN3_TOKENS,
                          "model_max_length": 32768, "zz": [1],
                          "response_template": profile_data("qwen3", "response_template.json")}
        saved = (directory / "chat_template.jinja").read_text(encoding="utf-8")
        assert saved == corpus_template(QWEN3_TEMPLATE)
        assert (directory / "tokenizer.json").read_bytes() == tokenizer_bytes
        again = ChatCodec.from_pretrained(directory)
        assert again.response_template_source == "tokenizer_config.json"

    def test_elsewhere_gives_an_equivalent_directory(self, tmp_path: Path, codec: ChatCodec) -> None:
        write_json(Path(codec.name_or_path) / "generation_config.json", {"eos_token_id": [2, 0]})
        codec = ChatCodec.from_pretrained(codec.name_or_path)
        written = codec.save_pretrained(tmp_path / "copy")
        assert sorted(Path(path).name for path in written) == [
            "chat_template.jinja", "generation_config.json", "tokenizer.json", "tokenizer_config.json"]
        copy = ChatCodec.from_pretrained(tmp_path / "copy")
        assert (copy.chat_template, copy.special_tokens_map, copy.response_template) == (
            codec.chat_template, codec.special_tokens_map, codec.response_template)
        assert copy.eos_token_ids == [2, 0]
        assert copy.encode(OUTPUT) == codec.encode(OUTPUT)

    def test_named_templates_and_a_profile(self, tmp_path: Path) -> None:
        codec = ChatCodec.from_pretrained("qwen3")
        codec.chat_template = {"default": "D", "tool_use": "T"}
        with pytest.warns(UserWarning, match="uses chatcodec extensions, so it needs chatcodec"):
            codec.save_pretrained(tmp_path)
        assert (tmp_path / "additional_chat_templates" / "tool_use.jinja").read_text(encoding="utf-8") == "T"
        copy = ChatCodec.from_pretrained(tmp_path)
        assert copy.chat_template == {"default": "D", "tool_use": "T"}
        assert copy.special_tokens_map == codec.special_tokens_map
        assert (copy.response_template, copy.response_template_source) == (
            codec.response_template, "tokenizer_config.json")

    def test_no_response_template_removes_the_key(self, tmp_path: Path, codec: ChatCodec) -> None:
        codec.response_template = None
        codec.save_pretrained(codec.name_or_path)
        config = json.loads((Path(codec.name_or_path) / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert "response_template" not in config

    def test_a_template_name_escaping_the_folder(self, tmp_path: Path) -> None:
        codec = ChatCodec({"default": "D", "../evil": "E"})
        with pytest.raises(ModelStorageError):
            codec.save_pretrained(tmp_path / "out")
        assert not (tmp_path / "evil.jinja").exists()


class TestEncodeDecode:
    def test_round_trip_and_batches(self, codec: ChatCodec) -> None:
        ids = codec.encode(OUTPUT)
        assert codec.decode(ids) == OUTPUT
        assert codec.decode([ids, ids[:3]]) == [OUTPUT, codec.decode(ids[:3])]
        assert codec.decode(ids, skip_special_tokens=True) == OUTPUT.removesuffix("<|im_end|>")

    def test_no_clean_up_of_tokenization_spaces(self, tmp_path: Path) -> None:
        directory = qwen3_dir(tmp_path, extra_config={"clean_up_tokenization_spaces": True})
        codec = ChatCodec.from_pretrained(directory)
        assert codec.decode(codec.encode("a , b . c ' d")) == "a , b . c ' d"


class TestParseResponse:
    def test_text_and_ids(self, codec: ChatCodec) -> None:
        assert codec.parse_response(OUTPUT, prefix=PROMPT, tools=TOOLS) == MESSAGE
        assert codec.parse_response(codec.encode(OUTPUT), prefix=codec.encode(PROMPT), tools=TOOLS) == MESSAGE

    def test_batches_and_prefixes(self, codec: ChatCodec) -> None:
        short = "Hello!<|im_end|><|endoftext|><|endoftext|>"
        hello = {"role": "assistant", "content": "Hello!"}
        assert codec.parse_response([OUTPUT, short], prefix=PROMPT, tools=TOOLS) == [MESSAGE, hello]
        ids = [codec.encode(OUTPUT), codec.encode(short)]
        assert codec.parse_response(ids, prefix=[PROMPT, PROMPT], tools=TOOLS) == [MESSAGE, hello]
        assert codec.parse_response(ids, prefix=[codec.encode(PROMPT)] * 2, tools=TOOLS) == [MESSAGE, hello]
        assert codec.parse_response([], prefix=PROMPT) == []
        with pytest.raises(ValueError) as caught:
            codec.parse_response(ids, prefix=[PROMPT] * 3)
        assert str(caught.value) == (
            "Got 2 response(s) but 3 prefix(es); `prefix` must be a single sequence (broadcast to every "
            "response), or one prefix per response.")

    def test_two_dimensional_arrays(self, codec: ChatCodec) -> None:
        class Array:
            def __init__(self, rows: Any) -> None:
                self.rows = rows

            def tolist(self) -> Any:
                return self.rows

        pad = codec.encode("<|endoftext|>")
        rows = [codec.encode(OUTPUT), codec.encode("Hi<|im_end|>")]
        width = max(map(len, rows))
        padded = Array([row + pad * (width - len(row)) for row in rows])
        expected = [MESSAGE, {"role": "assistant", "content": "Hi"}]
        assert codec.parse_response(padded, prefix=Array(codec.encode(PROMPT)), tools=TOOLS) == expected
        assert codec.parse_response(padded, prefix=Array([codec.encode(PROMPT)] * 2), tools=TOOLS) == expected
        with pytest.raises(ValueError, match="Got 2 response"):  # a 2-D prefix is one prefix per item
            codec.parse_response(padded, prefix=Array([codec.encode(PROMPT)]))

    def test_left_padded_prefix_ids(self, codec: ChatCodec) -> None:
        pad = codec.encode("<|endoftext|>")
        assert codec.parse_response(codec.encode(OUTPUT), prefix=pad * 3 + codec.encode(PROMPT),
                                    tools=TOOLS) == MESSAGE

    def test_schema_replaces_the_model_template(self, codec: ChatCodec) -> None:
        schema = {"start_anchor": "<|im_start|>assistant\n", "fields": {"content": {}}}
        assert codec.parse_response("Hi<|im_end|>", schema, prefix=PROMPT) == {"content": "Hi"}

    def test_prefix_is_required(self, codec: ChatCodec) -> None:
        with pytest.raises(ValueError, match=r"requires `prefix`"):
            codec.parse_response(OUTPUT)
        with pytest.raises(ValueError, match=r"requires `prefix`"):
            codec.get_response_parser()
        assert codec.parse_response("Hi", prefix=[]) == {"role": "assistant", "content": "Hi"}

    def test_errors_keep(self, codec: ChatCodec) -> None:
        message = codec.parse_response(codec.encode("<tool_call>{bad</tool_call>"), prefix="", errors="keep")
        assert message["parse_errors"][0]["text"] == "{bad"
        parser = codec.get_response_parser(prefix="", errors="keep")
        parser.feed(codec.encode("<tool_call>{bad</tool_call>"))
        assert parser.finalize()[0]["parse_errors"][0]["field"] == "tool_calls"

    def test_the_template_is_compiled_once_until_it_changes(
        self, codec: ChatCodec, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from chatcodec.response_templates import template as module

        compiled: list[object] = []
        load = module.load_response_template

        def counting(spec: Any) -> Any:
            if isinstance(spec, dict):
                compiled.append(spec)
            return load(spec)

        monkeypatch.setattr(module, "load_response_template", counting)
        assert codec.parse_response("Hi<|im_end|>", prefix="") == {"role": "assistant", "content": "Hi"}
        codec.get_response_parser(prefix="")
        assert len(compiled) == 1
        assert codec.response_template is not None
        codec.response_template["fields"]["content"]["close"] = "<END>"
        assert codec.parse_response("Hi<END>", prefix="") == {"role": "assistant", "content": "Hi"}
        assert len(compiled) == 2

    def test_the_end_of_sequence_text_ends_generation(self, codec: ChatCodec) -> None:
        schema = {"start_anchor": "<|im_start|>assistant\n", "fields": {"content": {}}}
        assert codec.parse_response("Hi<|im_end|>\nignored", schema, prefix="") == {"content": "Hi"}


class TestStreaming:
    def stream(self, codec: ChatCodec, steps: list[Any], prefix: Any = PROMPT) -> tuple[dict[str, Any],
                                                                                       list[dict[str, Any]]]:
        parser = codec.get_response_parser(prefix=prefix, tools=TOOLS)
        events = list(parser.initial_events)
        for step in steps:
            events += parser.feed(step)
        message, final = parser.finalize()
        return message, events + final

    def test_one_id_at_a_time(self, codec: ChatCodec) -> None:
        ids = codec.encode(OUTPUT)
        message, events = self.stream(codec, ids, prefix=codec.encode(PROMPT))
        assert message == MESSAGE
        assert join_chunks(events)["reasoning_content"] == "\nThe user wants the weather. 😀\n"
        assert not any("\ufffd" in event.get("text", "") for event in events)

    def test_text_steps_give_the_same_events(self, codec: ChatCodec) -> None:
        by_id = self.stream(codec, codec.encode(OUTPUT))
        by_char = self.stream(codec, list(OUTPUT))
        assert by_id[0] == by_char[0] == MESSAGE
        assert join_chunks(by_id[1]) == join_chunks(by_char[1])

    def test_ids_after_the_end_of_sequence_are_not_output(self, codec: ChatCodec) -> None:
        ids = codec.encode(OUTPUT + "<|endoftext|>more text")
        parser = codec.get_response_parser(prefix=PROMPT, tools=TOOLS)
        for token_id in ids:
            parser.feed(token_id)
        assert parser.ended
        assert parser.finalize()[0] == MESSAGE

    def test_a_batch_prefix_is_refused(self, codec: ChatCodec) -> None:
        with pytest.raises(ValueError, match="single sequence"):
            codec.get_response_parser(prefix=[codec.encode(PROMPT)] * 2)

    def test_a_region_opened_by_the_prompt(self, codec: ChatCodec) -> None:
        ids = codec.encode("hmm</think>ok<|im_end|>")
        message, events = self.stream(codec, ids, prefix=PROMPT + "<think>")
        assert message == {"role": "assistant", "reasoning_content": "hmm", "content": "ok"}
        assert events[0] == {"type": "region_open", "field": "reasoning_content"}

    @settings(max_examples=25)
    @given(st.data())
    def test_any_grouping_of_ids_gives_the_message(self, shared_codec: ChatCodec,
                                                   data: st.DataObject) -> None:
        codec = shared_codec
        ids = codec.encode(OUTPUT)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=8)))
        steps = [ids[a:b] for a, b in zip([0, *cuts], [*cuts, len(ids)], strict=True)]
        assert self.stream(codec, steps)[0] == MESSAGE


class TestRoundTrip:
    def test_render_then_parse_the_assistant_turn(self, codec: ChatCodec) -> None:
        """The Qwen3 template renders an assistant turn; its tokens parse back to the message."""
        chat = [{"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": "Let me check — ünïcødé ✓.", "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather",
                                                      "arguments": {"city": "Paris", "days": 3}}}]}]
        prompt = codec.apply_chat_template(chat[:1], add_generation_prompt=True, tokenize=False)
        full = codec.apply_chat_template(chat, tokenize=False)
        assert full.startswith(prompt)
        ids = codec.apply_chat_template(chat, return_dict=False)
        prompt_ids = codec.apply_chat_template(chat[:1], add_generation_prompt=True, return_dict=False)
        assert ids[: len(prompt_ids)] == prompt_ids
        message = codec.parse_response(ids[len(prompt_ids):], prefix=prompt_ids, tools=TOOLS)
        assert message == {"role": "assistant", **chat[1]}


def test_parsing_with_a_profile_imports_neither_jinja2_nor_tokenizers() -> None:
    code = (
        "import sys, chatcodec\n"
        "codec = chatcodec.ChatCodec.from_pretrained('qwen3')\n"
        "codec.parse_response('<think>x</think>Hi<|im_end|>', prefix='<|im_start|>assistant\\n')\n"
        "parser = codec.get_response_parser(prefix='')\n"
        "parser.feed('Hi')\n"
        "parser.finalize()\n"
        "print(sorted(m for m in ('jinja2', 'tokenizers', 'rich') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"
