package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// callBack tells the pool manager this worker serves at uri; its answer
// says whether the manager accepted the worker (it checks the id, the model
// reference and that uri answers).
func (c *serveCmd) callBack(vramBytes int64, uri string) error {
	ref := c.ModelRef
	if ref == "" {
		ref = c.Plan
	}
	body, _ := json.Marshal(poolapi.WorkerReady{WorkerID: c.WorkerID, ModelRef: ref, VRAMBytes: vramBytes, URI: uri})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.CallbackURL, "/")+poolapi.ReadyPath, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("--callback-url %s: %w", c.CallbackURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.PoolToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("ready callback to %s: %w", c.CallbackURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("ready callback to %s refused: %s %s", c.CallbackURL, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
