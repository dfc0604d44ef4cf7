package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler"
)

// captureStdout runs f with os.Stdout redirected and returns what it wrote.
func captureStdout(t *testing.T, f func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	out := make(chan string)
	go func() { b, _ := io.ReadAll(r); out <- string(b) }()
	runErr := f()
	os.Stdout = saved
	w.Close()
	text := <-out
	if runErr != nil {
		t.Fatal(runErr)
	}
	return text
}

// orcrun generate on the real stories260k model prints transformers' 40
// greedy tokens (testdata/reference/stories260k.json) for "Once upon a
// time": as {"ids","text"} with --json, as streamed text without.
func TestGenerateStories(t *testing.T) {
	var want struct {
		IDs  []int32 `json:"ids"`
		Text string  `json:"text"`
	}
	data, err := os.ReadFile("../../testdata/reference/stories260k.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(t.TempDir(), "plan")
	if err := compiler.Compile(compiler.Options{Model: "../../../shared/testdata/models/stories260k-f32.gguf", Out: plan, Target: "cpu", MaxTokens: 4}); err != nil {
		t.Fatal(err)
	}
	cmd := generateCmd{deviceFlags: deviceFlags{Plan: plan}, Prompt: "Once upon a time", MaxTokens: len(want.IDs), JSON: true}
	var got struct {
		IDs  []int32 `json:"ids"`
		Text string  `json:"text"`
	}
	out := captureStdout(t, cmd.Run)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	if !slices.Equal(got.IDs, want.IDs) || got.Text != want.Text {
		t.Errorf("--json: %v %q\nwant %v %q", got.IDs, got.Text, want.IDs, want.Text)
	}
	cmd.JSON = false
	if out := captureStdout(t, cmd.Run); out != want.Text+"\n" {
		t.Errorf("streamed %q, want %q", out, want.Text+"\n")
	}
	cmd.Temperature = 2.5
	if err := cmd.Run(); err == nil {
		t.Error("temperature 2.5 was accepted")
	}
}
