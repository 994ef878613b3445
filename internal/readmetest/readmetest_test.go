package readmetest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	const doc = "# x\n\n## Output\n\n```text\nold\n```\n\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Output(t, path, "new\n", false); got != "old\n" {
		t.Errorf("read %q, want %q", got, "old\n")
	}
	if got := Output(t, path, "new\n", true); got != "new\n" {
		t.Errorf("update returned %q", got)
	}
	b, _ := os.ReadFile(path)
	if want := "# x\n\n## Output\n\n```text\nnew\n```\n\nafter\n"; string(b) != want {
		t.Errorf("rewritten README:\n%s\nwant:\n%s", b, want)
	}
}
