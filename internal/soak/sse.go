package soak

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// Event is one server-sent event of POST /execute, stamped on arrival.
type Event struct {
	Name string
	Data map[string]any
	At   time.Time
}

// ReadEvents parses an event stream, calling each for every event until EOF,
// a read error, or each returning false. It returns the read error (nil at
// a clean EOF or when each stopped). The server's tests read streams with it
// too.
func ReadEvents(r io.Reader, each func(Event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ev Event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = nil
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
				ev.Data = map[string]any{"unparsed": line}
			}
		case line == "" && ev.Name != "":
			ev.At = time.Now()
			if !each(ev) {
				return nil
			}
			ev = Event{}
		}
	}
	return sc.Err()
}

func (e Event) terminal() bool { return e.Name == "end" || e.Name == "error" }

// code is an error event's code.
func (e Event) code() string {
	c, _ := e.Data["code"].(string)
	return c
}
