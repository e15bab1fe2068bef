"""Decoding: response templates turn generated text into an assistant message.

Modules, in the order data flows through them: ``template`` (JSON spec -> validated, compiled
template), ``delimiters`` (one open/close and what is known about it), ``matcher`` (every
delimiter of a parser state searched together, with partial-match hold-back), ``engine`` (the
streaming state machine, :class:`ResponseParser`), ``message`` (closed regions -> message keys),
``content`` and ``lax_json`` (content parsers; ``extensions`` and ``ext_*`` for the ``x-`` ones),
``transform`` (output-shaping placeholders), ``arguments`` (tool-argument typing), ``limits`` (the
documented limits), ``prefix`` (the prompt a parser continues), ``api`` (``parse_response`` and
``parse_response_batch``).
"""
