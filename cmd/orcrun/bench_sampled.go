package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
	"github.com/llama-orch/orc/server"
	"github.com/llama-orch/orc/tokenizer"
)

// samplingFlags name one sampled setting to measure besides greedy
// decoding; without any, bench measures defaultSettings.
type samplingFlags struct {
	Temperature       float32 `help:"Measure decoding at this temperature (with the flags below) besides greedy; default: greedy, 1.0, 0.7 with top_p 0.9, 0.7 with top_k 40 and repetition penalty 1.1."`
	TopP              float32 `name:"top-p" help:"top_p of the measured setting."`
	TopK              int     `name:"top-k" help:"top_k of the measured setting."`
	MinP              float32 `name:"min-p" help:"min_p of the measured setting."`
	RepetitionPenalty float32 `help:"Repetition penalty of the measured setting."`
	NoServed          bool    `help:"Skip the served figures (one streamed /v1/completions request per setting on loopback)."`
	ServedSlots       int     `default:"1" help:"The served figures' server batches this many slots, as serve --slots does: against 1, what batching costs a single stream."`
	PrefixTTFT        int     `name:"prefix-ttft" help:"With --served-slots above 1: time to first token of a streamed request of about this many prompt tokens, cold, then of one sharing all but its last sentence (prefix reuse)."`
}

// setting is one sampling setting bench measures.
type setting struct {
	Name   string        `json:"name"`
	Params sample.Params `json:"-"`
}

// defaultSettings are what clients send: greedy, the OpenAI default
// (temperature 1, no truncation), chat clients' nucleus sampling, and a
// llama.cpp-style top-k with a repetition penalty.
var defaultSettings = []setting{
	{"greedy", sample.Params{}},
	{"temperature 1", sample.Params{Temperature: 1, Seed: 1}},
	{"temperature 0.7, top_p 0.9", sample.Params{Temperature: 0.7, TopP: 0.9, Seed: 1}},
	{"temperature 0.7, top_k 40, repetition penalty 1.1", sample.Params{Temperature: 0.7, TopK: 40, RepetitionPenalty: 1.1, Seed: 1}},
}

