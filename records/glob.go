package records

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// glob is filepath.Glob plus "**", which matches any number of
// directories (none included): "shards/**/records*.jsonl". Directories
// never match.
func glob(pattern string) ([]string, error) {
	if !strings.Contains(pattern, "**") {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return nil, err
		}
		return filesOnly(m), nil
	}
	segs := strings.Split(filepath.ToSlash(pattern), "/")
	for _, s := range segs {
		if strings.Contains(s, "**") && s != "**" {
			return nil, fmt.Errorf("** must be a whole path element (a/**/b), not %q", s)
		}
		if _, err := filepath.Match(s, ""); err != nil {
			return nil, err
		}
	}
	fixed := 0 // walk from the longest prefix without a wildcard
	for fixed < len(segs) && !strings.ContainsAny(segs[fixed], `*?[\`) {
		fixed++
	}
	root := strings.Join(segs[:fixed], "/")
	switch {
	case root == "" && fixed > 0:
		root = "/"
	case root == "":
		root = "."
	}
	var out []string
	err := filepath.WalkDir(filepath.FromSlash(root), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == filepath.FromSlash(root) && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel := filepath.ToSlash(path)
		if root == "." {
			rel = strings.TrimPrefix(rel, "./")
		}
		if matchSegs(segs, strings.Split(rel, "/")) {
			out = append(out, path)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// matchSegs matches path elements against pattern elements, "**"
// matching any number of them.
func matchSegs(pat, path []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for k := 0; k <= len(path); k++ {
				if matchSegs(pat[1:], path[k:]) {
					return true
				}
			}
			return false
		}
		if len(path) == 0 {
			return false
		}
		if ok, _ := filepath.Match(pat[0], path[0]); !ok {
			return false
		}
		pat, path = pat[1:], path[1:]
	}
	return len(path) == 0
}

func filesOnly(paths []string) []string {
	var out []string
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// globAll expands files and globs, each file once, in the order first
// matched; a pattern that matches nothing is an error. what prefixes the
// errors ("records", "records: merge").
func globAll(what string, patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%s: no records files given", what)
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		m, err := glob(p)
		if err != nil {
			return nil, fmt.Errorf("%s: pattern %q: %w", what, p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no records file matches %q", what, p)
		}
		for _, f := range m {
			if c := filepath.Clean(f); !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}
