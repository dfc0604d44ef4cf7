package server

import (
	"errors"
	"net/http"
	"time"
)

// Limits bound what clients can hold of the server: sockets, and time spent
// on a request that is never finished or a stream that is never read. The
// device runs one job at a time, so a client that could pin a connection or
// the worker forever would stop everyone else.
type Limits struct {
	// MaxConnections caps the connections open at once. When all are taken,
	// a new client gets the slot of the connection quiet longest (idle
	// between requests or silent since it connected, for at least 250 ms);
	// with none quiet it waits in the kernel's listen backlog until one
	// closes. Default 64.
	MaxConnections int
	// ReadHeaderTimeout cuts a client that has not sent its whole header in
	// this time, however slowly it dribbles bytes (slowloris). Default 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout cuts a client that has not sent header and body in this
	// time. Streams are not affected: net/http clears the read deadline once
	// the body is read. A websocket's first message (its execute request)
	// must arrive within it too. Default 30 s.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request in this
	// time. Default 120 s; sooner when a new client needs its slot.
	IdleTimeout time.Duration
	// StreamWriteTimeout drops a streaming client that takes longer than
	// this to take one event: its job is cancelled as a disconnect, so a
	// client that stops reading cannot hold the worker. Default 30 s.
	StreamWriteTimeout time.Duration
}

// DefaultMaxConnections is the connection cap when none is configured.
const DefaultMaxConnections = 64

func (l Limits) withDefaults() Limits {
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = 10 * time.Second
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = 30 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 120 * time.Second
	}
	if l.StreamWriteTimeout <= 0 {
		l.StreamWriteTimeout = 30 * time.Second
	}
	return l
}

// sendWithin bounds each write of a stream by d: past it the write fails,
// the stream ends and the job is cancelled as a disconnect. The deadline is
// cleared after each event, so it never outlives the stream on a keep-alive
// connection.
func sendWithin(w http.ResponseWriter, d time.Duration, send func(event) error) func(event) error {
	rc := http.NewResponseController(w)
	return func(e event) error {
		// A writer without deadlines (none that net/http hands out) streams
		// unbounded rather than failing.
		if err := rc.SetWriteDeadline(time.Now().Add(d)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		err := send(e)
		rc.SetWriteDeadline(time.Time{})
		return err
	}
}
