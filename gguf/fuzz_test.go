package gguf

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the committed fuzz seed corpus under testdata/fuzz/FuzzParse")

// seedDir is where `go test` finds the committed corpus that it replays.
const seedDir = "testdata/fuzz/FuzzParse"

// FuzzParse feeds arbitrary bytes to Parse. A rejected input must fail with
// ErrMalformed; an accepted one must hand out tensor bytes of the declared
// size and survive a write/parse round trip unchanged.
func FuzzParse(f *testing.F) {
	for _, c := range malformedCases() {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %q does not wrap ErrMalformed", err)
			}
			return
		}
		for i := range file.Tensors {
			ti := &file.Tensors[i]
			if d := file.Data(ti); uint64(len(d)) != ti.Bytes() {
				t.Fatalf("tensor %s: %d data bytes, %d declared", ti.Name, len(d), ti.Bytes())
			}
		}
		once := rewrite(t, file)
		again, err := Parse(once)
		if err != nil {
			t.Fatalf("the rewritten file does not parse: %v", err)
		}
		if twice := rewrite(t, again); !bytes.Equal(once, twice) {
			t.Fatalf("rewriting is not stable: %d then %d bytes", len(once), len(twice))
		}
	})
}

// rewrite writes f's metadata and tensors through the Writer.
func rewrite(t *testing.T, f *File) []byte {
	w := NewWriter()
	w.Version = f.Version
	w.Alignment = f.Alignment
	for _, kv := range f.KVs {
		w.Set(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if err := w.AddTensorBytes(ti.Name, ti.Type, ti.Dims, f.Data(ti)); err != nil {
			t.Fatalf("the writer refuses a tensor the reader accepted: %v", err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("the writer refuses a file the reader accepted: %v", err)
	}
	return buf.Bytes()
}

// TestFuzzSeeds keeps the committed seed corpus honest: the valid files the
// Writer produces for each version are there and still parse. -update
// rewrites them.
func TestFuzzSeeds(t *testing.T) {
	for _, v := range []uint32{1, 2, 3} {
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", richFile(t, v))
		path := filepath.Join(seedDir, fmt.Sprintf("writer-v%d", v))
		if *update {
			if err := os.MkdirAll(seedDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./gguf -run TestFuzzSeeds -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s is stale: run go test ./gguf -run TestFuzzSeeds -update", path)
		}
	}
}
