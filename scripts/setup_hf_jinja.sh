#!/usr/bin/env bash
# Install @huggingface/jinja (the version the portability research measured) for chatcodec doctor's
# cross-engine:hf-jinja check, into ~/.cache/chatcodec/hf-jinja (or $CHATCODEC_HF_JINJA_PREFIX).
# Needs Node.js and npm; reaches the npm registry once, never at test time. CI runs it before the tests.
set -euo pipefail
prefix="${CHATCODEC_HF_JINJA_PREFIX:-$HOME/.cache/chatcodec/hf-jinja}"
if [ -f "$prefix/node_modules/@huggingface/jinja/package.json" ] \
   && grep -q '"version": "0.5.11"' "$prefix/node_modules/@huggingface/jinja/package.json"; then
    exit 0
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --silent @huggingface/jinja@0.5.11
