package plans

import (
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzDecodeManifest feeds arbitrary bytes to the manifest decoder: it must
// return a manifest or an error wrapping ErrCorrupt or ErrStale, never
// panic.
func FuzzDecodeManifest(f *testing.F) {
	m := &Manifest{FormatVersion: FormatVersion, Target: "cpu", Model: Model{Name: "t", Arch: "llama", NLayer: 2},
		Tensors: []Tensor{{Name: "a", DType: "f32", Shape: []int64{4}, Bytes: 16}},
		Kernels: &Kernels{Arch: "sm_90", Decode: []Launch{{Kernel: "k", Args: []Arg{{Kind: ArgArena, Offset: 256}}}}},
		Files:   map[string]string{WeightsFile: "00"}}
	body, err := msgpack.Marshal(m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encodeManifest(body))
	f.Add(encodeManifest(nil))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeManifest(raw)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrStale) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrStale", err)
			}
			return
		}
		if got.FormatVersion != FormatVersion {
			t.Fatalf("accepted a manifest of version %d", got.FormatVersion)
		}
	})
}
