package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// publicPackages are the directories whose types must keep all their
// methods in the file that declares them.
var publicPackages = []string{"latencytest", "records", "sloassert", "slospec", "fakeprovider", "fit", "servermetrics"}

// measureFile may hold methods named Measure of any type: all the
// Measure methods and the testing glue live in one file.
const measureFile = "latencytest/measure.go"

// methodExceptions are types, as "dir.Type", allowed methods in the
// listed files besides the one that declares them, each with its reason
// (the test fails on a row that is no longer needed). Add no row for new
// code without one.
var methodExceptions = map[string][]string{
	// The strict spec parser is split by concern: the document and the
	// scalars in parse.go, the sections in sections.go, the objectives in
	// objectives.go. Its methods are about 1,100 lines, more than one
	// file of maxLines holds.
	"slospec.specParser": {"slospec/sections.go", "slospec/objectives.go"},
}

// TestMethodsLiveWithTheirType: every method of a type in a public
// package is in the non-test file that declares the type.
func TestMethodsLiveWithTheirType(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	files := map[string]*ast.File{} // slash path relative to root -> file
	walkGo(t, root, func(rel string, src []byte) {
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(rel, "_test.go") || !contains(publicPackages, strings.Split(rel, "/")[0]) {
			return
		}
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		files[rel] = f
	})
	if len(files) < 20 {
		t.Fatalf("only %d files of the public packages found: the walk is wrong", len(files))
	}
	for _, v := range strayMethods(files, methodExceptions) {
		t.Error(v)
	}
}

// strayMethods returns, sorted, one line per method that lives outside
// the file declaring its receiver type (by file path, keyed by directory
// so each directory is one package), and one per row of exceptions that
// no longer excuses anything. Methods named Measure in measureFile are
// always at home.
func strayMethods(files map[string]*ast.File, exceptions map[string][]string) []string {
	decls := map[string][]string{} // "dir.Type" -> files declaring it
	for path, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				key := dirOf(path) + "." + s.(*ast.TypeSpec).Name.Name
				decls[key] = append(decls[key], path)
			}
		}
	}
	var out []string
	used := map[string]bool{} // "dir.Type file" exceptions that excused a method
	for path, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			name := receiverType(fn.Recv.List[0].Type)
			key := dirOf(path) + "." + name
			home := decls[key]
			switch {
			case contains(home, path):
			case fn.Name.Name == "Measure" && path == measureFile:
			case contains(exceptions[key], path):
				used[key+" "+path] = true
			case len(home) == 0:
				out = append(out, fmt.Sprintf("%s: method %s.%s: no file of %s declares %s", path, name, fn.Name.Name, dirOf(path), name))
			default:
				out = append(out, fmt.Sprintf("%s: method %s.%s belongs in %s, which declares %s", path, name, fn.Name.Name, strings.Join(home, " or "), name))
			}
		}
	}
	for key, extra := range exceptions {
		for _, path := range extra {
			if !used[key+" "+path] {
				out = append(out, fmt.Sprintf("methodExceptions lets %s have methods in %s, which holds none of them now: delete the row", key, path))
			}
		}
	}
	sort.Strings(out)
	return out
}

// receiverType is the name of a receiver's type: T for T, *T, T[K] and
// *T[K, V].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

func dirOf(path string) string {
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return "."
	}
	return path[:i]
}

