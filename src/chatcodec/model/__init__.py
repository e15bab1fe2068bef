"""A model directory on disk (or a bundled profile): chat templates, special tokens, response
template and optional tokenizer, joined in :class:`chatcodec.model.codec.ChatCodec`."""
