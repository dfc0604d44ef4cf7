#!/usr/bin/env python3
"""Reference ids and speed of Hugging Face `tokenizers` for orc's tokenizer tests.

Runs on the GPU host (python3 with tokenizers; no network):
  hf_tokenize.py golden TOKENIZER_JSON OUT_JSON CORPUS_JSON...
      encodes every string of the corpora (concatenated, in order) with
      add_special_tokens=False and writes {"tokenizer": ..., "corpus": [...],
      "ids": [[...]...], "decoded": [...]} for tokenizer/hf_test.go
      (decoded = decode(ids, skip_special_tokens=False)). TOKENIZER_JSON may
      be a .json.zst (compiler/synth/assets); the tokenizer's name is the
      directory's, or the asset's before "-tokenizer".
  hf_tokenize.py chat TOKENIZER_CONFIG_JSON CASES_JSON OUT_JSON
      renders every case {messages, add_generation_prompt, kwargs} of CASES
      with the config's chat_template and writes {"results": [{"text"} or
      {"error"}], "date": the day rendered} for tokenizer/chat_golden_test.go:
      with transformers' apply_chat_template where transformers is installed
      (the tokenizer.json beside the config is loaded with it), else with
      jinja2 set up as transformers sets it up (sandbox, trim_blocks,
      lstrip_blocks, loopcontrols, the {% generation %} block,
      raise_exception, tojson, strftime_now; the config's special tokens as
      variables), which runs anywhere. A template that writes today's date
      (strftime_now) is compared on that day.
  hf_tokenize.py bench TOKENIZER_JSON TEXT_FILE [RUNS]
      encodes the whole text on one thread RUNS times and prints MB/s of the
      first (cold cache) and the best run, the way BenchmarkEncode measures ours.
  hf_tokenize.py split CORPUS_JSON OUT_JSON
      splits every corpus string with the pre-tokenizer regexes that
      tokenizer/pretok.go matches by hand, using the `regex` module (runs
      anywhere), for tokenizer/pretok_test.go. "default" is llama.cpp's
      sequence of four regexes, each splitting the pieces of the one before.
"""
import json
import os
import sys
import time

