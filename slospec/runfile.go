package slospec

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/rerun"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/protocol"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// RunFile loads the spec at path (LoadSpec) and runs it (Spec.Run). An
// invalid spec fails the test at once.
func RunFile(t *testing.T, path string) {
	t.Helper()
	s, err := LoadSpec(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.Run(t)
}

// runTarget is a resolved target: a fake profile, an endpoint provider, or
// a glob of records.
type runTarget struct {
	fake     *fakeprovider.Profile
	provider latencytest.Provider
	records  string
	format   string // the records' format ("" for this package's own)
	desc     string
	protocol protocol.Name // what a fake is spoken to in (Chains.Protocol; "" is chat)
	// onFake, when set, is called by measure with each new fake.
	onFake func(f *fakeprovider.Fake)
}

// EnvReplayProfile names the environment variable that replays an
// endpoint target against a fakeprovider profile in virtual time instead
// of calling the endpoint: typically a profile fitted from the failing
// run's own records (fakellm fit records.jsonl), so a failure against a
// real endpoint can be studied locally, instantly and deterministically.
// A failing endpoint level's report prints the command.
const EnvReplayProfile = "TAILGUARD_REPLAY_PROFILE"

// endpointReplay is the command that fits a profile to a real-time
// level's raw records and reruns the test against it, or "" when the
// records were not written.
func endpointReplay(t *testing.T, res *latencytest.Result) string {
	records := res.Disclosure.Records
	rerun := rerun.Command(t)
	if !strings.HasSuffix(records, ".jsonl") || rerun == "" {
		return ""
	}
	return fmt.Sprintf("go run github.com/tailguard/tailguard/cmd/fakellm fit %s > /tmp/replay.yaml && %s (the records outlive the test with go test -artifacts)",
		records, strings.Replace(rerun, "&& go test", "&& "+EnvReplayProfile+"=/tmp/replay.yaml go test", 1))
}

// measure calls fn with a provider for the target: for a fake, inside a
// new synctest bubble with a new fake, closed when fn returns.
func (rt runTarget) measure(t *testing.T, fn func(t *testing.T, p latencytest.Provider)) {
	t.Helper()
	if rt.fake == nil {
		fn(t, rt.provider)
		return
	}
	prof := *rt.fake
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(prof)
		defer f.Close()
		if rt.onFake != nil {
			rt.onFake(f)
		}
		fn(t, fakeClient(rt.protocol, f))
	})
}

// recordsLevel names a level of merged records: "c8", or "all" for
// records that carry no level (an open loop's).
func recordsLevel(level int) string {
	if level == 0 {
		return "all"
	}
	return fmt.Sprintf("c%d", level)
}

// fakeClient is the provider that speaks protocol to fake f.
func fakeClient(name protocol.Name, f *fakeprovider.Fake) latencytest.Provider {
	client, model := latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(f.Profile().Model)
	return latencytest.NewLLM("http://fake/v1", protocol.Lookup(name), client, model) // a name checked when parsed
}

// checkRow fails an objective's subtest with its row alone: the whole
// screen (distribution, counts, errors, slowest requests) is printed once,
// by the level that judged it (finishLevel).
func checkRow(t *testing.T, origin string, out sloassert.Outcome, judgedBy string) {
	t.Helper()
	if !out.OK {
		t.Errorf("%s\n%s  (the whole report: %s)", origin, out.String(), judgedBy)
	}
}

// finishLevel prints a judged result's report once: as the failure when
// it failed, as a log line (shown with -v) when it passed.
func finishLevel(t *testing.T, rep sloassert.Report) bool {
	t.Helper()
	if rep.OK() {
		t.Logf("%s", strings.TrimRight(rep.String(), "\n"))
		return true
	}
	t.Errorf("%s", strings.TrimRight(rep.String(), "\n"))
	return false
}

// objectiveOrigin says which spec line an objective subtest judges, and against
// what (the target, its seed, virtual or real time).
func objectiveOrigin(title string, rt runTarget, o Objective) string {
	if o.Line > 0 {
		return fmt.Sprintf("spec %s, line %d, %s (%s)", title, o.Line, o.Key, rt.desc)
	}
	return fmt.Sprintf("spec %s, %s (%s)", title, o.Key, rt.desc)
}

// discloseLevels fills disclosure box 8 (load levels) with every level
// the spec runs: each level is measured on its own, so its batch saw one.
func discloseLevels(d *latencytest.Disclosure, levels []int) {
	if len(levels) < 3 {
		d.Set(8, fmt.Sprintf("only concurrency %v tested (fewer than three load levels)", levels), true)
		return
	}
	d.Set(8, fmt.Sprintf("concurrency %v, side by side", levels), false)
}

// levelVerdict is a level's one-word verdict, with the objectives that failed.
func levelVerdict(name string, rep sloassert.Report) string {
	if rep.OK() {
		return name + " PASS"
	}
	var failed []string
	for _, o := range rep.Failed() {
		failed = append(failed, o.Objective)
	}
	if rep.Problem != "" {
		failed = append(failed, rep.Problem)
	}
	return fmt.Sprintf("%s FAIL (%s)", name, strings.Join(failed, ", "))
}

// levels reads a records target's files, split by load level: this
// package's own records merged, another tool's imported
// (records.ImportLevels).
func (rt runTarget) levels() (map[int]*latencytest.Result, error) {
	if rt.format == "" {
		return records.ImportLevels(records.Tailguard, rt.records)
	}
	return records.ImportLevels(rt.format, rt.records)
}
