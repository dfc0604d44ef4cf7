package cuda

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// param is one kernel parameter: its C type and name.
type param struct{ ctype, name string }

// instance is one extern "C" kernel: a family's device template called with
// the model's constants as template arguments.
type instance struct {
	Name      string
	Threads   int
	MinBlocks int // blocks per SM its registers must allow (0: no bound)
	// Cluster: its grid's x blocks come in thread-block clusters of this
	// many (__cluster_dims__, sm_90), which share their shared memory; 0
	// or 1: none.
	Cluster int64
	Params  []param
	Fn      string   // device template, e.g. linear_gemv
	TArgs   any      // its template arguments: its family's struct (targs.go)
	Args    []string // its call arguments (parameter names, or nullptr)
	// StartsLate: the grid before this kernel's lets it launch only when
	// it completes, in a decode step (its node's starts_late): that grid's
	// kernel is a LaunchesAtEnd variant, without grid_dep_launch
	// (kernelSet.launchAtEnd).
	StartsLate, LaunchesAtEnd bool
}

// LaunchBounds is the argument list of its __launch_bounds__.
func (k *instance) LaunchBounds() string {
	if k.MinBlocks > 0 {
		return fmt.Sprintf("%d, %d", k.Threads, k.MinBlocks)
	}
	return strconv.Itoa(k.Threads)
}

// ClusterDims is its cluster attribute (CLUSTER_X, wrappers.cu.tmpl), ""
// without clusters.
func (k *instance) ClusterDims() string {
	if k.Cluster > 1 {
		return fmt.Sprintf("CLUSTER_X(%d) ", k.Cluster)
	}
	return ""
}

// Signature is the parameter list in C.
func (k *instance) Signature() string {
	s := make([]string, len(k.Params))
	for i, p := range k.Params {
		s[i] = p.ctype + " " + p.name
	}
	return strings.Join(s, ", ")
}

// waitsInside are the device functions that wait for the grid before them
// themselves: rows_dot8 (q8_rows.cu.tmpl) fetches their first weight groups, then
// calls grid_dep_wait; attend_decode (attention.cu.tmpl) starts copying the
// keys earlier steps cached first; moe_logits (moe.cu.tmpl) fetches its
// router groups first, rmsnorm_logits its router values; moe_down_sum_q8
// picks its experts and fetches their groups first; sample_draw reads its
// settings and penalised ids from the state block first; the streamed
// mma_tokens kernels (mmat_stream) issue their first stages' copies first,
// and the mma_halves kernels (mmah_run) their first weight fetches.
// Every other kernel's wrapper waits before its body (wrappers.cu.tmpl);
// TestEveryKernelWaits checks that each kernel reaches grid_dep_wait in
// exactly one of the two places.
var waitsInside = map[string]bool{"linear_q8": true, "swiglu_q8": true, "swiglu_mma": true, "qkv_mma": true, "linear_mmas": true, "qkv_q8": true, "attend_decode": true, "moe_logits": true, "rmsnorm_logits": true, "moe_down_sum_q8": true, "sample_draw": true,
	"linear_mmat_stream": true, "swiglu_mmat_stream": true, "qkv_mmat_stream": true, "linear_mmah": true, "swiglu_mmah": true, "qkv_mmah": true}

// WaitsInside says the wrapper leaves grid_dep_wait to the device function.
func (k *instance) WaitsInside() bool { return waitsInside[k.Fn] }

// Acquired lists the parameters that grid_dep_wait orders, for acquire
// (common.cu.tmpl) after it: the read-only pointers other than weights
// (cWeight), which no kernel writes, so their loads may stay read-only and
// (in the integer GEMVs) start before the wait.
func (k *instance) Acquired() string {
	var names []string
	for _, p := range k.Params {
		if strings.HasPrefix(p.ctype, "const ") && p.ctype != cWeight {
			names = append(names, p.name)
		}
	}
	return strings.Join(names, ", ")
}

// Call is the body's one statement.
func (k *instance) Call() string {
	return fmt.Sprintf("%s<%s>(%s);", k.Fn, strings.Join(renderTArgs(k.TArgs), ", "), strings.Join(k.Args, ", "))
}

// kernelSet collects kernel instances and config structs, each once, in the
// order first used, so the emitted source is deterministic.
type kernelSet struct {
	instances []*instance
	byName    map[string]*instance
	configs   []string          // struct definitions
	configIdx map[string]string // definition body → struct name
	// conflict: the first instance added under a name another holds with
	// other launch bounds, cluster, parameters or call (add; generate
	// reports it).
	conflict error
}

func newKernelSet() *kernelSet {
	return &kernelSet{byName: map[string]*instance{}, configIdx: map[string]string{}}
}

