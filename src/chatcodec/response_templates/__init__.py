"""Decoding: response templates turn generated text into an assistant message.

Modules, in the order data flows through them: ``template`` (JSON spec -> validated, compiled
template), ``delimiters`` (matching opens/closes with partial-match hold-back), ``engine`` (the
streaming state machine, :class:`ResponseParser`), ``content`` (content parsers), ``transform``
(output-shaping placeholders), ``arguments`` (tool-argument typing), ``api`` (``parse_response``
and ``parse_response_batch``).
"""
