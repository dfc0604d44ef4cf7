package main

import (
	"fmt"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/version"
)

type versionCmd struct{}

func (versionCmd) Run() error { fmt.Println("orcc", version.Compiler); return nil }

func init() {
	commands.Add(cli.Command{Name: "version", Help: "Print the compiler version.", Cmd: &versionCmd{}})
}
