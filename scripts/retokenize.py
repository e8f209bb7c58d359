#!/usr/bin/env python3
"""Tokenize the records of a corpus again, with another model's tokenizer.

    scripts/retokenize.py MODEL.gguf IN.jsonl OUT.jsonl

Each record's exact text (its "pieces_hex" joined, or its "text") is cut into that model's
tokens; the record keeps its id and other fields and gets the new "token_ids", "pieces" and
"pieces_hex". Used to judge a per-model profile on human code and text as that model's
tokenizer cuts it (scripts/profile_eval.sh). Only the vocabulary is loaded: seconds, not a
model's weights.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from code_corpus import Pieces  # noqa: E402  (exact piece bytes, shared)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().split("\n\n")[1])
    model, src, dst = sys.argv[1:]
    import llama_cpp

    llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    pieces = Pieces(llm)
    n_records = n_tokens = 0
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        for line in f:
            rec = json.loads(line)
            if "pieces_hex" in rec:
                raw = b"".join(bytes.fromhex(h) for h in rec["pieces_hex"])
            else:
                raw = rec.get("text", "").encode()
            ids = llm.tokenize(raw, add_bos=False, special=False)
            ps = [pieces(t) for t in ids]
            rec.update(
                token_ids=ids,
                pieces=[p.decode("utf-8", errors="replace") for p in ps],
                pieces_hex=[p.hex() for p in ps],
            )
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n_records += 1
            n_tokens += len(ids)
    print(f"{dst}: {n_records} records, {n_tokens} tokens ({os.path.basename(model)})")


if __name__ == "__main__":
    main()
