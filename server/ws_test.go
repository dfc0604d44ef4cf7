package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"nhooyr.io/websocket"
)

func TestWebsocketCarriesExecuteEvents(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
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
