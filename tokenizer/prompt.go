package tokenizer

// EncodePrompt tokenizes a prompt as the model expects to see it: special
// tokens written in the text are parsed, and bos is prepended when the
// model's metadata asks for it, unless the text already starts with it (the
// Phi-3 chat template writes <s> itself).
func EncodePrompt(t Tokenizer, text string) []int32 {
	return withBOS(t, t.Encode(text, true))
}

// EncodeChatPrompt tokenizes a rendered conversation as EncodePrompt does a
// prompt, except that control tokens in message content stay text.
func EncodeChatPrompt(t Tokenizer, p ChatPrompt) []int32 {
	return withBOS(t, t.EncodeChat(p))
}

func withBOS(t Tokenizer, ids []int32) []int32 {
	if info := t.Info(); info.AddBOS && info.BOS >= 0 && (len(ids) == 0 || ids[0] != info.BOS) {
		ids = append([]int32{info.BOS}, ids...)
	}
	return ids
}
