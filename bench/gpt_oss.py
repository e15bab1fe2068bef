"""gpt-oss for the bench: openai-harmony's encoding, a ``tokenizers`` model directory made from the
same vocabulary, and harmony-format outputs.

``openai-harmony`` (the ``bench`` extra) needs the ``o200k_base`` vocabulary, which it downloads on
first use. Offline, point ``TIKTOKEN_ENCODINGS_BASE`` at a directory holding ``o200k_base.tiktoken``;
this module writes one from the ranks the npm package ``js-tiktoken`` ships (the same file, byte
for byte: its SHA-256 is checked)::

    npm pack js-tiktoken && tar xzf js-tiktoken-*.tgz
    python bench/gpt_oss.py package/dist/ranks/o200k_base.cjs /tmp/harmony_vocab
    export TIKTOKEN_ENCODINGS_BASE=/tmp/harmony_vocab

chatcodec reads ids through a ``tokenizer.json``: :func:`gpt_oss_directory` builds a byte-level BPE
one from the same ranks (merges as the ranks imply them, harmony's special tokens added), so both
sides decode the ids harmony's own encoder gives.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from common import ROOT

#: SHA-256 of the o200k_base.tiktoken file OpenAI publishes (openai-harmony checks the same).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: o200k's pre-tokenizer pattern (tiktoken's, as openai-harmony uses it).
O200K_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])


def write_vocabulary(js_ranks: Path, directory: Path) -> Path:
    """Write ``o200k_base.tiktoken`` into ``directory`` from js-tiktoken's ``o200k_base.cjs``.

    js-tiktoken stores the ranks as lines ``"! <first rank> <base64 token> <base64 token> ..."``;
    tiktoken's file has one ``"<base64 token> <rank>"`` line per token. Raises ``SystemExit`` when
    the result is not the published file (its SHA-256 differs)."""
    text = js_ranks.read_text(encoding="utf-8")
    ranks = json.loads(text[text.index("{"): text.rindex("}") + 1])
    pairs: list[tuple[int, str]] = []
    for line in ranks["bpe_ranks"].split("\n"):
        if not line:
            continue
        _, first, *tokens = line.split(" ")
        pairs.extend((int(first) + offset, token) for offset, token in enumerate(tokens))
    pairs.sort()
    data = "".join(f"{token} {rank}\n" for rank, token in pairs).encode("ascii")
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise SystemExit(f"{js_ranks}: the ranks do not give the published o200k_base.tiktoken")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "o200k_base.tiktoken"
    target.write_bytes(data)
    return target


def harmony_encoding() -> Any:
    """openai-harmony's gpt-oss encoding, or ``None`` when the package or its vocabulary is missing."""
    try:
        from openai_harmony import HarmonyEncodingName, load_harmony_encoding
    except ImportError:
        return None
    try:
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    except Exception:  # the vocabulary could not be downloaded or read (see the module docstring)
        return None


def _byte_level(raw: bytes, table: dict[int, str]) -> str:
    return "".join(table[b] for b in raw)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (the byte-level BPE alphabet)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    table, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + extra)
            extra += 1
    return table


def gpt_oss_directory(encoding: Any) -> Path:
    """A model directory for gpt-oss: ``tokenizer.json`` built from the o200k ranks and
    ``encoding``'s special tokens, and the bundled ``gpt_oss`` profile's response template.

    The directory is ``gpt-oss-model`` beside the vocabulary, made once and reused."""
    base = Path(os.environ.get("TIKTOKEN_ENCODINGS_BASE", "")) / "o200k_base.tiktoken"
    if not base.is_file():
        raise SystemExit(f"{base}: set TIKTOKEN_ENCODINGS_BASE (see bench/gpt_oss.py)")
    ranks: dict[bytes, int] = {}
    for line in base.read_bytes().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    table = _bytes_to_unicode()
    vocab = {_byte_level(token, table): rank for token, rank in ranks.items()}
    merges: list[tuple[int, str, str]] = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ranks and right in ranks:
                merges.append((rank, _byte_level(left, table), _byte_level(right, table)))
    merges.sort()
    specials = sorted((encoding.encode(name, allowed_special="all")[0], name)
                      for name in encoding.special_tokens_set)
    tokenizer = {
        "version": "1.0",
        "added_tokens": [{"id": token_id, "content": name, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for token_id, name in specials],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": O200K_PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": True, "vocab": vocab,
                  "merges": [[left, right] for _, left, right in merges]},
    }
    directory = base.parent / "gpt-oss-model"  # kept: building it takes a while
    if (directory / "tokenizer_config.json").is_file():
        return directory
    directory.mkdir(exist_ok=True)
    (directory / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    profile = ROOT / "src" / "chatcodec" / "profiles" / "gpt_oss"
    config = {"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>",
              "response_template": json.loads((profile / "response_template.json").read_text("utf-8"))}
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


REASONING = ("The user wants the weather in Paris for the next three days, so I should call the "
             "weather tool with the city and the number of days, then summarise it. ")
ANSWER = ("Paris will see light rain in the afternoon, so an umbrella is a good idea; temperatures "
          "stay between 12 and 17 degrees. ")


def gpt_oss_output(size: int) -> str:
    """About ``size`` characters as gpt-oss writes them after ``<|start|>assistant``: analysis
    (reasoning), a function call on the commentary channel, then the final answer, repeated."""
    call = ('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
            '{"city": "Paris", "days": 3}<|call|>')
    turn = ("<|channel|>analysis<|message|>" + REASONING * 4 + "<|end|><|start|>assistant" + call
            + "<|start|>assistant<|channel|>final<|message|>" + ANSWER * 8 + "<|end|><|start|>assistant")
    text = turn * max(1, size // len(turn))
    return text.removesuffix("<|end|><|start|>assistant") + "<|return|>"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python bench/gpt_oss.py JS_TIKTOKEN_O200K_BASE_CJS DIRECTORY")
    print(write_vocabulary(Path(sys.argv[1]), Path(sys.argv[2])))
