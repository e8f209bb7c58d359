#!/usr/bin/env python3
"""Print generated streams line by line with token indices, for labelling them by hand.

    python3 scripts/show_stream.py FILE.jsonl [ID ...]      # no ID: every record

Each record shows its id, prompt, token count and whether it ran to the token limit, then its
text with the index of the token that starts each line ("  37| ..."), so a reader can name the
token where a loop begins. Records without pieces show their text with word indices instead.
"""
import json
import sys


def lines_with_indices(rec):
    pieces = rec.get("pieces")
    if not pieces:
        # Text records: index words, as ../shared/tools/label.py does.
        words = 0
        for line in rec.get("text", "").split("\n"):
            yield words, line
            words += len(line.split())
        return
    line, start = "", 0
    for i, piece in enumerate(pieces):
        for k, ch in enumerate(piece):
            if ch != "\n":
                line += ch
                continue
            yield start, line
            # The next line starts in this piece, or in the next one if the newline ends it.
            line, start = "", i if k + 1 < len(piece) else i + 1
    yield start, line


def show(rec):
    n = len(rec.get("token_ids") or [])
    print(f"=== {rec['id']}  tokens={n}  hit_max_tokens={rec.get('hit_max_tokens')}")
    print(f"prompt: {rec.get('prompt', '')}")
    for start, line in lines_with_indices(rec):
        print(f"{start:5}| {line}")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    wanted = set(sys.argv[2:])
    with open(sys.argv[1], encoding="utf-8") as f:
        for raw in f:
            rec = json.loads(raw)
            if not wanted or rec.get("id") in wanted:
                show(rec)


if __name__ == "__main__":
    main()
