#!/usr/bin/env bash
# Build the environment the engine suite (tests_engines/) runs in: vLLM 0.33.0 and SGLang 0.5.23 on
# the CPU, without CUDA packages or model weights, with this checkout installed editable (so its
# entry points are registered) and the test tools.
#
#   bash scripts/engines_env.sh                 # builds .engines-venv (about 8 minutes, 3.5 GB)
#   .engines-venv/bin/python -m pytest tests_engines
#
# Why not `pip install vllm`: on a machine without a GPU it would pull the CUDA build of torch and a
# dozen CUDA libraries that the engines' parser and serving classes never use. Instead every package
# is pinned in scripts/engines-requirements.txt and installed with --no-deps (no resolver run), and
# torch is the CPU build (torch==2.13.0+cpu, from the wheel directory pip is configured with, or the
# registry). pip reports that vllm and sglang "require" packages that are not installed (CUDA kernels,
# other torch pins): that is expected, and the import check below is what counts.
#
# Environment: ENGINES_VENV (default .engines-venv in the checkout); ENGINES_REBUILD=1 rebuilds.
# An environment built from the same requirements file is reused: only the checkout is reinstalled.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${ENGINES_VENV:-$ROOT/.engines-venv}"
REQUIREMENTS="$ROOT/scripts/engines-requirements.txt"
STAMP="$VENV/.requirements.sha256"
WANT="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
# pip's configuration on some machines names index folders that do not exist: one warning per package
pip_() { "$VENV/bin/pip" "$@" 2> >(grep -v "^WARNING: Location '" >&2); }
CHECK='import vllm.parser.parser_manager, sglang.srt.function_call.function_call_parser, sglang.srt.parser.reasoning_parser'

if [ "${ENGINES_REBUILD:-0}" = 1 ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ] \
        || ! "$VENV/bin/python" -c "$CHECK" >/dev/null 2>&1; then
    echo "engines_env: building $VENV" >&2
    start=$SECONDS
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    pip_ install -q --no-deps -r "$REQUIREMENTS"
    pip_ install -q "pytest==9.2.0" "hypothesis==6.170.17"
    echo "$WANT" > "$STAMP"
    echo "engines_env: built in $((SECONDS - start)) s" >&2
fi
# the checkout, editable: entry points are read from the installed metadata, so this runs every time
pip_ install -q --no-deps -e "$ROOT"
"$VENV/bin/python" -c "$CHECK
from importlib.metadata import version
print('engines_env: vllm', version('vllm'), 'sglang', version('sglang'), 'chatcodec', version('chatcodec'))"