// settings are the ones this run measures.
func (f *samplingFlags) settings() ([]setting, error) {
	p := sample.Params{Temperature: f.Temperature, TopP: f.TopP, TopK: f.TopK, MinP: f.MinP, RepetitionPenalty: f.RepetitionPenalty, Seed: 1}
	if p == (sample.Params{Seed: 1}) {
		return defaultSettings, nil
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	name := fmt.Sprintf("temperature %g, top_p %g, top_k %d, min_p %g, repetition penalty %g", p.Temperature, p.TopP, p.TopK, p.MinP, p.RepetitionPenalty)
	return []setting{defaultSettings[0], {name, p}}, nil
}

// sampledResult is one setting's decode figures: the bench loop's and, where
// measured, one streamed request's through the server.
type sampledResult struct {
	Setting     string  `json:"setting"`
	DecodeTokS  float64 `json:"decode_tok_s"`
	DecodeMsTok float64 `json:"decode_ms_per_token"`
	// ServedTokS is the decode rate one client sees streaming a
	// /v1/completions request with this setting on loopback: tokens after
	// the first over the time from the first to the last streamed text.
	ServedTokS   float64 `json:"served_tok_s,omitempty"`
	ServedTokens int     `json:"served_tokens,omitempty"`
}

// sampledDecode times c.TG decode steps after c.Depth + c.Prompt tokens, each step's
// token drawn with p from the window of the tokens fed (which are random,
// as in llama-bench): the path Generate takes.
func (c *benchCmd) sampledDecode(dev runtime.Device, info runtime.Info, rng *rand.Rand, p sample.Params) (float64, error) {
	seq, err := dev.NewSequence(c.Depth + c.Prompt + 1 + c.TG)
	if err != nil {
		return 0, err
	}
	defer seq.Close()
	history := randomTokens(rng, c.Depth+c.Prompt, info)
	if _, err := feed(seq, history, info); err != nil {
		return 0, err
	}
	sm := sample.New(p)
	step := func(id int32) error {
		history = append(history, id)
		_, err := runtime.ForwardSample(context.Background(), seq, []int32{id}, sm, history[max(0, len(history)-sample.PenaltyWindow):])
		return err
	}
	ids := randomTokens(rng, c.TG+1, info)
	if err := step(ids[0]); err != nil { // the graph's capture, untimed
		return 0, err
	}
	start := time.Now()
	for _, id := range ids[1:] {
		if err := step(id); err != nil {
			return 0, err
		}
	}
	return ms(time.Since(start)), nil
}

// prefixResult is --prefix-ttft's figure: served times to the first token
// (ms) of a prompt of Tokens tokens, cold and sharing all but its end with
// the one before.
type prefixResult struct {
	Tokens int     `json:"tokens"`
	ColdMs float64 `json:"cold_ms"`
	WarmMs float64 `json:"warm_ms"`
}

// startServed starts the server on dev on a loopback port, batching
// c.ServedSlots slots above 1; stop drains it and frees the batch's pool.
func (c *benchCmd) startServed(dev runtime.Device, tok tokenizer.Tokenizer) (url string, stop func(), err error) {
	batch, err := newScheduler(dev, c.ServedSlots, 0, 0)
	if err != nil {
		return "", nil, fmt.Errorf("bench: --served-slots: %w", err)
	}
	srv := server.New(server.Config{WorkerID: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Batch: batch}, dev, tok)
	srv.Start()
	drain := func() { // the batch's KV pool goes after the server that steps it
		srv.Drain()
		if batch != nil {
			batch.Close()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		drain()
		return "", nil, err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() { hs.Close(); drain() }, nil
}

// served streams one /v1/completions request of c.TG tokens with p per
// run through startServed's server; medians of the decode rate each
// request saw.
func (c *benchCmd) served(dev runtime.Device, tok tokenizer.Tokenizer, p sample.Params) (tokS float64, tokens int, err error) {
	url, stop, err := c.startServed(dev, tok)
	if err != nil {
		return 0, 0, err
	}
	defer stop()
	body := map[string]any{"prompt": strings.Repeat("The quick brown fox jumps over the lazy dog. ", max(1, (c.Depth+c.Prompt)/10)),
		"max_tokens": c.TG, "stream": true, "temperature": p.Temperature, "seed": p.Seed}
	if p.TopP > 0 {
		body["top_p"] = p.TopP
	}
	if p.TopK > 0 {
		body["top_k"] = p.TopK
	}
	if p.MinP > 0 {
		body["min_p"] = p.MinP
	}
	if p.RepetitionPenalty > 0 {
		body["repetition_penalty"] = p.RepetitionPenalty
	}
	req, err := json.Marshal(body)
	if err != nil {
		return 0, 0, err
	}
	var rates []float64
	for run := range c.Runs + 1 {
		s, err := stream(url+"/v1/completions", req)
		if err != nil {
			return 0, 0, err
		}
		if s.tokens < 2 {
			return 0, s.tokens, fmt.Errorf("bench: the served request streamed %d tokens", s.tokens)
		}
		if run > 0 {
			rates, tokens = append(rates, float64(s.tokens-1)/s.last.Sub(s.first).Seconds()), s.tokens
		}
	}
	return median(rates), tokens, nil
}

// prefixTTFT streams, through a server batching c.ServedSlots slots, a
// greedy request of about c.PrefixTTFT prompt tokens and then one whose
// prompt shares all but its last sentence: each one's time from the POST
// to its first token. Every run's prompts are new to the server.
func (c *benchCmd) prefixTTFT(dev runtime.Device, tok tokenizer.Tokenizer) (cold, warm float64, tokens int, err error) {
	url, stop, err := c.startServed(dev, tok)
	if err != nil {
		return 0, 0, 0, err
	}
	defer stop()
	var colds, warms []float64
	for run := range c.Runs + 1 {
		// Lines by the last one's count, then the whole counted once: a
		// pass or two, where counting after each line encoded the prompt
		// once a line.
		line := func(i int) string {
			return fmt.Sprintf("Run %d, line %d: the quick brown fox jumps over the lazy dog.\n", run, i)
		}
		var b strings.Builder
		for i := 0; tokens < c.PrefixTTFT; tokens = len(tok.Encode(b.String(), true)) {
			per := max(1, len(tok.Encode(line(i), true)))
			for n := (c.PrefixTTFT - tokens + per - 1) / per; n > 0; n-- {
				b.WriteString(line(i))
				i++
			}
		}
		var ms [2]float64
		for i, tail := range []string{"Which line came first?", "Which line came last?"} {
			req, err := json.Marshal(map[string]any{"prompt": b.String() + tail, "max_tokens": 2, "stream": true, "temperature": 0})
			if err != nil {
				return 0, 0, 0, err
			}
			s, err := stream(url+"/v1/completions", req)
			if err != nil {
				return 0, 0, 0, err
			}
			if s.firstChunk.IsZero() {
				return 0, 0, 0, errors.New("bench: the prefix request streamed no token")
			}
			ms[i] = float64(s.firstChunk.Sub(s.start).Microseconds()) / 1e3
		}
		if run > 0 {
			colds, warms = append(colds, ms[0]), append(warms, ms[1])
		}
	}
	return median(colds), median(warms), tokens, nil
}

// streamed is what stream saw of a streamed completion: when it was
// posted, when its first chunk came (text or not), and its chunks of text,
// the first's and the last's times.
type streamed struct {
	tokens                         int
	start, firstChunk, first, last time.Time
}

// stream posts a streamed completion and reads it to its end.
func stream(url string, req []byte) (streamed, error) {
	var s streamed
	s.start = time.Now()
	resp, err := http.Post(url, "application/json", bytes.NewReader(req))
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return s, fmt.Errorf("bench: served request: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
			Error *struct{ Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return s, fmt.Errorf("bench: served request: %w", err)
		}
		if chunk.Error != nil {
			return s, fmt.Errorf("bench: served request: %s", chunk.Error.Message)
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		now := time.Now()
		if s.firstChunk.IsZero() {
			s.firstChunk = now
		}
		if chunk.Choices[0].Text == "" {
			continue
		}
		if s.tokens == 0 {
			s.first = now
		}
		s.last = now
		s.tokens++
	}
	return s, sc.Err()
}
