package server

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what clients can hold of the server: sockets, and time spent
// on a request that is never finished or a stream that is never read. The
// device runs one job at a time, so a client that could pin a connection or
// the worker forever would stop everyone else.
type Limits struct {
	// MaxConnections caps the connections open at once; the next one waits
	// in the kernel's listen backlog until one closes. Default 64.
	MaxConnections int
	// ReadHeaderTimeout cuts a client that has not sent its whole header in
	// this time, however slowly it dribbles bytes (slowloris). Default 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout cuts a client that has not sent header and body in this
	// time. Streams are not affected: net/http clears the read deadline once
	// the body is read. Default 30 s.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request in this
	// time, freeing its slot under MaxConnections. Default 120 s.
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

// Listener wraps ln so that at most Limits.MaxConnections accepted
// connections are open at once. Serve the HTTPServer on it.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, s.cfg.Limits.MaxConnections), closed: make(chan struct{})}
}

// limitListener holds a slot per open connection. Accept waits for a free
// slot before accepting, so connections past the cap stay in the backlog
// (their clients see a slow connect, not an error) rather than being
// accepted and left unserved.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{} // closed by Close: a waiting Accept returns
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitConn gives its slot back on the first Close.
type limitConn struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
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
