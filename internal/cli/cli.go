// Package cli holds the command registry shared by orcc and orcrun: each
// subcommand lives in its own file and registers itself, so adding one never
// touches main.go.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/alecthomas/kong"
)

// Exit statuses: a command that ran and failed, and a command line that did
// not parse (nothing ran).
const (
	ExitFailed = 1
	ExitUsage  = 2
)

// Command is one registered subcommand: a kong command struct with a
// Run() error method.
type Command struct {
	Name, Help string
	Cmd        any
	Default    bool // run when no subcommand is named (orcrun's serve)
	Hidden     bool // left out of --help (a tool for developers, not users)
}

// Registry collects a program's subcommands.
type Registry struct{ cmds []Command }

// Add registers a subcommand.
func (r *Registry) Add(c Command) { r.cmds = append(r.cmds, c) }

// root holds the flags every program has.
type root struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
}

// Main parses os.Args and runs the chosen subcommand. Every error is one
// line on stderr, "name: what went wrong"; a command line that does not parse
// adds a one-line hint where the usage is, and exits ExitUsage instead of
// ExitFailed. version is what --version prints.
func (r *Registry) Main(name, description, version string) {
	opts := []kong.Option{kong.Name(name), kong.Description(description), kong.Vars{"version": version}}
	cmds := append(r.cmds, Command{Name: "version", Help: "Print the version.", Cmd: &versionCmd{version}})
	for _, c := range cmds {
		tags := []string{}
		if c.Default {
			tags = append(tags, `default:"withargs"`)
		}
		if c.Hidden {
			tags = append(tags, `hidden:""`)
		}
		opts = append(opts, kong.DynamicCommand(c.Name, c.Help, "", c.Cmd, tags...))
	}
	parser, err := kong.New(&root{}, opts...)
	if err != nil {
		panic(err) // the commands' struct tags are wrong: a programming error
	}
	ctx, err := parser.Parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		fmt.Fprintf(os.Stderr, "run '%s --help' for the usage\n", helpPath(name, err))
		os.Exit(ExitUsage)
	}
	if err := ctx.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(ExitFailed)
	}
}

// versionCmd prints what --version prints.
type versionCmd struct{ line string }

func (v *versionCmd) Run() error { fmt.Println(v.line); return nil }

// helpPath is the command whose --help the hint names: the subcommand the
// command line chose, else the program.
func helpPath(name string, err error) string {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return name
	}
	for i := len(pe.Context.Path) - 1; i >= 0; i-- {
		if c := pe.Context.Path[i].Command; c != nil {
			return c.FullPath()
		}
	}
	return name
}
