"""``ChatCodec.apply_chat_template``: text, ids, dicts, batches, masks, sanitising, padding.

Prompts are checked against the corpus goldens (rendered by the reference); ids through the
``tokenizers`` library itself (``backend.encode``), never through chatcodec.
"""

from __future__ import annotations

import sys
import types
from datetime import datetime
from typing import Any, ClassVar

import pytest

from chatcodec.chat_templates.inputs import ConversationError
from chatcodec.errors import ChatTemplateNotFoundError, TokenizerUnavailableError
from chatcodec.model.codec import ChatCodec
from chatcodec.model.config import TokenizerConfig
from chatcodec.model.tokenizer import Tokenizer
from tests.conftest import corpus_template, golden_renders, load_json
from tests.model.helpers import QWEN3_TEMPLATE, SMOLLM3_TEMPLATE, chatml_tokenizer, sentencepiece_tokenizer

QWEN3_TOKENS = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
SMOLLM3_TOKENS = {"eos_token": "<|im_end|>", "pad_token": "<|im_end|>"}
CLOCK = datetime(2026, 1, 15, 12, 0, 0)


def golden(template: str, conversation: str, add_generation_prompt: bool, **variant: Any) -> str:
    for line in golden_renders():
        if (line["template"], line["conversation"], line["add_generation_prompt"]) == (
                template, conversation, add_generation_prompt) and all(
                line["kwargs"].get(key) == value for key, value in variant.items()) and (
                variant or set(line["kwargs"]) <= {"eos_token", "pad_token", "bos_token", "unk_token"}):
            return str(line["rendered"])
    raise LookupError((template, conversation, add_generation_prompt, variant))


def messages(name: str) -> list[dict[str, Any]]:
    return list(load_json("conversations.json")[name]["messages"])


def tools_of(name: str) -> list[dict[str, Any]]:
    return list(load_json("conversations.json")[name]["tools"])


@pytest.fixture(scope="module")
def backend() -> Any:
    return chatml_tokenizer()


@pytest.fixture
def qwen3(backend: Any) -> ChatCodec:
    return ChatCodec(corpus_template(QWEN3_TEMPLATE), special_tokens=QWEN3_TOKENS,
                     tokenizer=Tokenizer(backend))


@pytest.fixture
def smollm3(backend: Any) -> ChatCodec:
    return ChatCodec(corpus_template(SMOLLM3_TEMPLATE), special_tokens=SMOLLM3_TOKENS,
                     tokenizer=Tokenizer(backend))


def plain_ids(backend: Any, text: str) -> list[int]:
    return list(backend.encode(text, add_special_tokens=False).ids)


