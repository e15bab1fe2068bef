"""Template analysis, never on the per-token path: ``lint`` reports the constructs of chat
templates and response-template regexes that other engines (minijinja, llama.cpp's Jinja, RE2,
JavaScript regexes) do not support; ``chatcodec lint`` is its command line. ``probes`` and
``round_trip`` render assistant turns with a chat template and parse them back with a response
template, per capability (``chatcodec doctor`` and ``chatcodec derive`` build on them)."""
