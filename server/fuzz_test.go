package server

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExecuteRequest decodes and validates arbitrary request bodies: never
// a panic, and whatever is accepted lies inside the worker API's ranges.
func FuzzExecuteRequest(f *testing.F) {
	for _, s := range []string{
		`{"job_id":"a","prompt":"hi"}`,
		`{"job_id":"a","prompt":"hi","max_tokens":2048,"temperature":2,"top_p":1,"top_k":512,"repetition_penalty":2,"min_p":1,"stop":["x"],"seed":18446744073709551615}`,
		`{"job_id":"a","prompt":"hi","temperature":-1}`,
		`{"job_id":1}`, `[]`, `null`, `{"stop":[null]}`,
		"{\"job_id\":\"a\",\"prompt\":\"\xff\"}", `{"job_id":"a","prompt":"\ud800"}`, `{"JOB_ID":"a","prompt":"hi"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req ExecuteRequest
		if err := decodeJSON(body, &req, false); err != nil {
			if _, ok := err.(*requestError); !ok {
				t.Fatalf("decoding error %T is not a requestError", err)
			}
			return
		}
		// Text is taken as sent: no invalid UTF-8 or lone surrogate became
		// U+FFFD on the way.
		for _, s := range append([]string{req.JobID, req.Prompt}, req.Stop...) {
			if strings.ContainsRune(s, utf8.RuneError) && !strings.Contains(string(body), "\uFFFD") && !strings.Contains(strings.ToLower(string(body)), `\ufffd`) {
				t.Fatalf("accepted %q: U+FFFD in %q that the body did not send", body, s)
			}
		}
		p, maxTokens, err := req.validate(512, 2048)
		if err != nil {
			if _, ok := err.(*requestError); !ok {
				t.Fatalf("validation error %T is not a requestError", err)
			}
			return
		}
		if strings.TrimSpace(req.JobID) == "" || req.Prompt == "" || maxTokens < 1 || maxTokens > 2048 ||
			!(p.Temperature >= 0 && p.Temperature <= 2) || !(p.TopP >= 0 && p.TopP <= 1) || p.TopK < 0 || p.TopK > 512 ||
			!(p.MinP >= 0 && p.MinP <= 1) || !(p.RepetitionPenalty >= 0 && p.RepetitionPenalty <= 2) {
			t.Fatalf("accepted out-of-range request %s → %+v, max_tokens %d", body, p, maxTokens)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted request fails the sampler's own check: %v", err)
		}
	})
}
