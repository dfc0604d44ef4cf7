// Package clitest runs a command as its users do: a command's test binary
// runs the command's main itself when Run executes it, so tests see the real
// exit status, stdout and stderr without building another binary.
package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// asMain, set in a child's environment, makes Main run the command.
const asMain = "ORC_CLITEST_MAIN"

// Main is a command's TestMain: the command itself when Run started this
// process, else the tests.
func Main(m *testing.M, main func()) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Result is what one run of the command did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Command is the command with args, ready to start: its environment is
// this one's plus env.
func Command(t testing.TB, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), asMain+"=1"), env...)
	return cmd
}

// Run runs the command with args to its end.
func Run(t testing.TB, env []string, args ...string) Result {
	t.Helper()
	cmd := Command(t, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// Case is one row of a command-line table.
type Case struct {
	Name string
	Args []string
	Env  []string
	Code int // the exit status
	// Stderr is in stderr's last line. A failure (Code 1) says only that
	// line, unless Logs (serve's JSON lines come first); a usage error
	// (Code 2) adds one line, the --help hint.
	Stderr string
	Logs   bool
	Stdout string // in stdout
	NotOut string // in neither stdout nor stderr
}

// Check runs c and reports every way it differs.
func (c Case) Check(t *testing.T) {
	t.Helper()
	r := Run(t, c.Env, c.Args...)
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	bad := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: "+format+"\nexit %d\nstdout:\n%s\nstderr:\n%s", append(append([]any{c.Name}, args...), r.Code, r.Stdout, r.Stderr)...)
	}
	if r.Code != c.Code {
		bad("exit status %d, want %d", r.Code, c.Code)
	}
	switch {
	case c.Code == 2 && (len(lines) != 2 || !strings.Contains(lines[0], c.Stderr) || !strings.HasSuffix(lines[1], "--help' for the usage")):
		bad("want the error %q and the --help hint, two lines", c.Stderr)
	case c.Code == 1 && !c.Logs && len(lines) != 1:
		bad("want the one-line error %q alone", c.Stderr)
	case c.Code != 2 && !strings.Contains(lines[len(lines)-1], c.Stderr):
		bad("stderr's last line lacks %q", c.Stderr)
	}
	if !strings.Contains(r.Stdout, c.Stdout) {
		bad("stdout lacks %q", c.Stdout)
	}
	if c.NotOut != "" && strings.Contains(r.Stdout+r.Stderr, c.NotOut) {
		bad("the output has %q", c.NotOut)
	}
}
