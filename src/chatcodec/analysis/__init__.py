"""Template analysis, never on the per-token path: ``lint`` reports the constructs of chat
templates and response-template regexes that other engines (minijinja, llama.cpp's Jinja, RE2,
JavaScript regexes) do not support; ``chatcodec lint`` is its command line."""
