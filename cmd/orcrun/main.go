// Command orcrun loads a plan on a device and serves it over HTTP, or runs
// one generation or a benchmark from the command line.
package main

import (
	"fmt"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/version"
	"github.com/llama-orch/orc/plans"
)

// commands is filled by each subcommand's file in init.
var commands cli.Registry

func main() {
	commands.Main("orcrun", "Runs orc plans: serve (default), generate, bench.",
		fmt.Sprintf("orcrun %s (reads plan format %d)", version.Compiler, plans.FormatVersion))
}
