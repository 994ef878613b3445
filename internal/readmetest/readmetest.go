// Package readmetest keeps an example's README output in step with the
// test that produces it: [Output] reads the README's output block, or
// rewrites it when the test runs with -update.
package readmetest

import (
	"os"
	"strings"
	"testing"
)

// Output returns the output block of the README at path (the ```text
// block after "## Output"); when update is set it first writes produced
// there and returns it. A README without the block, or with the block not
// closed, fails t.
func Output(t testing.TB, path, produced string, update bool) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const open = "## Output\n\n```text\n"
	from := strings.Index(readme, open)
	if from < 0 {
		t.Fatalf("%s has no %q block", path, open)
	}
	from += len(open)
	to := from + strings.Index(readme[from:], "```\n")
	if to < from {
		t.Fatalf("%s's output block is not closed", path)
	}
	if update {
		readme = readme[:from] + produced + readme[to:]
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return produced
	}
	return readme[from:to]
}
