package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"nhooyr.io/websocket"
)

// The websocket protocol at GET /ws: the client sends one text message, an
// ExecuteRequest; the server answers with text messages
// {"event": NAME, "data": {...}} carrying exactly the events of POST
// /execute, ending with one terminal event, then closes normally. A
// message {"cancel": true} from the client, or closing the socket, cancels
// the job. A request refused before it starts, or not sent within
// Limits.ReadTimeout, gets one error event and a close frame (policy
// violation).
type wsMessage struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// wsRead is one message read from the client, or the read's error.
type wsRead struct {
	typ  websocket.MessageType
	body []byte
	err  error
}

func (s *Server) handleWebsocket(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered the client
	}
	defer conn.CloseNow()
	conn.SetReadLimit(s.cfg.MaxBodyBytes)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	send := func(e event) error {
		b, err := json.Marshal(wsMessage{e.Name, e.Data})
		if err != nil {
			return err
		}
		wctx, done := context.WithTimeout(ctx, 10*time.Second)
		defer done()
		return conn.Write(wctx, websocket.MessageText, b)
	}
	refuse := func(code, msg string) {
		send(event{evError, newErrorEvent(code, msg)})
		conn.Close(websocket.StatusPolicyViolation, code)
	}

	// One reader for the socket's life: the execute request, then cancels.
	// (A read whose context ends closes the socket without a close frame,
	// so the first message's deadline is a timer here, not a context.)
	reads := make(chan wsRead)
	go func() {
		defer close(reads)
		for {
			typ, body, err := conn.Read(ctx)
			select {
			case reads <- wsRead{typ, body, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// Until its request arrives the socket holds nothing in flight: a new
	// client may take its connection slot.
	s.slots.setQuiet(connOf(r), true)
	deadline := time.NewTimer(s.cfg.Limits.ReadTimeout)
	defer deadline.Stop()
	var first wsRead
	select {
	case m, ok := <-reads:
		if !ok {
			return // the handler's context ended
		}
		first = m
	case <-deadline.C:
		s.refusals.note(codeRequestTimeout)
		refuse(codeRequestTimeout, fmt.Sprintf("no execute request within %v of connecting", s.cfg.Limits.ReadTimeout))
		return
	}
	s.slots.setQuiet(connOf(r), false)
	if first.err != nil {
		return
	}
	if first.typ != websocket.MessageText {
		s.metrics.request(outcomeInvalid)
		s.refusals.note(codeInvalidRequest)
		refuse(codeInvalidRequest, "the first message must be a JSON execute request")
		return
	}
	var req ExecuteRequest
	err = decodeJSON(first.body, &req, false)
	var j *activeJob
	if err == nil {
		j, err = s.newJob(r, &req, nil)
	}
	if err != nil {
		s.metrics.request(outcomeInvalid)
		s.refusals.note(codeInvalidRequest)
		refuse(codeInvalidRequest, err.Error())
		return
	}
	if !s.submit(discardResponse{}, j, func(_ http.ResponseWriter, _ int, code, msg string) { refuse(code, msg) }) {
		return
	}
	// Reading runs beside streaming: a cancel message or a closed socket
	// ends the job.
	go func() {
		for m := range reads {
			if m.err != nil {
				j.markCancelled(errDisconnected)
				cancel()
				return
			}
			var c struct {
				Cancel bool `json:"cancel"`
			}
			if json.Unmarshal(m.body, &c) == nil && c.Cancel {
				j.markCancelled(errCancelled)
			}
		}
	}()
	s.stream(ctx, j, send)
	if err := conn.Close(websocket.StatusNormalClosure, "done"); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("websocket close", "job_id", j.id, "correlation_id", j.correlation, "err", err.Error())
	}
}

// discardResponse stands in for the HTTP response after a websocket
// upgrade: refusals travel as error events instead.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (discardResponse) WriteHeader(int)             {}
