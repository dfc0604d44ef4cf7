package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSplittersMatchRegex compares each hand-written splitter with its
// regex run by Python's `regex` module on the corpus (goldens from
// scripts/hf_tokenize.py split).
func TestSplittersMatchRegex(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "splits.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string][][]string
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	corpus := readCorpus(t)
	if len(golden) != len(splitters) {
		t.Errorf("goldens for %d splitters, %d splitters exist", len(golden), len(splitters))
	}
	for name, want := range golden {
		sp, ok := splitters[name]
		if !ok {
			t.Errorf("no splitter %q", name)
			continue
		}
		if len(want) != len(corpus) {
			t.Fatalf("%s: %d golden entries for %d corpus strings", name, len(want), len(corpus))
		}
		bad := 0
		for i, s := range corpus {
			got := sp.split(s, nil)
			if !slices.Equal(got, want[i]) {
				t.Errorf("%s: string %d %q:\n got %q\nwant %q", name, i, s, got, want[i])
				if bad++; bad > 5 {
					break
				}
			}
		}
	}
}