class TestResultShapes:
    def test_text(self, qwen3: ChatCodec) -> None:
        text = qwen3.apply_chat_template(messages("multi_turn"), add_generation_prompt=True, tokenize=False)
        assert text == golden(QWEN3_TEMPLATE, "multi_turn", True)

    def test_default_is_a_dict_of_ids_as_in_the_reference(self, qwen3: ChatCodec, backend: Any) -> None:
        result = qwen3.apply_chat_template(messages("unicode"), add_generation_prompt=True)
        ids = plain_ids(backend, golden(QWEN3_TEMPLATE, "unicode", True))
        assert result == {"input_ids": ids, "attention_mask": [1] * len(ids)}

    def test_ids(self, qwen3: ChatCodec, backend: Any) -> None:
        ids = qwen3.apply_chat_template(messages("multi_turn"), return_dict=False)
        assert ids == plain_ids(backend, golden(QWEN3_TEMPLATE, "multi_turn", False))

    def test_batch(self, qwen3: ChatCodec, backend: Any) -> None:
        batch = [messages("multi_turn"), messages("unicode")]
        texts = qwen3.apply_chat_template(batch, tokenize=False)
        expected = [golden(QWEN3_TEMPLATE, "multi_turn", False), golden(QWEN3_TEMPLATE, "unicode", False)]
        assert texts == expected
        ids = qwen3.apply_chat_template(batch, return_dict=False)
        assert ids == [plain_ids(backend, text) for text in expected]

    def test_batch_of_objects_with_messages(self, qwen3: ChatCodec) -> None:
        batch = [types.SimpleNamespace(messages=messages("multi_turn"))]
        texts = qwen3.apply_chat_template(batch, tokenize=False)
        assert texts == [golden(QWEN3_TEMPLATE, "multi_turn", False)]

    def test_variables_and_special_tokens(self, qwen3: ChatCodec) -> None:
        text = qwen3.apply_chat_template(messages("multi_turn"), add_generation_prompt=True, tokenize=False,
                                         enable_thinking=False)
        assert text == golden(QWEN3_TEMPLATE, "multi_turn", True, enable_thinking=False)
        codec = ChatCodec("{{ eos_token }}|{{ bos_token }}",
                          special_tokens={"eos_token": "E", "bos_token": "B"})
        assert codec.apply_chat_template([{"role": "user"}], tokenize=False) == "E|B"
        assert codec.apply_chat_template([{"role": "user"}], tokenize=False, eos_token="X") == "X|B"

    def test_tools_as_schemas(self, smollm3: ChatCodec) -> None:
        text = smollm3.apply_chat_template(messages("tools_offered"), tools=tools_of("tools_offered"),
                                           add_generation_prompt=True, tokenize=False, now=CLOCK)
        assert text == golden(SMOLLM3_TEMPLATE, "tools_offered", True)


    def test_tools_as_python_functions(self, smollm3: ChatCodec) -> None:
        def get_weather(city: str, unit: str = "celsius"):  # type: ignore[no-untyped-def]  # no "return"
            """Get the current weather for a city.

            Args:
                city: Name of the city, e.g. Lisbon
                unit: Temperature unit (choices: ["celsius", "fahrenheit"])
            """
            return city

        def get_local_time(timezone: str):  # type: ignore[no-untyped-def]
            """Get the current local time in a time zone.

            Args:
                timezone: IANA time zone name, e.g. Asia/Tokyo
            """
            return timezone

        text = smollm3.apply_chat_template(messages("tools_offered"), tools=[get_weather, get_local_time],
                                           add_generation_prompt=True, tokenize=False, now=CLOCK)
        assert text == golden(SMOLLM3_TEMPLATE, "tools_offered", True)

    def test_continue_final_message(self, qwen3: ChatCodec) -> None:
        text = qwen3.apply_chat_template(messages("ends_on_assistant"), continue_final_message=True,
                                         tokenize=False)
        full = golden(QWEN3_TEMPLATE, "ends_on_assistant", False)
        assert full.endswith("the year exhales slow.<|im_end|>\n")
        assert text == full.removesuffix("<|im_end|>\n")


