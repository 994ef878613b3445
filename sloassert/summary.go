package sloassert

import (
	"os"
	"strings"
)

// envStepSummary names the environment variable GitHub Actions sets to
// the file of a step's job summary: Markdown appended to it is shown on
// the run's summary page.
const envStepSummary = "GITHUB_STEP_SUMMARY"

// EnvSummary names the environment variable that turns the job summary
// off: TAILGUARD_SUMMARY=off keeps reports out of the job summary (GITHUB_STEP_SUMMARY);
// unset, empty or "on" appends them. Any other value is an error
// (reported with t.Errorf), so a typo does not pass unnoticed.
const EnvSummary = "TAILGUARD_SUMMARY"

// appendSummary appends a section of Markdown to the job summary, when
// there is one and it is on. GitHub caps a step's summary at 1 MiB; one
// report takes a few KiB.
func appendSummary(t TestingT, section string) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	switch v := os.Getenv(EnvSummary); strings.ToLower(v) {
	case "", "on":
	case "off":
		return
	default:
		t.Errorf("sloassert: %s=%q is neither on nor off", EnvSummary, v)
		return
	}
	path := os.Getenv(envStepSummary)
	if path == "" {
		return
	}
	// One write of the whole section with O_APPEND: parallel tests'
	// sections do not interleave.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write([]byte("\n" + section))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		if l, ok := t.(interface{ Logf(string, ...any) }); ok {
			l.Logf("sloassert: job summary not written (%s): %v", envStepSummary, err)
		}
	}
}
