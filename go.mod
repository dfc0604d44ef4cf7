module github.com/llama-orch/orc

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/klauspost/compress v1.20.3
	github.com/vmihailenco/msgpack/v5 v5.4.1
	github.com/x448/float16 v0.8.4
	go.etcd.io/bbolt v1.4.3
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/text v0.43.0
	lukechampine.com/blake3 v1.4.1
	nhooyr.io/websocket v1.8.17
)

require (
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/sys v0.29.0 // indirect
)
