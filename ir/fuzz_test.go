package ir

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse and Verify never panic on any text, and a text that
// parses prints to a fixed point: Print(Parse(Print(g))) == Print(g).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.ir")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("graph {a=[1,-2] b=\"x\\ny\" c=true d=-0.0 e=+Inf}\noutputs()\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := Parse(text)
		if err != nil {
			return
		}
		_ = Verify(g)
		printed := Print(g)
		back, err := Parse(printed)
		if err != nil {
			t.Fatalf("printed graph does not parse: %v\n%s", err, printed)
		}
		if again := Print(back); again != printed {
			t.Fatalf("print is not a fixed point:\n%s\nvs\n%s", printed, again)
		}
	})
}
