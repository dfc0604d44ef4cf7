package netsafe

import (
	"net/http"
	"regexp"
	"testing"
)

func TestCheckBind(t *testing.T) {
	for _, c := range []struct {
		host, key string
		insecure  bool
		ok        bool
	}{
		{"127.0.0.1", "", false, true},
		{"::1", "", false, true},
		{"localhost", "", false, true},
		{"0.0.0.0", "", false, false},
		{"0.0.0.0", "k", false, true},
		{"10.1.2.3", "", true, true},
	} {
		if err := CheckBind(c.host, c.key, c.insecure, "--api-key"); (err == nil) != c.ok {
			t.Errorf("CheckBind(%q, key %q, insecure %v) = %v", c.host, c.key, c.insecure, err)
		}
	}
}

func TestBearer(t *testing.T) {
	b := NewBearer("secret")
	r, _ := http.NewRequest("GET", "/", nil)
	if b.Allows(r) {
		t.Fatal("no header allowed")
	}
	r.Header.Set("Authorization", "Bearer secre")
	if b.Allows(r) {
		t.Fatal("wrong key allowed")
	}
	r.Header.Set("Authorization", "Bearer secret")
	if !b.Allows(r) {
		t.Fatal("right key refused")
	}
}

func TestUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := UUID(), UUID()
	if !re.MatchString(a) || a == b {
		t.Fatalf("UUIDs %q %q", a, b)
	}
}
