package gguf

// ftypeOfTensorType is llama.cpp's guess of general.file_type from the
// dominant tensor type (llama_model_loader): K-quants guess their _M mix.
var ftypeOfTensorType = map[Type]uint32{
	F32: FileTypeAllF32, F16: FileTypeF16, BF16: FileTypeBF16,
	Q4_0: FileTypeQ4_0, Q5_0: FileTypeQ5_0, Q8_0: FileTypeQ8_0,
	Q4_K: FileTypeQ4_K_M, Q5_K: FileTypeQ5_K_M, Q6_K: FileTypeQ6_K,
	MXFP4: FileTypeMXFP4MoE,
}

// GuessFileType derives general.file_type for a file that lacks it
// (stories260k is GGUF v1 without it) from its weight matrices: MXFP4
// anywhere means llama.cpp's MXFP4_MOE mix (its quantizer writes MXFP4 in
// no other mode, and the Q8_0 attention matrices outnumber the experts),
// else the most common type of the tensors of two or more dims. llama.cpp
// counts 1-D tensors too, which are F32 whatever the mix and would make a
// quantized gpt-oss "all F32"; "mostly" in its names means except 1-D.
func GuessFileType(f *File) uint32 {
	count := map[Type]int{}
	best := F32
	for _, t := range f.Tensors {
		if len(t.Dims) < 2 {
			continue
		}
		if t.Type == MXFP4 {
			return FileTypeMXFP4MoE
		}
		count[t.Type]++
		// Ties go to the lower type id so the guess does not depend on
		// tensor order.
		if count[t.Type] > count[best] || (count[t.Type] == count[best] && t.Type < best) {
			best = t.Type
		}
	}
	if ft, ok := ftypeOfTensorType[best]; ok {
		return ft
	}
	return FileTypeAllF32
}
