#!/usr/bin/env python3
"""Reference outputs from Hugging Face transformers, the independent truth every
orc backend is compared against. Runs on the GPU host (torch, transformers,
numpy there); the computation itself runs on the CPU in float32 so that no
TF32 or reduced-precision kernel blurs the reference.

Two modes:

  hf       --hf-dir DIR --out FILE.json [--name NAME]
           Loads an `orcc synth --hf-dir` export (AutoModelForCausalLM,
           float32, eager attention), feeds a fixed 16-token prompt, then 8
           greedy decode steps with the KV cache. Writes the prompt ids, the 9
           greedy tokens and, per step, the logits (all of them when the
           vocabulary is small, else the top 64, a fixed probe of 512 ids, and
           the log-sum-exp of the whole row).

  stories  --gguf stories260k-f32.gguf --out FILE.json [--prompt TEXT] [--n 40]
           Converts the GGUF llama (Meta layout, as llama2.c exported it) to a
           Hugging Face LlamaForCausalLM, tokenizes the prompt with the GGUF's
           own SentencePiece vocabulary (BOS first, leading-space rule), and
           decodes greedily.

The golden format is described in testdata/reference/README.md.
"""
import argparse
import hashlib
import heapq
import json
import math
import struct
import sys

import numpy as np
import torch

PREFILL = 16
DECODE = 8
FULL_LOGITS_MAX_VOCAB = 4096  # above this a golden keeps top-k + probes
TOP_K = 64
PROBES = 512


def prompt_ids(vocab):
    """The fixed prompt: 16 ids spread over the vocabulary (a prime stride)."""
    return [(17 + 7919 * i) % vocab for i in range(PREFILL)]


def round_list(xs):
    # float32 has ~7 significant digits; 8 keep the golden exact to f32.
    return [float("%.8g" % x) for x in xs]


def step_record(logits, vocab):
    """The golden's view of one logits row (float64 numpy array)."""
    rec = {
        "argmax": int(np.argmax(logits)),
        "logsumexp": float("%.8g" % float(np.logaddexp.reduce(logits))),
    }
    if vocab <= FULL_LOGITS_MAX_VOCAB:
        rec["logits"] = round_list(logits)
        return rec
    top = np.argsort(-logits, kind="stable")[:TOP_K]
    rec["top_ids"] = [int(i) for i in top]
    rec["top_logits"] = round_list(logits[top])
    rec["probe_logits"] = round_list(logits[probe_ids(vocab)])
    return rec