class TestErrors:
    def test_ids_without_a_tokenizer_name_the_fix(self) -> None:
        codec = ChatCodec(corpus_template(QWEN3_TEMPLATE), special_tokens=QWEN3_TOKENS)
        with pytest.raises(TokenizerUnavailableError) as caught:
            codec.apply_chat_template(messages("multi_turn"))
        assert str(caught.value) == (
            "token ids: no tokenizer is available (none was given to ChatCodec). Pass "
            "tokenizer=Tokenizer.from_file('tokenizer.json') (from chatcodec.model.tokenizer), or load a "
            "model directory with ChatCodec.from_pretrained; for the prompt text alone pass tokenize=False.")
        assert codec.apply_chat_template(messages("multi_turn"), tokenize=False) == golden(
            QWEN3_TEMPLATE, "multi_turn", False)

    def test_empty_conversation(self, qwen3: ChatCodec) -> None:
        with pytest.raises(ValueError, match=r"^Cannot apply chat template to an empty conversation"):
            qwen3.apply_chat_template([])

    @pytest.mark.parametrize(("options", "message"), [
        ({"return_assistant_tokens_mask": True, "return_dict": False},
         "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`"),
        ({"return_assistant_tokens_mask": True, "tokenize": False},
         "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`"),
        ({"continue_final_message": True, "add_generation_prompt": True},
         "continue_final_message and add_generation_prompt are not compatible."),
        ({"continue_final_message": True, "return_assistant_tokens_mask": True},
         "continue_final_message is not compatible with return_assistant_tokens_mask."),
        ({"sanitize_control_tokens": True, "tokenize": False},
         "`sanitize_control_tokens=True` requires `tokenize=True`"),
        ({"tokenizer_kwargs": {"truncation_side": "left", "bogus": 1}},
         "tokenizer_kwargs: not supported by chatcodec: ['bogus', 'truncation_side'] (supported: "
         "padding_side, pad_to_multiple_of; set codec.truncation_side for the truncation side)"),
    ])
    def test_incompatible_options(self, qwen3: ChatCodec, options: dict[str, Any], message: str) -> None:
        with pytest.raises(ValueError) as caught:
            qwen3.apply_chat_template(messages("multi_turn"), **options)
        assert str(caught.value).startswith(message)

    @pytest.mark.parametrize(("options", "message"), [
        # was: "argument of type 'int' is not iterable"
        ({"tokenizer_kwargs": 5}, "tokenizer_kwargs: expected a dict of tokenizer options (supported: "
                                  "padding_side, pad_to_multiple_of), got int"),
        # was: "render_chat_template() got multiple values for argument 'messages'", a function not called
        ({"messages": []}, "apply_chat_template: 'messages' is the template variable the conversation "
                           "argument sets; pass the messages as the first argument (transformers: got "
                           "multiple values for keyword argument 'messages')"),
    ])
    def test_arguments_of_the_wrong_kind_name_the_argument(self, qwen3: ChatCodec, options: dict[str, Any],
                                                           message: str) -> None:
        with pytest.raises(TypeError) as caught:
            qwen3.apply_chat_template(messages("multi_turn"), tokenize=False, **options)
        assert str(caught.value) == message

    def test_a_lone_surrogate_in_a_message_when_tokenizing(self, qwen3: ChatCodec) -> None:
        chat = [{"role": "user", "content": "a\ud800"}]
        assert qwen3.apply_chat_template(chat, tokenize=False) == "<|im_start|>user\na\ud800<|im_end|>\n"
        with pytest.raises(ValueError) as caught:  # was: TypeError: TextInputSequence must be str
            qwen3.apply_chat_template(chat)
        assert str(caught.value) == (
            "the text to encode holds a lone surrogate (U+D800 at character 18), which UTF-8 cannot encode, "
            "so no tokenizer can read it (a JSON \\ud800-style escape without its pair?)")

    @pytest.mark.parametrize("chat_template", [5, ["{{ x }}"], {"default": 5}, {3: "x"}])
    def test_a_chat_template_of_the_wrong_type(self, chat_template: Any) -> None:
        with pytest.raises(TypeError) as caught:
            ChatCodec(chat_template)
        assert str(caught.value) == (
            "chat_template: expected the template text, a dict of named templates {name: text} or None, "
            f"got {chat_template!r}")
        codec = ChatCodec("x")
        with pytest.raises(TypeError):
            codec.chat_template = chat_template
        assert codec.chat_template == "x"

    def test_a_chat_template_argument_of_the_wrong_type(self, qwen3: ChatCodec) -> None:
        with pytest.raises(ConversationError) as caught:
            qwen3.apply_chat_template(messages("multi_turn"), chat_template=5)  # type: ignore[arg-type]
        assert str(caught.value) == (
            "chat_template: expected template text or the name of one of the model's templates, got int")
        with pytest.raises(ConversationError):
            qwen3.get_chat_template(["default"])  # type: ignore[arg-type]

    def test_no_chat_template(self) -> None:
        with pytest.raises(ChatTemplateNotFoundError, match="no chat template"):
            ChatCodec().apply_chat_template(messages("multi_turn"), tokenize=False)


class TestTemplateSelection:
    def test_named_templates(self) -> None:
        codec = ChatCodec({"default": "D{{ messages|length }}", "tool_use": "T{{ tools|length }}",
                           "short": "S"})
        chat = messages("multi_turn")
        assert codec.apply_chat_template(chat, tokenize=False) == "D6"
        assert codec.apply_chat_template(chat, tools=tools_of("tools_offered"), tokenize=False) == "T2"
        assert codec.apply_chat_template(chat, chat_template="short", tokenize=False) == "S"
        assert codec.apply_chat_template(chat, chat_template="{{ 'inline' }}", tokenize=False) == "inline"
        assert codec.get_chat_template("short") == "S"
        with pytest.raises(ChatTemplateNotFoundError, match="no template named 'missing'"):
            codec.get_chat_template("missing")

    @pytest.mark.parametrize("templates", ["{{ 'x' }}", {"default": "D", "tool_use": "T"}, "", " \n"])
    @pytest.mark.parametrize("argument", [None, "", "  "])
    def test_an_empty_template_is_an_error(self, templates: Any, argument: str | None) -> None:
        # transformers 5.24 renders an empty chat_template= argument (or stored template) as an empty prompt
        codec = ChatCodec(templates)
        chat = messages("multi_turn")
        if argument is None and templates not in ("", " \n"):
            assert codec.apply_chat_template(chat, chat_template=argument, tokenize=False) in ("x", "D")
            return
        if argument is not None:
            assert codec.get_chat_template(argument) == argument  # template text, as in the reference
        with pytest.raises(ChatTemplateNotFoundError, match=r"^chat template: the template text is empty"):
            codec.apply_chat_template(chat, chat_template=argument, tokenize=False)


