package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/llama-orch/orc/runtime"
)

func TestFaultsFromEnv(t *testing.T) {
	t.Setenv(faultEnv, "")
	if f, err := faultsFromEnv(); f != nil || err != nil {
		t.Fatalf("unset: %+v %v, want no faults", f, err)
	}
	t.Setenv(faultEnv, "alloc:3, launch:2,load-kill:50")
	f, err := faultsFromEnv()
	if err != nil || f.allocAt != 3 || f.launchAt != 2 || f.killAt != 50 {
		t.Fatalf("got %+v %v", f, err)
	}
	for _, bad := range []string{"alloc", "alloc:0", "alloc:x", "launch:-1", "load-kill:101", "oom:1", "alloc:1;launch:2"} {
		t.Setenv(faultEnv, bad)
		if f, err := faultsFromEnv(); err == nil || !strings.Contains(err.Error(), faultEnv) {
			t.Errorf("%s=%q: got %+v %v, want an error naming %s", faultEnv, bad, f, err, faultEnv)
		}
	}
}

func TestFaultsFireOnce(t *testing.T) {
	f := &faults{allocAt: 3, launchAt: 2, killAt: -1}
	for i := 1; i <= 5; i++ {
		err := f.alloc(100)
		if (i == 3) != (err != nil) {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if i == 3 && (!errors.Is(err, runtime.ErrOutOfMemory) || !strings.Contains(err.Error(), "allocation 3 (100 bytes)")) {
			t.Fatalf("allocation 3: %v, want ErrOutOfMemory naming it", err)
		}
		if err := f.launch(); (i == 2) != (err != nil) {
			t.Fatalf("launch %d: %v", i, err)
		}
	}
	// No faults: the hooks pass everything through, the progress callback
	// unchanged.
	var none *faults
	var got []int
	report := none.killDuringLoad(func(p int) { got = append(got, p) })
	report(100)
	if none.alloc(1) != nil || none.launch() != nil || len(got) != 1 {
		t.Fatal("a nil fault set injected something")
	}
}

// TestFaultKillsTheProcess runs the test binary again; the child reports
// 25 %, then 50 % of a load under load-kill:50, and must die by SIGKILL
// right after the 50 % report.
func TestFaultKillsTheProcess(t *testing.T) {
	if os.Getenv("ORC_FAULT_KILL_CHILD") == "1" {
		f := &faults{killAt: 50}
		report := f.killDuringLoad(func(p int) { fmt.Printf("reported %d\n", p) })
		report(25)
		report(50)
		fmt.Println("still alive")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultKillsTheProcess$")
	cmd.Env = append(os.Environ(), "ORC_FAULT_KILL_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed by SIGKILL:\n%s", err, out)
	}
	if got := string(out); !strings.Contains(got, "reported 50") || strings.Contains(got, "still alive") {
		t.Fatalf("child output %q: want death right after the 50 %% report", got)
	}
}
