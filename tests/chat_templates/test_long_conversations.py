"""Real templates render realistic long conversations within the default sandbox limits.

A limit must never refuse a conversation a real template is used for. gemma-4's template scans
the conversation backwards from every message (quadratic work): with the old step limit, 3,200
short messages (about 30,000 tokens) were refused although the reference renders them (in about
15 seconds). The expected text is the reference's rendering of one user/model exchange, repeated.
"""

from __future__ import annotations

from chatcodec.chat_templates import limits
from chatcodec.chat_templates.render import render_chat_template
from tests.conftest import corpus_template

GEMMA4 = "google--gemma-4-31B-it.jinja"


def test_gemma4_renders_3200_short_messages_with_the_default_limits() -> None:
    assert (limits.MAX_TEMPLATE_STEPS, limits.MAX_RENDER_SECONDS) == (1_000_000_000, 60.0)
    exchange = [{"role": "user", "content": "What is i+1?"}, {"role": "assistant", "content": "i+1."}]
    out = render_chat_template(corpus_template(GEMMA4), exchange * 1600, bos_token="<bos>")
    # the reference's text for one exchange (rendered with transformers 5.24), 1,600 times
    assert out == "<bos>" + "<|turn>user\nWhat is i+1?<turn|>\n<|turn>model\ni+1.<turn|>\n" * 1600
