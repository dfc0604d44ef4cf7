package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// chatCase is one conversation of testdata/chat-cases.json, in the OpenAI
// form the jinja templates read.
type chatCase struct {
	Name     string `json:"name"`
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		Reasoning string `json:"reasoning_content"`
	} `json:"messages"`
	AddGenerationPrompt bool `json:"add_generation_prompt"`
	Kwargs              struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"kwargs"`
}

// chatGolden is what scripts/js_tokenize.cjs chat writes: each case
// rendered by the model's own jinja template, or the template's error.
type chatGolden struct {
	Template string `json:"template"`
	// Date is the day the template's strftime_now gave, YYYY-MM-DD.
	Date    string `json:"date"`
	Results []struct {
		Text  *string `json:"text"`
		Error string  `json:"error"`
	} `json:"results"`
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestChatTemplatesMatchJinja renders every case with the Go templates and
// compares the text with the models' tokenizer_config.json templates
// rendered by a jinja engine; where the template raises, so must Go.
func TestChatTemplatesMatchJinja(t *testing.T) {
	var common []chatCase
	readJSON(t, "chat-cases.json", &common)
	for _, f := range []struct{ family, kind string }{{"qwen3", ChatQwen3}, {"gemma3", ChatGemma}, {"llama3", ChatLlama3}, {"smollm3", ChatSmolLM3}} {
		t.Run(f.family, func(t *testing.T) {
			// A family's own cases (chat-cases-<family>.json) follow the
			// common ones in its golden.
			cases := common
			if _, err := os.Stat(filepath.Join("testdata", "chat-cases-"+f.family+".json")); err == nil {
				var own []chatCase
				readJSON(t, "chat-cases-"+f.family+".json", &own)
				cases = append(append([]chatCase(nil), common...), own...)
			}
			var g chatGolden
			readJSON(t, "chat-"+f.family+".golden.json", &g)
			if g.Date != "" {
				day, err := time.Parse(time.DateOnly, g.Date)
				if err != nil {
					t.Fatalf("golden date: %v", err)
				}
				chatNow = func() time.Time { return day.Add(12 * time.Hour) }
				defer func() { chatNow = time.Now }()
			}
			if len(g.Results) != len(cases) {
				t.Fatalf("golden has %d results for %d cases; regenerate it", len(g.Results), len(cases))
			}
			for i, c := range cases {
				msgs := make([]Message, len(c.Messages))
				for j, m := range c.Messages {
					msgs[j] = Message{Role: m.Role, Content: m.Content, Thinking: m.Reasoning}
				}
				opt := ChatOptions{GenerationPrompt: c.AddGenerationPrompt, NoThinking: c.Kwargs.EnableThinking != nil && !*c.Kwargs.EnableThinking}
				got, err := RenderChat(f.kind, msgs, opt)
				want := g.Results[i]
				switch {
				case want.Text == nil && err == nil:
					t.Errorf("%s: rendered %q; the template refuses it (%s)", c.Name, got, want.Error)
				case want.Text != nil && err != nil:
					t.Errorf("%s: %v", c.Name, err)
				case want.Text != nil && got != *want.Text:
					t.Errorf("%s:\n got %q\nwant %q", c.Name, got, *want.Text)
				}
			}
		})
	}
}

// TestTrimPython: jinja's trim is Python's str.strip() in transformers,
// whose whitespace includes the information separators U+001C–U+001F that
// Go's unicode.IsSpace (and JavaScript's trim) leave.
func TestTrimPython(t *testing.T) {
	for in, want := range map[string]string{
		"\x1c\x1d text \x1e\x1f": "text",
		" \t\n\v\f\r\u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x\u3000": "x",
		"\u200bzero-width stays\u200b": "\u200bzero-width stays\u200b", // not whitespace in Python either
	} {
		if got := trimPython(in); got != want {
			t.Errorf("trimPython(%q) = %q, want %q", in, got, want)
		}
	}
}
