package runtime

import "errors"

// ErrOutOfMemory is wrapped by allocation failures (VRAM or host).
var ErrOutOfMemory = errors.New("out of memory")

// ErrNoDriver is wrapped when a GPU device is asked for and no driver loads.
var ErrNoDriver = errors.New("no CUDA driver")

// ErrContextFull is wrapped when a Forward would pass the sequence's context.
var ErrContextFull = errors.New("context length exceeded")
