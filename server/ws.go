package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"nhooyr.io/websocket"
)

// The websocket protocol at GET /ws: the client sends one text message, an
// ExecuteRequest; the server answers with text messages
// {"event": NAME, "data": {...}} carrying exactly the events of POST
// /execute, ending with one terminal event, then closes normally. A
// message {"cancel": true} from the client, or closing the socket, cancels
// the job. A request refused before it starts gets one error event.
type wsMessage struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
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
		send(event{evError, errorEvent{Code: code, Message: msg}})
		conn.Close(websocket.StatusPolicyViolation, code)
	}

	rctx, rdone := context.WithTimeout(ctx, 30*time.Second)
	typ, body, err := conn.Read(rctx)
	rdone()
	if err != nil {
		return
	}
	if typ != websocket.MessageText {
		refuse(codeInvalidRequest, "the first message must be a JSON execute request")
		return
	}
	var req ExecuteRequest
	if err := decodeStrict(body, &req); err != nil {
		s.metrics.request(outcomeInvalid)
		refuse(codeInvalidRequest, err.Error())
		return
	}
	j, err := s.newJob(&req)
	if err != nil {
		s.metrics.request(outcomeInvalid)
		refuse(codeInvalidRequest, err.Error())
		return
	}
	if !s.submit(discardResponse{}, j, func(_ http.ResponseWriter, _ int, code, msg string) { refuse(code, msg) }) {
		return
	}
	// Reading runs beside streaming: a cancel message or a closed socket
	// ends the job.
	go func() {
		for {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				j.markCancelled(errDisconnected)
				cancel()
				return
			}
			var c struct {
				Cancel bool `json:"cancel"`
			}
			if json.Unmarshal(msg, &c) == nil && c.Cancel {
				j.markCancelled(errCancelled)
			}
		}
	}()
	s.stream(ctx, j, send)
	if err := conn.Close(websocket.StatusNormalClosure, "done"); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("websocket close", "job_id", j.id, "err", err.Error())
	}
}

// discardResponse stands in for the HTTP response after a websocket
// upgrade: refusals travel as error events instead.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (discardResponse) WriteHeader(int)             {}
