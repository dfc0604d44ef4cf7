package gguf

import "testing"

// TestGuessFileTypeCounts checks the vote itself: 1-D tensors do not count,
// the most common matrix type wins, ties go to the lower type id, and an
// empty file is all F32.
func TestGuessFileTypeCounts(t *testing.T) {
	mat := func(typ Type) TensorInfo { return TensorInfo{Type: typ, Dims: []uint64{32, 4}} }
	vec := TensorInfo{Type: F32, Dims: []uint64{32}}
	cases := []struct {
		name    string
		tensors []TensorInfo
		want    string
	}{
		{"Q4_K beats Q6_K and F32 vectors", []TensorInfo{vec, vec, vec, vec, mat(Q6_K), mat(Q4_K), mat(Q4_K)}, "Q4_K_M"},
		{"Q8_0 matrices", []TensorInfo{vec, mat(Q8_0), mat(F16), mat(Q8_0)}, "Q8_0"},
		{"tie goes to the lower id", []TensorInfo{mat(Q8_0), mat(F16)}, "F16"},
		{"tie in the other order", []TensorInfo{mat(F16), mat(Q8_0)}, "F16"},
		{"one MXFP4 tensor", []TensorInfo{mat(Q8_0), mat(Q8_0), {Type: MXFP4, Dims: []uint64{32, 4, 2}}}, "MXFP4_MOE"},
		{"BF16", []TensorInfo{vec, mat(BF16)}, "BF16"},
		{"vectors only", []TensorInfo{vec}, "F32"},
	}
	for _, c := range cases {
		if got := FileTypeName(GuessFileType(&File{Tensors: c.tensors})); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
