package cuda_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
)

// fullWidthCuts are the full-size presets in the quant mixes the GPU
// acceptance and the benchmarks run (scripts/gpu_acceptance.sh): their
// emitted CUDA takes the kernels, lane sets, streams and tuning limits that
// the tiny presets are too small to reach.
var fullWidthCuts = []struct {
	preset string
	layers int
	quant  synth.Quant
	arch   string // "": the default, sm_90
}{
	{"qwen2.5-0.5b", 24, synth.QuantF16, ""},
	{"qwen2.5-0.5b", 24, synth.QuantQ4_0, ""},
	{"qwen2.5-0.5b", 24, synth.QuantQ4KM, ""},
	{"phi-3-mini-4k", 32, synth.QuantF16, ""},
	{"phi-3-mini-4k", 32, synth.QuantQ4_0, ""},
	{"phi-3-mini-4k", 32, synth.QuantQ4KM, ""},
	{"gpt-oss-20b", 24, synth.QuantMXFP4, ""},
	{"gpt2-small", 12, synth.QuantF16, ""},
	{"gpt2-small", 12, synth.QuantQ4KM, ""},
	{"llama-2-7b", 32, synth.QuantQ4KM, ""},
	// An A100's 108 SMs and 164 KiB of shared memory an SM: other lane
	// sets, staging and streaming limits, and no dependent launch.
	{"qwen2.5-0.5b", 24, synth.QuantQ4KM, "sm_80"},
	{"phi-3-mini-4k", 32, synth.QuantQ4KM, "sm_80"},
	{"gpt-oss-20b", 24, synth.QuantMXFP4, "sm_80"},
}

// fullWidthMaxTokens is orcc compile's default max_tokens.
const fullWidthMaxTokens = 512

// TestFullWidthGoldens compares the emitted source (its model part) of every
// full-size preset with testdata/full/<preset>-<layers>L-<quant>[-<arch>].cu, and its
// schedules' sha256 with the .schedule.sha256 beside it (the schedules
// themselves are 300-430 KB each: `orcc compile --emit-only` shows them), so
// that a change to codegen's kernel choices shows at the shapes the
// benchmarks run. The weights are never read: each model's file is its real
// header over zeros (writeShapes).
func TestFullWidthGoldens(t *testing.T) {
	for _, c := range fullWidthCuts {
		name := fmt.Sprintf("%s-%dL-%s", c.preset, c.layers, c.quant)
		if c.arch != "" {
			name += "-" + c.arch
		}
		t.Run(name, func(t *testing.T) {
			path := writeShapes(t, c.preset, c.layers, c.quant)
			arch := c.arch
			if arch == "" {
				arch = cuda.DefaultArch
			}
			g, man, _ := lowerFor(t, path, fullWidthMaxTokens, arch)
			out := generate(t, g, man, arch)
			modelGolden(t, filepath.Join("full", name+".cu"), out.Source)
			sum := sha256.Sum256(scheduleJSON(t, out))
			golden(t, filepath.Join("full", name+".schedule.sha256"), []byte(hex.EncodeToString(sum[:])+"\n"))
		})
	}
}

// errHeaderDone stops a write at the end of a GGUF header.
var errHeaderDone = errors.New("header written")

// headerWriter keeps the first n bytes written to it, then refuses more.
type headerWriter struct {
	b []byte
	n int
}

func (h *headerWriter) Write(p []byte) (int, error) {
	if room := h.n - len(h.b); len(p) > room {
		h.b = append(h.b, p[:room]...)
		return room, errHeaderDone
	}
	h.b = append(h.b, p...)
	return len(p), nil
}

// writeShapes writes preset cut to layers in quant q as a GGUF file of its
// real header (metadata, tensor names, shapes and types) whose data section
// is a hole of zeros: a file of the real size that costs the header alone
// to write, for compiling without reading weights.
func writeShapes(t *testing.T, preset string, layers int, q synth.Quant) string {
	t.Helper()
	p, err := synth.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = p.Cut(layers); err != nil {
		t.Fatal(err)
	}
	sm, err := synth.Plan(p, q)
	if err != nil {
		t.Fatal(err)
	}
	size, err := sm.Size()
	if err != nil {
		t.Fatal(err)
	}
	var data int64 // the data section: every tensor, each padded to the alignment
	for i := range sm.Tensors {
		data += (sm.Tensors[i].Bytes() + gguf.DefaultAlignment - 1) / gguf.DefaultAlignment * gguf.DefaultAlignment
	}
	h := &headerWriter{n: int(size - data)}
	if _, err := sm.Write(h, 1); !errors.Is(err, errHeaderDone) {
		t.Fatalf("writing %s's header: %v", preset, err)
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, h.b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}
