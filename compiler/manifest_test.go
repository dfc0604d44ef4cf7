package compiler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/plans"
)

var update = flag.Bool("update", false, "rewrite the golden plan manifests under testdata/")

// goldenManifest is a manifest as the golden file shows it: the creation
// time dropped, the IR as a list of lines (readable in a diff), and the
// tokenizer (a megabyte of vocabulary) by its sha256.
type goldenManifest struct {
	plans.Manifest
	CreatedAt       string   `json:"CreatedAt,omitempty"`
	Tokenizer       []byte   `json:"Tokenizer,omitempty"`
	Graph           []string // shadows Manifest.Graph
	TokenizerSHA256 string
	// GPU plans: the schedules and the source are codegen's goldens; here
	// the schedules' sizes. The fatbin's hash depends on the nvcc version.
	Kernels                         *plans.Kernels `json:"Kernels,omitempty"`
	PrefillLaunches, DecodeLaunches int            `json:",omitempty"`
}

// TestGoldenManifest compiles the tiny llama preset (Q4_K_M mix, seed 1)
// and compares its manifest with testdata/<preset>.<target>.manifest.json.
func TestGoldenManifest(t *testing.T) {
	model := synthModel(t, "llama-tiny", "")
	for _, target := range []string{"cpu", "sm_90"} {
		t.Run(target, func(t *testing.T) {
			if _, err := cuda.FindNVCC(); err != nil && target != "cpu" {
				t.Skip(err)
			}
			dir := filepath.Join(t.TempDir(), "plan")
			if err := Compile(Options{Model: model, Out: dir, Target: target, MaxTokens: 64}); err != nil {
				t.Fatal(err)
			}
			p, err := plans.Open(dir, plans.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			sum := sha256.Sum256(p.Manifest.Tokenizer)
			gm := goldenManifest{Manifest: p.Manifest, TokenizerSHA256: hex.EncodeToString(sum[:]),
				Graph: strings.Split(strings.TrimSuffix(p.Manifest.Graph, "\n"), "\n")}
			if k := p.Manifest.Kernels; k != nil {
				gm.PrefillLaunches, gm.DecodeLaunches = len(k.Prefill), len(k.Decode)
				delete(gm.Manifest.Files, plans.KernelsFile)
				delete(gm.Manifest.Files, plans.SourceFile)
			}
			got, err := json.MarshalIndent(gm, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "llama-tiny."+target+".manifest.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./compiler -run GoldenManifest -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("manifest differs from %s; review the change and regenerate with -update:\n%s", path, firstDiff(got, want))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, gl, wl)
		}
	}
	return ""
}