class TestAssistantMasks:
    def assistant_text(self, codec: ChatCodec, result: dict[str, Any]) -> str:
        assert codec.tokenizer is not None
        return codec.tokenizer.decode([i for i, m in zip(result["input_ids"], result["assistant_masks"],
                                                         strict=True) if m])

    def test_a_real_template_with_generation_blocks(self, smollm3: ChatCodec) -> None:
        result = smollm3.apply_chat_template(messages("multi_turn"), return_assistant_tokens_mask=True,
                                             now=CLOCK)
        assert self.assistant_text(smollm3, result) == (
            '<|im_start|>assistant\nHow about "Pebble"?<|im_end|>\n'
            '<|im_start|>assistant\nThen try "Sir Fluffington".<|im_end|>\n'
        )
        assert len(result["assistant_masks"]) == len(result["input_ids"])

    def test_split_characters_at_the_edges_of_a_span(self, smollm3: ChatCodec) -> None:
        result = smollm3.apply_chat_template(messages("unicode"), return_assistant_tokens_mask=True,
                                             now=CLOCK)
        assert self.assistant_text(smollm3, result) == (
            "<|im_start|>assistant\n今日は晴れです ☀️😀 — 한국어도 괜찮아요. 👨\u200d👩\u200d👧<|im_end|>\n")

    def test_a_word_boundary_token_sharing_its_character_after_an_added_token(self) -> None:
        """A SentencePiece-style normalizer (``Prepend("▁")``) starts each piece of text after an
        added token with a ``▁`` token that has the offsets of the piece's first character. When a
        span is that one character (here ``\n``), both tokens cover it, and both are marked.

        Recorded on the same tokenizer and template: transformers 5.24 gives the same mask; 5.23
        mapped the span's last character to the first token only (assistant_masks ending
        ``[0, 1, 0]``).
        """
        backend = sentencepiece_tokenizer()
        template = ("{% for m in messages %}<s>{{ m.role }}</s>{% if m.role == 'assistant' %}"
                    "{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}"
                    "{% endfor %}")
        codec = ChatCodec(template, special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
                          tokenizer=Tokenizer(backend))
        chat = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "\n"}]
        result = codec.apply_chat_template(chat, return_assistant_tokens_mask=True)
        assert result["input_ids"][-3:] == [2, 273, 13]
        assert [backend.id_to_token(i) for i in result["input_ids"][-3:]] == ["</s>", "▁", "<0x0A>"]
        assert result["assistant_masks"] == [0] * (len(result["input_ids"]) - 2) + [1, 1]

    def test_every_entry_point_gives_the_same_mask(self, smollm3: ChatCodec) -> None:
        chats = [messages("multi_turn"), messages("unicode")]
        single = [smollm3.apply_chat_template(chat, return_assistant_tokens_mask=True, now=CLOCK)
                  for chat in chats]
        batch = smollm3.apply_chat_template(chats, return_assistant_tokens_mask=True, now=CLOCK)
        assert batch["assistant_masks"] == [result["assistant_masks"] for result in single]
        sanitized = [smollm3.apply_chat_template(chat, return_assistant_tokens_mask=True, now=CLOCK,
                                                 sanitize_control_tokens=True) for chat in chats]
        assert [result["assistant_masks"] for result in sanitized] == batch["assistant_masks"]
        padded = smollm3.apply_chat_template(chats, return_assistant_tokens_mask=True, now=CLOCK,
                                             padding=True)
        lengths = [len(result["input_ids"]) for result in single]
        shorter = lengths.index(min(lengths))
        assert lengths[0] != lengths[1]
        assert padded["assistant_masks"][shorter][:lengths[shorter]] == single[shorter]["assistant_masks"]
        assert set(padded["assistant_masks"][shorter][lengths[shorter]:]) == {0}

    def test_an_empty_span_marks_no_token(self) -> None:
        # an assistant turn with empty content between "Hel" and "lo": one token, "Hello", straddles
        # the empty span. transformers 5.24 (offsets overlapping the span) marks it, recorded on the
        # same tokenizer and template: input_ids [1, 42, 75, 2, 366], assistant_masks [0, 0, 0, 0, 1]
        template = ("{% for m in messages %}{% if m.role == 'assistant' %}Hel{% generation %}{{ m.content }}"
                    "{% endgeneration %}lo{% else %}<|im_start|>{{ m.content }}<|im_end|>{% endif %}"
                    "{% endfor %}")
        codec = ChatCodec(template, tokenizer=Tokenizer(chatml_tokenizer()))
        chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": ""}]
        result = codec.apply_chat_template(chat, return_assistant_tokens_mask=True)
        assert [codec.decode([token]) for token in result["input_ids"]] == ["<|im_start|>", "H", "i",
                                                                             "<|im_end|>", "Hello"]
        assert result["assistant_masks"] == [0, 0, 0, 0, 0]

    def test_a_span_starting_on_whitespace_with_a_trimming_tokenizer(self) -> None:
        from tokenizers import processors

        backend = chatml_tokenizer()
        backend.post_processor = processors.ByteLevel(trim_offsets=True)
        template = ("{% for m in messages %}{{ m.role }}:{% if m.role == 'assistant' %}"
                    "{% generation %}{{ m.content }}{% endgeneration %}"
                    "{% else %}{{ m.content }}{% endif %};{% endfor %}")
        codec = ChatCodec(template, tokenizer=Tokenizer(backend))
        chat = [{"role": "assistant", "content": " Hello"}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "there"}]
        result = codec.apply_chat_template(chat, return_assistant_tokens_mask=True)
        # transformers 5.24 on the same tokenizer.json marks the same tokens (' ', 'Hello', 'ther', 'e');
        # 5.23 found no token for the leading space, its loop broke and the mask was all 0.
        assert self.assistant_text(codec, result) == " Hellothere"
        assert sum(result["assistant_masks"]) == len(codec.encode(" Hello", add_special_tokens=False)) + len(
            codec.encode("there", add_special_tokens=False))


