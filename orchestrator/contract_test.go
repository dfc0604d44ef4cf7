package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/llama-orch/orc/internal/soak"
	"go.yaml.in/yaml/v3"
)

// openAPI is one of contracts/openapi's documents, with a validator for
// the part of JSON Schema the documents use: $ref, type, nullable, enum,
// required, properties, additionalProperties, items, minimum, maximum,
// maxItems.
type openAPI struct {
	file    string
	doc     map[string]any
	covered map[string]bool // "METHOD template" exercised
}

func loadOpenAPI(t *testing.T, name string) *openAPI {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "contracts", "openapi", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// Through JSON, so numbers and maps have JSON's types.
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	doc = nil
	json.Unmarshal(j, &doc)
	return &openAPI{file: name, doc: doc, covered: map[string]bool{}}
}

func (a *openAPI) schema(name string) any {
	return a.doc["components"].(map[string]any)["schemas"].(map[string]any)[name]
}

func (a *openAPI) validate(s any, v any, at string) error {
	sch, _ := s.(map[string]any)
	if ref, ok := sch["$ref"].(string); ok {
		return a.validate(a.schema(strings.TrimPrefix(ref, "#/components/schemas/")), v, at)
	}
	if v == nil {
		if sch["nullable"] == true || sch["type"] == nil {
			return nil
		}
		return fmt.Errorf("%s: null", at)
	}
	if enum, ok := sch["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v not in %v", at, v, enum)
	}
	switch sch["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an object", at, v)
		}
		for _, r := range asList(sch["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: %q missing", at, r)
			}
		}
		props, _ := sch["properties"].(map[string]any)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k]; ok {
				if err := a.validate(ps, obj[k], at+"."+k); err != nil {
					return err
				}
				continue
			}
			switch extra := sch["additionalProperties"].(type) {
			case bool:
				if !extra {
					return fmt.Errorf("%s: %q is not documented", at, k)
				}
			case map[string]any:
				if err := a.validate(extra, obj[k], at+"."+k); err != nil {
					return err
				}
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an array", at, v)
		}
		if m, ok := sch["maxItems"].(float64); ok && float64(len(arr)) > m {
			return fmt.Errorf("%s: %d items, at most %v", at, len(arr), m)
		}
		for i, x := range arr {
			if err := a.validate(sch["items"], x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %T, want a string", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %T, want a boolean", at, v)
		}
	case "integer", "number":
		n, ok := v.(float64)
		if !ok || sch["type"] == "integer" && n != math.Trunc(n) {
			return fmt.Errorf("%s: %v, want %s", at, v, sch["type"])
		}
		if lo, ok := sch["minimum"].(float64); ok && n < lo {
			return fmt.Errorf("%s: %v below %v", at, n, lo)
		}
		if hi, ok := sch["maximum"].(float64); ok && n > hi {
			return fmt.Errorf("%s: %v above %v", at, n, hi)
		}
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// operation finds the operation of method and a concrete path.
func (a *openAPI) operation(method, path string) (string, map[string]any) {
	got := strings.Split(path, "/")
	for tmpl, item := range a.doc["paths"].(map[string]any) {
		want := strings.Split(tmpl, "/")
		if len(want) != len(got) {
			continue
		}
		match := true
		for i := range want {
			match = match && (want[i] == got[i] || strings.HasPrefix(want[i], "{"))
		}
		if op, ok := item.(map[string]any)[strings.ToLower(method)].(map[string]any); match && ok {
			return tmpl, op
		}
	}
	return "", nil
}

// responseSchema is the JSON schema of op's response with status.
func responseSchema(op map[string]any, status int) any {
	rs := op["responses"].(map[string]any)
	r, ok := rs[fmt.Sprint(status)]
	if !ok {
		r = rs["default"]
	}
	content, _ := r.(map[string]any)["content"].(map[string]any)
	if js, ok := content["application/json"].(map[string]any); ok {
		return js["schema"]
	}
	return nil
}

// contract checks served responses against the two documents.
type contract struct {
	t    *testing.T
	docs []*openAPI
}

// do sends a request and checks the answer against its operation.
func (c *contract) do(method, url, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, tmpl, op := c.find(method, path)
	doc.covered[method+" "+tmpl] = true
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		c.checkEvents(doc, op, raw)
		return resp.StatusCode, nil
	}
	var v map[string]any
	if resp.StatusCode == http.StatusNoContent || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		c.t.Fatalf("%s %s: %d, not JSON: %s", method, path, resp.StatusCode, raw)
	}
	if _, documented := op["responses"].(map[string]any)[fmt.Sprint(resp.StatusCode)]; !documented && resp.StatusCode < 400 {
		c.t.Fatalf("%s %s: status %d is not documented", method, tmpl, resp.StatusCode)
	}
	if err := doc.validate(responseSchema(op, resp.StatusCode), v, doc.file+" "+method+" "+tmpl+" "+fmt.Sprint(resp.StatusCode)); err != nil {
		c.t.Fatalf("%v\nbody %s", err, raw)
	}
	return resp.StatusCode, v
}

func (c *contract) find(method, path string) (*openAPI, string, map[string]any) {
	c.t.Helper()
	for _, d := range c.docs {
		if tmpl, op := d.operation(method, path); op != nil {
			return d, tmpl, op
		}
	}
	c.t.Fatalf("%s %s is served but in neither document", method, path)
	return nil, "", nil
}

func (c *contract) checkEvents(doc *openAPI, op map[string]any, raw []byte) {
	c.t.Helper()
	schemas := op["x-sse-events"].(map[string]any)
	n := 0
	soak.ReadEvents(bytes.NewReader(raw), func(e soak.Event) bool {
		n++
		s, ok := schemas[e.Name].(string)
		if !ok {
			c.t.Fatalf("event %q is not documented", e.Name)
		}
		if err := doc.validate(doc.schema(s), e.Data, "event "+e.Name); err != nil {
			c.t.Fatal(err)
		}
		return true
	})
	if n == 0 {
		c.t.Fatal("empty stream")
	}
}

