package passes

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
)

var update = flag.Bool("update", false, "rewrite testdata/*.after.ir from the passes' output")

func parseFile(t *testing.T, path string) *ir.Graph {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ir.Parse(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := ir.Verify(g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// checkGolden compares got with testdata/name, or rewrites it under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./passes -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./passes -update rewrites it; review the diff):\n%s", path, got)
	}
}

// TestPassGoldens runs every pass on its testdata/<pass>.before.ir and
// compares the result with <pass>.after.ir. Every pass except the verifiers
// must change its input: a fixture it leaves alone tests nothing.
func TestPassGoldens(t *testing.T) {
	for _, p := range Pipeline {
		t.Run(p.Name, func(t *testing.T) {
			g := parseFile(t, filepath.Join("testdata", p.Name+".before.ir"))
			before := ir.Print(g)
			if err := p.Fn(g); err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(g); err != nil {
				t.Fatalf("after %s: %v\n%s", p.Name, err, ir.Print(g))
			}
			after := ir.Print(g)
			if isVerifier(p) != (after == before) {
				t.Errorf("%s: output equal to input: %v, want %v", p.Name, after == before, isVerifier(p))
			}
			checkGolden(t, p.Name+".after.ir", after)
		})
	}
}

func isVerifier(p Pass) bool { return strings.HasPrefix(p.Name, "verify") }
