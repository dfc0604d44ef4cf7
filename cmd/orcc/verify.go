package main

import (
	"fmt"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/plans"
)

type verifyCmd struct {
	Dir string `arg:"" help:"Plan directory." type:"existingdir"`
}

// Run checks the manifest's magic, version and checksum and every file's sha256.
func (c *verifyCmd) Run() error {
	p, err := plans.Open(c.Dir, plans.OpenOptions{})
	if err != nil {
		return err
	}
	defer p.Close()
	m := p.Manifest
	fmt.Printf("%s: ok — format %d, orcc %s, target %s, %s %s (%s), %s, %d weight bytes, %s verified\n",
		c.Dir, m.FormatVersion, m.CompilerVersion, m.Target, m.Model.Arch, m.Model.Name, m.Model.FileType,
		cli.Count(len(m.Tensors), "tensor", "tensors"), m.Memory.WeightBytes, cli.Count(len(m.Files), "file", "files"))
	return nil
}

func init() {
	commands.Add(cli.Command{Name: "verify", Help: "Verify a plan directory's integrity.", Cmd: &verifyCmd{}})
}
