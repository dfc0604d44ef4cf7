package synth

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/quant"
)

// writeTiny synthesises a preset into memory and parses it.
func writeTiny(t *testing.T, preset string, q Quant, seed uint64) (*gguf.File, []byte) {
	t.Helper()
	m := plan(t, preset, q)
	var buf bytes.Buffer
	if _, err := m.Write(&buf, seed); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f, buf.Bytes()
}

// Every tiny preset in every mode loads through compiler/arch, and its
// dequantized weights are well scaled: matrices std ≈ 0.02 and mean ≈ 0,
// norms ≈ 1, everything finite.
func TestTinyPresetsScaled(t *testing.T) {
	for _, p := range Presets() {
		if !strings.HasSuffix(p.Name, "-tiny") {
			continue
		}
		// Every mode on llama-tiny; the others in the modes that differ for
		// them (the float modes only cost time with their big vocabularies).
		quants := []Quant{p.DefaultQuant, QuantQ4KM, QuantQ4_0}
		if p.Name == "llama-tiny" {
			quants = Quants
		}
		for _, q := range quants {
			f, _ := writeTiny(t, p.Name, q, 7)
			m, err := arch.Load(f)
			if err != nil {
				t.Fatalf("%s %s: %v", p.Name, q, err)
			}
			if m.H.NVocab != p.H.NVocab || m.H.NLayer != p.H.NLayer || m.H.HeadDim != p.H.HeadDim {
				t.Errorf("%s %s: hparams read back %+v", p.Name, q, m.H)
			}
			if ft, _ := f.Uint("general.file_type"); uint32(ft) != q.FileType() {
				t.Errorf("%s %s: file_type %d", p.Name, q, ft)
			}
			for i := range f.Tensors {
				checkScale(t, p.Name+" "+string(q), f, &f.Tensors[i])
			}
		}
	}
}

func checkScale(t *testing.T, what string, f *gguf.File, ti *gguf.TensorInfo) {
	t.Helper()
	// Whole rows, up to 64K values: enough for the statistics.
	rows := max(1, min(ti.Elements(), 1<<16)/ti.Dims[0])
	vals := make([]float32, rows*ti.Dims[0])
	data := f.Data(ti)[:uint64(ti.Type.RowBytes(int64(ti.Dims[0])))*rows]
	if err := quant.Dequantize(ti.Type, data, vals); err != nil {
		t.Fatalf("%s %s: %v", what, ti.Name, err)
	}
	var sum, sq float64
	for _, v := range vals {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s %s: non-finite value", what, ti.Name)
		}
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(len(vals))
	mean, std := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
	if ti.Name == ropeFreqsName {
		return // computed, not drawn: TestLlama3RopeDivisors
	}
	switch roleOf(ti.Name) {
	case roleNorm:
		if math.Abs(mean-1) > 0.02 || std > 0.1 {
			t.Errorf("%s %s (%s): norm mean %.3f std %.3f, want ≈ 1", what, ti.Name, ti.Type, mean, std)
		}
	case roleWeight:
		if std < 0.015 || std > 0.026 || math.Abs(mean) > 0.002 {
			t.Errorf("%s %s (%s): mean %.4f std %.4f, want ≈ 0 and 0.02", what, ti.Name, ti.Type, mean, std)
		}
	}
}

func TestDeterministicFromSeed(t *testing.T) {
	_, a := writeTiny(t, "llama-tiny", QuantQ4KM, 3)
	_, b := writeTiny(t, "llama-tiny", QuantQ4KM, 3)
	_, c := writeTiny(t, "llama-tiny", QuantQ4KM, 4)
	if !bytes.Equal(a, b) {
		t.Error("same seed gave different files")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same file")
	}
}

func TestWriteFileMatchesWrite(t *testing.T) {
	m := plan(t, "phi-3-mini-4k-tiny", QuantQ4_0)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.WriteFile(path, 9); err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, inMem := writeTiny(t, "phi-3-mini-4k-tiny", QuantQ4_0, 9)
	size, err := m.Size()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, inMem) || int64(len(onDisk)) != size {
		t.Errorf("WriteFile (%d bytes), Write (%d) and Size (%d) disagree", len(onDisk), len(inMem), size)
	}
}

func TestQ4_0KeepsHeadQ6K(t *testing.T) {
	// llama.cpp's Q4_0 still gives the LM head Q6_K (Q8_0 when its row is not
	// a multiple of 256) and everything else Q4_0.
	m := plan(t, "llama-tiny", QuantQ4_0)
	for _, tn := range m.Tensors {
		want := gguf.Q4_0
		switch {
		case len(tn.Dims) == 1:
			want = gguf.F32
		case tn.Name == "output.weight":
			want = gguf.Q6_K
		}
		if tn.Type != want {
			t.Errorf("%s: %s, want %s", tn.Name, tn.Type, want)
		}
	}
	if tn := find(plan(t, "qwen2.5-0.5b-tiny", QuantQ4_0), "token_embd.weight"); tn.Type != gguf.Q8_0 {
		t.Errorf("tied qwen2 token_embd in Q4_0: %s, want Q8_0", tn.Type)
	}
}

func TestBadNames(t *testing.T) {
	if _, err := Lookup("gpt-5"); err == nil || !strings.Contains(err.Error(), "qwen2.5-0.5b") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err := ParseQuant("q3_k"); err == nil || !strings.Contains(err.Error(), "q4_k_m") {
		t.Errorf("unknown quant: %v", err)
	}
	if q, err := ParseQuant("Q4_K_M"); err != nil || q != QuantQ4KM {
		t.Errorf("ParseQuant(Q4_K_M) = %v, %v", q, err)
	}
}

// Llama 3.1-8B's rope_freqs as transformers' llama3 rule gives them: high
// frequencies kept (1), low ones divided by the factor (8), the band
// between smoothly: pair i's wavelength 2π·500000^(i/64) against the
// original context 8192 over the low and high frequency factors 1 and 4.
func TestLlama3RopeDivisors(t *testing.T) {
	d := llama31Rope.Divisors(128, 500000)
	if len(d) != 64 || d[0] != 1 || d[63] != 8 {
		t.Fatalf("divisors %v", d)
	}
	for i := 1; i < len(d); i++ {
		if d[i] < d[i-1] {
			t.Errorf("divisor %d (%g) below divisor %d (%g)", i, d[i], i-1, d[i-1])
		}
	}
	// Pair i's wavelength is 2π·500000^(i/64): pair 28's (1956) is below
	// 8192/4, kept; pair 35's (8219) above 8192, divided by 8; pair 31's
	// (3619) between: smooth = (8192/λ − 1)/(4 − 1), divisor
	// 1/((1−smooth)/8 + smooth) = 2.026.
	lambda := 2 * math.Pi * math.Pow(500000, 31.0/64)
	smooth := (8192/lambda - 1) / 3
	want := 1 / ((1-smooth)/8 + smooth)
	if d[28] != 1 || d[35] != 8 || math.Abs(float64(d[31])-want) > 1e-6*want {
		t.Errorf("divisors 28, 31, 35 = %g, %g, %g, want 1, %g, 8", d[28], d[31], d[35], want)
	}
}
