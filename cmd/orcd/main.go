// Command orcd is the orchestrator: the control and data plane in front of
// the pool managers (orcpool) and their workers. See README, "Serving many
// GPUs".
package main

import (
	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/version"
)

// commands is filled by each subcommand's file in init.
var commands cli.Registry

func main() {
	commands.Main("orcd", "The orchestrator: admits, queues, places and streams tasks across orcpool workers.", "orcd "+version.Compiler)
}