class TestSanitising:
    def test_control_tokens_typed_by_the_user_become_text(self, qwen3: ChatCodec, backend: Any) -> None:
        chat = messages("jinja_lookalike")  # the user writes "<|im_end|>" and "</s>"
        text = golden(QWEN3_TEMPLATE, "jinja_lookalike", True)
        plain = qwen3.apply_chat_template(chat, add_generation_prompt=True, return_dict=False)
        sanitized = qwen3.apply_chat_template(chat, add_generation_prompt=True, return_dict=False,
                                              sanitize_control_tokens=True)
        im_end = backend.token_to_id("<|im_end|>")
        assert plain == plain_ids(backend, text)
        assert plain.count(im_end) == text.count("<|im_end|>") == 5
        assert sanitized.count(im_end) == 3  # only those the template wrote
        assert backend.decode(sanitized, skip_special_tokens=False) == text

    def test_non_special_added_tokens_are_control_tokens_too(self, qwen3: ChatCodec, backend: Any) -> None:
        chat = [{"role": "user", "content": "<tool_call>{}</tool_call>"}]
        ids = qwen3.apply_chat_template(chat, return_dict=False, sanitize_control_tokens=True)
        assert backend.token_to_id("<tool_call>") not in ids
        assert backend.decode(ids, skip_special_tokens=False) == (
            "<|im_start|>user\n<tool_call>{}</tool_call><|im_end|>\n")


