package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestContentLengthWithTransferEncodingClosesTheConnection(t *testing.T) {
	_, addr := serveLimited(t, Config{}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"job_id":"x"}`
	// Both framings, then a second request on the same socket: behind a
	// proxy that framed by Content-Length, that second request would be
	// smuggled in.
	fmt.Fprintf(c, "POST /cancel HTTP/1.1\r\nHost: orc\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	io.WriteString(c, "GET /health HTTP/1.1\r\nHost: orc\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || !resp.Close {
		t.Fatalf("first request: status %d, Connection %q; want 202 and the connection closed", resp.StatusCode, resp.Header.Get("Connection"))
	}
	if next, err := http.ReadResponse(br, nil); err == nil {
		t.Fatalf("the request after it on the same connection was answered (%d)", next.StatusCode)
	}
	// A plain request keeps its connection.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	br2 := bufio.NewReader(c2)
	for i := range 2 {
		if resp, err := getOn(c2, br2, "/health"); err != nil || resp.Close {
			t.Fatalf("plain request %d: %v, close %v", i+1, err, resp != nil && resp.Close)
		}
	}
}

func TestUnroutedRequestsGetJSONErrors(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	for _, c := range []struct {
		method, path string
		status       int
		code, allow  string
		openAI       bool
	}{
		{"GET", "/nope", 404, codeNotFound, "", false},
		{"GET", "/execute", 405, codeMethodNotAllowed, "POST", false},
		{"DELETE", "/health", 405, codeMethodNotAllowed, "GET", false},
		{"POST", "/v1/nope", 404, "not_found", "", true},
		{"GET", "/v1/chat/completions", 405, "method_not_allowed", "POST", true},
	} {
		req, _ := http.NewRequest(c.method, hs.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.status || resp.Header.Get("Allow") != c.allow || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: status %d, Allow %q, body %v (%v); want %d, Allow %q, JSON", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), body, err, c.status, c.allow)
			continue
		}
		code := body["code"]
		if c.openAI {
			e, _ := body["error"].(map[string]any)
			code = e["code"]
		}
		if code != c.code {
			t.Errorf("%s %s: body %v, want code %s", c.method, c.path, body, c.code)
		}
	}
}

func TestCorrelationIDs(t *testing.T) {
	logs := &logBuffer{}
	_, addr := serveLimited(t, Config{Logger: logs.logger()}, nil)
	long := strings.Repeat("a", maxCorrelationID+1)
	for _, c := range []struct {
		name, header string
		echoed       bool
	}{
		{"safe", "X-Correlation-Id: req-42_a.b:c\r\n", true},
		{"non-ASCII and markup", "X-Correlation-Id: caf\xc3\xa9\xff<script>\r\n", false},
		{"space", "X-Correlation-Id: a b\r\n", false},
		{"folded", "X-Correlation-Id: abc\r\n def\r\n", false},
		{"twice", "X-Correlation-Id: abc\r\nX-Correlation-Id: def\r\n", false},
		{"too long", "X-Correlation-Id: " + long + "\r\n", false},
		{"longest", "X-Correlation-Id: " + long[1:] + "\r\n", true},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /health HTTP/1.1\r\nHost: orc\r\n%s\r\n", c.header)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		resp.Body.Close()
		sent := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(c.header, "\r\n", 2)[0], "X-Correlation-Id: "), "\r\n")
		got := resp.Header.Get("X-Correlation-Id")
		if c.echoed && got != sent {
			t.Errorf("%s: %q came back as %q", c.name, sent, got)
		}
		if !c.echoed && (got == "" || strings.Contains(c.header, got) || !safeCorrelationID(got)) {
			t.Errorf("%s: answered with X-Correlation-Id %q, want a generated one", c.name, got)
		}
	}
	// The id is in the job's log lines.
	req, _ := http.NewRequest("POST", "http://"+addr+"/execute", strings.NewReader(`{"job_id":"traced","prompt":"Once","max_tokens":3}`))
	req.Header.Set("X-Correlation-Id", "trace-7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, resp)
	for _, msg := range []string{"request", "execute_start", "execute_end"} {
		lines := logs.lines(msg)
		if len(lines) != 1 || lines[0]["correlation_id"] != "trace-7" {
			t.Errorf("log lines %q: %v, want one with correlation_id trace-7", msg, lines)
		}
	}
}

func TestPromptHashIsKeyedPerProcess(t *testing.T) {
	// The unsalted sha256 prefix of "a" would reveal the prompt to anyone
	// who hashes short guesses.
	if h := promptHash("a"); h == "ca978112ca1bbdca" || len(h) != 16 {
		t.Fatalf("promptHash(\"a\") = %q: the unsalted sha256 prefix, or not 8 bytes", h)
	}
	if promptHash("a") != promptHash("a") || promptHash("a") == promptHash("b") {
		t.Fatal("one prompt must keep its hash within the process, two prompts differ")
	}
	saved := promptKey
	defer func() { promptKey = saved }()
	before := promptHash("a")
	promptKey = []byte("another process's key")
	if promptHash("a") == before {
		t.Fatal("the hash does not depend on the process's key")
	}
}
