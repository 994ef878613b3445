package layout

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tailguard/tailguard"

// allowed says which module packages a package's non-test files may
// import, by the importer's directory (its first path element, or the
// whole path for internal/ packages). The house, top to bottom: cmd and
// examples, slospec, agent, fit, records, sloassert, cost, latencytest,
// servermetrics, fakeprovider, protocol, sample, internal.
var allowed = map[string][]string{
	"sample":        {"internal"},
	"protocol":      {"internal"},
	"fakeprovider":  {"protocol", "internal"},
	"latencytest":   {"servermetrics", "protocol", "sample", "internal"},
	"cost":          {"latencytest", "internal"},
	"sloassert":     {"latencytest", "servermetrics", "protocol", "sample", "internal"},
	"fit":           {"fakeprovider", "latencytest", "protocol", "sample", "internal"},
	"records":       {"latencytest", "protocol", "sample", "internal"},
	"agent":         {"fakeprovider", "latencytest", "sloassert", "protocol", "sample", "internal"},
	"slospec":       {"agent", "fakeprovider", "latencytest", "records", "sloassert", "fit", "servermetrics", "protocol", "sample", "cost", "internal"},
	"servermetrics": {"internal"},
	"internal":      {"internal"},
	"cmd":           {"*"},
	"examples":      {"*"},
}

// testOnly are libraries the module's tests use and its code never does:
// importing them from a non-test file puts them in every user's build.
var testOnly = []string{
	"github.com/jarcoal/httpmock",
	"github.com/stretchr/testify",
	"go.uber.org/goleak",
}

// interopOnly are the LLM SDKs: only the interop module (interop/, a
// module of its own) tests against them, so that this module's go test
// compiles none and its go.mod requires none.
var interopOnly = []string{
	"github.com/openai/openai-go",
	"github.com/anthropics/anthropic-sdk-go",
}

// TestNoSDKInTheModule: no file of this module, test files included,
// imports an LLM SDK, and go.mod requires none; the interop module does
// hold the SDK tests (its go.mod requires both and replaces this module
// with the directory above it).
func TestNoSDKInTheModule(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	files := 0
	walkGo(t, root, func(rel string, src []byte) {
		files++
		f, err := parser.ParseFile(fset, rel, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, sdk := range interopOnly {
				if path == sdk || strings.HasPrefix(path, sdk+"/") {
					t.Errorf("%s imports %s: SDK tests belong in interop/", rel, path)
				}
			}
		}
	})
	if files < 20 {
		t.Fatalf("only %d files found: the walk is wrong", files)
	}
	for name, want := range map[string]bool{"go.mod": false, "interop/go.mod": true} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, sdk := range interopOnly {
			if got := bytes.Contains(b, []byte(sdk)); got != want {
				t.Errorf("%s requires %s: %v, want %v", name, sdk, got, want)
			}
		}
		if want && !bytes.Contains(b, []byte("replace "+module+" => ../")) {
			t.Errorf("%s does not replace %s with the directory above it", name, module)
		}
	}
}

// TestImportsRunDown: no non-test file imports a package above its own.
func TestImportsRunDown(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	checked := 0
	walkGo(t, root, func(rel string, src []byte) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		f, err := parser.ParseFile(fset, rel, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		rules, ok := allowed[top]
		if !ok {
			t.Errorf("%s: directory %q has no place in the layout (add it to allowed)", rel, top)
			return
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, lib := range testOnly {
				if path == lib || strings.HasPrefix(path, lib+"/") {
					t.Errorf("%s imports %s, a test-only library, into every user's build", rel, path)
				}
			}
			if !strings.HasPrefix(path, module+"/") {
				continue
			}
			checked++
			target := strings.Split(strings.TrimPrefix(path, module+"/"), "/")[0]
			if target == top && top != "internal" {
				continue // inside one package tree (a package and its own subpackages)
			}
			if !contains(rules, "*") && !contains(rules, target) {
				t.Errorf("%s imports %s: %s may import only %v", rel, path, top, rules)
			}
		}
	})
	if checked == 0 {
		t.Fatal("no module import was checked: the walk found nothing")
	}
}

// maxLines is the size of a non-test source file a reader can hold.
const maxLines = 800

// oversize are the files over maxLines today, each with the size it may
// not grow past; split them, then delete their rows.
var oversize = map[string]int{}

// TestFileSizes: no non-test file over maxLines, beyond the listed ones,
// and those do not grow.
func TestFileSizes(t *testing.T) {
	root := repoRoot(t)
	seen := 0
	walkGo(t, root, func(rel string, src []byte) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		seen++
		n := bytes.Count(src, []byte("\n"))
		limit, listed := oversize[filepath.ToSlash(rel)]
		switch {
		case listed && n > limit:
			t.Errorf("%s has %d lines, more than its ceiling of %d: split it", rel, n, limit)
		case !listed && n > maxLines:
			t.Errorf("%s has %d lines (> %d): split it by concern", rel, n, maxLines)
		}
	})
	if seen < 20 {
		t.Fatalf("only %d source files found: the walk is wrong", seen)
	}
	for rel := range oversize {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("oversize lists %s, which is gone: delete its row", rel)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// repoRoot is the directory holding go.mod, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != "module "+module {
		t.Fatalf("%s/go.mod does not declare %s", root, module)
	}
	return root
}

// walkGo calls fn with every .go file of the module under root, its path
// relative to root, skipping testdata, hidden directories and nested
// modules (a directory with a go.mod of its own, such as interop/).
func walkGo(t *testing.T, root string, fn func(rel string, src []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(rel, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
