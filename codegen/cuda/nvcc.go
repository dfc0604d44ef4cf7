package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// ErrNoNVCC is returned by Compile when no nvcc is installed.
var ErrNoNVCC = errors.New("nvcc not found on PATH or under $CUDA_HOME/bin: install the CUDA toolkit " +
	"(Debian: add contrib non-free to /etc/apt/sources.list.d/debian.sources, then " +
	"apt-get install nvidia-cuda-toolkit; scripts/setup.d/20-nvcc.sh does this), or run orcc with --emit-only")

// FindNVCC returns the nvcc to use: $CUDA_HOME/bin/nvcc, then PATH, then
// /usr/local/cuda/bin/nvcc.
func FindNVCC() (string, error) {
	if h := os.Getenv("CUDA_HOME"); h != "" {
		if p := filepath.Join(h, "bin", "nvcc"); isExec(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p, nil
	}
	if p := "/usr/local/cuda/bin/nvcc"; isExec(p) {
		return p, nil
	}
	return "", ErrNoNVCC
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

var archRE = regexp.MustCompile(`^sm_[0-9]{2,3}a?$`)

// Compile runs nvcc on src and returns a fatbin holding SASS for arch (""
// = DefaultArch) and the PTX of the same virtual arch, which newer GPUs JIT.
func Compile(src, arch string) ([]byte, error) {
	if arch == "" {
		arch = DefaultArch
	}
	if !archRE.MatchString(arch) {
		return nil, fmt.Errorf("nvcc: arch %q is not of the form sm_NN", arch)
	}
	nvcc, err := FindNVCC()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "orc-nvcc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "kernels.cu"), filepath.Join(dir, "kernels.fatbin")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return nil, err
	}
	virt := "compute_" + arch[len("sm_"):]
	cmd := exec.Command(nvcc, "--fatbin", "-std=c++17", "-O3",
		"-gencode=arch="+virt+",code="+arch,
		"-gencode=arch="+virt+",code="+virt,
		"-o", out, in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("nvcc %s: %w\n%s", arch, err, stderr.String())
	}
	return os.ReadFile(out)
}
