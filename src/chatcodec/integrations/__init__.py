"""chatcodec inside serving engines: tool-call and reasoning parsers named ``chatcodec``.

* :mod:`.vllm` / :mod:`.vllm_parsers`: vLLM (entry point ``vllm.general_plugins``);
* :mod:`.sglang` / :mod:`.sglang_detectors` / :mod:`.sglang_handoff`: SGLang (entry point
  ``sglang.srt.plugins``);
* :mod:`.discovery`: which response template a served model is parsed with;
* :mod:`.session`: one request's parse (deltas in, OpenAI delta fields and raw text out);
* :mod:`.bookkeeping`: the engines' records of what a tool parser streamed;
* :mod:`.compat`: supported engine releases and conversions of engine values.

Nothing here is imported by ``import chatcodec``; only the ``*_parsers`` / ``*_detectors`` modules
import an engine.
"""