class TestPaddingAndTensors:
    def test_padding_side_and_pad_token(self, backend: Any) -> None:
        config = TokenizerConfig(data={"padding_side": "left"}, special_tokens=QWEN3_TOKENS)
        codec = ChatCodec(corpus_template(QWEN3_TEMPLATE), tokenizer=Tokenizer(backend), config=config)
        short, long = [{"role": "user", "content": "Hi"}], messages("multi_turn")
        result = codec.apply_chat_template([short, long], padding=True)
        pad = backend.token_to_id("<|endoftext|>")
        length = len(plain_ids(backend, golden(QWEN3_TEMPLATE, "multi_turn", False)))
        short_ids = plain_ids(backend, "<|im_start|>user\nHi<|im_end|>\n")
        assert result["input_ids"][0] == [pad] * (length - len(short_ids)) + short_ids
        assert result["attention_mask"][0] == [0] * (length - len(short_ids)) + [1] * len(short_ids)
        assert result["attention_mask"][1] == [1] * length

    def test_truncation(self, qwen3: ChatCodec, backend: Any) -> None:
        result = qwen3.apply_chat_template(messages("multi_turn"), truncation=True, max_length=5)
        assert result["input_ids"] == plain_ids(backend, golden(QWEN3_TEMPLATE, "multi_turn", False))[:5]
        assert qwen3.apply_chat_template(messages("multi_turn"), truncation=True, max_length=5,
                                         return_dict=False) == result["input_ids"]

    def test_max_length_zero(self, qwen3: ChatCodec) -> None:
        # transformers 5.24: truncation=True, max_length=0 gives {'input_ids': [], 'attention_mask': []};
        # padding='max_length', max_length=0 pads nothing (the prompt is longer already).
        chat = [{"role": "user", "content": "hi"}]
        assert qwen3.apply_chat_template(chat, truncation=True, max_length=0) == {
            "input_ids": [], "attention_mask": []}
        ids = qwen3.apply_chat_template(chat, return_dict=False)
        assert qwen3.apply_chat_template(chat, padding="max_length", max_length=0, return_dict=False) == ids

    def test_max_length_padding_without_a_length_is_an_error(self, qwen3: ChatCodec) -> None:
        # transformers 5.24 pads nothing, silently, when padding='max_length' has no max_length and
        # the tokenizer no usable model_max_length; chatcodec says what is missing.
        with pytest.raises(ValueError) as caught:
            qwen3.apply_chat_template([{"role": "user", "content": "hi"}], padding="max_length")
        assert str(caught.value) == (
            "padding='max_length': pass max_length= (the model sets no model_max_length)")

    @pytest.mark.parametrize(("kwargs", "prompts", "padded", "source", "total"), [
        ({"padding": "max_length", "max_length": 10**10}, 1, "10,000,000,000", "max_length",
         "10,000,000,000"),
        ({"padding": "max_length", "max_length": 2**25 + 1}, 2, "33,554,433", "max_length", "67,108,866"),
        ({"padding": True, "tokenizer_kwargs": {"pad_to_multiple_of": 10**10}}, 1, "10,000,000,000",
         "the longest prompt rounded up to a multiple of pad_to_multiple_of (10,000,000,000)",
         "10,000,000,000"),
    ])
    def test_padding_past_max_padded_tokens_is_an_error(self, qwen3: ChatCodec, kwargs: dict[str, Any],
                                                        prompts: int, padded: str, source: str,
                                                        total: str) -> None:
        """QA: padding to max_length=10**10 built lists of ten billion ids: a bare MemoryError, or the
        system's out-of-memory killer."""
        chat = [{"role": "user", "content": "hi"}]
        with pytest.raises(ValueError) as caught:
            qwen3.apply_chat_template(chat if prompts == 1 else [chat] * prompts, **kwargs)
        assert str(caught.value) == (
            f"padding: {prompts} prompt(s) padded to {padded} tokens ({source}) would hold {total} token "
            "ids, more than MAX_PADDED_TOKENS (67,108,864, in chatcodec.model.encoding); pass a smaller "
            "max_length or pad_to_multiple_of")

    def test_padding_up_to_max_padded_tokens_is_done(self, qwen3: ChatCodec,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
        from chatcodec.model import encoding

        monkeypatch.setattr(encoding, "MAX_PADDED_TOKENS", 20)
        chat = [{"role": "user", "content": "hi"}]
        ids = qwen3.apply_chat_template(chat, return_dict=False)
        padded = qwen3.apply_chat_template([chat, chat], padding="max_length", max_length=10)
        assert padded["attention_mask"] == [[1] * len(ids) + [0] * (10 - len(ids))] * 2
        with pytest.raises(ValueError, match=r"^padding: 2 prompt\(s\) padded to 11 tokens"):
            qwen3.apply_chat_template([chat, chat], padding="max_length", max_length=11)

    @pytest.mark.parametrize("max_length", [-1, "5", 2.5, True])
    def test_other_max_lengths_are_errors(self, qwen3: ChatCodec, max_length: Any) -> None:
        # The reference raises a bare OverflowError for -1 and TypeError for "5" from inside the
        # tokenizer; a negative length must not silently cut from the end.
        with pytest.raises(ConversationError) as caught:
            qwen3.apply_chat_template([{"role": "user", "content": "hi"}], truncation=True,
                                      max_length=max_length)
        assert str(caught.value) == f"max_length: expected a non-negative integer or None, got {max_length!r}"

    # transformers 5.24 (PreTrainedTokenizerFast without pad_token) raises "Asking to pad but the
    # tokenizer does not have a padding token" whenever a padding strategy is asked for, even when
    # no sequence is shorter than the target; padding=False / "do_not_pad" and tokenize=False do not.
    NO_PAD_TOKEN_RAISES: ClassVar[list[tuple[str, bool, dict[str, Any]]]] = [
        ("batch, padding needed", True, {"padding": True}),
        ("single, padding=True", False, {"padding": True}),
        ("single, longest", False, {"padding": "longest"}),
        ("single, max_length already reached", False, {"padding": "max_length", "max_length": 1}),
        ("max_length=0", False, {"padding": "max_length", "max_length": 0}),
        ("batch truncated to max_length", True,
         {"padding": "max_length", "truncation": True, "max_length": 8}),
        ("return_dict=False", False, {"padding": True, "return_dict": False}),
    ]

    @pytest.mark.parametrize(("batched", "kwargs"), [case[1:] for case in NO_PAD_TOKEN_RAISES],
                             ids=[case[0] for case in NO_PAD_TOKEN_RAISES])
    def test_padding_without_a_pad_token(self, backend: Any, batched: bool, kwargs: dict[str, Any]) -> None:
        codec = ChatCodec(corpus_template(QWEN3_TEMPLATE), special_tokens={}, tokenizer=Tokenizer(backend))
        chat = messages("multi_turn")
        conversation = [[{"role": "user", "content": "a"}], chat] if batched else chat
        with pytest.raises(ValueError) as caught:
            codec.apply_chat_template(conversation, **kwargs)
        assert str(caught.value) == (
            "padding: asked to pad but the model has no pad_token; set one (codec.pad_token = "
            "codec.eos_token, or pad_token in tokenizer_config.json), or pass padding=False")

    @pytest.mark.parametrize("kwargs", [{"padding": False}, {"padding": "do_not_pad"},
                                        {"padding": True, "tokenize": False}])
    def test_no_padding_needs_no_pad_token(self, backend: Any, kwargs: dict[str, Any]) -> None:
        codec = ChatCodec(corpus_template(QWEN3_TEMPLATE), special_tokens={}, tokenizer=Tokenizer(backend))
        text = golden(QWEN3_TEMPLATE, "multi_turn", False)
        expected = text if kwargs.get("tokenize") is False else plain_ids(backend, text)
        assert codec.apply_chat_template(messages("multi_turn"), return_dict=False, **kwargs) == expected

    def test_the_pad_token_is_checked_before_the_multiple(self, backend: Any) -> None:
        # the reference's order: no pad token, then truncation length not a multiple of pad_to_multiple_of
        codec = ChatCodec(corpus_template(QWEN3_TEMPLATE), special_tokens={}, tokenizer=Tokenizer(backend))
        with pytest.raises(ValueError, match=r"^padding: asked to pad"):
            codec.apply_chat_template(messages("multi_turn"), padding=True, truncation=True, max_length=5,
                                      tokenizer_kwargs={"pad_to_multiple_of": 4})

    def test_numpy_tensors(self, qwen3: ChatCodec, monkeypatch: pytest.MonkeyPatch) -> None:
        fake = types.ModuleType("numpy")
        fake.array = lambda value: ("array", value)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "numpy", fake)
        result = qwen3.apply_chat_template([{"role": "user", "content": "Hi"}], return_tensors="np")
        ids = qwen3.apply_chat_template([{"role": "user", "content": "Hi"}], return_dict=False)
        assert result == {"input_ids": ("array", [ids]), "attention_mask": ("array", [[1] * len(ids)])}
        with pytest.raises(ValueError, match="different lengths"):
            qwen3.apply_chat_template([[{"role": "user", "content": "Hi"}], messages("multi_turn")],
                                      return_tensors="np")

    def test_tensors_without_the_library(self, qwen3: ChatCodec, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "torch", None)
        with pytest.raises(ImportError, match=r"^return_tensors='pt' needs torch"):
            qwen3.apply_chat_template([{"role": "user", "content": "Hi"}], return_tensors="pt")


