package plans

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writePlanAt writes a small plan at dir with o, with kernels when gpu.
func writePlanAt(dir string, o WriteOptions, gpu bool) error {
	m := &Manifest{Target: "cpu", Model: Model{Name: "t", Arch: "llama"}, Tensors: []Tensor{
		{Name: "a", DType: "f32", Shape: []int64{3}, Bytes: 12},
	}}
	var extra map[string][]byte
	if gpu {
		m.Target = "sm_90"
		extra = map[string][]byte{KernelsFile: []byte("fatbin"), SourceFile: []byte("src")}
	}
	return o.Write(dir, m, func(i int, tt *Tensor, w io.Writer) error {
		_, err := w.Write(make([]byte, tt.Bytes))
		return err
	}, extra)
}

// entries lists a directory's names, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s: %q %v, want %q", path, b, err, want)
	}
}

func mustOpen(t *testing.T, dir string) {
	t.Helper()
	p, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// A directory holding other files is refused, naming it, and left as it was;
// nothing is left beside it.
func TestWriteRefusesOtherDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "mydir")
	os.Mkdir(dir, 0o755)
	mustWrite(t, filepath.Join(dir, "notes.txt"), "mine")
	err := writePlanAt(dir, WriteOptions{}, false)
	if !errors.Is(err, ErrOccupied) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("got %v, want ErrOccupied naming %s and notes.txt", err, dir)
	}
	mustRead(t, filepath.Join(dir, "notes.txt"), "mine")
	if got := entries(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("mydir holds %v", got)
	}
	if got := entries(t, root); !slices.Equal(got, []string{"mydir"}) {
		t.Errorf("beside mydir: %v", got)
	}
}

// A file is refused, and replaced only with Force.
func TestWriteRefusesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.gguf")
	mustWrite(t, path, "GGUF")
	if err := writePlanAt(path, WriteOptions{}, false); !errors.Is(err, ErrOccupied) || !strings.Contains(err.Error(), path+" is a file") {
		t.Fatalf("got %v, want ErrOccupied saying %s is a file", err, path)
	}
	mustRead(t, path, "GGUF")
	if err := writePlanAt(path, WriteOptions{Force: true}, false); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, path)
	if got := entries(t, filepath.Dir(path)); !slices.Equal(got, []string{"q.gguf"}) {
		t.Errorf("beside the plan: %v", got)
	}
}

// Replacing a plan keeps the user's files inside and beside it (mydir.old
// and mydir.partial are the user's), and drops the old plan's kernels when the
// new plan has none.
func TestWriteReplacesPlanOnly(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "mydir")
	if err := writePlanAt(dir, WriteOptions{}, true); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "notes.txt"), "mine")
	for _, sib := range []string{"mydir.old", "mydir.partial"} {
		os.Mkdir(filepath.Join(root, sib), 0o755)
		mustWrite(t, filepath.Join(root, sib, "keep"), sib)
	}
	if err := writePlanAt(dir, WriteOptions{}, false); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, dir)
	if got, want := entries(t, dir), []string{ManifestFile, "notes.txt", WeightsFile}; !slices.Equal(got, want) {
		t.Errorf("mydir holds %v, want %v", got, want)
	}
	for _, sib := range []string{"mydir.old", "mydir.partial"} {
		mustRead(t, filepath.Join(root, sib, "keep"), sib)
	}
	if got, want := entries(t, root), []string{"mydir", "mydir.old", "mydir.partial"}; !slices.Equal(got, want) {
		t.Errorf("root holds %v, want %v", got, want)
	}
}

// An empty directory, a path with a trailing slash and the current
// directory all take a plan, and keep their identity (the current directory
// is not swapped out from under the shell).
func TestWriteIntoExistingDirectories(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	if err := writePlanAt(empty, WriteOptions{}, false); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, empty)

	t.Chdir(root)
	os.Mkdir("d2", 0o755)
	for range 2 { // a second write replaces the first plan
		if err := writePlanAt("d2/", WriteOptions{}, true); err != nil {
			t.Fatal(err)
		}
	}
	mustOpen(t, "d2")
	if err := writePlanAt("d3/", WriteOptions{}, false); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, "d3")

	cwd := filepath.Join(root, "cwd")
	os.Mkdir(cwd, 0o755)
	t.Chdir(cwd)
	before, _ := os.Stat(".")
	for range 2 {
		if err := writePlanAt(".", WriteOptions{}, false); err != nil {
			t.Fatal(err)
		}
	}
	mustOpen(t, ".")
	after, _ := os.Stat(cwd)
	if !os.SameFile(before, after) {
		t.Error("the current directory was replaced, not written into")
	}
	if got, want := entries(t, root), []string{"cwd", "d2", "d3", "empty"}; !slices.Equal(got, want) {
		t.Errorf("root holds %v, want %v", got, want)
	}
}

// Force writes a plan into a directory of other files and keeps them.
func TestWriteForceKeepsOtherFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mydir")
	os.Mkdir(dir, 0o755)
	mustWrite(t, filepath.Join(dir, "notes.txt"), "mine")
	if err := writePlanAt(dir, WriteOptions{Force: true}, false); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, dir)
	mustRead(t, filepath.Join(dir, "notes.txt"), "mine")
}

// A failed write leaves neither a stage nor a change behind.
func TestWriteFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plan")
	m := &Manifest{Tensors: []Tensor{{Name: "a", Bytes: 12}}}
	err := Write(dir, m, func(int, *Tensor, io.Writer) error { return errors.New("no bytes") }, nil)
	if err == nil {
		t.Fatal("write succeeded")
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("left behind: %v", got)
	}
}
