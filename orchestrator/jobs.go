package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// jobRecord is the artifact every task leaves, failures too (OC-CTRL-2067):
// its parameters with the prompt replaced by its length and hash, where it
// ran, its seed, its key metrics and its SSE transcript.
type jobRecord struct {
	JobID        string          `json:"job_id"`
	SessionID    string          `json:"session_id,omitempty"`
	Params       jobParams       `json:"params"`
	Seed         *uint64         `json:"seed,omitempty"`
	TokensOut    int             `json:"tokens_out"`
	DecodeTimeMs int64           `json:"decode_time_ms"`
	Outcome      string          `json:"outcome"` // "end" or the error code
	Error        json.RawMessage `json:"error,omitempty"`
	Transcript   string          `json:"transcript"`
	OpenAI       *openAIJob      `json:"openai,omitempty"` // a request of the OpenAI front, proxied
	AdmittedAt   string          `json:"admitted_at"`
	EndedAt      string          `json:"ended_at"`
}

type jobParams struct {
	PromptChars  int    `json:"prompt_chars"`
	PromptSHA256 string `json:"prompt_sha256"` // prefix: identifies, never reveals
	MaxTokens    int    `json:"max_tokens"`
	Sampling
	Ctx           int    `json:"ctx,omitempty"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Model         string `json:"model"`
	ModelRef      string `json:"model_ref,omitempty"`
	PoolID        string `json:"pool_id,omitempty"`
	WorkerID      string `json:"worker_id,omitempty"`
	OutputMode    string `json:"output_mode,omitempty"`
}

// outputModes are the hints of OC-CTRL-2063; others are ignored.
var outputModes = map[string]bool{"text": true, "json": true, "edits": true}

// promptDigest is the first 16 hex digits of the prompt's sha256.
func promptDigest(p string) string {
	h := sha256.Sum256([]byte(p))
	return hex.EncodeToString(h[:8])
}

// finished books a task whose stream has ended: its session's budget, the
// metrics, and its job artifact; then its readers get the terminal frame
// (release). Called once per task, by whoever ended it.
func (o *Orchestrator) finished(t *task) {
	defer t.release()
	t.mu.Lock()
	tokens, decodeMs, outcome, ended := t.tokens, t.decodeMs, t.outcome, t.ended
	transcript := string(t.buf)
	w, seed := t.worker, t.seed
	if seed == nil {
		seed = t.req.Seed // the worker never started it
	}
	var oa *openAIJob
	if t.openai != nil {
		c := *t.openai
		oa = &c
	}
	t.mu.Unlock()
	rec := jobRecord{
		JobID: t.id, SessionID: t.req.SessionID, Seed: seed, TokensOut: tokens, DecodeTimeMs: decodeMs,
		Outcome: outcome, Transcript: transcript, OpenAI: oa,
		AdmittedAt: t.admitted.UTC().Format(time.RFC3339Nano), EndedAt: ended.UTC().Format(time.RFC3339Nano),
		Params: jobParams{
			PromptChars: len([]rune(t.req.Prompt)), PromptSHA256: promptDigest(t.req.Prompt), MaxTokens: t.maxTokens,
			Sampling: t.req.Sampling,
			Engine:   Engine, EngineVersion: EngineVersion, Model: t.model, PoolID: t.pinned,
		},
	}
	if outputModes[t.req.OutputMode] {
		rec.Params.OutputMode = t.req.OutputMode
	}
	o.mu.Lock()
	if w != nil {
		rec.Params.PoolID, rec.Params.WorkerID = w.pool.id, w.ID
		rec.Params.ModelRef, rec.Params.Ctx = w.pool.reg.ModelRef, w.pool.reg.CtxMax
	}
	if s := t.session; s != nil {
		s.reserved -= t.maxTokens
		s.tokens += tokens
		s.decode += time.Duration(decodeMs) * time.Millisecond
		s.lastUsed = time.Now()
	}
	o.mu.Unlock()
	if outcome != evEnd {
		rec.Error = lastFrameData(transcript)
	}
	o.metrics.finished(outcome, ended.Sub(t.admitted))
	tags := []string{"job", "outcome:" + outcome}
	if rec.Params.OutputMode != "" {
		tags = append(tags, "output_mode:"+rec.Params.OutputMode)
	}
	content, _ := json.Marshal(rec)
	a := &Artifact{Kind: "job", Content: content, Tags: tags, Lineage: []string{}}
	if _, err := o.artifacts.put(a, t.id); err != nil {
		o.log.Error("artifact not stored", "task_id", t.id, "err", err.Error(), "correlation_id", t.corr)
		return
	}
	t.mu.Lock()
	t.artifact = a.ID
	t.mu.Unlock()
	o.log.Info("finished", "task_id", t.id, "outcome", outcome, "tokens_out", tokens, "decode_time_ms", decodeMs, "artifact_id", a.ID, "correlation_id", t.corr)
}

// lastFrameData is the data of a transcript's last frame.
func lastFrameData(transcript string) json.RawMessage {
	const marker = "\ndata: "
	end := len(transcript) - 2 // the frame's blank line
	for i := end - 1; i >= 0; i-- {
		if i+len(marker) <= end && transcript[i:i+len(marker)] == marker {
			return json.RawMessage(transcript[i+len(marker) : end])
		}
	}
	return nil
}
