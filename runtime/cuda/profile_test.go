package cuda

import (
	"strings"
	"testing"
)

// The profile's table: per schedule its steps and time a step, kernels by
// time with launches and µs a step, µs a launch and their share.
func TestLaunchProfileTable(t *testing.T) {
	var p launchProfile
	for range 2 {
		p.step("batch decode")
		p.add("batch decode", "attend_paged", 0.010)
		p.add("batch decode", "linear_mmat", 0.002)
		p.add("batch decode", "linear_mmat", 0.004)
	}
	p.step("prefill")
	p.add("prefill", "gemm", 0.5)
	var b strings.Builder
	if err := p.write(&b); err != nil {
		t.Fatal(err)
	}
	want := `# batch decode: 2 steps, 16.0 µs a step
  launches  µs a step    µs each  share  kernel
      1.00       10.0      10.00  62.5%  attend_paged
      2.00        6.0       3.00  37.5%  linear_mmat
# prefill: 1 steps, 500.0 µs a step
  launches  µs a step    µs each  share  kernel
      1.00      500.0     500.00 100.0%  gemm
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}
