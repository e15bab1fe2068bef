"""Registration of the ``chatcodec`` parsers with SGLang (entry point ``sglang.srt.plugins``).

SGLang runs every ``sglang.srt.plugins`` entry point early in each of its processes, before it
parses its command line, and reads the ``--tool-call-parser`` / ``--reasoning-parser`` choices from
its live registries; :func:`register` adds ``chatcodec`` to both::

    python -m sglang.launch_server --model-path MODEL \
        --tool-call-parser chatcodec --reasoning-parser chatcodec

The detectors are in :mod:`chatcodec.integrations.sglang_detectors`. The name is never taken from
another package, registration is idempotent, and an unsupported SGLang release is logged with
nothing registered.
"""

from __future__ import annotations

import logging

from chatcodec.integrations.compat import engine_supported

__all__ = ["NAME", "register"]

logger = logging.getLogger("chatcodec")

#: The name both detectors are registered under.
NAME = "chatcodec"


def register() -> list[str]:
    """Add the ``chatcodec`` tool-call and reasoning detectors to SGLang's registries.

    Returns:
        What was registered: ``"tool"`` and/or ``"reasoning"`` (empty when SGLang is unsupported or
        the names belong to someone else; the reason is logged).
    """
    if not engine_supported("sglang", logger):
        return []
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from chatcodec.integrations.sglang_detectors import ChatcodecReasoningDetector, ChatcodecToolDetector

    done = []
    for kind, table, cls in (
        ("tool", FunctionCallParser.ToolCallParserEnum, ChatcodecToolDetector),
        ("reasoning", ReasoningParser.DetectorMap, ChatcodecReasoningDetector),
    ):
        taken = table.get(NAME)
        if taken is not None and taken is not cls:
            logger.warning(
                "chatcodec: a %s parser named %r is already registered (%s.%s); not replacing it",
                kind,
                NAME,
                taken.__module__,
                taken.__qualname__,
            )
            continue
        table[NAME] = cls
        done.append(kind)
    return done
