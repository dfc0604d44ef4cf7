package runtime

import "fmt"

// LimitError is a generation request the device cannot run, checked before
// any work. Field is the request's name for what is wrong ("prompt",
// "max_tokens"); orcrun generate and the server report the same Message, each
// naming the field its own way (a flag, a JSON field).
type LimitError struct{ Field, Message string }

func (e *LimitError) Error() string { return e.Field + ": " + e.Message }

// CheckPrompt refuses a prompt of no tokens, or one that leaves no room in a
// context of contextLength tokens for a generated token (the context holds
// the prompt and every generated token).
func CheckPrompt(promptTokens, contextLength int) error {
	if promptTokens == 0 {
		return &LimitError{"prompt", "tokenizes to no tokens"}
	}
	if promptTokens >= contextLength {
		return &LimitError{"prompt", fmt.Sprintf("is %d tokens; the context holds %d", promptTokens, contextLength)}
	}
	return nil
}

// CheckMaxTokens refuses a max tokens below 1.
func CheckMaxTokens(maxTokens int) error {
	if maxTokens < 1 {
		return &LimitError{"max_tokens", fmt.Sprintf("must be at least 1, got %d", maxTokens)}
	}
	return nil
}