// add registers k under a name made from its function and template
// arguments (which fix its code) and returns the name. The name leaves out
// what the extern "C" kernel around the template adds (its threads and
// __launch_bounds__, cluster, parameters and call, whether it starts
// late): an instance that differs from the one already under its name in
// any of those is a conflict (kernelSet.conflict), not a second launch of
// the first's kernel.
func (s *kernelSet) add(k *instance) string {
	k.Name = k.Fn + "_" + cIdent(strings.Join(renderTArgs(k.TArgs), "_"))
	if k.LaunchesAtEnd {
		k.Name += "_at_end"
	}
	if old, ok := s.byName[k.Name]; !ok {
		s.byName[k.Name] = k
		s.instances = append(s.instances, k)
	} else if s.conflict == nil && !sameKernel(old, k) {
		s.conflict = fmt.Errorf("two launches of kernel %s differ in what its name leaves out: %d threads, %d blocks an SM, cluster %d, start late %v, params %v, call %v against %d, %d, %d, %v, %v, %v",
			k.Name, old.Threads, old.MinBlocks, old.Cluster, old.StartsLate, old.Params, old.Args, k.Threads, k.MinBlocks, k.Cluster, k.StartsLate, k.Params, k.Args)
	}
	return k.Name
}

// sameKernel reports whether a and b, of one name, are one extern "C"
// kernel: the same threads, launch bounds, cluster, parameters, call and
// late start (a cluster of 0 or 1 is none).
func sameKernel(a, b *instance) bool {
	return a.Threads == b.Threads && a.MinBlocks == b.MinBlocks && max(a.Cluster, 1) == max(b.Cluster, 1) && a.StartsLate == b.StartsLate &&
		slices.Equal(a.Params, b.Params) && slices.Equal(a.Args, b.Args)
}

// config returns the name of a struct with the given constexpr members,
// emitting it the first time; prefix says what it configures.
func (s *kernelSet) config(prefix string, members ...string) string {
	body := strings.Join(members, " ")
	if name, ok := s.configIdx[prefix+body]; ok {
		return name
	}
	name := fmt.Sprintf("%s_%d", prefix, len(s.configs))
	s.configs = append(s.configs, fmt.Sprintf("struct %s { %s };", name, body))
	s.configIdx[prefix+body] = name
	return name
}

// launchAtEnd gives the decode launches that the nodes' records name
// (chooseLateStarts) their kernel's LaunchesAtEnd variant: the last launch
// of a node recording launch_at_end, the first of one recording
// quantize_at_end (its quantize_x8). owners are the launches' nodes. Those
// must be the launches a StartsLate kernel (its node's starts_late)
// follows; it refuses records that name others.
func (s *kernelSet) launchAtEnd(ls []plans.Launch, owners []*ir.Node) error {
	for i := range ls {
		n, k := owners[i], s.byName[ls[i].Kernel]
		first := i == 0 || owners[i-1] != n
		last := i+1 == len(ls) || owners[i+1] != n
		atEnd := n.Bool("launch_at_end") && last || n.Bool("quantize_at_end") && first && k.Fn == "quantize_x8"
		late := i+1 < len(ls) && s.byName[ls[i+1].Kernel].StartsLate
		switch {
		case late && !atEnd:
			return fmt.Errorf("decode launch %d (%s) starts late, but launch %d before it (%s of node %d, %s) is not recorded to launch at its end (launch_at_end, quantize_at_end): run the chooseLateStarts pass", i+1, s.byName[ls[i+1].Kernel].Fn, i, k.Fn, n.ID, n.Op)
		case atEnd && !late:
			return fmt.Errorf("node %d (%s) records that decode launch %d (%s) launches at its end, but the launch after it does not start late", n.ID, n.Op, i, k.Fn)
		case atEnd:
			v := *k
			v.LaunchesAtEnd = true
			ls[i].Kernel = s.add(&v)
		}
	}
	return nil
}

// cIdent turns template arguments into an identifier fragment.
func cIdent(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok || r == '_' {
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = false
	}
	return strings.Trim(b.String(), "_")
}

// cFloat writes a float constant that C reads back as the same float32.
func cFloat(x float64) string { return strconv.FormatFloat(float64(float32(x)), 'e', -1, 32) + "f" }

// cInt writes an integer template argument.
func cInt(x int64) string { return strconv.FormatInt(x, 10) }

// keepLaunched drops the instances that no launch of schedules names: the
// variants launchAtEnd and readsBeforeWait replaced, which would be
// compiled into every plan and never run.
func (s *kernelSet) keepLaunched(schedules ...[]plans.Launch) {
	launched := map[string]bool{}
	for _, ls := range schedules {
		for _, l := range ls {
			launched[l.Kernel] = true
		}
	}
	kept := s.instances[:0]
	for _, k := range s.instances {
		if launched[k.Name] {
			kept = append(kept, k)
		} else {
			delete(s.byName, k.Name)
		}
	}
	s.instances = kept
}
