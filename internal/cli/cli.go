// Package cli holds the command registry shared by orcc and orcrun: each
// subcommand lives in its own file and registers itself, so adding one never
// touches main.go.
package cli

import (
	"fmt"
	"os"

	"github.com/alecthomas/kong"
)

// Command is one registered subcommand: a kong command struct with a
// Run() error method.
type Command struct {
	Name, Help string
	Cmd        any
	Default    bool // run when no subcommand is named (orcrun's serve)
}

// Registry collects a program's subcommands.
type Registry struct{ cmds []Command }

// Add registers a subcommand.
func (r *Registry) Add(c Command) { r.cmds = append(r.cmds, c) }

// Main parses os.Args and runs the chosen subcommand; errors exit 1.
func (r *Registry) Main(name, description string) {
	opts := []kong.Option{kong.Name(name), kong.Description(description), kong.UsageOnError()}
	for _, c := range r.cmds {
		tags := []string{}
		if c.Default {
			tags = append(tags, `default:"withargs"`)
		}
		opts = append(opts, kong.DynamicCommand(c.Name, c.Help, "", c.Cmd, tags...))
	}
	var root struct{}
	ctx := kong.Parse(&root, opts...)
	if err := ctx.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
