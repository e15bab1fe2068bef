"""Registration of the ``chatcodec`` parsers with vLLM (entry point ``vllm.general_plugins``).

vLLM runs every ``vllm.general_plugins`` entry point while it builds its command line and again in
each of its processes, so :func:`register` is cheap and idempotent: it only records *where* the two
parser classes live (``register_lazy_module``); they are imported when a server selects them::

    vllm serve MODEL --enable-auto-tool-choice --tool-call-parser chatcodec --reasoning-parser chatcodec

The parsers themselves are in :mod:`chatcodec.integrations.vllm_parsers`. The name ``chatcodec`` is
never taken from another package: when it is already registered to something else, registration
is skipped with a warning. An unsupported vLLM release is logged and nothing is registered (a
plugin must never stop vLLM from starting for a user who does not select it).
"""

from __future__ import annotations

import logging

from chatcodec.integrations.compat import engine_supported

__all__ = ["NAME", "register"]

logger = logging.getLogger("chatcodec")

#: The name both parsers are registered under.
NAME = "chatcodec"
_MODULE = "chatcodec.integrations.vllm_parsers"
_TOOL_CLASS = "ChatcodecToolParser"
_REASONING_CLASS = "ChatcodecReasoningParser"


def register() -> list[str]:
    """Register the ``chatcodec`` tool and reasoning parsers with vLLM's parser managers.

    Returns:
        What was registered: ``"tool"`` and/or ``"reasoning"`` (empty when vLLM is unsupported or
        the names belong to someone else; the reason is logged).
    """
    if not engine_supported("vllm", logger):
        return []
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    done = []
    for kind, manager, eager, lazy, cls in (
        (
            "tool",
            ToolParserManager,
            ToolParserManager.tool_parsers,
            ToolParserManager.lazy_parsers,
            _TOOL_CLASS,
        ),
        (
            "reasoning",
            ReasoningParserManager,
            ReasoningParserManager.reasoning_parsers,
            ReasoningParserManager.lazy_parsers,
            _REASONING_CLASS,
        ),
    ):
        mine = (_MODULE, cls)
        taken = eager.get(NAME)
        where = taken.__module__ if taken is not None and taken.__module__ != _MODULE else None
        if lazy.get(NAME, mine) != mine:
            where = lazy[NAME][0]
        if where is not None:
            logger.warning(
                "chatcodec: a %s parser named %r is already registered (%s); not replacing it",
                kind,
                NAME,
                where,
            )
            continue
        manager.register_lazy_module(NAME, _MODULE, cls)
        done.append(kind)
    return done
