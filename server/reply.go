package server

import "github.com/llama-orch/orc/tokenizer"

// chatReplyParser returns what splits this model's chat replies into
// reasoning and answer, chosen by the reply format of its chat template
// (Harmony frames for gpt-oss, <think> tags for Qwen3), or nil when a reply
// is all answer.
func chatReplyParser(tok tokenizer.Tokenizer) (func() detokenizer, error) {
	switch tokenizer.ReplyFormat(tok.Info().Chat) {
	case tokenizer.ReplyHarmony:
		frames, err := harmonyTokensOf(tok)
		if err != nil {
			return nil, err
		}
		return func() detokenizer { return newHarmonyParser(tok, frames) }, nil
	case tokenizer.ReplyThink:
		tags, err := thinkTagsOf(tok)
		if err != nil {
			return nil, err
		}
		return func() detokenizer { return newThinkParser(tok, tags) }, nil
	}
	return nil, nil
}
