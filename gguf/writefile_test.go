package gguf

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteFile refuses a directory at the path, and a failed write leaves
// nothing behind (no temporary file) and the old file as it was.
func TestWriteFileLeavesNothingOnFailure(t *testing.T) {
	root := t.TempDir()
	w := NewWriter()
	w.Set("general.architecture", "llama")
	if err := w.AddTensorBytes("t", F32, []uint64{1}, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "existing")
	os.Mkdir(dir, 0o755)
	if err := w.WriteFile(dir); err == nil || !strings.Contains(err.Error(), dir+" is a directory") {
		t.Errorf("directory: %v", err)
	}
	old := filepath.Join(root, "old.gguf")
	os.WriteFile(old, []byte("old"), 0o644)
	w.AddTensor("fails", F32, []uint64{1}, func(io.Writer) error { return errors.New("no data") })
	if err := w.WriteFile(old); err == nil {
		t.Error("a failing tensor wrote the file")
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Errorf("old file now %q", b)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}