// TestStrayMethodsFindsViolations: the checker flags a method in the
// wrong file, for every receiver shape, and accepts the same package
// once the method is home or excused.
func TestStrayMethodsFindsViolations(t *testing.T) {
	parse := func(srcs map[string]string) map[string]*ast.File {
		t.Helper()
		fset := token.NewFileSet()
		files := map[string]*ast.File{}
		for path, src := range srcs {
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			files[path] = f
		}
		return files
	}
	const box = "package p\n\ntype Box[K comparable, V any] struct{ m map[K]V }\n\nfunc (b *Box[K, V]) Len() int { return len(b.m) }\n"
	const thing = "package p\n\ntype (\n\tThing int\n\tother struct{}\n)\n\nfunc (Thing) A() {}\nfunc (o *other) b() {}\n"
	good := map[string]string{
		"p/box.go":   box,
		"p/thing.go": thing,
		"p/util.go":  "package p\n\nfunc helper() {}\n",
		// A type declared per platform has a home in each variant.
		"p/clock_linux.go": "package p\n\ntype timer int\n\nfunc (timer) arm() {}\n",
		"p/clock_other.go": "package p\n\ntype timer struct{}\n\nfunc (*timer) arm() {}\n",
		// Same type name in another package: its own home.
		"q/thing.go": "package q\n\ntype Thing int\n\nfunc (t Thing) A() {}\n",
		// Measure may live in measure.go whatever its receiver.
		"latencytest/measure.go": "package latencytest\n\nfunc (r *Run) Measure() {}\n",
		"latencytest/run.go":     "package latencytest\n\ntype Run struct{}\n\nfunc (r *Run) Go() {}\n",
	}
	if got := strayMethods(parse(good), nil); len(got) != 0 {
		t.Fatalf("a clean package was flagged: %q", got)
	}

	cases := []struct {
		name, path, src, want string
	}{
		{"value receiver", "p/util.go", "package p\n\nfunc (t Thing) B() {}\n",
			"p/util.go: method Thing.B belongs in p/thing.go"},
		{"pointer receiver, unexported", "p/util.go", "package p\n\nfunc (o *other) c() {}\n",
			"p/util.go: method other.c belongs in p/thing.go"},
		{"generic receiver", "p/util.go", "package p\n\nfunc (b Box[K, V]) Cap() int { return 0 }\n",
			"p/util.go: method Box.Cap belongs in p/box.go"},
		{"parenthesised generic pointer receiver", "p/util.go", "package p\n\nfunc (b (*Box[K, V])) x() {}\n",
			"p/util.go: method Box.x belongs in p/box.go"},
		{"Measure outside measure.go", "latencytest/other.go", "package latencytest\n\nfunc (r *Run) Measure() {}\n",
			"latencytest/other.go: method Run.Measure belongs in latencytest/run.go"},
		{"other method in measure.go", "latencytest/measure.go", "package latencytest\n\nfunc (r *Run) Measure() {}\nfunc (r *Run) Stop() {}\n",
			"latencytest/measure.go: method Run.Stop belongs in latencytest/run.go"},
		{"undeclared receiver", "p/util.go", "package p\n\nfunc (g Ghost) A() {}\n",
			"p/util.go: method Ghost.A: no file of p declares Ghost"},
		{"type of another package", "q/more.go", "package q\n\nfunc (o other) d() {}\n",
			"q/more.go: method other.d: no file of q declares other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srcs := map[string]string{}
			for k, v := range good {
				srcs[k] = v
			}
			srcs[c.path] = c.src
			got := strayMethods(parse(srcs), nil)
			if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
				t.Fatalf("got %q, want one line starting %q", got, c.want)
			}
			// An exception for exactly that type and file excuses it.
			key := dirOf(c.path) + "." + strings.SplitN(strings.TrimPrefix(c.want, c.path+": method "), ".", 2)[0]
			if strings.Contains(c.want, "no file of") {
				return // nothing to excuse: the type has no home
			}
			if got := strayMethods(parse(srcs), map[string][]string{key: {c.path}}); len(got) != 0 {
				t.Fatalf("excused by %s -> %s, still flagged: %q", key, c.path, got)
			}
			// An exception for another file does not.
			if got := strayMethods(parse(srcs), map[string][]string{key: {"p/elsewhere.go"}}); len(got) != 2 {
				t.Fatalf("an exception for another file: got %q, want the violation and the stale row", got)
			}
		})
	}

	// A row that excuses nothing is reported, so the list shrinks as
	// methods move home.
	got := strayMethods(parse(good), map[string][]string{"p.Thing": {"p/util.go"}})
	if len(got) != 1 || !strings.Contains(got[0], "delete the row") {
		t.Fatalf("stale exception: got %q", got)
	}
}
