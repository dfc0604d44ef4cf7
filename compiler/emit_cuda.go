package compiler

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// emitCUDA generates the kernels of g for the CUDA target o.Target: it fills
// man's schedules and arena size and returns the plan files the kernels live
// in (the source, and the fatbin nvcc makes of it).
func emitCUDA(g *ir.Graph, man *plans.Manifest, o Options) (map[string][]byte, error) {
	// Kernels address weights by their offset in weights.bin, so offsets are
	// placed now, as plans.Write will place them (checked when it does).
	placeOffsets(man.Tensors)
	out, err := cuda.Generate(g, man, cuda.Options{Arch: o.Target})
	if err != nil {
		return nil, err
	}
	man.Kernels = out.Kernels
	man.Memory.ArenaBytes = out.ArenaBytes
	files := map[string][]byte{plans.SourceFile: []byte(out.Source)}
	if o.EmitOnly {
		return files, nil
	}
	fatbin, err := cuda.Compile(out.Source, o.Target)
	if err != nil {
		return nil, err
	}
	files[plans.KernelsFile] = fatbin
	return files, nil
}

// placeOffsets gives every tensor its offset in weights.bin: table order,
// each at the next plans.Alignment boundary.
func placeOffsets(ts []plans.Tensor) {
	var off int64
	for i := range ts {
		off = (off + plans.Alignment - 1) / plans.Alignment * plans.Alignment
		ts[i].Offset = off
		off += ts[i].Bytes
	}
}

// writeSource writes the CUDA source alone into dir (--emit-only).
func writeSource(dir string, src []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, plans.SourceFile), src, 0o644)
}

// checkOffset is called as plans.Write places each tensor: the kernels were
// generated for placed, so any other offset would make them read garbage.
func checkOffset(t *plans.Tensor, placed int64) error {
	if t.Offset != placed {
		return fmt.Errorf("weights.bin puts %s at %d, the kernels expect %d", t.Name, t.Offset, placed)
	}
	return nil
}
