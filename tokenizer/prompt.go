package tokenizer

// EncodePrompt tokenizes a prompt as the model expects to see it: special
// tokens written in the text are parsed, and bos is prepended when the
// model's metadata asks for it, unless the text already starts with it (the
// Phi-3 chat template writes <s> itself).
func EncodePrompt(t Tokenizer, text string) []int32 {
	ids := t.Encode(text, true)
	if info := t.Info(); info.AddBOS && info.BOS >= 0 && (len(ids) == 0 || ids[0] != info.BOS) {
		ids = append([]int32{info.BOS}, ids...)
	}
	return ids
}
