package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// evictQuiet is how long a connection must have been quiet (idle between
// requests, or accepted and silent) before it may be closed to make room for
// a new client. It keeps a client that sends its next request right after a
// response from losing its connection to a flood of new ones.
const evictQuiet = 250 * time.Millisecond

// connSlots holds one slot per open connection, at most max. When every slot
// is taken and a new client has been accepted, the connection quiet longest
// (at least evictQuiet) is closed for it: an idle keep-alive connection, or
// a silent one, cannot keep anyone out. A connection in a request (sending
// its header or body, served by a handler, streaming, a websocket with its
// job) is never closed for another.
type connSlots struct {
	mu    sync.Mutex
	max   int
	open  map[*slotConn]struct{}
	freed chan struct{} // one token per released slot, for a waiting Accept
}

func newConnSlots(max int) *connSlots {
	return &connSlots{max: max, open: map[*slotConn]struct{}{}, freed: make(chan struct{}, 1)}
}

// slotConn is an accepted connection holding a slot; it gives the slot back
// on its first Close.
type slotConn struct {
	net.Conn
	slots *connSlots
	once  sync.Once
	heard atomic.Int64 // unix nanoseconds of the last read that returned bytes
	// Guarded by slots.mu: whether the connection waits for a client that
	// has nothing in flight, and since when.
	quiet bool
	since time.Time
}

func (c *slotConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.slots.release(c) })
	return err
}

// quietFor is how long c has been waiting without hearing from its client.
func (c *slotConn) quietFor(now time.Time) time.Duration {
	last := c.since
	if h := time.Unix(0, c.heard.Load()); h.After(last) {
		last = h
	}
	return now.Sub(last)
}

// take waits until there is a slot for c, closing the quietest connection
// when none is free, or until closed is closed.
func (s *connSlots) take(conn net.Conn, closed <-chan struct{}) (*slotConn, error) {
	for {
		s.mu.Lock()
		if len(s.open) < s.max {
			c := &slotConn{Conn: conn, slots: s, quiet: true, since: time.Now()}
			s.open[c] = struct{}{}
			s.mu.Unlock()
			return c, nil
		}
		victim, wait := s.quietest(time.Now())
		s.mu.Unlock()
		if victim != nil {
			victim.Close()
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-s.freed:
		case <-t.C:
		case <-closed:
			t.Stop()
			return nil, net.ErrClosed
		}
		t.Stop()
	}
}

// quietest returns the connection quiet longest if it has been quiet for
// evictQuiet and has no unread input, else how long to wait before looking
// again. s.mu is held.
func (s *connSlots) quietest(now time.Time) (*slotConn, time.Duration) {
	var best *slotConn
	var longest time.Duration
	for c := range s.open {
		if !c.quiet || inputPending(c.Conn) {
			continue
		}
		if q := c.quietFor(now); best == nil || q > longest {
			best, longest = c, q
		}
	}
	if best == nil {
		return nil, evictQuiet
	}
	if longest < evictQuiet {
		return nil, evictQuiet - longest
	}
	return best, 0
}

func (s *connSlots) release(c *slotConn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// setQuiet marks c as waiting for a client with nothing in flight (true) or
// as serving a request (false).
func (s *connSlots) setQuiet(c net.Conn, quiet bool) {
	sc, ok := c.(*slotConn)
	if !ok {
		return // served on a listener without slots
	}
	s.mu.Lock()
	sc.quiet, sc.since = quiet, time.Now()
	s.mu.Unlock()
}

// track is http.Server.ConnState: a new connection and one idle between
// requests are quiet; any other state is not.
func (s *connSlots) track(c net.Conn, state http.ConnState) {
	s.setQuiet(c, state == http.StateNew || state == http.StateIdle)
}

type connKey struct{}

// withConn is http.Server.ConnContext: handlers find their connection, so
// that a websocket waiting for its first message can be marked quiet.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf is the connection serving r, or nil.
func connOf(r *http.Request) net.Conn {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	return c
}

// Listener wraps ln so that at most Limits.MaxConnections accepted
// connections are open at once. Serve the HTTPServer on it.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, slots: s.slots, closed: make(chan struct{})}
}

// limitListener accepts a connection, then waits for a slot (closing a quiet
// connection for it when there is one). While it waits, later clients stay
// in the kernel's listen backlog: they see a slow connect, not an error.
type limitListener struct {
	net.Listener
	slots     *connSlots
	closed    chan struct{} // closed by Close: a waiting Accept returns
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc, err := l.slots.take(c, l.closed)
	if err != nil {
		c.Close()
		return nil, err
	}
	return sc, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}
