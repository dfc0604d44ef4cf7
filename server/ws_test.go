package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"nhooyr.io/websocket"
)

// dialWS opens a websocket to the server at base (http://…) for the test's
// length of at most 10 s.
func dialWS(t *testing.T, base string) (context.Context, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return ctx, conn
}

func TestWebsocketCarriesExecuteEvents(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	ctx, conn := dialWS(t, hs.URL)
	req, _ := json.Marshal(map[string]any{"job_id": "ws", "prompt": "Once upon a time", "max_tokens": 10, "temperature": 0})
	if err := conn.Write(ctx, websocket.MessageText, req); err != nil {
		t.Fatal(err)
	}
	var events []string
	var text strings.Builder
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				break
			}
			t.Fatal(err)
		}
		var m struct {
			Event string
			Data  map[string]any
		}
		json.Unmarshal(msg, &m)
		events = append(events, m.Event)
		if m.Event == evToken {
			text.WriteString(m.Data["t"].(string))
		}
	}
	if len(events) != 12 || events[0] != evStarted || events[11] != evEnd {
		t.Fatalf("events %v", events)
	}
	if !strings.Contains(text.String(), "Lily") {
		t.Fatalf("text %q", text.String())
	}
}

func TestWebsocketCancel(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	ctx, conn := dialWS(t, hs.URL)
	req, _ := json.Marshal(map[string]any{"job_id": "wsc", "prompt": "hello", "max_tokens": 2048})
	conn.Write(ctx, websocket.MessageText, req)
	cancelled := false
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("stream ended without a terminal event: %v", err)
		}
		var m struct {
			Event string
			Data  map[string]any
		}
		json.Unmarshal(msg, &m)
		if m.Event == evToken && !cancelled {
			conn.Write(ctx, websocket.MessageText, []byte(`{"cancel":true}`))
			cancelled = true
		}
		if m.Event == evError {
			if m.Data["code"] != codeCancelled {
				t.Fatalf("error %v, want CANCELLED", m.Data)
			}
			return
		}
		if m.Event == evEnd {
			t.Fatal("job ended normally despite the cancel")
		}
	}
}