def probe_ids(vocab):
    return [(i * vocab) // PROBES for i in range(PROBES)]


@torch.no_grad()
def greedy(model, ids, steps):
    """Prefill ids, then steps greedy decode steps through the KV cache.
    Returns the logits rows (prefill's last row first) and the greedy ids."""
    out = model(input_ids=torch.tensor([ids]), use_cache=True)
    rows, toks = [], []
    for s in range(steps + 1):
        row = out.logits[0, -1].double().numpy()
        tok = int(np.argmax(row))
        rows.append(row)
        toks.append(tok)
        if s == steps:
            break
        out = model(input_ids=torch.tensor([[tok]]), past_key_values=out.past_key_values, use_cache=True)
    return rows, toks


def cmd_hf(a):
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.from_pretrained(a.hf_dir)
    model = AutoModelForCausalLM.from_pretrained(
        a.hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    vocab = cfg.vocab_size
    ids = prompt_ids(vocab)
    rows, toks = greedy(model, ids, DECODE)
    golden = {
        "name": a.name or cfg.model_type,
        "model_type": cfg.model_type,
        "vocab": vocab,
        "prompt": ids,
        "greedy": toks,
        "steps": [step_record(r, vocab) for r in rows],
    }
    if vocab > FULL_LOGITS_MAX_VOCAB:
        golden["probe_ids"] = probe_ids(vocab)
    write(a.out, golden)
    print(f"{golden['name']}: prompt {ids} greedy {toks}")


# --- GGUF (enough of it for an all-F32/F16 llama) ---------------------------

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


class GGUF:
    def __init__(self, path):
        self.b = open(path, "rb").read()
        self.o = 0
        if self.b[:4] != b"GGUF":
            sys.exit(f"{path}: not a GGUF file")
        self.o = 4
        self.version = self.u("<I")
        n_t, n_kv = self.count(), self.count()
        self.kv = {}
        for _ in range(n_kv):
            k = self.str()
            self.kv[k] = self.value(self.u("<I"))
        self.tensors = {}
        for _ in range(n_t):
            name = self.str()
            dims = [self.count() for _ in range(self.u("<I"))]
            typ, off = self.u("<I"), self.u("<Q")
            self.tensors[name] = (dims, typ, off)
        align = self.kv.get("general.alignment", 32)
        self.data = (self.o + align - 1) // align * align

    def u(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.o)[0]
        self.o += struct.calcsize(fmt)
        return v

    def count(self):  # u32 in v1, u64 later
        return self.u("<I" if self.version == 1 else "<Q")

    def str(self):
        n = self.count()
        s = self.b[self.o:self.o + n].decode("utf-8")
        self.o += n
        return s

    def value(self, t):
        if t == 8:
            return self.str()
        if t == 9:
            et, n = self.u("<I"), self.count()
            return [self.value(et) for _ in range(n)]
        return self.u(GGUF_SCALARS[t])

    def tensor(self, name):
        """The tensor as a row-major numpy array (GGUF dims reversed)."""
        dims, typ, off = self.tensors[name]
        dt = {0: np.float32, 1: np.float16}.get(typ)
        if dt is None:
            sys.exit(f"{name}: ggml type {typ} is not F32/F16; this script reads only those")
        n = int(np.prod(dims))
        a = np.frombuffer(self.b, dtype=dt, count=n, offset=self.data + off)
        return a.astype(np.float32).reshape(list(reversed(dims)))


def spm_encode(g, text):
    """llama.cpp's SentencePiece BPE (llm_tokenizer_spm): BOS, a leading
    space, spaces as U+2581, then repeatedly merge the adjacent pair whose
    merged piece has the highest score (leftmost on ties); unknown pieces fall
    back to <0xNN> bytes."""
    tokens = g.kv["tokenizer.ggml.tokens"]
    scores = g.kv["tokenizer.ggml.scores"]
    index = {t: i for i, t in enumerate(tokens)}
    text = "\u2581" + text.replace(" ", "\u2581")
    syms = list(text)  # one symbol per code point
    alive = [True] * len(syms)
    nxt = list(range(1, len(syms) + 1))
    prv = list(range(-1, len(syms) - 1))
    heap = []

    def push(i, j):
        if i < 0 or j >= len(syms):
            return
        tok = index.get(syms[i] + syms[j])
        if tok is not None:
            heapq.heappush(heap, (-scores[tok], i, syms[i] + syms[j]))

    for i in range(len(syms) - 1):
        push(i, i + 1)
    while heap:
        _, i, merged = heapq.heappop(heap)
        j = nxt[i] if i < len(syms) else None
        if not alive[i] or j is None or j >= len(syms) or not alive[j] or syms[i] + syms[j] != merged:
            continue
        syms[i] = merged
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] < len(syms):
            prv[nxt[j]] = i
        push(prv[i], i)
        push(i, nxt[i])
    ids = [g.kv["tokenizer.ggml.bos_token_id"]]
    for i, s in enumerate(syms):
        if not alive[i]:
            continue
        if s in index:
            ids.append(index[s])
        else:
            ids.extend(index["<0x%02X>" % b] for b in s.encode("utf-8"))
    return ids


def spm_decode(g, ids):
    tokens = g.kv["tokenizer.ggml.tokens"]
    out = bytearray()
    for i in ids:
        t = tokens[i]
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            out.append(int(t[3:5], 16))
        else:
            out += t.replace("\u2581", " ").encode("utf-8")
    return out.decode("utf-8", errors="replace")


def meta_to_hf(w, heads):
    """llama2.c/Meta q,k rows pair adjacent dims (RoPE "normal"); Hugging
    Face's rotate_half pairs i with i+d/2. Regroup each head's rows:
    [heads, d/2, 2, in] -> [heads, 2, d/2, in]."""
    out, inp = w.shape
    return w.reshape(heads, out // heads // 2, 2, inp).transpose(0, 2, 1, 3).reshape(out, inp)


def cmd_stories(a):
    from transformers import LlamaConfig, LlamaForCausalLM

    g = GGUF(a.gguf)
    kv = g.kv
    if kv.get("general.architecture") != "llama":
        sys.exit(f"{a.gguf}: not a llama GGUF")
    n_layer = kv["llama.block_count"]
    n_head = kv["llama.attention.head_count"]
    n_kv = kv.get("llama.attention.head_count_kv", n_head)
    emb = g.tensor("token_embd.weight")  # [vocab, n_embd]
    cfg = LlamaConfig(
        vocab_size=emb.shape[0], hidden_size=kv["llama.embedding_length"],
        intermediate_size=kv["llama.feed_forward_length"], num_hidden_layers=n_layer,
        num_attention_heads=n_head, num_key_value_heads=n_kv,
        max_position_embeddings=kv["llama.context_length"],
        rms_norm_eps=kv["llama.attention.layer_norm_rms_epsilon"],
        tie_word_embeddings="output.weight" not in g.tensors,
        bos_token_id=kv["tokenizer.ggml.bos_token_id"], eos_token_id=kv["tokenizer.ggml.eos_token_id"],
        attn_implementation="eager")
    if "llama.rope.freq_base" in kv:
        sys.exit("this GGUF sets llama.rope.freq_base; pass it to the config before relying on the golden")
    sd = {"model.embed_tokens.weight": emb, "model.norm.weight": g.tensor("output_norm.weight")}
    if "output.weight" in g.tensors:
        sd["lm_head.weight"] = g.tensor("output.weight")
    names = {"attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
             "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
             "attn_v": "self_attn.v_proj"}
    for i in range(n_layer):
        p, q = f"blk.{i}.", f"model.layers.{i}."
        sd[q + "self_attn.q_proj.weight"] = meta_to_hf(g.tensor(p + "attn_q.weight"), n_head)
        sd[q + "self_attn.k_proj.weight"] = meta_to_hf(g.tensor(p + "attn_k.weight"), n_kv)
        for src, dst in names.items():
            sd[q + dst + ".weight"] = g.tensor(p + src + ".weight")
    model = LlamaForCausalLM(cfg).float().eval()
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in sd.items()}, strict=False)
    missing = [m for m in missing if not (cfg.tie_word_embeddings and m == "lm_head.weight")]
    if missing or unexpected:
        sys.exit(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    if cfg.tie_word_embeddings:
        model.tie_weights()
    ids = spm_encode(g, a.prompt)
    _, toks = greedy(model, ids, a.n - 1)
    # transformers' own generate loop must agree with ours.
    # (generate stops at EOS, so compare its length.)
    gen = model.generate(torch.tensor([ids]), max_new_tokens=a.n, do_sample=False)[0, len(ids):].tolist()
    if toks[:len(gen)] != gen:
        sys.exit(f"generate() gives {gen}, the cached loop {toks}")
    eos = kv["tokenizer.ggml.eos_token_id"]
    golden = {
        "name": kv.get("general.name", "stories"),
        "gguf_sha256": hashlib.sha256(g.b).hexdigest(),
        "prompt": a.prompt,
        "prompt_ids": ids,
        "ids": toks,
        "eos_at": toks.index(eos) if eos in toks else -1,
        "text": spm_decode(g, toks),
    }
    write(a.out, golden)
    print(f"prompt {ids}\nids {toks}\ntext {a.prompt!r} + {golden['text']!r}")


def write(path, golden):
    with open(path, "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")


def main():
    torch.set_grad_enabled(False)
    torch.set_num_threads(8)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hf", help="golden logits of an orcc synth --hf-dir export")
    h.add_argument("--hf-dir", required=True)
    h.add_argument("--out", required=True)
    h.add_argument("--name")
    s = sub.add_parser("stories", help="greedy ids of a llama GGUF converted to transformers")
    s.add_argument("--gguf", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--prompt", default="Once upon a time")
    s.add_argument("--n", type=int, default=40)
    a = ap.parse_args()
    {"hf": cmd_hf, "stories": cmd_stories}[a.cmd](a)


if __name__ == "__main__":
    main()
