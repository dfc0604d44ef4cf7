package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/llama-orch/orc/internal/httpjson"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/tokenizer"
)

// OpenAI-compatible endpoints. Requests map onto the worker API's job; the
// extra sampling fields of llama.cpp's server (top_k, min_p,
// repetition_penalty) are accepted too.

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func writeOpenAIError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	e := openAIError{Message: msg, Type: typ, Code: code}
	if param != "" {
		e.Param = &param
	}
	httpjson.Write(w, status, map[string]any{"error": e})
}

// writeOpenAIRequestError answers a validation failure with 400 in
// OpenAI's error shape, naming the field as param.
func (s *Server) writeOpenAIRequestError(w http.ResponseWriter, err error) {
	s.metrics.request(outcomeInvalid)
	s.refusals.note(codeInvalidRequest)
	var re *requestError
	if errors.As(err, &re) {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_value", re.Field, re.Error())
		return
	}
	writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_value", "", err.Error())
}

// stringOrList is OpenAI's "string or array of strings".
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("must be a string or an array of strings")
	}
	*s = many
	return nil
}

// messageContent is a chat message's content: a string or text parts.
type messageContent string

func (c *messageContent) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*c = messageContent(one)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := decodeJSON(b, &parts, false); err != nil {
		var re *requestError
		if errors.As(err, &re) && re.Field != "body" {
			return err
		}
		return errors.New("must be a string or an array of text parts")
	}
	var sb strings.Builder
	for i, p := range parts {
		if p.Type != "text" {
			return invalid(fmt.Sprintf("[%d].type", i), "content part type %q is not supported (text only)", p.Type)
		}
		sb.WriteString(p.Text)
	}
	*c = messageContent(sb.String())
	return nil
}

