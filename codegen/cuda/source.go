package cuda

import (
	"embed"
	"strings"
	"text/template"
)

//go:embed templates/*.cu.tmpl
var templateFS embed.FS

var templates = template.Must(template.ParseFS(templateFS, "templates/*.cu.tmpl"))

// families are the template bodies every source starts with, in dependency
// order; a family costs nothing until a kernel instantiates it.
var families = []string{"common", "weights", "rope", "gemv", "qkv", "q8_quant", "q8_dot", "q8_rows", "q8_stream", "q8_kernels", "mma", "mma_slabs", "mma_tokens", "gemm", "norm", "elementwise", "headnorm", "embed", "attention", "mma_halves", "paged", "moe", "moe_gemm", "sample"}

// sourceData is what the templates read.
type sourceData struct {
	StateT, StateCtx int64 // int32 indexes into the state block
	StateSample      int64 // int32 index of the step's draw settings
	SampleRecent     int64 // penalised ids the settings hold
	MaxTokens        int64
	Configs          []string
	Kernels          []*instance
}

// render writes the .cu source of one plan.
func render(d sourceData) (string, error) {
	var b strings.Builder
	for _, f := range append(families, "wrappers") {
		if err := templates.ExecuteTemplate(&b, f, d); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
