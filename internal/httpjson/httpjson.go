// Package httpjson writes JSON answers, the one way the worker, orcd and
// orcpool answer HTTP requests.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write answers with status and v as JSON.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
