package compiler

import (
	"testing"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

const stories = "../../shared/testdata/models/stories260k-f32.gguf"

func loadModel(t *testing.T, path string) *arch.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := arch.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLowerStories(t *testing.T) {
	g, err := Lower(loadModel(t, stories), 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	if got := len(g.Nodes); got < 5*25 {
		t.Fatalf("%d nodes for 5 layers", got)
	}
}
