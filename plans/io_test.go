package plans

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTestPlan(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plan")
	m := &Manifest{Target: "cpu", Model: Model{Name: "t", Arch: "llama"}, Tensors: []Tensor{
		{Name: "a", DType: "f32", Shape: []int64{3}, Bytes: 12},
		{Name: "b", DType: "f32", Shape: []int64{2}, Bytes: 8},
	}}
	err := Write(dir, m, func(i int, tt *Tensor, w io.Writer) error {
		_, err := w.Write(make([]byte, tt.Bytes))
		return err
	}, map[string][]byte{KernelsFile: []byte("fatbin")})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWriteOpen(t *testing.T) {
	dir := writeTestPlan(t)
	p, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, tb, ok := p.TensorData("b"); !ok || tb.Offset != Alignment {
		t.Fatalf("tensor b at %v, want offset %d", tb, Alignment)
	}
	if b, err := p.ReadFile(KernelsFile); err != nil || string(b) != "fatbin" {
		t.Fatalf("kernels: %q %v", b, err)
	}
}

func TestTamperDetected(t *testing.T) {
	cases := map[string]func(dir string){
		"weights altered": func(dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, WeightsFile), os.O_RDWR, 0)
			f.WriteAt([]byte{1}, 3)
			f.Close()
		},
		"weights truncated": func(dir string) { os.Truncate(filepath.Join(dir, WeightsFile), 100) },
		"kernels altered":   func(dir string) { os.WriteFile(filepath.Join(dir, KernelsFile), []byte("fatbiN"), 0o644) },
		"manifest altered": func(dir string) {
			p := filepath.Join(dir, ManifestFile)
			b, _ := os.ReadFile(p)
			b[len(b)-1] ^= 1
			os.WriteFile(p, b, 0o644)
		},
	}
	for name, tamper := range cases {
		dir := writeTestPlan(t)
		tamper(dir)
		if _, err := Open(dir, OpenOptions{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

func TestOtherVersionIsStale(t *testing.T) {
	dir := writeTestPlan(t)
	p := filepath.Join(dir, ManifestFile)
	b, _ := os.ReadFile(p)
	b[len(Magic)] = FormatVersion + 1
	os.WriteFile(p, b, 0o644)
	_, err := Open(dir, OpenOptions{})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("got %v, want ErrStale", err)
	}
	if want := "recompile with orcc"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// A deferred hash opens an altered plan, and VerifyWeights then refuses it;
// an intact one verifies, and a second call does nothing.
func TestDeferredWeightHash(t *testing.T) {
	dir := writeTestPlan(t)
	p, err := Open(dir, OpenOptions{DeferWeightHash: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.VerifyWeights(); err != nil {
		t.Fatalf("intact plan: %v", err)
	}
	p.Close()

	f, err := os.OpenFile(filepath.Join(dir, WeightsFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{1}, 3)
	f.Close()
	p, err = Open(dir, OpenOptions{DeferWeightHash: true})
	if err != nil {
		t.Fatalf("a deferred hash should not read the weights in Open: %v", err)
	}
	defer p.Close()
	if err := p.VerifyWeights(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "fail their hash") {
		t.Fatalf("altered weights: got %v, want ErrCorrupt naming the span", err)
	}
	if err := p.VerifyWeights(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a failed check must fail again, got %v", err)
	}
}
