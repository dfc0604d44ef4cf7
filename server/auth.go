package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// withAPIKey requires "Authorization: Bearer <key>" on every endpoint but
// GET /health. The comparison runs in constant time over hashes, so neither
// the key's bytes nor its length leak through timing. The key is never
// logged. A refused request's connection is closed after the 401, so that
// clients without the key cannot hold connection slots; refused(code)
// counts each.
func withAPIKey(key string, next http.Handler, refused func(code string)) http.Handler {
	want := sha256.Sum256([]byte(key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/health" {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			refused(codeUnauthorized)
			w.Header().Set("WWW-Authenticate", `Bearer realm="orc"`)
			w.Header().Set("Connection", "close")
			if strings.HasPrefix(r.URL.Path, "/v1/") {
				writeOpenAIError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "", "missing or invalid API key")
			} else {
				writeJSONError(w, http.StatusUnauthorized, codeUnauthorized, "missing or invalid API key")
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}
