package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"nhooyr.io/websocket"
)

// serveLimited serves a plan the way orcrun serve does: HTTPServer on
// Listener, over a real loopback socket. wrap, when set, wraps the socket's
// listener first.
func serveLimited(t *testing.T, cfg Config, wrap func(net.Listener) net.Listener) (*Server, string) {
	t.Helper()
	srv := newServer(t, "stories", cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	hs := srv.HTTPServer(addr)
	go hs.Serve(srv.Listener(ln))
	t.Cleanup(func() { hs.Close() })
	return srv, addr
}

// getOn sends GET path on an open connection and reads the response.
func getOn(c net.Conn, br *bufio.Reader, path string) (*http.Response, error) {
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: orc\r\n\r\n", path); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

// openIdle opens n keep-alive connections to addr, each with one answered
// request to path; the test's cleanup closes them.
func openIdle(t *testing.T, addr, path string, n int, header string) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: orc\r\n%s\r\n", path, header)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		conns[i] = c
	}
	return conns
}

// getWithin sends GET /health on a new connection and fails the test unless
// it is answered 200 within d.
func getWithin(t *testing.T, addr string, d time.Duration) time.Duration {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	c.SetDeadline(start.Add(d))
	resp, err := getOn(c, bufio.NewReader(c), "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a new client's GET /health was not answered within %v: %v %v", d, resp, err)
	}
	return time.Since(start)
}

// closedByServer reports whether the server has closed c (a read sees EOF
// or a reset within a second).
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestIdleConnectionsDoNotStarveNewOnes(t *testing.T) {
	_, addr := serveLimited(t, Config{}, nil)
	// 64 keep-alive connections, each with one answered request, stay open
	// and idle: every slot is taken. The first goes quiet 200 ms before the
	// others, so that it is the quietest whatever the scheduler does to the
	// moments the others go quiet (on two busy cores they came close).
	conns := openIdle(t, addr, "/health", 1, "")
	time.Sleep(200 * time.Millisecond)
	conns = append(conns, openIdle(t, addr, "/health", DefaultMaxConnections-1, "")...)
	// The next client is served at once: the idlest connection gives way.
	took := getWithin(t, addr, time.Second)
	t.Logf("connection %d answered after %v", DefaultMaxConnections+1, took)
	if !closedByServer(conns[0]) {
		t.Error("the longest-idle connection was not the one closed")
	}
}

func TestUnauthorizedConnectionsAreClosed(t *testing.T) {
	_, addr := serveLimited(t, Config{APIKey: "s3cret"}, nil)
	// 64 clients without the key: each 401 closes its connection, so none
	// holds a slot.
	conns := openIdle(t, addr, "/metrics", DefaultMaxConnections, "Authorization: Bearer wrong\r\n")
	for i, c := range conns {
		if !closedByServer(c) {
			t.Fatalf("connection %d stayed open after its 401", i+1)
		}
	}
	getWithin(t, addr, time.Second)
}

func TestBusyConnectionsMakeTheNextWait(t *testing.T) {
	// Two slots, both held by clients in the middle of sending a request:
	// neither is closed for a newcomer, who waits until one is done.
	_, addr := serveLimited(t, Config{Limits: Limits{MaxConnections: 2}}, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	busy := make([]net.Conn, 2)
	for i := range busy {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		busy[i] = c
		io.WriteString(c, "GET /health HTTP/1.1\r\nHost: orc\r\nX-Filler: ")
		wg.Add(1)
		go func() { defer wg.Done(); dribbleUntil(c, stop) }() // the client is busy sending
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(100 * time.Millisecond) // both accepted
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answered := make(chan error, 1)
	go func() {
		resp, err := getOn(c, bufio.NewReader(c), "/health")
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("a third client was served while both slots were busy (err %v)", err)
	case <-time.After(4 * evictQuiet):
	}
	busy[0].Close()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the third client after a slot was freed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the third client still waits after a slot was freed")
	}
}

func TestSilentWebsocketsGiveWayToNewClients(t *testing.T) {
	// Websockets that never send their request hold no job: with both slots
	// taken by them, a new client is served at once.
	_, addr := serveLimited(t, Config{Limits: Limits{MaxConnections: 2}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
	}
	getWithin(t, addr, time.Second)
}

// dribbleUntil writes a byte of filler to c every 50 ms until stop is
// closed or a write fails.
func dribbleUntil(c net.Conn, stop <-chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if _, err := c.Write([]byte("a")); err != nil {
				return
			}
		}
	}
}

