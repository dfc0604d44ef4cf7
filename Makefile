# orc: see README.md. `make demo` runs the main job, `make test` the tests.
GO      ?= go
BIN     := bin
DEMO    := .demo

.PHONY: all build setup setup-demo demo test gpu-bundle clean

all: build

build:
	$(GO) build -o $(BIN)/orcc ./cmd/orcc
	$(GO) build -o $(BIN)/orcrun ./cmd/orcrun
	$(GO) build -o $(BIN)/orcd ./cmd/orcd
	$(GO) build -o $(BIN)/orcpool ./cmd/orcpool

# Everything make test needs (nvcc, the OpenAI Node SDK); setup-demo only
# what the demo needs on this machine (no CUDA toolkit without a GPU).
setup:
	bash scripts/setup.sh test

setup-demo:
	bash scripts/setup.sh demo

# The main job on an embedded default: synthesise a tiny Qwen2-architecture
# model, compile it, generate tokens (GPU when one is present, else the CPU
# reference device). Then one request through orcd with two CPU workers.
demo: setup-demo build
	bash scripts/demo.sh
	bash scripts/demo_orcd.sh

# codegen/cuda's nvcc compiles of every tiny preset (sm_80 and sm_90) take
# over go test's default 10 minutes on two shared cores.
test: setup
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

# Binaries for scripts/gpu_acceptance.sh on a GPU host (which has no Go).
gpu-bundle: build
	mkdir -p .gpu/bundle
	cp $(BIN)/orcc $(BIN)/orcrun $(BIN)/orcd $(BIN)/orcpool .gpu/bundle/
	CGO_ENABLED=1 $(GO) test -c -o .gpu/bundle/codegen.test ./codegen/cuda
	CGO_ENABLED=1 $(GO) test -c -o .gpu/bundle/cuda.test ./runtime/cuda
	cp ../shared/testdata/models/stories260k-f32.gguf .gpu/bundle/

clean:
	rm -rf $(BIN) $(DEMO)
