package orchestrator

import (
	"os/exec"
	"strings"
	"testing"
)

// orcd and orcpool link none of the compiler, the runtime or the worker's
// server: they reach workers over HTTP only.
func TestReachesWorkersOnlyOverHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../orchestrator/...", "../poolmanager/...", "../cmd/orcd", "../cmd/orcpool").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/llama-orch/orc/"
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"compiler", "passes", "codegen", "runtime", "server"} {
			if dep == mod+banned || strings.HasPrefix(dep, mod+banned+"/") {
				t.Errorf("orcd or orcpool imports %s", dep)
			}
		}
	}
}
