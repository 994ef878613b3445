package layout

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCustomProtocolImportsNoInternal: examples/customprotocol defines a
// protocol as a user's module would, so none of its files (tests
// included) imports an internal package of the module, which a user's
// module could not; it imports the protocol package, the seam it shows.
func TestCustomProtocolImportsNoInternal(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "customprotocol")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/customprotocol has no Go files (%v): the example is gone", err)
	}
	fset := token.NewFileSet()
	tests, seam := 0, false
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasSuffix(name, "_test.go") {
			tests++
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == module+"/protocol" {
				seam = true
			}
			if isInternal(path) {
				t.Errorf("%s imports %s: a user's module cannot import an internal package", filepath.Base(name), path)
			}
		}
	}
	if tests == 0 {
		t.Error("examples/customprotocol has no test file: it is a go-test-able example")
	}
	if !seam {
		t.Errorf("examples/customprotocol never imports %s/protocol: it defines no protocol", module)
	}
}

// isInternal reports whether an import path names an internal package:
// an element "internal" anywhere in it.
func isInternal(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

// TestIsInternal: the rule catches the module's internal packages and
// any other's, and nothing else.
func TestIsInternal(t *testing.T) {
	for path, want := range map[string]bool{
		module + "/internal/sse":             true,
		module + "/internal":                 true,
		"golang.org/x/tools/internal/event":  true,
		module + "/protocol":                 false,
		module + "/latencytest":              false,
		"github.com/someone/internalize/pkg": false,
		"net/http":                           false,
	} {
		if got := isInternal(path); got != want {
			t.Errorf("isInternal(%q) = %v, want %v", path, got, want)
		}
	}
}