class TestPaddingAndTruncationSides:
    """``padding_side`` / ``truncation_side`` are settable attributes, as on a transformers tokenizer
    (values recorded from transformers 5.23 on /tmp/qa2/Qwen3-tiny, whose padding code 5.24 keeps:
    setting the attribute and ``tokenizer_kwargs={"padding_side": "left"}`` both left-pad)."""

    SHORT: ClassVar[list[dict[str, str]]] = [{"role": "user", "content": "Hi"}]
    LONG: ClassVar[list[dict[str, str]]] = [*SHORT, {"role": "assistant", "content": "Hello there"}]

    def ids(self, backend: Any, text: str) -> list[int]:
        return plain_ids(backend, text)

    def test_defaults_come_from_the_config(self, qwen3: ChatCodec) -> None:
        assert (qwen3.padding_side, qwen3.truncation_side) == ("right", "right")
        config = TokenizerConfig(data={"padding_side": "left", "truncation_side": "left"})
        codec = ChatCodec("x", config=config)
        assert (codec.padding_side, codec.truncation_side) == ("left", "left")

    def test_setting_padding_side_left_pads(self, qwen3: ChatCodec, backend: Any) -> None:
        pad = backend.token_to_id("<|endoftext|>")
        short = self.ids(backend, "<|im_start|>user\nHi<|im_end|>\n")
        width = len(qwen3.apply_chat_template(self.LONG, return_dict=False))
        qwen3.padding_side = "left"
        result = qwen3.apply_chat_template([self.SHORT, self.LONG], padding=True)
        assert result["input_ids"][0] == [pad] * (width - len(short)) + short
        assert result["attention_mask"][0] == [0] * (width - len(short)) + [1] * len(short)
        qwen3.padding_side = "right"
        result = qwen3.apply_chat_template([self.SHORT, self.LONG], padding=True)
        assert result["input_ids"][0] == short + [pad] * (width - len(short))

    def test_setting_truncation_side_left_keeps_the_end(self, qwen3: ChatCodec, backend: Any) -> None:
        whole = self.ids(backend, "<|im_start|>user\nHi<|im_end|>\n")
        qwen3.truncation_side = "left"
        options: dict[str, Any] = {"truncation": True, "max_length": 4, "return_dict": False}
        assert qwen3.apply_chat_template(self.SHORT, **options) == whole[-4:]
        qwen3.truncation_side = "right"
        assert qwen3.apply_chat_template(self.SHORT, **options) == whole[:4]

    @pytest.mark.parametrize("attribute", ["padding_side", "truncation_side"])
    def test_other_values_are_refused(self, qwen3: ChatCodec, attribute: str) -> None:
        with pytest.raises(ValueError) as caught:
            setattr(qwen3, attribute, "middle")
        assert str(caught.value) == f"{attribute}: expected 'right' or 'left', got 'middle'"
        assert getattr(qwen3, attribute) == "right"

    def test_tokenizer_kwargs_padding_side(self, qwen3: ChatCodec, backend: Any) -> None:
        result = qwen3.apply_chat_template([self.SHORT, self.LONG], padding=True,
                                           tokenizer_kwargs={"padding_side": "left"})
        assert result["attention_mask"][0][0] == 0 and result["attention_mask"][0][-1] == 1
        assert qwen3.padding_side == "right"
        with pytest.raises(ValueError) as caught:
            qwen3.apply_chat_template(self.SHORT, tokenizer_kwargs={"padding_side": "middle"})
        assert str(caught.value) == "tokenizer_kwargs: padding_side: expected 'right' or 'left', got 'middle'"

    def test_tokenizer_kwargs_pad_to_multiple_of(self, qwen3: ChatCodec, backend: Any) -> None:
        short = self.ids(backend, "<|im_start|>user\nHi<|im_end|>\n")
        multiple = -(-len(short) // 4) * 4 + 4  # a multiple of 4 longer than the prompt
        result = qwen3.apply_chat_template(self.SHORT, padding=True,
                                           tokenizer_kwargs={"pad_to_multiple_of": multiple})
        assert result["attention_mask"] == [1] * len(short) + [0] * (multiple - len(short))
        # without padding nothing is padded (as in the reference)
        assert qwen3.apply_chat_template(self.SHORT, tokenizer_kwargs={"pad_to_multiple_of": multiple},
                                         return_dict=False) == short
        # padding="max_length" rounds max_length up (reference: max_length=10, multiple 8 -> 16)
        result = qwen3.apply_chat_template(self.SHORT, padding="max_length", max_length=len(short) + 2,
                                           tokenizer_kwargs={"pad_to_multiple_of": len(short) + 1})
        assert len(result["input_ids"]) == 2 * (len(short) + 1)
        with pytest.raises(ValueError) as caught:
            qwen3.apply_chat_template(self.SHORT, padding=True, truncation=True, max_length=4,
                                      tokenizer_kwargs={"pad_to_multiple_of": 8})
        assert str(caught.value) == (
            "Truncation and padding are both activated but truncation length (4) is not a multiple of "
            "pad_to_multiple_of (8).")

    @pytest.mark.parametrize("key", ["padding", "truncation", "max_length", "return_tensors",
                                     "add_special_tokens", "sanitize_control_tokens"])
    def test_tokenizer_kwargs_that_repeat_an_argument(self, qwen3: ChatCodec, key: str) -> None:
        # transformers 5.24: TypeError "... got multiple values for keyword argument 'padding'"
        with pytest.raises(TypeError) as caught:
            qwen3.apply_chat_template(self.SHORT, tokenizer_kwargs={key: True})
        assert str(caught.value) == (
            f"tokenizer_kwargs: {key!r} is an argument apply_chat_template passes itself (transformers: "
            f"got multiple values for keyword argument {key!r})")

    def test_save_pretrained_keeps_the_sides(self, qwen3: ChatCodec, tmp_path: Any) -> None:
        import json

        qwen3.padding_side = "left"
        qwen3.save_pretrained(tmp_path)
        config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert (config["padding_side"], config.get("truncation_side")) == ("left", None)
        assert ChatCodec.from_pretrained(tmp_path).padding_side == "left"
