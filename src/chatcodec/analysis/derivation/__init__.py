"""Deriving a response template from a chat template (``chatcodec.analysis.derive`` is the entry point)."""
