package synth

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every golden committed in testdata/reference belongs to a preset whose
// checks make it (regenerate.sh makes exactly those), and the GPU host's
// f16 and q4_k_m goldens only go with an f32 one, against which the
// export is held.
func TestChecksCoverCommittedGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "reference", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	f32, q4 := WithCheck(CheckGoldenF32), WithCheck(CheckGoldenQ4KM)
	n := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, err := Lookup(strings.TrimSuffix(name, "-q4_k_m")); err != nil || name == "gpt-oss-20b-2l" {
			continue // a real model's golden (stories260k), or one made by hand from an MXFP4 export (README)
		}
		n++
		if base, ok := strings.CutSuffix(name, "-q4_k_m"); ok {
			if !slices.Contains(q4, base) {
				t.Errorf("%s is committed but preset %s has no %s check", filepath.Base(f), base, CheckGoldenQ4KM)
			}
			continue
		}
		if !slices.Contains(f32, name) {
			t.Errorf("%s is committed but preset %s has no %s check", filepath.Base(f), name, CheckGoldenF32)
		}
	}
	if n == 0 {
		t.Fatal("no preset goldens found in testdata/reference")
	}
	for _, p := range append(WithCheck(CheckGoldenF16), q4...) {
		if !slices.Contains(f32, p) {
			t.Errorf("preset %s has an f16 or q4_k_m golden check without %s", p, CheckGoldenF32)
		}
	}
	for _, c := range Checks {
		if len(WithCheck(c)) == 0 {
			t.Errorf("check %s takes no preset", c)
		}
		if got, err := ParseCheck(string(c)); got != c || err != nil {
			t.Errorf("ParseCheck(%q) = %q, %v", c, got, err)
		}
	}
}
