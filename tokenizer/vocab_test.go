package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readVocabCases reads llama.cpp's .inp/.out conformance vectors: inputs
// separated by "\n__ggml_vocab_test__\n", one line of ids per input.
func readVocabCases(t *testing.T, name string) (inputs []string, want [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(filepath.Join(shared, "vocab", name+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(shared, "vocab", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	inputs = strings.Split(strings.TrimSuffix(string(inp), "\n__ggml_vocab_test__\n"), "\n__ggml_vocab_test__\n")
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%s: %d inputs but %d output lines", name, len(inputs), len(lines))
	}
	for _, l := range lines {
		var ids []int32
		for _, f := range strings.Fields(l) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: bad id %q", name, f)
			}
			ids = append(ids, int32(id))
		}
		want = append(want, ids)
	}
	return inputs, want
}

// TestVocabConformance runs all 46 cases of each vocab GGUF.
func TestVocabConformance(t *testing.T) {
	for _, name := range []string{"ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"} {
		t.Run(name, func(t *testing.T) {
			tok, err := New(loadGGUFSpec(t, name))
			if err != nil {
				t.Fatal(err)
			}
			inputs, want := readVocabCases(t, name)
			if len(inputs) != 46 {
				t.Errorf("%d cases, want 46", len(inputs))
			}
			for i, in := range inputs {
				got := tok.Encode(in, false)
				if !slices.Equal(got, want[i]) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, in, got, want[i])
				}
				if back := tok.Decode(got); back != in {
					t.Errorf("case %d: decode(encode(%q)) = %q", i, in, back)
				}
			}
		})
	}
}
