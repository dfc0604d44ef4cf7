// The C layer lives in runtime/csrc; cgo compiles only files of this
// directory, so it is included here. Edits there need `go build -a` (the go
// command does not track files outside the package directory).
#include "orc_cuda.c"
