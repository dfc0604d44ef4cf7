package tokenizer

import (
	"encoding/json"
	"flag"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var benchTextOut = flag.String("benchtext", "", "write the ~1 MB benchmark text to this file (for scripts/hf_tokenize.py bench) and exit the test")

// benchTextSize is the size of the mixed benchmark text.
const benchTextSize = 1 << 20

// benchText builds about 1 MB of mixed text: English prose (Tom Sawyer,
// from a module the project already depends on), Go source from GOROOT and
// the multilingual/emoji/code test corpus. The same bytes go to the HF
// benchmark through -benchtext.
func benchText(tb testing.TB) string {
	tb.Helper()
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		modcache = filepath.Join(build.Default.GOPATH, "pkg", "mod")
	}
	files := []string{
		filepath.Join(modcache, "github.com", "klauspost", "compress@v1.20.3", "testdata", "Mark.Twain-Tom.Sawyer.txt"),
		filepath.Join(build.Default.GOROOT, "src", "net", "http", "server.go"),
		filepath.Join(build.Default.GOROOT, "src", "fmt", "print.go"),
		filepath.Join(build.Default.GOROOT, "src", "strings", "strings.go"),
	}
	var parts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Skipf("benchmark text source missing: %v", err)
		}
		parts = append(parts, string(b))
	}
	corpus := readCorpus(tb)
	var b strings.Builder
	for b.Len() < benchTextSize {
		for _, p := range parts {
			b.WriteString(p)
			b.WriteString(strings.Join(corpus, "\n"))
		}
	}
	s := b.String()[:benchTextSize]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func readCorpus(tb testing.TB) []string { return readCorpora(tb, "corpus.json") }

// readCorpora concatenates the strings of testdata corpus files, in order.
func readCorpora(tb testing.TB, names ...string) []string {
	tb.Helper()
	var all []string
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		var corpus []string
		if err := json.Unmarshal(data, &corpus); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		all = append(all, corpus...)
	}
	return all
}

// TestWriteBenchText writes the benchmark text when -benchtext is given.
func TestWriteBenchText(t *testing.T) {
	if *benchTextOut == "" {
		t.Skip("no -benchtext")
	}
	if err := os.WriteFile(*benchTextOut, []byte(benchText(t)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkEncode encodes the mixed text on one goroutine; MB/s is the
// figure compared with Hugging Face tokenizers.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, family := range []string{"qwen2.5", "gpt-oss", "qwen3", "gemma3", "llama3"} {
		tok, err := New(loadHFSpec(b, family))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(family, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.Encode(text, true)
			}
		})
	}
}
