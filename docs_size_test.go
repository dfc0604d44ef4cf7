package orc

import (
	"os"
	"path/filepath"
	"testing"
)

// referenceDocsLimit bounds what a reader of the project's reference docs
// reads: README.md, BENCHMARKS.md and the kernel notes together. History
// lives in git; a figure superseded is replaced, not appended.
const referenceDocsLimit = 60_000

func TestReferenceDocsStayShort(t *testing.T) {
	notes, err := filepath.Glob("codegen/cuda/notes/*.md")
	if err != nil || len(notes) == 0 {
		t.Fatalf("no kernel notes (%v)", err)
	}
	total := 0
	for _, f := range append([]string{"README.md", "BENCHMARKS.md"}, notes...) {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += int(st.Size())
	}
	if total > referenceDocsLimit {
		t.Fatalf("README.md, BENCHMARKS.md and codegen/cuda/notes/ hold %d bytes, over %d: replace superseded text rather than add to it", total, referenceDocsLimit)
	}
}
