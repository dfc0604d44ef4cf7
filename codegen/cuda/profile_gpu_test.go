package cuda_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// launchMicros reads a launch profile (runtime/cuda's launchProfile
// table) and gives its µs a launch by schedule ("prefill", "batch",
// "batch decode", ...) and kernel.
func launchMicros(t *testing.T, path string) map[string]map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	us := map[string]map[string]float64{}
	var schedule map[string]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "# "); ok {
			name, _, _ = strings.Cut(name, ": ")
			schedule = map[string]float64{}
			us[name] = schedule
			continue
		}
		fs := strings.Fields(line)
		if schedule == nil || len(fs) != 5 || fs[0] == "launches" {
			continue
		}
		each, err := strconv.ParseFloat(fs[2], 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		schedule[fs[4]] = each
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return us
}
