// Package netsafe holds what every orc server shares about exposure: the
// rule that binding beyond loopback needs an API key, constant-time Bearer
// checks, and random identifiers.
package netsafe

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// CheckBind refuses a non-loopback host unless an API key is set or
// insecure says so; flag names the key's flag in the message.
func CheckBind(host, apiKey string, insecure bool, flag string) error {
	if apiKey != "" || insecure || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("binding %s exposes the server beyond this machine: give %s, or --insecure", host, flag)
}

// Bearer checks "Authorization: Bearer <key>" against a key in constant
// time over hashes, so neither the key's bytes nor its length leak through
// timing.
type Bearer [sha256.Size]byte

// NewBearer prepares key for checks.
func NewBearer(key string) Bearer { return sha256.Sum256([]byte(key)) }

// Allows reports whether r carries the key.
func (b Bearer) Allows(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(got))
	return ok && subtle.ConstantTimeCompare(sum[:], b[:]) == 1
}

// UUID is a random RFC 4122 version 4 UUID.
func UUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
