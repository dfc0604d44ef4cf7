package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ServerState is what the server says about itself: GET /health's VRAM and
// GET /metrics' gauges and outcome counters.
type ServerState struct {
	VRAMBytesUsed int64            `json:"vram_bytes_used"`
	Goroutines    int              `json:"goroutines"`
	QueueDepth    int              `json:"queue_depth"`
	Outcomes      map[string]int64 `json:"outcomes"` // orc_requests_total by outcome
	// KVBlocks is orc_kv_blocks by state (used, cached, free) of a server
	// that batches over a paged KV cache; nil otherwise.
	KVBlocks map[string]int `json:"kv_blocks,omitempty"`
}

// state reads the server's state over fresh connections: idle keep-alive
// connections of this client are closed first, so that the count of
// goroutines does not depend on how many this client left open.
func (d *driver) state(ctx context.Context) (ServerState, error) {
	d.client.CloseIdleConnections()
	var s ServerState
	var health struct {
		VRAMBytesUsed *int64 `json:"vram_bytes_used"`
	}
	if err := d.get(ctx, "/health", func(r io.Reader) error { return json.NewDecoder(r).Decode(&health) }); err != nil {
		return s, err
	}
	if health.VRAMBytesUsed == nil {
		return s, fmt.Errorf("soak: GET %s/health has no vram_bytes_used", d.o.URL)
	}
	s.VRAMBytesUsed = *health.VRAMBytesUsed
	err := d.get(ctx, "/metrics", func(r io.Reader) error {
		text, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		s.KVBlocks = parseKVBlocks(text)
		s.Goroutines, s.QueueDepth, s.Outcomes, err = parseMetrics(bytes.NewReader(text))
		return err
	})
	d.client.CloseIdleConnections()
	return s, err
}

func (d *driver) get(ctx context.Context, path string, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.o.URL+path, nil)
	if err != nil {
		return err
	}
	if d.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+d.o.APIKey)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("soak: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("soak: GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := read(resp.Body); err != nil {
		return fmt.Errorf("soak: GET %s: %w", path, err)
	}
	return nil
}

// parseMetrics picks orc_goroutines, orc_queue_depth and
// orc_requests_total{outcome=...} out of Prometheus text.
func parseMetrics(r io.Reader) (goroutines, queue int, outcomes map[string]int64, err error) {
	outcomes = map[string]int64{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		switch {
		case name == "orc_goroutines", name == "orc_queue_depth":
			n, err := strconv.Atoi(value)
			if err != nil {
				return 0, 0, nil, fmt.Errorf("metric %s: %q is not an integer", name, value)
			}
			if name == "orc_goroutines" {
				goroutines = n
			} else {
				queue = n
			}
			seen[name] = true
		case strings.HasPrefix(name, `orc_requests_total{outcome="`):
			o := strings.TrimSuffix(strings.TrimPrefix(name, `orc_requests_total{outcome="`), `"}`)
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return 0, 0, nil, fmt.Errorf("metric %s: %q is not an integer", name, value)
			}
			outcomes[o] = n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, nil, err
	}
	for _, name := range []string{"orc_goroutines", "orc_queue_depth"} {
		if !seen[name] {
			return 0, 0, nil, fmt.Errorf("no %s gauge (a server older than the soak driver?)", name)
		}
	}
	return goroutines, queue, outcomes, nil
}

// parseKVBlocks picks orc_kv_blocks{state=...} out of Prometheus text; nil
// when there is none.
func parseKVBlocks(text []byte) map[string]int {
	var blocks map[string]int
	for _, line := range strings.Split(string(text), "\n") {
		name, value, ok := strings.Cut(line, " ")
		state, found := strings.CutPrefix(name, `orc_kv_blocks{state="`)
		if n, err := strconv.Atoi(value); ok && found && err == nil {
			if blocks == nil {
				blocks = map[string]int{}
			}
			blocks[strings.TrimSuffix(state, `"}`)] = n
		}
	}
	return blocks
}

// settle waits up to Options.Settle for the server's goroutines to come
// back within 2 of before (connections of dropped streams close, their
// jobs end) and its KV blocks in use to what they were, and returns the
// last state read.
func (d *driver) settle(ctx context.Context, before ServerState) (ServerState, error) {
	deadline := time.Now().Add(d.o.Settle)
	for {
		s, err := d.state(ctx)
		if err != nil || s.Goroutines <= before.Goroutines+2 && s.QueueDepth == 0 && s.KVBlocks["used"] == before.KVBlocks["used"] || time.Now().After(deadline) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
