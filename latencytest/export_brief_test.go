package latencytest

// Brief is the summary's few log lines (what Measure logs), for tests.
func (s ResultSummary) Brief() string { return s.brief("") }
