package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// synth refuses a directory at -o, and an existing file without --force;
// neither is touched and nothing is left beside them.
func TestSynthKeepsUserFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "existing")
	os.Mkdir(dir, 0o755)
	file := filepath.Join(root, "existing.file")
	os.WriteFile(file, []byte("mine"), 0o644)
	hf := filepath.Join(root, "hf")
	os.Mkdir(hf, 0o755)
	os.WriteFile(filepath.Join(hf, "config.json"), []byte("mine"), 0o644)
	for _, c := range []struct {
		cmd  synthCmd
		want string
	}{
		{synthCmd{Preset: "llama-tiny", Output: dir}, dir + " is a directory"},
		{synthCmd{Preset: "llama-tiny", Output: dir, Force: true}, dir + " is a directory"},
		{synthCmd{Preset: "llama-tiny", Output: file}, file + " exists; --force replaces it"},
		{synthCmd{Preset: "llama-tiny", Output: filepath.Join(root, "new.gguf"), HFDir: hf}, hf + " is not empty"},
	} {
		if err := c.cmd.Run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cmd, err, c.want)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "mine" {
		t.Errorf("existing.file now %q", b)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 3 {
		t.Errorf("root holds %v", entries)
	}
	c := synthCmd{Preset: "llama-tiny", Output: file, Force: true, Seed: 1}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); !strings.HasPrefix(string(b), "GGUF") {
		t.Errorf("--force did not replace existing.file")
	}
}

// --check lists presets: it needs --list and a known check.
func TestSynthCheckErrors(t *testing.T) {
	for _, c := range []struct {
		cmd  synthCmd
		want string
	}{
		{synthCmd{Check: "bench"}, "--check bench lists presets; it needs --list"},
		{synthCmd{List: true, Check: "golden"}, `unknown check "golden"`},
	} {
		if err := c.cmd.Run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cmd, err, c.want)
		}
	}
}