// openAISampling are the fields both endpoints share. Fields of OpenAI's
// API that would change the result and that orc does not implement are
// refused when set (checkUnsupported), never ignored.
type openAISampling struct {
	Model             string       `json:"model"`
	MaxTokens         *int         `json:"max_tokens"`
	MaxCompletion     *int         `json:"max_completion_tokens"`
	Temperature       *float64     `json:"temperature"`
	TopP              *float64     `json:"top_p"`
	TopK              *int         `json:"top_k"`
	MinP              *float64     `json:"min_p"`
	RepetitionPenalty *float64     `json:"repetition_penalty"`
	Seed              *uint64      `json:"seed"`
	Stop              stringOrList `json:"stop"`
	Stream            bool         `json:"stream"`
	StreamOptions     *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user"`

	FrequencyPenalty *float64 `json:"frequency_penalty"`
	PresencePenalty  *float64 `json:"presence_penalty"`

	N              *int               `json:"n"`
	LogitBias      map[string]float64 `json:"logit_bias"`
	Logprobs       json.RawMessage    `json:"logprobs"` // a bool (chat) or an integer (completions)
	TopLogprobs    *int               `json:"top_logprobs"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Tools     []json.RawMessage `json:"tools"`
	Functions []json.RawMessage `json:"functions"`
}

// checkUnsupported refuses the fields that would change the result and
// that orc does not implement, when they ask for anything but the default.
func (o *openAISampling) checkUnsupported() error {
	switch {
	case o.N != nil && *o.N != 1:
		return invalid("n", "only n = 1 is supported (one choice per request), got %d", *o.N)
	case len(o.LogitBias) > 0:
		return invalid("logit_bias", "token biases are not supported")
	case len(o.Logprobs) > 0 && string(o.Logprobs) != "null" && string(o.Logprobs) != "false" && string(o.Logprobs) != "0":
		return invalid("logprobs", "log probabilities are not supported")
	case o.TopLogprobs != nil && *o.TopLogprobs != 0:
		return invalid("top_logprobs", "log probabilities are not supported")
	case o.ResponseFormat != nil && o.ResponseFormat.Type != "" && o.ResponseFormat.Type != "text":
		return invalid("response_format", "only type \"text\" is supported, got %q", o.ResponseFormat.Type)
	case len(o.Tools) > 0:
		return invalid("tools", "tool calls are not supported")
	case len(o.Functions) > 0:
		return invalid("functions", "function calls are not supported")
	}
	return nil
}

// toExecute maps the request onto the worker API's; max_tokens above the
// worker's ceiling is capped to it (many OpenAI clients send 4096), as
// llama.cpp's server does: generation then ends with finish_reason
// "length" at the ceiling or when the context is full.
func (o *openAISampling) toExecute(maxTokensOut int) (*ExecuteRequest, error) {
	if err := o.checkUnsupported(); err != nil {
		return nil, err
	}
	req := &ExecuteRequest{JobID: "cmpl-" + newID(), MaxTokens: o.MaxTokens, Temperature: o.Temperature,
		TopP: o.TopP, TopK: o.TopK, MinP: o.MinP, RepetitionPenalty: o.RepetitionPenalty,
		FrequencyPenalty: o.FrequencyPenalty, PresencePenalty: o.PresencePenalty, Seed: o.Seed, Stop: o.Stop}
	if o.MaxCompletion != nil {
		req.MaxTokens = o.MaxCompletion
	}
	switch {
	case req.MaxTokens == nil:
	case *req.MaxTokens < 1:
		return nil, invalid("max_tokens", "must be at least 1, got %d", *req.MaxTokens)
	case *req.MaxTokens > maxTokensOut:
		req.MaxTokens = &maxTokensOut
	}
	return req, nil
}

type completionRequest struct {
	openAISampling
	Prompt stringOrList `json:"prompt"`
}

type chatRequest struct {
	openAISampling
	Messages []struct {
		Role    string         `json:"role"`
		Content messageContent `json:"content"`
		// Reasoning is an earlier assistant turn's reasoning_content, sent
		// back for templates that render it (Qwen3 keeps it after the last
		// user turn).
		Reasoning string `json:"reasoning_content"`
	} `json:"messages"`
	// ChatTemplateKwargs are template variables, as vLLM and llama.cpp's
	// server take them; enable_thinking is the one orc's templates read.
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
}

// chatOptions reads the template variables of a chat request; a variable
// orc's templates do not implement is refused, since the model's own
// template might have used it.
func (c *chatRequest) chatOptions() (tokenizer.ChatOptions, error) {
	opt := tokenizer.ChatOptions{GenerationPrompt: true}
	for key, raw := range c.ChatTemplateKwargs {
		field := "chat_template_kwargs." + key
		switch key {
		case "enable_thinking":
			var on bool
			if err := json.Unmarshal(raw, &on); err != nil {
				return opt, invalid(field, "must be true or false")
			}
			opt.NoThinking = !on
		default:
			return opt, invalid(field, "template variable %q is not supported (enable_thinking only)", key)
		}
	}
	return opt, nil
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	httpjson.Write(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{
		"id": s.info.Model, "object": "model", "created": s.started.Unix(), "owned_by": "orc",
	}}})
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if err := s.decodeOpenAI(w, r, &req); err != nil {
		s.writeOpenAIRequestError(w, err)
		return
	}
	if len(req.Prompt) != 1 {
		s.writeOpenAIRequestError(w, invalid("prompt", "exactly one prompt string is supported"))
		return
	}
	exec, err := req.toExecute(s.cfg.MaxTokensOut)
	if err != nil {
		s.writeOpenAIRequestError(w, err)
		return
	}
	exec.Prompt = req.Prompt[0]
	if exec.MaxTokens == nil {
		sixteen := 16 // OpenAI's default for completions
		exec.MaxTokens = &sixteen
	}
	s.serveOpenAI(w, r, exec, &req.openAISampling, nil, nil)
}

func (s *Server) handleChatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := s.decodeOpenAI(w, r, &req); err != nil {
		s.writeOpenAIRequestError(w, err)
		return
	}
	exec, err := req.toExecute(s.cfg.MaxTokensOut)
	if err != nil {
		s.writeOpenAIRequestError(w, err)
		return
	}
	if len(req.Messages) == 0 {
		s.writeOpenAIRequestError(w, invalid("messages", "must hold at least one message"))
		return
	}
	msgs := make([]tokenizer.Message, len(req.Messages))
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant":
		default:
			s.writeOpenAIRequestError(w, invalid(fmt.Sprintf("messages[%d].role", i), "unsupported role %q (system, developer, user or assistant)", m.Role))
			return
		}
		msgs[i] = tokenizer.Message{Role: m.Role, Content: string(m.Content), Thinking: m.Reasoning}
	}
	opt, err := req.chatOptions()
	if err != nil {
		s.writeOpenAIRequestError(w, err)
		return
	}
	prompt, err := tokenizer.RenderChatPrompt(s.tok.Info().Chat, msgs, opt)
	if err != nil {
		s.writeOpenAIRequestError(w, invalid("messages", "%v", err))
		return
	}
	exec.Prompt = prompt.Text
	exec.JobID = "chatcmpl-" + newID()
	reply, err := chatReplyParser(s.tok)
	if err != nil {
		s.metrics.request(outcomeError)
		writeOpenAIError(w, http.StatusInternalServerError, "server_error", "reply_tokens", "", err.Error())
		return
	}
	s.serveOpenAI(w, r, exec, &req.openAISampling, &prompt, reply)
}

func (s *Server) decodeOpenAI(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	return decodeJSON(body, v, true)
}

// serveOpenAI runs a job and answers in OpenAI's shapes, streamed as
// "data:" chunks ending with [DONE], or as one JSON object; a chat request
// comes with its rendered conversation. With a reply parser (the chat of a
// reasoning model: gpt-oss, Qwen3) the reasoning goes to reasoning_content.
func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request, exec *ExecuteRequest, o *openAISampling, conversation *tokenizer.ChatPrompt, reply func() detokenizer) {
	chat, streaming := conversation != nil, o.Stream
	j, err := s.newJob(r, exec, conversation)
	if err != nil {
		s.writeOpenAIRequestError(w, err)
		return
	}
	j.reply = reply
	if !s.submit(w, j, writeOpenAIRefusal) {
		return
	}
	created := time.Now().Unix()
	object := "text_completion"
	if chat {
		object = "chat.completion"
	}
	var text, reasoning strings.Builder
	var tokens int
	finish := ""
	var failure *errorEvent
	// choice is one choice object; channel routes a chat text to content
	// or, for the analysis channel, reasoning_content.
	choice := func(channel, delta string, reason *string) map[string]any {
		c := map[string]any{"index": 0, "finish_reason": reason}
		field := "content"
		if channel == channelAnalysis {
			field = "reasoning_content"
		}
		switch {
		case chat && streaming:
			d := map[string]any{}
			if delta != "" {
				d[field] = delta
			}
			c["delta"] = d
		case chat:
			msg := map[string]any{"role": "assistant", "content": delta}
			if reply != nil {
				msg["reasoning_content"] = reasoning.String()
			}
			c["message"] = msg
		default:
			c["text"] = delta
			c["logprobs"] = nil
		}
		return c
	}
	var sse *sseWriter
	// send writes one chunk object holding choice c.
	send := func(c map[string]any) error {
		obj := object
		if chat {
			obj += ".chunk"
		}
		return sse.dataJSON(map[string]any{"id": j.id, "object": obj, "created": created, "model": s.info.Model, "choices": []any{c}})
	}
	chunk := func(channel, delta string, reason *string) error { return send(choice(channel, delta, reason)) }
	if streaming {
		if sse, err = newSSE(w); err != nil {
			j.markCancelled(errDisconnected)
			return
		}
	}
	s.stream(r.Context(), j, sendWithin(w, s.cfg.Limits.StreamWriteTimeout, func(e event) error {
		switch d := e.Data.(type) {
		case startedEvent:
			if streaming && chat {
				return send(map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil})
			}
		case tokenEvent:
			if d.Channel == channelAnalysis {
				reasoning.WriteString(d.T)
			} else {
				text.WriteString(d.T)
			}
			if streaming {
				return chunk(d.Channel, d.T, nil)
			}
		case endEvent:
			tokens = d.TokensOut
			finish = finishReason(d.StopReason)
			if streaming {
				if err := chunk("", "", &finish); err != nil {
					return err
				}
				if o.StreamOptions != nil && o.StreamOptions.IncludeUsage {
					if err := sse.dataJSON(map[string]any{"id": j.id, "object": object + ".chunk", "created": created, "model": s.info.Model,
						"choices": []any{}, "usage": usage(len(j.prompt), tokens)}); err != nil {
						return err
					}
				}
				return sse.data([]byte("[DONE]"))
			}
		case errorEvent:
			failure = &d
			if streaming {
				sse.dataJSON(map[string]any{"error": openAIError{Message: d.Message, Type: "server_error", Code: strings.ToLower(d.Code)}})
			}
		}
		return nil
	}))
	if streaming {
		return
	}
	if failure != nil {
		status := http.StatusInternalServerError
		if failure.Retriable {
			status = http.StatusServiceUnavailable
		}
		writeOpenAIError(w, status, "server_error", strings.ToLower(failure.Code), "", failure.Message)
		return
	}
	if finish == "" { // client went away before the end
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"id": j.id, "object": object, "created": created, "model": s.info.Model,
		"choices": []any{choice("", text.String(), &finish)},
		"usage":   usage(len(j.prompt), tokens),
	})
}

func usage(prompt, completion int) map[string]int {
	return map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
}

// finishReason is OpenAI's name for why generation ended: "stop" at end of
// text or a stop string, "length" when max_tokens or the context ran out.
func finishReason(stopReason string) string {
	if stopReason == runtime.StopEOS || stopReason == "stop" {
		return "stop"
	}
	return "length"
}

// writeOpenAIRefusal writes a queue refusal in OpenAI's error shape.
func writeOpenAIRefusal(w http.ResponseWriter, status int, code, msg string) {
	typ := "server_error"
	switch status {
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case http.StatusConflict:
		typ = "invalid_request_error"
	}
	writeOpenAIError(w, status, typ, strings.ToLower(code), "", msg)
}
