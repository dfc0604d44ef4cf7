// Package scripts holds the set-up and GPU-host shell scripts; this test
// checks what set-up installs for which purpose.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBin is a PATH with only the tools the set-up scripts use; the
// installers (apt-get, npm) are recorders, nvidia-smi finds no GPU, and
// neither nvcc nor a CUDA_HOME exists.
func fakeBin(t *testing.T) (path, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "installs")
	for _, tool := range []string{"bash", "id", "sed", "grep", "tail", "env", "dirname"} {
		real, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s: %v", tool, err)
		}
		if err := os.Symlink(real, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	fake := map[string]string{
		"apt-get":    "echo apt-get \"$@\" >>" + record,
		"npm":        "echo npm \"$@\" >>" + record,
		"nvidia-smi": "echo 'NVIDIA-SMI has failed' >&2; exit 9",
	}
	for name, body := range fake {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, record
}

// For the demo on a machine without a GPU, set-up installs neither the CUDA
// toolkit nor the Node SDK (make test needs them, the CPU demo does not), and
// says what it skipped.
func TestSetupDemoWithoutGPU(t *testing.T) {
	path, record := fakeBin(t)
	run := func(purpose, script string) string {
		cmd := exec.Command(filepath.Join(path, "bash"), filepath.Join("scripts", "setup.d", script))
		cmd.Dir = ".."
		cmd.Env = []string{"PATH=" + path, "CUDA_HOME=" + t.TempDir(), "ORC_SETUP_FOR=" + purpose, "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s for %s: %v\n%s", script, purpose, err, out)
		}
		return string(out)
	}
	out := run("demo", "20-nvcc.sh") + run("demo", "30-openai-node.sh")
	for _, want := range []string{"skipped the CUDA toolkit", "skipped the OpenAI Node SDK"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo set-up said %q, want %q", out, want)
		}
	}
	if b, err := os.ReadFile(record); err == nil {
		t.Errorf("demo set-up without a GPU installed:\n%s", b)
	}
}
