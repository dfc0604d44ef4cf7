module github.com/llama-orch/orc

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	nhooyr.io/websocket v1.8.17 // indirect
)
