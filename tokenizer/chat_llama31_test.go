package tokenizer

import (
	"testing"
	"time"
)

// The embedded Llama tokenizer carries Llama 3.0's template; the GGUF files
// of Llama 3.1, 3.2 and 3.3 carry Meta's later one. Its lines that apply
// without tools (tools is none, builtin_tools undefined), quoted:
//
//	{{- bos_token }}
//	{%- if not date_string is defined %}
//	    {%- set date_string = "26 Jul 2024" %}        (3.2: strftime_now("%d %b %Y") when defined)
//	{%- endif %}
//	{%- if messages[0]['role'] == 'system' %}
//	    {%- set system_message = messages[0]['content']|trim %}
//	    {%- set messages = messages[1:] %}
//	{%- else %}
//	    {%- set system_message = "" %}
//	{%- endif %}
//	{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
//	{{- "Cutting Knowledge Date: December 2023\n" }}
//	{{- "Today Date: " + date_string + "\n\n" }}
//	{{- system_message }}
//	{{- "<|eot_id|>" }}
//	{%- for message in messages %}
//	    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
//	        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
//	    {%- elif message.role == "tool" or message.role == "ipython" %}
//	        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
//	        {%- if message.content is mapping or message.content is iterable %}
//	            {{- message.content | tojson }}
//	        {%- else %}
//	            {{- message.content }}
//	        {%- endif %}
//	        {{- "<|eot_id|>" }}
//	    {%- endif %}
//	{%- endfor %}
//	{%- if add_generation_prompt %}
//	    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
//	{%- endif %}
//
// The expected texts below are written from these lines (checked once
// against jinja2 rendering the whole template as transformers does, on the
// conversations of testdata/chat-cases.json).
func TestRenderLlama31(t *testing.T) {
	chatNow = func() time.Time { return time.Date(2025, 8, 5, 12, 0, 0, 0, time.UTC) }
	defer func() { chatNow = time.Now }()
	const head = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: "
	const asst = "<|start_header_id|>assistant<|end_header_id|>\n\n"
	for _, c := range []struct {
		name, kind string
		msgs       []Message
		gen        bool
		want       string
	}{
		{"no system message: the system turn is still there", ChatLlama31, []Message{{Role: "user", Content: " Hi! "}}, true,
			head + "26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>" + asst},
		{"system trimmed after the date; a tool result is JSON", ChatLlama31, []Message{
			{Role: "system", Content: "\n Be brief. "}, {Role: "user", Content: "Weather?"},
			{Role: "assistant", Content: "Looking."}, {Role: "tool", Content: "\"sunny\"\n"}}, true,
			head + "26 Jul 2024\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWeather?<|eot_id|>" +
				asst + "Looking.<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n\"\\\"sunny\\\"\\n\"<|eot_id|>" + asst},
		{"3.2 dates today; no generation prompt", ChatLlama32, []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}}, false,
			head + "05 Aug 2025\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\na<|eot_id|>" + asst + "b<|eot_id|>"},
	} {
		got, err := RenderChat(c.kind, c.msgs, ChatOptions{GenerationPrompt: c.gen})
		if err != nil || got != c.want {
			t.Errorf("%s: %v\n got %q\nwant %q", c.name, err, got, c.want)
		}
	}
}

// TestChatKindFromTemplate: the kind comes from markers of each family's
// template text, else from the architecture.
func TestChatKindFromTemplate(t *testing.T) {
	for _, c := range []struct{ template, arch, want string }{
		{"{{ '<|start|>' }}{{ '<|channel|>' }}", "", ChatHarmony},
		{"<|im_start|>{{ '<think>\\n' }}", "", ChatQwen3},
		{"<|im_start|>system\\nYou are Qwen", "", ChatChatML},
		{"{{ bos_token }}<start_of_turn>user", "", ChatGemma},
		{"<|start_header_id|>{{ role }}<|end_header_id|>", "", ChatLlama3},
		{"<|start_header_id|>system Cutting Knowledge Date: December 2023 {{ date_string }}", "", ChatLlama31},
		{"strftime_now(\"%d %b %Y\") <|start_header_id|> Cutting Knowledge Date: December 2023", "", ChatLlama32},
		{"<|user|> <|assistant|>", "", ChatPhi3},
		{"{{ unknown }}", "qwen3", ChatNone},
		{"", "qwen3moe", ChatQwen3},
		{"", "gemma3", ChatGemma},
		{"", "llama", ChatNone},
	} {
		if got := chatKind(c.template, c.arch); got != c.want {
			t.Errorf("chatKind(%q, %q) = %q, want %q", c.template, c.arch, got, c.want)
		}
	}
}
