"""OpenAI's wire formats from parsed output: messages, Chat Completions chunks, Responses events.

Pure Python with no dependency: the ``openai`` SDK is never imported (the tests validate every
dict against its types). The public names, stable for the serving plugins built on them:

* :func:`to_chat_message` (:mod:`.messages`): a parsed message as a Chat Completions assistant
  message (``content``, the reasoning under the key you name, ``tool_calls`` with ids and JSON
  ``arguments``);
* :class:`ChatCompletionStream` (:mod:`.chat`) and :class:`ResponsesStream` (:mod:`.responses`):
  wrap a response parser, ``feed(step) -> list[dict]`` and ``finish(finish_reason=None) ->
  list[dict]``, give ``chat.completion.chunk`` dicts or Responses stream events whose
  accumulation is :func:`to_chat_message` of the parsed message, for any chunking;
* :class:`ToolCallIds` (:mod:`.ids`): ids for calls the model wrote without one, in the form the
  model's chat template accepts (``ToolCallIds.for_profile(codec.profile)``);
* :func:`arguments_text`: the one JSON serialization of a call's arguments.

How the pieces fit, and the rules where a stream cannot match the whole message: ``docs/openai.md``.
"""

from __future__ import annotations

from chatcodec.openai.chat import ChatCompletionStream
from chatcodec.openai.ids import DEFAULT_FORM, ToolCallIds
from chatcodec.openai.messages import arguments_text, to_chat_message
from chatcodec.openai.responses import ResponsesStream

__all__ = [
    "DEFAULT_FORM",
    "ChatCompletionStream",
    "ResponsesStream",
    "ToolCallIds",
    "arguments_text",
    "to_chat_message",
]
