// Package app_test holds the README's "A test in a dozen lines" test
// (slo_test.go, behind the tailguard_readme build tag because it fails on
// purpose) and the test that keeps the README honest: the code block is
// the file, verbatim, and the output block is what go test prints for it.
package app_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md's dozen-lines output block, and the figures the READMEs quote, with what the tests produce")

// readmeBlocks returns the README's dozen-lines section's Go block and
// output block, and the README's text with the offsets of the output block.
func readmeBlocks(t *testing.T) (code, output, readme string, outFrom, outTo int) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme = string(b)
	sec := strings.Index(readme, "## A test in a dozen lines")
	if sec < 0 {
		t.Fatal(`README.md has no "## A test in a dozen lines" section`)
	}
	codeFrom := strings.Index(readme[sec:], "```go\n")
	if codeFrom < 0 {
		t.Fatal("no ```go block in the section")
	}
	codeFrom += sec + len("```go\n")
	codeTo := codeFrom + strings.Index(readme[codeFrom:], "```\n")
	outFrom = codeTo + len("```\n") + strings.Index(readme[codeTo+len("```\n"):], "```\n") + len("```\n")
	outTo = outFrom + strings.Index(readme[outFrom:], "```\n")
	return readme[codeFrom:codeTo], readme[outFrom:outTo], readme, outFrom, outTo
}

// volatile matches what changes from run to run and machine to machine:
// real durations, the temporary directory, the working directory of the
// replay command, the package path.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\(\d+\.\d+s\)`), "(T)"},
	{regexp.MustCompile(`\S*/TestChatLatencySLO\d+/`), "TMP/"},
	{regexp.MustCompile(`cd \S+ && go test`), "cd DIR && go test"},
	{regexp.MustCompile(`(?m)^(FAIL|ok)\s+\S+\s+\d+\.\d+s$`), "$1 PKG T"},
}

func normalize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return strings.TrimRight(s, "\n")
}

// TestREADMEDozenLines: the README's code block is slo_test.go verbatim,
// and running it prints the README's output block, up to timings and
// paths. When a preset is refitted or a report line changes, this fails;
// go test -run TestREADMEDozenLines -update rewrites the README's output.
func TestREADMEDozenLines(t *testing.T) {
	code, output, readme, from, to := readmeBlocks(t)
	file, err := os.ReadFile("slo_test.go")
	if err != nil {
		t.Fatal(err)
	}
	const directive = "//line slo_test.go:1\n"
	_, body, ok := strings.Cut(string(file), directive)
	if !ok || body != code {
		t.Fatalf("slo_test.go (from %q on) is not the README's code block, verbatim:\n--- README\n%s\n--- slo_test.go\n%s", directive, code, body)
	}
	if testing.Short() {
		t.Skip("runs go test in a subprocess (a few seconds): not under -short")
	}
	cmd := exec.Command("go", "test", "-tags", "tailguard_readme", "-count=1", "-run", "^TestChatLatencySLO$", ".")
	cmd.Env = append(os.Environ(), "TAILGUARD_START_AT=", "TAILGUARD_SHARD=", "GOFLAGS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if _, failed := err.(*exec.ExitError); err != nil && !failed {
		t.Fatalf("go test: %v\n%s", err, out.String())
	}
	got := out.String()
	if *update { // as a user's module would print it
		if wd, err := os.Getwd(); err == nil {
			got = strings.ReplaceAll(got, "cd "+wd+" && go test", "cd /tmp/app && go test")
		}
		got = strings.ReplaceAll(got, "\tgithub.com/tailguard/tailguard/examples/readme\t", "\texample.com/app\t")
		readme = readme[:from] + got + readme[to:]
		if err := os.WriteFile("../../README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("README.md's output block rewritten:\n%s", got)
		return
	}
	// The paragraph after the output quotes its figures ("482.3 ms"):
	// each must be in the output ("482.3ms").
	after := readme[to+len("```\n"):]
	if end := strings.Index(after, "\n\n#"); end >= 0 {
		after = after[:end]
	}
	for _, m := range regexp.MustCompile(`(\d+\.\d) ms`).FindAllStringSubmatch(after, -1) {
		if !strings.Contains(output, m[1]+"ms") || !strings.Contains(got, m[1]+"ms") {
			t.Errorf("README.md quotes %s below the output, which does not print it", m[0])
		}
	}
	if normalize(got) != normalize(output) {
		t.Errorf("README.md's output block has drifted from what the test prints (go test -run TestREADMEDozenLines -update rewrites it):\n--- README\n%s\n--- go test\n%s", output, got)
	}
}
