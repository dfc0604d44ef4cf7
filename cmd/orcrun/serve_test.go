package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeAPIKeySources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyFile := write("key", "s3cret\n", 0o600)
	for _, c := range []struct {
		name, env, flag, file string
		key, err, warn        string
	}{
		{name: "none"},
		{name: "variable", env: "s3cret", flag: "s3cret", key: "s3cret"}, // kong copies the variable into the flag's field
		{name: "file", file: keyFile, key: "s3cret"},
		{name: "flag", flag: "s3cret", key: "s3cret", warn: "/proc/PID/cmdline"},
		{name: "world-readable file", file: write("open", "k2\nrest", 0o644), key: "k2", warn: "readable by other users"},
		{name: "empty file", file: write("empty", "\n", 0o600), err: "first line is empty"},
		{name: "missing file", file: filepath.Join(dir, "nope"), err: "--api-key-file"},
		{name: "flag and variable", env: "a", flag: "b", err: "more than one way"},
		{name: "file and variable", env: "a", flag: "a", file: keyFile, err: "more than one way"},
	} {
		t.Setenv("ORC_API_KEY", c.env)
		var logs bytes.Buffer
		cmd := serveCmd{APIKey: c.flag, APIKeyFile: c.file}
		key, err := cmd.apiKey(slog.New(slog.NewJSONHandler(&logs, nil)))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		case c.err == "" && (err != nil || key != c.key):
			t.Errorf("%s: key %q, error %v; want %q", c.name, key, err, c.key)
		case c.warn == "" && logs.Len() > 0 || c.warn != "" && !strings.Contains(logs.String(), c.warn):
			t.Errorf("%s: logged %q, want a warning saying %q", c.name, logs.String(), c.warn)
		}
	}
}
