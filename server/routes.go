package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// Handler routes every endpoint. Any other path gets 404, a known path with
// another method 405 (with Allow), both in the JSON error shape of the API
// the path belongs to.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{} // path → its methods
	route := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(method+" "+path, h)
		allowed[path] = append(allowed[path], method)
	}
	route("POST", "/execute", s.handleExecute)
	route("POST", "/cancel", s.handleCancel)
	route("GET", "/health", s.handleHealth)
	route("GET", "/metrics", s.handleMetrics)
	route("POST", "/shutdown", s.handleShutdown)
	route("GET", "/ws", s.handleWebsocket)
	route("GET", "/v1/models", s.handleModels)
	route("POST", "/v1/completions", s.handleCompletions)
	route("POST", "/v1/chat/completions", s.handleChatCompletions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.handleUnrouted(w, r, allowed[r.URL.Path]) })
	var h http.Handler = mux
	if s.cfg.APIKey != "" {
		h = withAPIKey(s.cfg.APIKey, h, s.refusals.note)
	}
	return s.withCorrelationID(closeAfterTransferEncoding(h))
}

// handleUnrouted answers a path no route serves (404), or a route's path
// with another method (405).
func (s *Server) handleUnrouted(w http.ResponseWriter, r *http.Request, methods []string) {
	status, code := http.StatusNotFound, codeNotFound
	msg := fmt.Sprintf("no endpoint %.200q", r.URL.Path)
	if len(methods) > 0 {
		status, code = http.StatusMethodNotAllowed, codeMethodNotAllowed
		w.Header().Set("Allow", strings.Join(methods, ", "))
		msg = fmt.Sprintf("%s takes %s, not %.20q", r.URL.Path, strings.Join(methods, " or "), r.Method)
	}
	s.refusals.note(code)
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		writeOpenAIError(w, status, "invalid_request_error", strings.ToLower(code), "", msg)
		return
	}
	writeJSONError(w, status, code, msg)
}

// closeAfterTransferEncoding answers a request that came with
// Transfer-Encoding and then closes its connection. RFC 9112 §6.3 requires
// that when the request also had Content-Length: a proxy in front that
// framed it by the length would otherwise pass the rest of the body on as
// a second request (request smuggling). net/http drops Content-Length from
// a chunked request before a handler runs, so the two cannot be told apart
// here: every chunked request closes its connection, a reconnect's cost.
func closeAfterTransferEncoding(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

type ctxKey int

const correlationKey ctxKey = 0

// maxCorrelationID bounds an accepted X-Correlation-Id.
const maxCorrelationID = 128

// withCorrelationID echoes X-Correlation-Id when it is one header of 1 to
// 128 bytes of letters, digits and -_.:, and otherwise makes one, on every
// response; handlers log it.
func (s *Server) withCorrelationID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids := r.Header.Values("X-Correlation-Id")
		id := ""
		if len(ids) == 1 && safeCorrelationID(ids[0]) {
			id = ids[0]
		} else {
			id = newID()
		}
		w.Header().Set("X-Correlation-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), correlationKey, id)))
	})
}

func safeCorrelationID(id string) bool {
	if id == "" || len(id) > maxCorrelationID {
		return false
	}
	for _, c := range []byte(id) {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

func correlationID(r *http.Request) string {
	v, _ := r.Context().Value(correlationKey).(string)
	return v
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
