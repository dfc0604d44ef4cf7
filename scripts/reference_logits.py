#!/usr/bin/env python3
"""Reference outputs from Hugging Face transformers, the independent truth every
orc backend is compared against. Runs on the GPU host (torch, transformers,
numpy there); the computation itself runs on the CPU in float32 so that no
TF32 or reduced-precision kernel blurs the reference.

Three modes:

  gguf     --gguf FILE.gguf --out FILE.json [--name NAME]
           Converts an F32/F16 GGUF of llama (Llama 3's rope_freqs too),
           qwen2, phi3, gpt2, gpt-oss, qwen3, qwen3moe, gemma3 or smollm3
           (e.g. `orcc synth --quant f32`) to the transformers model of its
           architecture (float32, eager attention), feeds a fixed 16-token
           prompt, then 8 greedy decode steps with the KV cache. Writes the
           prompt ids, the 9 greedy tokens and, per step, the logits (all of
           them when the vocabulary is small, else the top 64, a fixed probe
           of 512 ids, and the log-sum-exp of the whole row).

  hf       --hf-dir DIR --out FILE.json [--name NAME] [--steps 8] [--gguf FILE]
           The same golden from an `orcc synth --hf-dir` export, loaded with
           AutoModelForCausalLM (full-size presets too: 64 steps for the
           acceptance's greedy agreement); --gguf records the exported
           file's sha256 (the q4_k_m goldens the CPU tests compare with).

  compare  A.json B.json [--tol 1e-4]
           Two goldens of one model agree: same greedy ids, logits within tol
           (checks an --hf-dir export against the gguf-mode golden).

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
import inspect
import json
import math
import os
import struct
import sys

import numpy as np
import torch

GEMMA3_LOCAL_BASE = 10000.0  # llama.cpp's rope_freq_base_train_swa, HF's rope_local_base_freq
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


def emit_golden(model, vocab, name, out, extra, steps=DECODE):
    ids = prompt_ids(vocab)
    rows, toks = greedy(model, ids, steps)
    golden = {"name": name, "model_type": model.config.model_type, "vocab": vocab, "prompt": ids, "greedy": toks}
    golden.update(extra)
    golden["steps"] = [step_record(r, vocab) for r in rows]
    if vocab > FULL_LOGITS_MAX_VOCAB:
        golden["probe_ids"] = probe_ids(vocab)
    write(out, golden)
    print(f"{name}: prompt {ids} greedy {toks}")


def cmd_hf(a):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        a.hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    rp = json.load(open(os.path.join(a.hf_dir, "config.json"))).get("rope_parameters")
    c = model.config
    rot = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    base = lambda theta: 1.0 / theta ** (np.arange(0, rot, 2) / rot)
    if rp and "full_attention" in rp:  # Gemma 3: RoPE per layer type
        wants = {t: base(r["rope_theta"]) / r.get("factor", 1.0) for t, r in rp.items()}
        check_inv_freqs(model, wants)
    elif rp and rp["rope_type"] == "llama3":
        want = llama3_inv_freq(rot, rp["rope_theta"], rp["factor"], rp["low_freq_factor"], rp["high_freq_factor"],
                               rp["original_max_position_embeddings"])
        check_inv_freqs(model, {"llama3": want})
    elif rp:
        yarn = (rp["factor"], rp["original_max_position_embeddings"]) if rp["rope_type"] == "yarn" else None
        check_rope(model, rot, rp["rope_theta"], yarn)
    extra = {"gguf_sha256": hashlib.sha256(open(a.gguf, "rb").read()).hexdigest()} if a.gguf else {}
    emit_golden(model, model.config.vocab_size, a.name or model.config.model_type, a.out, extra, a.steps)


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


def rope_kwargs(cls, theta, scaling=None):
    """RoPE settings for a config class: transformers 5 takes
    rope_parameters, older releases rope_theta and rope_scaling."""
    if "rope_parameters" in inspect.signature(cls.__init__).parameters:
        rp = {"rope_type": "default", "rope_theta": theta}
        rp.update(scaling or {})
        return {"rope_parameters": rp}
    kw = {"rope_theta": theta}
    if scaling:
        kw["rope_scaling"] = scaling
    return kw


def check_rope(model, rot, theta, yarn=None):
    """Exits unless model's rotary frequencies are base theta's over rot
    dims, or, with yarn = (factor, original context), YaRN's as gpt-oss
    configures it: truncate=false, the ramp's ends not rounded to whole dims
    (ggml rounds them), as orc's devices apply it."""
    inv = model.model.rotary_emb.inv_freq.double().cpu().numpy()
    plain = 1.0 / theta ** (np.arange(0, rot, 2) / rot)
    if len(inv) != rot // 2:
        sys.exit(f"rotary inv_freq has {len(inv)} entries, want {rot // 2}")
    if yarn is None:
        if not np.allclose(inv, plain, rtol=1e-5):
            sys.exit(f"rotary inv_freq {inv[:4]}... is not base {theta}'s {plain[:4]}...")
        return
    factor, orig = yarn
    corr = lambda rotations: rot * math.log(orig / (rotations * 2 * math.pi)) / (2 * math.log(theta))
    low, high = max(corr(32.0), 0), min(corr(1.0), rot - 1)
    ramp = np.clip((np.arange(rot // 2) - low) / (high - low), 0, 1)
    want = plain / factor * ramp + plain * (1 - ramp)
    scale = model.model.rotary_emb.attention_scaling
    if not (np.allclose(inv, want, rtol=1e-5) and np.isclose(scale, 0.1 * math.log(factor) + 1)):
        sys.exit(f"YaRN not applied as configured (ramp {low:.3f}..{high:.3f}, unrounded): inv_freq {inv}, "
                 f"want {want}; attention scaling {scale}")


def inv_freq_buffers(model):
    """Every rotary inv_freq buffer of the model, by name (Gemma 3 keeps one
    per layer type; how they are named changed across releases)."""
    return {n: b.double().cpu().numpy() for n, b in model.named_buffers() if n.endswith("inv_freq")}


def check_inv_freqs(model, wants):
    """Exits unless every rotary inv_freq buffer equals one of the wanted
    frequency vectors (name -> array) and every wanted vector is present."""
    got = inv_freq_buffers(model)
    seen = set()
    for n, inv in got.items():
        match = [w for w, want in wants.items() if len(want) == len(inv) and np.allclose(inv, want, rtol=1e-5)]
        if not match:
            sys.exit(f"rotary buffer {n} {inv[:4]}... matches none of {', '.join(wants)}")
        seen.update(match)
    if seen != set(wants):
        sys.exit(f"rotary frequencies {sorted(set(wants) - seen)} not found among buffers {sorted(got)}")


def llama3_inv_freq(rot, theta, factor, low, high, orig):
    """transformers' _compute_llama3_parameters."""
    inv = 1.0 / theta ** (np.arange(0, rot, 2) / rot)
    wavelen = 2 * math.pi / inv
    smooth = (orig / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv / factor + smooth * inv
    out = np.where(wavelen > orig / low, inv / factor, inv)
    mid = (wavelen >= orig / high) & (wavelen <= orig / low)
    return np.where(mid, smoothed, out)


class Converter:
    """Builds a transformers model from an F32/F16 GGUF of one of orc's
    architectures, copying every tensor to its Hugging Face name."""

    def __init__(self, g):
        self.g, self.kv = g, g.kv
        self.arch = self.kv["general.architecture"]
        self.sd = {}

    def k(self, key, default=None):
        v = self.kv.get(f"{self.arch}.{key}", default)
        if v is None:
            sys.exit(f"GGUF lacks {self.arch}.{key}")
        return v

    def put(self, hf, gguf_name, fn=None):
        t = self.g.tensor(gguf_name)
        self.sd[hf] = fn(t) if fn else t

    def build(self):
        a = self.arch
        self.n_layer, self.n_embd = self.k("block_count"), self.k("embedding_length")
        self.n_head = self.k("attention.head_count")
        self.n_kv = self.k("attention.head_count_kv", self.n_head)
        self.head_dim = self.k("attention.key_length", self.n_embd // self.n_head)
        self.vocab = self.g.tensors["token_embd.weight"][0][1]
        self.tied = "output.weight" not in self.g.tensors
        self.experts = None  # a fill may lay out experts once it sees the model's parameters
        from transformers import Gemma3ForCausalLM, Gemma3TextConfig, GPT2Config, GPT2LMHeadModel, GptOssConfig, \
            GptOssForCausalLM, LlamaConfig, LlamaForCausalLM, Phi3Config, Phi3ForCausalLM, Qwen2Config, Qwen2ForCausalLM, \
            Qwen3Config, Qwen3ForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM, SmolLM3Config, SmolLM3ForCausalLM
        build = {"llama": (LlamaConfig, LlamaForCausalLM, self.llama), "qwen2": (Qwen2Config, Qwen2ForCausalLM, self.qwen2),
                 "phi3": (Phi3Config, Phi3ForCausalLM, self.phi3), "gpt2": (GPT2Config, GPT2LMHeadModel, self.gpt2),
                 "gpt-oss": (GptOssConfig, GptOssForCausalLM, self.gpt_oss),
                 "qwen3": (Qwen3Config, Qwen3ForCausalLM, self.qwen3),
                 "qwen3moe": (Qwen3MoeConfig, Qwen3MoeForCausalLM, self.qwen3moe),
                 "gemma3": (Gemma3TextConfig, Gemma3ForCausalLM, self.gemma3),
                 "smollm3": (SmolLM3Config, SmolLM3ForCausalLM, self.smollm3)}
        if a not in build:
            sys.exit(f"architecture {a} is not one of {sorted(build)}")
        cfg_cls, model_cls, fill = build[a]
        cfg = cfg_cls(**fill(cfg_cls))
        cfg._attn_implementation = "eager"
        model = model_cls(cfg).float().eval()
        params = dict(model.named_parameters())
        if self.experts is not None:
            self.experts(params)
        missing = [n for n in params if n not in self.sd and not (self.tied and n == "lm_head.weight")]
        unexpected = [n for n in self.sd if n not in params and n not in model.state_dict()]
        if missing or unexpected:
            sys.exit(f"{a}: state dict mismatch: missing {missing}, unexpected {unexpected}")
        for n, t in self.sd.items():
            if tuple(params[n].shape) != t.shape:
                sys.exit(f"{a}: {n} is {t.shape} here, {tuple(params[n].shape)} in transformers")
        model.load_state_dict({n: torch.from_numpy(np.ascontiguousarray(t)) for n, t in self.sd.items()}, strict=False)
        if self.tied:
            model.tie_weights()
            if model.lm_head.weight.data_ptr() != model.get_input_embeddings().weight.data_ptr():
                sys.exit(f"{a}: lm_head is not tied to the embeddings")
        self.check_rope(model)
        return model

    def check_rope(self, model):
        """The config API changed across transformers releases; check that
        the model really got the GGUF's RoPE base, dims and scaling."""
        if self.arch == "gpt2":
            return
        rot, theta = self.k("rope.dimension_count", self.head_dim), float(self.k("rope.freq_base", 10000.0))
        plain = 1.0 / theta ** (np.arange(0, rot, 2) / rot)
        if self.arch == "gemma3":
            wants = {"local": 1.0 / GEMMA3_LOCAL_BASE ** (np.arange(0, rot, 2) / rot), "global": plain / self.linear}
            return check_inv_freqs(model, wants)
        if self.arch == "smollm3":
            got = [int(layer.self_attn.use_rope) for layer in model.model.layers]
            if got != self.rope_layers:
                sys.exit(f"smollm3: transformers rotates layers {got}, llama.cpp {self.rope_layers}")
        if "rope_freqs.weight" in self.g.tensors:
            divisors = self.g.tensor("rope_freqs.weight")
            if not np.allclose(llama3_inv_freq(rot, theta, *self.llama3), plain / divisors, rtol=1e-5):
                sys.exit(f"rope_freqs {divisors} is not the llama3 rule of factor/low/high/original {self.llama3}")
            return check_inv_freqs(model, {"llama3": plain / divisors})
        yarn = None
        if self.arch == "gpt-oss":
            yarn = (self.k("rope.scaling.factor"), self.k("rope.scaling.original_context_length"))
        check_rope(model, self.k("rope.dimension_count", self.head_dim), self.k("rope.freq_base", 10000.0), yarn)

    def common(self, cls, **kw):
        kw.update(vocab_size=self.vocab, num_hidden_layers=self.n_layer, hidden_size=self.n_embd,
                  num_attention_heads=self.n_head, num_key_value_heads=self.n_kv,
                  max_position_embeddings=self.k("context_length"), tie_word_embeddings=self.tied)
        kw.update(rope_kwargs(cls, float(self.k("rope.freq_base", 10000.0)), kw.pop("scaling", None)))
        return kw

    def decoder(self, names, qk=lambda w, heads: w):
        """Llama-style layers: model.layers.N.<hf> from blk.N.<gguf>."""
        self.put("model.embed_tokens.weight", "token_embd.weight")
        self.put("model.norm.weight", "output_norm.weight")
        if not self.tied:
            self.put("lm_head.weight", "output.weight")
        for i in range(self.n_layer):
            for src, dst in names.items():
                if f"blk.{i}.{src}" in self.g.tensors:
                    fn = None
                    if src == "attn_q.weight":
                        fn = lambda w: qk(w, self.n_head)
                    elif src == "attn_k.weight":
                        fn = lambda w: qk(w, self.n_kv)
                    self.put(f"model.layers.{i}.{dst}", f"blk.{i}.{src}", fn)

    LLAMA = {"attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
             "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
             "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
             "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
             "attn_v.bias": "self_attn.v_proj.bias",
             "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
             "ffn_down.weight": "mlp.down_proj.weight"}

    def llama(self, cls):
        # llama.cpp permuted q/k rows for adjacent-pair RoPE; transformers
        # rotates halves.
        self.decoder(self.LLAMA, qk=meta_to_hf)
        scaling = None
        if "rope_freqs.weight" in self.g.tensors:
            # Llama 3: the GGUF holds the llama3 rule's divisors, not its
            # parameters. Its factor is the largest divisor; low 1, high 4 and
            # the original context 8192 are every Llama 3.1-3.3's, and
            # check_rope exits unless they give the file's divisors.
            factor = float(self.g.tensor("rope_freqs.weight").max())
            self.llama3 = (factor, 1.0, 4.0, 8192)
            scaling = {"rope_type": "llama3", "factor": factor, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192}
        return self.common(cls, intermediate_size=self.k("feed_forward_length"), head_dim=self.head_dim,
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"),
                           attention_bias="blk.0.attn_q.bias" in self.g.tensors, scaling=scaling)

    def smollm3(self, cls):
        # llama's tensors (q/k permuted by llama.cpp); every fourth layer
        # without RoPE: llama.cpp's use_rope = (il + 1) % 4 != 0 (no GGUF
        # key says so), transformers' no_rope_layers.
        self.decoder(self.LLAMA, qk=meta_to_hf)
        self.rope_layers = [int((i + 1) % 4 != 0) for i in range(self.n_layer)]
        return self.common(cls, intermediate_size=self.k("feed_forward_length"),
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"),
                           attention_bias="blk.0.attn_q.bias" in self.g.tensors, mlp_bias=False,
                           no_rope_layers=self.rope_layers, no_rope_layer_interval=4, use_sliding_window=False)

    QWEN3 = dict(LLAMA, **{"attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight"})

    def qwen3(self, cls):
        self.decoder(self.QWEN3)
        return self.common(cls, intermediate_size=self.k("feed_forward_length"), head_dim=self.head_dim,
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"), attention_bias=False,
                           use_sliding_window=False)

    def qwen3moe(self, cls):
        names = {k: v for k, v in self.QWEN3.items() if not k.startswith("ffn_") or k == "ffn_norm.weight"}
        names["ffn_gate_inp.weight"] = "mlp.gate.weight"
        self.decoder(names)
        self.experts = self.qwen3moe_experts
        return self.common(cls, intermediate_size=self.k("feed_forward_length"), head_dim=self.head_dim,
                           moe_intermediate_size=self.k("expert_feed_forward_length"),
                           num_experts=self.k("expert_count"), num_experts_per_tok=self.k("expert_used_count"),
                           norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[],
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"), attention_bias=False,
                           use_sliding_window=False)

    def qwen3moe_experts(self, params):
        """Qwen3-MoE's experts as this transformers holds them: one module per
        expert (4.x: experts.E.{gate,up,down}_proj.weight) or fused 3-D
        parameters (5.x: experts.gate_up_proj [E, 2F, D] with gate rows
        first, experts.down_proj [E, D, F])."""
        for i in range(self.n_layer):
            p, q = f"blk.{i}.", f"model.layers.{i}.mlp.experts."
            gate, up = self.g.tensor(p + "ffn_gate_exps.weight"), self.g.tensor(p + "ffn_up_exps.weight")  # [E, F, D]
            down = self.g.tensor(p + "ffn_down_exps.weight")  # [E, D, F]
            if q + "gate_up_proj" in params:
                self.sd[q + "gate_up_proj"] = np.concatenate([gate, up], axis=1)
                self.sd[q + "down_proj"] = down
            elif q + "0.gate_proj.weight" in params:
                for e in range(gate.shape[0]):
                    self.sd[f"{q}{e}.gate_proj.weight"], self.sd[f"{q}{e}.up_proj.weight"] = gate[e], up[e]
                    self.sd[f"{q}{e}.down_proj.weight"] = down[e]
            else:
                sys.exit(f"qwen3moe: this transformers names its experts neither {q}gate_up_proj nor {q}0.gate_proj.weight")

    GEMMA3 = dict(QWEN3, **{"ffn_norm.weight": "pre_feedforward_layernorm.weight",
                            "post_attention_norm.weight": "post_attention_layernorm.weight",
                            "post_ffw_norm.weight": "post_feedforward_layernorm.weight"})

    def gemma3(self, cls):
        # llama.cpp's converter stored every Gemma norm weight as 1 + w;
        # Gemma3RMSNorm multiplies by (1 + w) itself.
        self.decoder(self.GEMMA3)
        for n in list(self.sd):
            if "norm" in n:
                self.sd[n] = self.sd[n] - 1.0
        n_layer, theta = self.n_layer, float(self.k("rope.freq_base"))
        types = ["sliding_attention" if i % 6 < 5 else "full_attention" for i in range(n_layer)]  # llama.cpp's pattern 6
        self.linear = 1.0
        global_rope = {"rope_type": "default", "rope_theta": theta}
        scaling = None
        if self.kv.get("gemma3.rope.scaling.type") == "linear":
            self.linear = float(self.k("rope.scaling.factor"))
            global_rope = {"rope_type": "linear", "factor": self.linear, "rope_theta": theta}
            scaling = {"rope_type": "linear", "factor": self.linear}
        # llama.cpp: attention scale 1/sqrt(head_dim), but n_embd/n_head for 27B (62 layers).
        qpas = self.n_embd // self.n_head if n_layer == 62 else self.head_dim
        kw = dict(vocab_size=self.vocab, hidden_size=self.n_embd, intermediate_size=self.k("feed_forward_length"),
                  num_hidden_layers=n_layer, num_attention_heads=self.n_head, num_key_value_heads=self.n_kv,
                  head_dim=self.head_dim, max_position_embeddings=self.k("context_length"),
                  rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"), sliding_window=self.k("attention.sliding_window"),
                  layer_types=types, query_pre_attn_scalar=qpas, hidden_activation="gelu_pytorch_tanh",
                  final_logit_softcapping=None, attn_logit_softcapping=None, tie_word_embeddings=self.tied)
        if "rope_parameters" in inspect.signature(cls.__init__).parameters:
            kw["rope_parameters"] = {"full_attention": global_rope,
                                     "sliding_attention": {"rope_type": "default", "rope_theta": GEMMA3_LOCAL_BASE}}
        else:
            kw.update(rope_theta=theta, rope_local_base_freq=GEMMA3_LOCAL_BASE, rope_scaling=scaling)
        return kw

    def qwen2(self, cls):
        self.decoder(self.LLAMA)
        return self.common(cls, intermediate_size=self.k("feed_forward_length"),
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"), use_sliding_window=False)

    def phi3(self, cls):
        self.decoder({"attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
                      "attn_qkv.weight": "self_attn.qkv_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
                      "ffn_up.weight": "mlp.gate_up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight"})
        rot = self.k("rope.dimension_count", self.head_dim)
        return self.common(cls, intermediate_size=self.k("feed_forward_length"),
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"),
                           sliding_window=self.kv.get("phi3.attention.sliding_window"),
                           original_max_position_embeddings=self.k("rope.scaling.original_context_length",
                                                                   self.k("context_length")),
                           partial_rotary_factor=rot / self.head_dim, pad_token_id=None)

    def gpt2(self, cls):
        t = lambda w: w.T  # Conv1D stores [in, out]
        self.put("transformer.wte.weight", "token_embd.weight")
        self.put("transformer.wpe.weight", "position_embd.weight")
        self.put("transformer.ln_f.weight", "output_norm.weight")
        self.put("transformer.ln_f.bias", "output_norm.bias")
        if not self.tied:
            self.put("lm_head.weight", "output.weight")
        for i in range(self.n_layer):
            p, q = f"blk.{i}.", f"transformer.h.{i}."
            for src, dst, fn in [("attn_norm", "ln_1", None), ("ffn_norm", "ln_2", None), ("attn_qkv", "attn.c_attn", t),
                                 ("attn_output", "attn.c_proj", t), ("ffn_up", "mlp.c_fc", t), ("ffn_down", "mlp.c_proj", t)]:
                self.put(q + dst + ".weight", p + src + ".weight", fn)
                self.put(q + dst + ".bias", p + src + ".bias")
        return dict(vocab_size=self.vocab, n_positions=self.k("context_length"), n_embd=self.n_embd,
                    n_layer=self.n_layer, n_head=self.n_head, n_inner=self.k("feed_forward_length"),
                    layer_norm_epsilon=self.k("attention.layer_norm_epsilon"), activation_function="gelu_new",
                    tie_word_embeddings=self.tied)

    def gpt_oss(self, cls):
        names = dict(self.LLAMA)
        names.update({"attn_output.bias": "self_attn.o_proj.bias", "attn_sinks.weight": "self_attn.sinks",
                      "post_attention_norm.weight": "post_attention_layernorm.weight",
                      "ffn_gate_inp.weight": "mlp.router.weight", "ffn_gate_inp.bias": "mlp.router.bias",
                      "ffn_down_exps.bias": "mlp.experts.down_proj_bias"})
        self.decoder(names)
        for i in range(self.n_layer):
            p, q = f"blk.{i}.", f"model.layers.{i}.mlp.experts."
            gate, up = self.g.tensor(p + "ffn_gate_exps.weight"), self.g.tensor(p + "ffn_up_exps.weight")  # [E, F, D]
            e, f, d = gate.shape
            gu = np.empty((e, d, 2 * f), np.float32)  # x @ gu: gate in even columns, up in odd
            gu[:, :, 0::2], gu[:, :, 1::2] = gate.transpose(0, 2, 1), up.transpose(0, 2, 1)
            self.sd[q + "gate_up_proj"] = gu
            gb, ub = self.g.tensor(p + "ffn_gate_exps.bias"), self.g.tensor(p + "ffn_up_exps.bias")  # [E, F]
            gub = np.empty((e, 2 * f), np.float32)
            gub[:, 0::2], gub[:, 1::2] = gb, ub
            self.sd[q + "gate_up_proj_bias"] = gub
            self.put(q + "down_proj", p + "ffn_down_exps.weight", lambda w: w.transpose(0, 2, 1))  # [E, F, D]
        window = self.k("attention.sliding_window")
        # llama.cpp's pattern: even layers slide.
        types = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(self.n_layer)]
        scaling = {"rope_type": "yarn", "factor": float(self.k("rope.scaling.factor")),
                   "original_max_position_embeddings": self.k("rope.scaling.original_context_length"),
                   "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}
        return self.common(cls, intermediate_size=self.k("expert_feed_forward_length"), head_dim=self.head_dim,
                           num_local_experts=self.k("expert_count"), num_experts_per_tok=self.k("expert_used_count"),
                           rms_norm_eps=self.k("attention.layer_norm_rms_epsilon"), sliding_window=window,
                           layer_types=types, swiglu_limit=7.0, attention_bias=True, scaling=scaling)


def cmd_gguf(a):
    g = GGUF(a.gguf)
    model = Converter(g).build()
    emit_golden(model, model.config.vocab_size, a.name or g.kv.get("general.name", g.kv["general.architecture"]),
                a.out, {"gguf_sha256": hashlib.sha256(g.b).hexdigest()})


def cmd_stories(a):
    g = GGUF(a.gguf)
    kv = g.kv
    if kv.get("general.architecture") != "llama":
        sys.exit(f"{a.gguf}: not a llama GGUF")
    model = Converter(g).build()
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


def cmd_compare(a):
    """Compares two goldens of the same model (e.g. the gguf and hf modes):
    identical prompt and greedy ids, every logit kept by both within tol."""
    x, y = (json.load(open(p)) for p in (a.a, a.b))
    if x["prompt"] != y["prompt"] or x["greedy"] != y["greedy"]:
        sys.exit("%s vs %s: greedy ids differ: %s vs %s" % (a.a, a.b, x["greedy"], y["greedy"]))
    worst = 0.0
    for sx, sy in zip(x["steps"], y["steps"]):
        for key in ("logits", "top_logits", "probe_logits"):
            if key in sx and key in sy:
                worst = max(worst, max(abs(u - v) for u, v in zip(sx[key], sy[key])))
        worst = max(worst, abs(sx["logsumexp"] - sy["logsumexp"]))
    print("%s vs %s: same greedy ids, max |logit diff| %.3g (tol %g)" % (a.a, a.b, worst, a.tol))
    if worst > a.tol:
        sys.exit(1)


def main():
    torch.set_grad_enabled(False)
    torch.set_num_threads(8)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hf", help="golden logits of an orcc synth --hf-dir export")
    h.add_argument("--hf-dir", required=True)
    h.add_argument("--out", required=True)
    h.add_argument("--name")
    h.add_argument("--steps", type=int, default=DECODE, help="greedy decode steps after the prompt")
    h.add_argument("--gguf", help="the GGUF the export was made from: its sha256 goes into the golden")
    c = sub.add_parser("gguf", help="golden logits of an F32/F16 GGUF converted to transformers")
    c.add_argument("--gguf", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--name")
    s = sub.add_parser("stories", help="greedy ids of a llama GGUF converted to transformers")
    s.add_argument("--gguf", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--prompt", default="Once upon a time")
    s.add_argument("--n", type=int, default=40)
    k = sub.add_parser("compare", help="two goldens of one model agree (greedy ids, logits within --tol)")
    k.add_argument("a")
    k.add_argument("b")
    k.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    {"hf": cmd_hf, "gguf": cmd_gguf, "stories": cmd_stories, "compare": cmd_compare}[a.cmd](a)


if __name__ == "__main__":
    main()
