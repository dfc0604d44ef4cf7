#!/usr/bin/env python3
"""Reference ids and speed of Hugging Face `tokenizers` for orc's tokenizer tests.

Runs on the GPU host (python3 with tokenizers; no network):
  hf_tokenize.py golden TOKENIZER_JSON CORPUS_JSON OUT_JSON
      encodes every corpus string with add_special_tokens=False and writes
      {"tokenizer": ..., "ids": [[...]...], "decoded": [...]} for
      tokenizer/hf_test.go (decoded = decode(ids, skip_special_tokens=False)).
  hf_tokenize.py bench TOKENIZER_JSON TEXT_FILE [RUNS]
      encodes the whole text on one thread RUNS times and prints MB/s of the
      first (cold cache) and the best run, the way BenchmarkEncode measures ours.
"""
import json
import os
import sys
import time

# One thread: the benchmark compares single-threaded encoders.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import tokenizers  # noqa: E402


def golden(tok_path, corpus_path, out_path):
    tok = tokenizers.Tokenizer.from_file(tok_path)
    corpus = json.load(open(corpus_path, encoding="utf-8"))
    ids = [tok.encode(s, add_special_tokens=False).ids for s in corpus]
    decoded = [tok.decode(x, skip_special_tokens=False) for x in ids]
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"tokenizer": os.path.basename(os.path.dirname(tok_path)) or tok_path,
                   "tokenizers_version": tokenizers.__version__,
                   "ids": ids, "decoded": decoded}, f, ensure_ascii=False)
        f.write("\n")
    print(f"golden {tok_path}: {len(corpus)} strings, {sum(map(len, ids))} ids -> {out_path}")


def bench(tok_path, text_path, runs=5):
    text = open(text_path, encoding="utf-8").read()
    mb = len(text.encode("utf-8")) / 1e6
    tok = tokenizers.Tokenizer.from_file(tok_path)
    times, n = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = len(tok.encode(text, add_special_tokens=False).ids)
        times.append(time.perf_counter() - t0)
    print(f"bench {tok_path}: {mb:.3f} MB -> {n} ids; cold {mb / times[0]:.2f} MB/s, best {mb / min(times):.2f} MB/s "
          f"(tokenizers {tokenizers.__version__}, 1 thread)")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "golden":
        golden(*sys.argv[2:5])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "bench":
        bench(sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:]))
    else:
        sys.exit(__doc__)
