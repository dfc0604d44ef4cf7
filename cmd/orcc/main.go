// Command orcc is orc's ahead-of-time compiler: it inspects and synthesises
// GGUF models, tokenizes, and compiles a GGUF model into a plan.
package main

import (
	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/version"
)

// commands is filled by each subcommand's file in init.
var commands cli.Registry

func main() {
	commands.Main("orcc", "Ahead-of-time compiler for LLM inference: GGUF in, plan out.", "orcc "+version.Compiler)
}