// dribble writes head, then one byte of filler every 50 ms until the server
// closes the connection; it returns how long the connection lived and what
// the server answered, if anything.
func dribble(addr, head string) (lived time.Duration, answer string, err error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	start := time.Now()
	if _, err := io.WriteString(c, head); err != nil {
		return 0, "", err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); dribbleUntil(c, stop) }()
	// The server's answer (if any) and then EOF or a reset end the read.
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, rerr := io.ReadAll(c)
	lived = time.Since(start)
	close(stop)
	wg.Wait()
	var ne net.Error
	if errors.As(rerr, &ne) && ne.Timeout() {
		return lived, string(b), fmt.Errorf("the server never closed the connection")
	}
	return lived, string(b), nil
}

func TestSlowClientsAreCutAndOthersServedMeanwhile(t *testing.T) {
	const headerTimeout, readTimeout = time.Second, 1500 * time.Millisecond
	srv, addr := serveLimited(t, Config{Limits: Limits{ReadHeaderTimeout: headerTimeout, ReadTimeout: readTimeout}}, nil)
	type result struct {
		lived  time.Duration
		answer string
		err    error
	}
	headers, body := make(chan result, 1), make(chan result, 1)
	// Slowloris: a header that never ends.
	go func() {
		l, a, err := dribble(addr, "POST /execute HTTP/1.1\r\nHost: orc\r\nX-Filler: ")
		headers <- result{l, a, err}
	}()
	// A whole header, then a body that never arrives.
	go func() {
		l, a, err := dribble(addr, "POST /execute HTTP/1.1\r\nHost: orc\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"job_id\":\"")
		body <- result{l, a, err}
	}()
	time.Sleep(100 * time.Millisecond)
	evs := collect(t, postExecute(t, "http://"+addr, map[string]any{"job_id": "meanwhile", "prompt": "Once upon a time", "max_tokens": 5, "temperature": 0}))
	if last := evs[len(evs)-1]; last.Name != evEnd {
		t.Fatalf("request beside the slow clients ended with %s %v", last.Name, last.Data)
	}
	select {
	case r := <-headers:
		t.Fatalf("the header dribbler was cut after %v, before the other request was served", r.lived)
	case r := <-body:
		t.Fatalf("the body dribbler was cut after %v, before the other request was served", r.lived)
	default:
	}
	h, b := <-headers, <-body
	if h.err != nil || h.lived < headerTimeout || h.lived > headerTimeout+2*time.Second {
		t.Errorf("header dribbler: lived %v (read header timeout %v), err %v", h.lived, headerTimeout, h.err)
	}
	if b.err != nil || b.lived < readTimeout-200*time.Millisecond || b.lived > readTimeout+2*time.Second {
		t.Errorf("body dribbler: lived %v (read timeout %v), err %v", b.lived, readTimeout, b.err)
	}
	t.Logf("header dribbler cut after %v (limit %v), body dribbler after %v (limit %v)", h.lived, headerTimeout, b.lived, readTimeout)
	// The unfinished body is a request error, not a job.
	if !strings.HasPrefix(b.answer, "HTTP/1.1 400") || !strings.Contains(b.answer, codeInvalidRequest) {
		t.Errorf("body dribbler got %q, want 400 INVALID_REQUEST", b.answer)
	}
	if n := srv.sched.depth(); n != 0 {
		t.Errorf("queue depth %d after the slow clients", n)
	}
}

func TestStreamOutlivesReadTimeout(t *testing.T) {
	// A reader that takes 30 ms per event keeps a 20-token stream open well
	// past the read timeout; the stream must not be cut by it.
	_, addr := serveLimited(t, Config{Limits: Limits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond}}, nil)
	resp := postExecute(t, "http://"+addr, map[string]any{"job_id": "slow-reader", "prompt": "Once upon a time", "max_tokens": 20, "temperature": 0})
	defer resp.Body.Close()
	ch := make(chan sseEvent, 1)
	go readEvents(resp.Body, ch)
	start := time.Now()
	var last sseEvent
	for e := range ch {
		last = e
		time.Sleep(30 * time.Millisecond)
	}
	if last.Name != evEnd || last.Data["tokens_out"].(float64) != 20 {
		t.Fatalf("stream read over %v ended with %s %v, want end after 20 tokens", time.Since(start), last.Name, last.Data)
	}
}