# One thread: the benchmark compares single-threaded encoders.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# The regexes as tokenizer.json / llama.cpp write them (pretok.go's consts).
SPLIT_REGEXES = {
    "gpt-2": [r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""],
    "qwen2": [r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""],
    "llama-bpe": [r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""],
    "gpt-4o": [r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""],
    "default": [r"""[\p{P}\$\+<=>\^~\|]+""",
                r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)""",
                r"""\p{N}+""", r"""[0-9][0-9][0-9]"""],
}


def split_pieces(text, regexes):
    import regex
    pieces = [text] if text else []
    for rx in regexes:
        out = []
        for p in pieces:
            # Matches become pieces; text between matches stays a piece too.
            at = 0
            for m in regex.finditer(rx, p):
                if m.start() > at:
                    out.append(p[at:m.start()])
                out.append(m.group())
                at = m.end()
            if at < len(p):
                out.append(p[at:])
        pieces = out
    return pieces


def split(corpus_path, out_path):
    corpus = json.load(open(corpus_path, encoding="utf-8"))
    res = {name: [split_pieces(s, rxs) for s in corpus] for name, rxs in SPLIT_REGEXES.items()}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(res, f, ensure_ascii=False)
        f.write("\n")
    print(f"split: {len(corpus)} strings x {len(res)} pre-tokenizers -> {out_path}")


def read_maybe_zst(path):
    """The bytes of path, decompressed when it ends in .zst (the zstandard
    module, else the zstd command)."""
    data = open(path, "rb").read()
    if not path.endswith(".zst"):
        return data
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 30)
    except ImportError:
        import subprocess
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout


def tokenizer_name(tok_path):
    base = os.path.basename(tok_path)
    if "-tokenizer" in base:
        return base.split("-tokenizer")[0]
    return os.path.basename(os.path.dirname(tok_path)) or tok_path


def golden(tok_path, out_path, *corpus_paths):
    import tokenizers
    tok = tokenizers.Tokenizer.from_str(read_maybe_zst(tok_path).decode("utf-8"))
    corpus = [s for p in corpus_paths for s in json.load(open(p, encoding="utf-8"))]
    ids = [tok.encode(s, add_special_tokens=False).ids for s in corpus]
    decoded = [tok.decode(x, skip_special_tokens=False) for x in ids]
    res = {"tokenizer": tokenizer_name(tok_path), "tokenizers_version": tokenizers.__version__}
    if [os.path.basename(p) for p in corpus_paths] != ["corpus.json"]:
        res["corpus"] = [os.path.basename(p) for p in corpus_paths]
    res.update({"ids": ids, "decoded": decoded})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(res, f, ensure_ascii=False)
        f.write("\n")
    print(f"golden {tok_path}: {len(corpus)} strings, {sum(map(len, ids))} ids -> {out_path}")


def chat(config_path, cases_path, out_path):
    """Renders chat cases with transformers' apply_chat_template when
    transformers is installed (the tokenizer.json beside the config loads
    with it), else with jinja2 set up as transformers sets it up
    (transformers/utils/chat_template_utils.py: _compile_jinja_template)."""
    config_raw = read_maybe_zst(config_path)
    config = json.loads(config_raw.decode("utf-8"))
    cases = json.load(open(cases_path, encoding="utf-8"))
    tok_path = config_path.replace("tokenizer_config.json", "tokenizer.json")
    try:
        import tempfile
        import transformers
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "tokenizer_config.json"), "wb").write(config_raw)
            open(os.path.join(d, "tokenizer.json"), "wb").write(read_maybe_zst(tok_path))
            tok = transformers.AutoTokenizer.from_pretrained(d)

        def render(case):
            return tok.apply_chat_template(case["messages"], tokenize=False,
                                           add_generation_prompt=case["add_generation_prompt"], **case.get("kwargs", {}))
        engine = f"transformers {transformers.__version__} apply_chat_template"
    except ImportError:
        render, engine = jinja_renderer(config)
    import datetime
    import jinja2
    # the day strftime_now gave the templates that write one (Llama 3.2, SmolLM3)
    today = datetime.date.today().isoformat()
    results = []
    for case in cases:
        try:
            results.append({"text": render(case)})
        except jinja2.exceptions.TemplateError as e:
            results.append({"error": str(e)})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"template": f"{os.path.basename(config_path)} chat_template, rendered by {engine}",
                   "date": today, "results": results}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"chat {config_path}: {len(results)} cases ({engine}) -> {out_path}")


def jinja_renderer(config):
    import datetime
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    class Generation(jinja2.ext.Extension):
        """transformers' {% generation %} block (AssistantTracker), which
        renders its body unchanged."""
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols, Generation])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
    template = env.from_string(config["chat_template"])

    def token(t):
        return t.get("content", "") if isinstance(t, dict) else t

    special = {k: token(config[k]) for k in ("bos_token", "eos_token", "unk_token", "pad_token") if config.get(k) is not None}

    def render(case):
        return template.render(messages=case["messages"], tools=None, documents=None,
                               add_generation_prompt=case["add_generation_prompt"], **special, **case.get("kwargs", {}))
    return render, f"jinja2 {jinja2.__version__} set up as transformers does"


def bench(tok_path, text_path, runs=5):
    import tokenizers
    text = open(text_path, encoding="utf-8").read()
    mb = len(text.encode("utf-8")) / 1e6
    tok = tokenizers.Tokenizer.from_str(read_maybe_zst(tok_path).decode("utf-8"))
    times, n = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = len(tok.encode(text, add_special_tokens=False).ids)
        times.append(time.perf_counter() - t0)
    print(f"bench {tok_path}: {mb:.3f} MB -> {n} ids; cold {mb / times[0]:.2f} MB/s, best {mb / min(times):.2f} MB/s "
          f"(tokenizers {tokenizers.__version__}, 1 thread)")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "golden":
        golden(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "chat":
        chat(*sys.argv[2:5])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "bench":
        bench(sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:]))
    elif len(sys.argv) == 4 and sys.argv[1] == "split":
        split(*sys.argv[2:4])
    else:
        sys.exit(__doc__)
