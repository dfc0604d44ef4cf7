package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
)

// hfConfig is the part of a Hugging Face tokenizer_config.json we read.
type hfConfig struct {
	ChatTemplate json.RawMessage `json:"chat_template"`
	BOSToken     json.RawMessage `json:"bos_token"`
	EOSToken     json.RawMessage `json:"eos_token"`
	AddBOSToken  *bool           `json:"add_bos_token"`
}

// ApplyHFConfig adds what a tokenizer_config.json says to a spec read from
// its tokenizer.json: the chat template (kept for WriteGGUF, and choosing the
// chat kind where it is one RenderChat knows), bos and whether to add it,
// and eos, which joins the stop ids (the family's eos stays eos, as
// llama.cpp's conversion keeps it: Gemma's <eos> with <end_of_turn> as a
// further stop).
func (s *Spec) ApplyHFConfig(data []byte) error {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("tokenizer: tokenizer_config.json: %w", err)
	}
	template, err := hfChatTemplate(c.ChatTemplate)
	if err != nil {
		return err
	}
	if template != "" {
		s.ChatTemplate = template
		if kind := chatKind(template, ""); kind != ChatNone {
			s.Chat = kind
		}
	}
	if c.AddBOSToken != nil {
		s.AddBOS = *c.AddBOSToken
	}
	for _, t := range []struct {
		field string
		raw   json.RawMessage
		set   func(int32)
	}{
		{"bos_token", c.BOSToken, func(id int32) { s.BOS = id }},
		{"eos_token", c.EOSToken, func(id int32) {
			if id != s.EOS && !slices.Contains(s.EOSIDs, id) {
				s.EOSIDs = append(s.EOSIDs, id)
			}
		}},
	} {
		text, err := hfTokenText(t.raw)
		if err != nil {
			return fmt.Errorf("tokenizer: tokenizer_config.json %s: %w", t.field, err)
		}
		if text == "" {
			continue
		}
		id := slices.Index(s.Tokens, text)
		if id < 0 {
			return fmt.Errorf("tokenizer: tokenizer_config.json %s %q is not in the vocabulary", t.field, text)
		}
		t.set(int32(id))
	}
	return s.Validate()
}

// hfChatTemplate reads chat_template: a string, or a list of named
// templates of which "default" is the chat one.
func hfChatTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return one, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("tokenizer: tokenizer_config.json chat_template is neither a string nor a list of named templates")
	}
	for _, t := range named {
		if t.Name == "default" {
			return t.Template, nil
		}
	}
	return "", nil
}

// hfTokenText reads a token field: a string, an AddedToken object
// {"content": ...}, or null.
func hfTokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("neither a string nor an object with content")
	}
	return obj.Content, nil
}
