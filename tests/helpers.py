"""Test data shared across areas (decoding, the model object, the command line).

Only inputs live here, written by hand for the tests; expected values stay in the tests that
assert them. Nothing here may be mutated by a test (copy it first, as ``copy.deepcopy``).
"""

from __future__ import annotations

from typing import Any

#: A response template for Qwen3 output (ChatML): reasoning in ``<think>``, Hermes JSON tool calls.
QWEN_RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>"},
    },
}