// The served responses of every documented operation match the documents.
func TestServedResponsesMatchOpenAPI(t *testing.T) {
	sys := system(t)
	c := &contract{t: t, docs: []*openAPI{loadOpenAPI(t, "data.yaml"), loadOpenAPI(t, "control.yaml")}}
	u := sys.url
	_, acc := c.do("POST", u, "/v1/tasks", map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": 70, "session_id": "contract"})
	id := acc["task_id"].(string)
	c.do("GET", u, "/v1/tasks/"+id+"/stream", nil)
	c.do("GET", u, "/v1/tasks/"+id, nil)
	c.do("POST", u, "/v1/tasks/"+id+"/cancel", nil)
	c.do("POST", u, "/v1/tasks", map[string]any{"prompt": ""})
	c.do("GET", u, "/v1/tasks/nope", nil)
	c.do("GET", u, "/v1/sessions/contract", nil)
	c.do("DELETE", u, "/v1/sessions/contract", nil)
	c.do("DELETE", u, "/v1/sessions/contract", nil)
	jobArtifact(t, sys, id)
	_, task := c.do("GET", u, "/v1/tasks/"+id, nil)
	c.do("GET", u, "/v1/artifacts/"+task["artifact_id"].(string), nil)
	c.do("POST", u, "/v1/artifacts", map[string]any{"kind": "diff", "content": "x", "tags": []string{"a"}})
	c.do("POST", u, "/v1/artifacts", map[string]any{"kind": "diff", "content": "x"})
	c.do("GET", u, "/v1/artifacts/sha256:00", nil)
	c.do("GET", u, "/v1/models", nil)
	c.do("POST", u, "/v1/completions", map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 3})
	c.do("POST", u, "/v1/completions", map[string]any{"model": "none", "prompt": "Once"})
	qwen := sys.o.registration("qwen").Model
	c.do("POST", u, "/v1/chat/completions", map[string]any{"model": qwen, "messages": []map[string]any{{"role": "user", "content": "hi"}}, "max_tokens": 2})
	c.do("GET", u, "/v1/capabilities", nil)
	c.do("GET", u, "/v1/pools/stories/health", nil)
	c.do("GET", u, "/v1/pools/nope/health", nil)
	c.do("GET", u, "/metrics", nil)
	if status, _ := c.do("POST", u, "/v1/pools/stories/reload", map[string]any{"model_ref": plans["tampered"]}); status != 409 {
		t.Fatalf("reload to a tampered plan: %d", status)
	}
	if err := waitReady(sys, "stories", 2, 10e9); err != nil {
		t.Fatal(err)
	}
	mirror := startOrcd(t, Config{})
	mirrorPool(t, sys, mirror, "stories", 1)
	c.do("POST", mirror.url, "/v1/pools/stories/drain", map[string]any{"deadline_ms": 0})
	c.do("POST", mirror.url, "/v1/pools/stories/drain", map[string]any{})
	c.do("GET", mirror.url, "/v1/pools/stories/health", nil)
	c.do("POST", mirror.url, "/v1/tasks", map[string]any{"pool_id": "stories", "prompt": "hi"})

	for _, d := range c.docs {
		for tmpl, item := range d.doc["paths"].(map[string]any) {
			for method := range item.(map[string]any) {
				if !d.covered[strings.ToUpper(method)+" "+tmpl] {
					t.Errorf("%s: %s %s documented but not exercised", d.file, strings.ToUpper(method), tmpl)
				}
			}
		}
	}
}

// OC-CTRL-2067 (data plane) and 2069 (control plane): the documents carry
// x-examples for enqueue, stream, cancel, sessions, drain, reload and
// capabilities, and every example matches its schemas.
func TestOCCTRL2067DataPlaneExamples(t *testing.T) {
	checkExamples(t, "data.yaml", "/v1/tasks", "/v1/tasks/{id}/stream", "/v1/tasks/{id}/cancel", "/v1/sessions/{id}")
}

func TestOCCTRL2069ControlPlaneExamples(t *testing.T) {
	checkExamples(t, "control.yaml", "/v1/pools/{id}/drain", "/v1/pools/{id}/reload", "/v1/capabilities")
}

func checkExamples(t *testing.T, file string, required ...string) {
	d := loadOpenAPI(t, file)
	paths := d.doc["paths"].(map[string]any)
	for _, p := range required {
		found := false
		for _, op := range paths[p].(map[string]any) {
			if len(asList(op.(map[string]any)["x-examples"])) > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %s has no x-examples", file, p)
		}
	}
	for tmpl, item := range paths {
		for method, op := range item.(map[string]any) {
			op := op.(map[string]any)
			for _, ex := range asList(op["x-examples"]) {
				ex := ex.(map[string]any)
				at := fmt.Sprintf("%s %s %s example %q", file, method, tmpl, ex["name"])
				if req, ok := ex["request"]; ok {
					body := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
					if err := d.validate(body, req, at+" request"); err != nil {
						t.Error(err)
					}
				}
				if resp, ok := ex["response"]; ok {
					if err := d.validate(responseSchema(op, int(ex["status"].(float64))), resp, at+" response"); err != nil {
						t.Error(err)
					}
				}
				for _, e := range asList(ex["events"]) {
					e := e.(map[string]any)
					s := op["x-sse-events"].(map[string]any)[e["event"].(string)].(string)
					if err := d.validate(d.schema(s), e["data"], at+" event "+e["event"].(string)); err != nil {
						t.Error(err)
					}
				}
			}
		}
	}
}
