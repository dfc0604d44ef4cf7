// Package orc holds no code: this test keeps DEVELOPERS.md's package map
// true to the imports of the packages it describes.
package orc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mapRow is one row of DEVELOPERS.md's map: a directory and the packages of
// this module it imports (its non-test Go files), as paths from the root.
type mapRow struct {
	line    int
	dir     string
	imports []string
}

// goPackage is a package of this module as go list reports it.
type goPackage struct {
	dir     string   // from the module root
	code    bool     // it has non-test Go files (a test-only directory imports nothing)
	imports []string // this module's packages its non-test files import
}

// The one boundary (DEVELOPERS.md): packages that run plans never import
// the compile side, and ir imports nothing of this module.
var (
	runSide     = []string{"runtime", "server", "orchestrator", "poolmanager"}
	compileSide = []string{"compiler", "passes", "codegen"}
	importsNone = []string{"ir"}
)

func TestPackageMapMatchesImports(t *testing.T) {
	rows, err := readMap("DEVELOPERS.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := listPackages()
	if err != nil {
		t.Fatal(err)
	}
	isDir := func(d string) bool { fi, err := os.Stat(d); return err == nil && fi.IsDir() }
	for _, p := range checkMap(rows, pkgs, isDir) {
		t.Error(p)
	}
}

// The checker fails where the map and the imports differ or the boundary is
// crossed, so that TestPackageMapMatchesImports can fail.
func TestPackageMapCheckFindsEveryMismatch(t *testing.T) {
	pkgs := []goPackage{
		{dir: "ir", code: true},
		{dir: "plans", code: true},
		{dir: "runtime", code: true, imports: []string{"plans", "passes"}},
		{dir: "passes", code: true, imports: []string{"ir"}},
		{dir: "newpkg", code: true},
		{dir: "scripts"},
	}
	rows := []mapRow{
		{1, "ir", []string{"plans"}},
		{2, "plans", nil},
		{3, "runtime", []string{"plans"}},
		{4, "passes", []string{"ir"}},
		{5, "gone", nil},
		{6, "scripts", []string{"ir"}},
		{7, "plans", nil},
	}
	isDir := func(d string) bool { return d != "gone" }
	got := strings.Join(checkMap(rows, pkgs, isDir), "\n")
	for _, want := range []string{
		"line 1: ir: the map says it imports plans, its files import nothing of ours",
		"line 3: runtime: the map says it imports plans, its files import passes, plans",
		"runtime imports passes: the run side never imports the compile side",
		"newpkg: no row in the map",
		"line 5: gone: no such directory",
		"line 6: scripts: the map says it imports ir, its files import nothing of ours",
		"line 7: plans: a second row",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("checkMap does not report %q; it reports:\n%s", want, got)
		}
	}
}

// checkMap returns what is false in the map's rows about pkgs: a package
// without a row, a row of no directory or repeated, and imports that differ
// from the row's; and where pkgs cross the boundary.
func checkMap(rows []mapRow, pkgs []goPackage, isDir func(string) bool) []string {
	var problems []string
	byDir := map[string]goPackage{}
	for _, p := range pkgs {
		byDir[p.dir] = p
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.dir] {
			problems = append(problems, fmt.Sprintf("line %d: %s: a second row", r.line, r.dir))
			continue
		}
		seen[r.dir] = true
		if !isDir(r.dir) {
			problems = append(problems, fmt.Sprintf("line %d: %s: no such directory", r.line, r.dir))
			continue
		}
		says, has := sorted(r.imports), sorted(byDir[r.dir].imports)
		if !slices.Equal(says, has) {
			problems = append(problems, fmt.Sprintf("line %d: %s: the map says it imports %s, its files import %s", r.line, r.dir, list(says), list(has)))
		}
	}
	for _, p := range pkgs {
		if p.code && !seen[p.dir] {
			problems = append(problems, p.dir+": no row in the map")
		}
		for _, imp := range p.imports {
			if under(p.dir, runSide...) && under(imp, compileSide...) {
				problems = append(problems, fmt.Sprintf("%s imports %s: the run side never imports the compile side", p.dir, imp))
			}
			if under(p.dir, importsNone...) {
				problems = append(problems, fmt.Sprintf("%s imports %s: it imports nothing of ours", p.dir, imp))
			}
		}
	}
	return problems
}

// under reports whether package dir is one of roots or inside one.
func under(dir string, roots ...string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

func sorted(pkgs []string) []string {
	s := slices.Clone(pkgs)
	slices.Sort(s)
	return s
}

func list(pkgs []string) string {
	if len(pkgs) == 0 {
		return "nothing of ours"
	}
	return strings.Join(pkgs, ", ")
}

// readMap parses the table under DEVELOPERS.md's "## Map": a row's first
// cell is one directory in backquotes, its last the packages it imports,
// separated by commas, or "–" for none.
func readMap(path string) ([]mapRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []mapRow
	inMap := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inMap = line == "## Map"
			continue
		}
		if !inMap || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		first, last := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[len(cells)-1])
		if len(cells) < 3 || strings.Count(first, "`") != 2 {
			return nil, fmt.Errorf("%s:%d: a map row is | `directory` | what | imports |", path, n)
		}
		r := mapRow{line: n, dir: strings.TrimSuffix(strings.Trim(first, "`"), "/")}
		if last != "–" {
			for _, imp := range strings.Split(last, ",") {
				r.imports = append(r.imports, strings.Trim(strings.TrimSpace(imp), "`/"))
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no map rows under \"## Map\"", path)
	}
	return rows, nil
}

// listPackages is go list's view of every package of the module, with cgo on
// so that runtime/cuda's files count wherever the test runs.
func listPackages() ([]goPackage, error) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{len .GoFiles}}\t{{len .CgoFiles}}\t{{join .Imports \" \"}}", "./...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v", err)
	}
	mod, err := modulePath("go.mod")
	if err != nil {
		return nil, err
	}
	var pkgs []goPackage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("go list: unexpected line %q", line)
		}
		p := goPackage{dir: strings.TrimPrefix(strings.TrimPrefix(f[0], mod), "/"), code: f[1] != "0" || f[2] != "0"}
		if p.dir == "" {
			p.dir = "."
		}
		for _, imp := range strings.Fields(f[3]) {
			if strings.HasPrefix(imp, mod+"/") {
				p.imports = append(p.imports, strings.TrimPrefix(imp, mod+"/"))
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// modulePath reads the module line of go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(filepath.Clean(gomod))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
