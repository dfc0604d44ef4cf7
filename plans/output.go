package plans

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrOccupied is wrapped when the path a plan is to be written at holds
// something that is not a plan: a file, or a directory with other files.
// Only an explicit force replaces it.
var ErrOccupied = errors.New("not a plan")

// outputKind is what a plan's output path holds now.
type outputKind int

const (
	outputAbsent   outputKind = iota // nothing: the plan directory is created
	outputEmptyDir                   // an empty directory
	outputPlan                       // a plan (its manifest has the magic), or an --emit-only output
	outputOtherDir                   // a directory holding other files (replaced only when forced)
	outputFile                       // a file or other non-directory (replaced only when forced)
)

// planFiles are the names a plan directory consists of; only these are
// ever removed from an existing directory, and only from a plan.
var planFiles = []string{ManifestFile, WeightsFile, KernelsFile, SourceFile}

// CheckOutput says whether a plan may be written at dir: nothing there, an
// empty directory, or a plan (recognised by its manifest; a directory holding
// only the CUDA source of an --emit-only compile counts too). Anything else is
// refused with an error wrapping ErrOccupied that names the path, unless
// force.
func CheckOutput(dir string, force bool) error {
	_, err := checkOutput(dir, force)
	return err
}

func checkOutput(dir string, force bool) (outputKind, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return outputAbsent, nil
	}
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		if force {
			return outputFile, nil
		}
		return 0, fmt.Errorf("plans: %s is a file, %w", dir, ErrOccupied)
	}
	if isPlan(dir) {
		return outputPlan, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	switch {
	case len(entries) == 0:
		return outputEmptyDir, nil
	case len(entries) == 1 && entries[0].Name() == SourceFile:
		return outputPlan, nil
	case force:
		return outputOtherDir, nil
	}
	return 0, fmt.Errorf("plans: %s holds %s, %w", dir, describeEntries(entries), ErrOccupied)
}

// isPlan reports whether dir holds a manifest starting with the plan magic
// (of any format version: a stale plan is still a plan).
func isPlan(dir string) bool {
	f, err := os.Open(filepath.Join(dir, ManifestFile))
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, len(Magic))
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == Magic
}

// describeEntries names up to three of a directory's entries.
func describeEntries(entries []os.DirEntry) string {
	names := []string{}
	for _, e := range entries[:min(3, len(entries))] {
		names = append(names, e.Name())
	}
	s := strings.Join(names, ", ")
	if n := len(entries) - len(names); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}
