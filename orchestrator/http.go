package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/llama-orch/orc/internal/netsafe"
)

type ctxKey int

const correlationKey ctxKey = 0

// withCorrelationID echoes X-Correlation-Id, or makes a UUIDv4, on every
// response and stream; handlers log it with every line.
func withCorrelationID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Correlation-Id")
		if id == "" || len(id) > 128 {
			id = netsafe.UUID()
		}
		w.Header().Set("X-Correlation-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), correlationKey, id)))
	})
}

func correlationID(r *http.Request) string {
	v, _ := r.Context().Value(correlationKey).(string)
	return v
}

// withAuth guards the public API with the API key (when one is set) and
// the internal endpoints with the shared pool token (always).
func withAuth(apiKey, poolToken string, next http.Handler) http.Handler {
	key, token := netsafe.NewBearer(apiKey), netsafe.NewBearer(poolToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internal := strings.HasPrefix(r.URL.Path, "/v2/internal/")
		ok := true
		switch {
		case internal:
			ok = poolToken != "" && token.Allows(r)
		case apiKey != "" && r.URL.Path != "/metrics":
			ok = key.Allows(r)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="orcd"`)
			writeError(w, newError(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid Bearer token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

const maxBodyBytes = 1 << 20

// readBody reads a request body up to maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, invalidParams("body: larger than 1 MiB")
	}
	if err != nil {
		return nil, invalidParams("body: unreadable: " + err.Error())
	}
	return b, nil
}

// decodeBody reads a JSON body into v, refusing unknown fields and
// trailing data.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) *apiError {
	b, e := readBody(w, r)
	if e != nil {
		return e
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidParams("body: invalid JSON: " + err.Error())
	}
	if dec.More() {
		return invalidParams("body: trailing data after the JSON object")
	}
	return nil
}
