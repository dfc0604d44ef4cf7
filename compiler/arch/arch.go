// Package arch holds the declarative models: one Go struct per architecture
// whose fields name their GGUF tensors (and their shapes), registered by
// general.architecture, plus the typed hyperparameters every later stage
// reads. Detection is a map lookup; an unknown architecture is refused.
package arch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llama-orch/orc/gguf"
)

// Arch describes one supported architecture.
type Arch struct {
	Name string // general.architecture
	// Compute declares what the architecture computes.
	Compute Compute
	// EpsKey is the key (after "<arch>.") holding the norm epsilon.
	EpsKey string
	// NewWeights returns an empty weight struct (a pointer) with nLayer layers.
	NewWeights func(nLayer int) any
	// extra reads the hyperparameters specific to this architecture.
	extra func(r *keyReader, h *Hparams) error
}

var registry = map[string]*Arch{}

func register(a *Arch) { registry[a.Name] = a }

// Supported lists the registered architecture names, sorted.
func Supported() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the architecture registered under name.
func Lookup(name string) (*Arch, error) {
	a, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("arch: unsupported architecture %q (supported: %s)", name, strings.Join(Supported(), ", "))
	}
	return a, nil
}

// Detect reads general.architecture and looks it up.
func Detect(f *gguf.File) (*Arch, error) {
	name, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	return Lookup(name)
}

// Model is a GGUF file bound to its architecture: hyperparameters and, in
// Weights, the architecture's weight struct whose fields point at the file's
// tensor infos (nil for an absent optional tensor).
type Model struct {
	Arch    *Arch
	H       Hparams
	Weights any
	File    *gguf.File
}

// Load detects the architecture, reads and validates the hyperparameters and
// binds every named tensor, checking its shape. A file without tensors (a
// vocab-only file) is refused; ReadHparams still works on it.
func Load(f *gguf.File) (*Model, error) {
	a, h, err := ReadHparams(f)
	if err != nil {
		return nil, err
	}
	if len(f.Tensors) == 0 {
		return nil, fmt.Errorf("arch: %s file has no tensors (vocab-only?); only its hyperparameters can be read", a.Name)
	}
	w := a.NewWeights(h.NLayer)
	if err := bind(f, h, w); err != nil {
		return nil, err
	}
	return &Model{Arch: a, H: *h, Weights: w, File: f}, nil
}