// smallSendBuffers shrinks the server side's socket send buffer, so that a
// client that stops reading blocks the server's writes after a few KiB, as
// a slow network would.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(1024)
	}
	return c, err
}

func TestStalledReaderCannotHoldTheWorker(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	srv, addr := serveLimited(t, Config{Limits: Limits{StreamWriteTimeout: writeTimeout}},
		func(ln net.Listener) net.Listener { return smallSendBuffers{ln} })
	// A client that sends a request for a long stream and never reads.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(1024)
	req, _ := json.Marshal(map[string]any{"job_id": "stalled", "prompt": "Once", "max_tokens": 500, "temperature": 1, "seed": 3})
	fmt.Fprintf(c, "POST /execute HTTP/1.1\r\nHost: orc\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(req), req)
	// The stalled job is queued or running before the next request is sent:
	// else the next may run first and end before the stalled one is
	// cancelled (a fresh-clone CI run saw that).
	for deadline := time.Now().Add(10 * time.Second); srv.sched.lookup("stalled") == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stalled request never reached the scheduler")
		}
	}
	// The next request is served: the stalled stream was dropped and its job
	// cancelled within the write timeout.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout+10*time.Second)
	defer cancel()
	next, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/execute",
		strings.NewReader(`{"job_id":"next","prompt":"Once upon a time","max_tokens":5,"temperature":0}`))
	resp, err := http.DefaultClient.Do(next)
	if err != nil {
		t.Fatalf("the next request behind a stalled reader: %v", err)
	}
	evs := collect(t, resp)
	if ctx.Err() != nil || len(evs) == 0 || evs[len(evs)-1].Name != evEnd {
		t.Fatalf("the next request behind a stalled reader got %v after %v (stream write timeout %v)", names(evs), time.Since(start), writeTimeout)
	}
	var m strings.Builder
	srv.metrics.write(&m)
	if !strings.Contains(m.String(), `orc_requests_total{outcome="cancelled"} 1`) {
		t.Errorf("the stalled reader's job was not cancelled (it ran to the end unread):\n%s", m.String())
	}
}

func TestBodyLargerThanTheLimitIsRefused(t *testing.T) {
	_, addr := serveLimited(t, Config{MaxBodyBytes: 1024}, nil)
	body := `{"job_id":"big","prompt":"` + strings.Repeat("a", 2048) + `"}`
	resp, err := http.Post("http://"+addr+"/execute", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Code, Message string }
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusBadRequest || e.Code != codeInvalidRequest || e.Message != "body: larger than 1024 bytes" {
		t.Fatalf("status %d %+v, want 400 INVALID_REQUEST body: larger than 1024 bytes", resp.StatusCode, e)
	}
}

func TestWebsocketsGiveTheirConnectionSlotsBack(t *testing.T) {
	// With 2 slots, 5 websocket jobs one after another and then a plain
	// request are served only if each hijacked connection frees its slot.
	_, addr := serveLimited(t, Config{Limits: Limits{MaxConnections: 2}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 5 {
		conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
		if err != nil {
			t.Fatalf("websocket %d: %v", i+1, err)
		}
		req, _ := json.Marshal(map[string]any{"job_id": fmt.Sprintf("ws-%d", i), "prompt": "Once", "max_tokens": 3})
		if err := conn.Write(ctx, websocket.MessageText, req); err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
					t.Fatalf("websocket %d: %v", i+1, err)
				}
				break
			}
		}
		conn.CloseNow()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a request after 5 websockets on 2 slots: %v", err)
	}
	resp.Body.Close()
}

func TestInputPendingPeeksWithoutReading(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if inputPending(server) {
		t.Fatal("input pending before the client wrote")
	}
	io.WriteString(client, "GET")
	for deadline := time.Now().Add(5 * time.Second); !inputPending(server); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the client's bytes never showed as pending")
		}
	}
	b := make([]byte, 3)
	if _, err := io.ReadFull(server, b); err != nil || string(b) != "GET" || inputPending(server) {
		t.Fatalf("after reading %q (%v), input pending %v: the peek consumed or kept bytes", b, err, inputPending(server))
	}
}
