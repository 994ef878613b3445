package latencytest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/recfile"
	"github.com/tailguard/tailguard/latencytest/internal/summary"
	"github.com/tailguard/tailguard/sample"
)

// runContext returns the context a TB wrapper runs under: its deadline is
// the test binary's (t.Deadline), less a margin to report the partial
// result, when t has one and is not inside a synctest bubble.
func runContext(t testing.TB) (context.Context, context.CancelFunc) {
	dl, ok := testDeadline(t)
	if !ok {
		return context.WithCancel(context.Background())
	}
	margin := max(5*time.Second, time.Until(dl)/20)
	return context.WithDeadline(context.Background(), dl.Add(-margin))
}

// testDeadline is t.Deadline(), or false inside a synctest bubble (where
// Deadline panics: a real-clock deadline means nothing on a fake clock).
func testDeadline(t testing.TB) (dl time.Time, ok bool) {
	d, has := t.(interface{ Deadline() (time.Time, bool) })
	if !has {
		return time.Time{}, false
	}
	defer func() {
		if recover() != nil {
			dl, ok = time.Time{}, false
		}
	}()
	return d.Deadline()
}

// inBubble reports whether t runs inside a synctest bubble.
func inBubble(t testing.TB) bool {
	d, has := t.(interface{ Deadline() (time.Time, bool) })
	if !has {
		return false
	}
	bubble := false
	func() {
		defer func() { bubble = recover() != nil }()
		d.Deadline()
	}()
	return bubble
}

// artifactDir is t.ArtifactDir() (Go 1.26; kept with go test -artifacts),
// or "" when t has none.
func artifactDir(t testing.TB) string {
	if a, ok := t.(interface{ ArtifactDir() string }); ok {
		return a.ArtifactDir()
	}
	return ""
}

// artifactsKept reports whether go test runs with -artifacts: without it,
// t.ArtifactDir is a temporary directory removed when the test ends.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// whereNote names the raw records and says whether they outlive the test.
func whereNote(path string) string {
	if path == "" {
		return ""
	}
	if artifactsKept() {
		return path + " (kept: -artifacts)"
	}
	return path + " (deleted when the test ends; run go test -artifacts to keep it)"
}

// verbose is testing.Verbose, false where it cannot be asked.
func verbose() (v bool) {
	defer func() {
		if recover() != nil {
			v = false
		}
	}()
	return flag.Parsed() && testing.Verbose()
}

// writeRecords writes records.jsonl (answer text left out unless
// keepContent) to t's artifact directory; it returns its path, or "" when
// t has no artifact directory. A test that measures more than once (a
// sweep inside a synctest bubble, a batch then a chain) keeps every run:
// the later ones go to records-<label>.jsonl (-2, -3… if need be).
func writeRecords(t testing.TB, recs []Record, keepContent bool, label string, sh Shard) string {
	t.Helper()
	dir := artifactDir(t)
	if dir == "" {
		return ""
	}
	if !keepContent {
		recs = slices.Clone(recs)
		for i := range recs {
			recs[i].Content = ""
		}
	}
	path := recordsPath(dir, label)
	f, err := os.Create(path)
	if err != nil {
		t.Errorf("latencytest: %v", err)
		return ""
	}
	if err := writeRecordsEnd(f, recs, recordsEnd{Shard: sh.String(), Label: label}); err != nil {
		t.Errorf("%v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("latencytest: %v", err)
	}
	return path
}

// writeSummary writes the summary beside the records at path.
func writeSummary(t testing.TB, path string, summary any) {
	t.Helper()
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		t.Errorf("latencytest: summary: %v", err)
		return
	}
	if err := os.WriteFile(recfile.SummaryPath(path), b, 0o644); err != nil {
		t.Errorf("latencytest: %v", err)
	}
}

// attrs reports key figures as test attributes.
func attrs(t testing.TB, prefix string, s ResultSummary) {
	set := func(k, v string) { t.Attr("tailguard."+prefix+k, v) }
	set("sent", strconv.Itoa(s.Counts.Sent))
	set("failed", strconv.Itoa(s.Counts.Failed))
	set("ttft.p50", format.Duration(s.TTFT.P50))
	set("ttft.p99", format.Duration(s.TTFT.P99))
	set("total.p50", format.Duration(s.Total.P50))
	set("total.p99", format.Duration(s.Total.P99))
	set("error_rate", format.Float(s.ErrorRate, "%.4f"))
}

// loadFromEnv is l.FromEnv() for Measure: an unreadable variable fails t at
// once.
func loadFromEnv(t testing.TB, l Load) Load {
	t.Helper()
	l, err := l.FromEnv()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return l
}

// Measure runs the batch under t: the environment fills the fields it
// leaves unset (Load.FromEnv: TAILGUARD_SHARD, TAILGUARD_START_AT,
// TAILGUARD_LOCATION); the deadline comes from t.Deadline()
// (outside a synctest bubble) so that the run stops starting requests
// before go test -timeout kills it; the raw records (JSONL, answer text
// only with KeepContent) and the summary with the whole disclosure (JSON)
// go to t.ArtifactDir() (removed when the test ends unless go test runs
// with -artifacts; the log says which); key figures become t.Attr
// attributes. The log gets a few lines (what ran, the counts, p50 and p99
// of TTFT and total, errors by class with an example each, where the raw
// records are); the whole distribution and the 15-box disclosure are
// logged too under go test -v. An invalid batch fails the test at once.
func (b Batch) Measure(t testing.TB, p Provider) *Result {
	t.Helper()
	b.Load = loadFromEnv(t, b.Load)
	ctx, cancel := runContext(t)
	defer cancel()
	label := b.Label
	if n, err := b.normalized(); err == nil {
		label = n.Label
	}
	ctx, _ = withRecordStream(ctx, artifactDir(t), label, b.KeepContent) // compact records stream to the file
	r, err := b.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	report(t, r, "", label, b.KeepContent)
	return r
}

func report(t testing.TB, r *Result, prefix, label string, keepContent bool) {
	t.Helper()
	path, err := r.stream.finish(r.Shard) // a compact run's streamed records
	if err != nil {
		t.Errorf("%v", err)
	}
	if path == "" {
		path = writeRecords(t, r.Records, keepContent, label, r.Shard)
	}
	where := whereNote(path)
	if path != "" {
		setRawRecords(&r.Disclosure, path, where)
	}
	s := r.Summarize()
	s.Test, s.Label = t.Name(), label
	writeSummary(t, path, s)
	attrs(t, prefix, s)
	t.Log(s.Brief(where))
	if verbose() {
		t.Logf("latency:\n%s\ndisclosure:\n%s", s, r.Disclosure)
	}
}

// Measure runs the sweep under t, one subtest per level ("c8") when t is a
// *testing.T outside a synctest bubble (t.Run cannot be called inside one;
// there the levels run in turn and are logged), each level through
// EachLevel when it is set. Artifacts and logs as in Batch.Measure.
func (s Sweep) Measure(t testing.TB, p Provider) *SweepResult {
	t.Helper()
	tt, sub := t.(*testing.T)
	sub = sub && !inBubble(t)
	sr, err := s.sweep(func(l int, b Batch) (r *Result, _ error) {
		if sub {
			tt.Run(b.Label, func(t *testing.T) { r = s.measureLevel(t, l, b, p) })
			return r, nil
		}
		return s.measureLevel(t, l, b, p), nil
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return sr
}

// chainSummary is a chain run at a glance, for summary.json: what ran, the
// chain totals, the chain error rate and the calls' ResultSummary (JSON as
// in ResultSummary: snake_case, _ns, null for Failed).
type chainSummary struct {
	// Test, Label, Concurrency and Model say what ran, as in ResultSummary
	// (Concurrency is the chains run at once).
	Test        string `json:"test,omitempty"`
	Label       string `json:"label,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
	Model       string `json:"model,omitempty"`
	// Chains is how many chains ran; Totals is the distribution of their
	// measured totals (a chain with a failed call is Failed).
	Chains int            `json:"chains"`
	Totals sample.Summary `json:"chain_totals"`
	// ErrorRate is the fraction of chains with a failed call (NaN, null
	// in JSON, when none ran).
	ErrorRate float64 `json:"chain_error_rate"`
	// Calls summarizes every call of every chain.
	Calls ResultSummary `json:"calls"`
}

// MarshalJSON writes a NaN error rate as null.
func (s chainSummary) MarshalJSON() ([]byte, error) {
	type plain chainSummary
	return json.Marshal(struct {
		plain
		ErrorRate *float64 `json:"chain_error_rate"`
	}{plain(s), summary.Finite(s.ErrorRate)})
}

// Measure runs the chains under t, as Batch.Measure does (the
// environment fills the unset fields, Load.FromEnv): all calls go to
// records.jsonl (answer text only with KeepContent), the chain totals and
// summary to summary.json; a few lines are logged, the calls'
// distribution and the disclosure too under go test -v.
func (c Chain) Measure(t testing.TB, p Provider) *ChainResult {
	t.Helper()
	c.Load = loadFromEnv(t, c.Load)
	ctx, cancel := runContext(t)
	defer cancel()
	cr, err := c.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	label := c.Label
	if n, err := c.normalized(); err == nil {
		label = n.Label
	}
	calls := cr.Calls()
	path := writeRecords(t, calls.Records, c.KeepContent, label, cr.Shard)
	where := whereNote(path)
	if path != "" {
		setRawRecords(&cr.Disclosure, path, where)
	}
	calls.Disclosure, calls.PartialReason = cr.Disclosure, cr.PartialReason
	totals := cr.Totals().Summarize()
	cs := calls.Summarize()
	sum := chainSummary{Test: t.Name(), Label: label, Concurrency: max(c.Concurrency, 1), Model: cs.Model,
		Chains: len(cr.Chains), Totals: totals, ErrorRate: cr.ErrorRate(), Calls: cs}
	writeSummary(t, path, sum)
	t.Attr("tailguard.chain.total.p50", format.Duration(totals.P50))
	t.Attr("tailguard.chain.total.p95", format.Duration(totals.P95))
	u := format.UnitFor(totals.P50, totals.P95, totals.P99)
	t.Logf("chains %s: %d run, %d failed; chain total p50 %s p95 %s p99 %s\n%s", label, len(cr.Chains), totals.Failed,
		format.In(totals.P50, u), format.In(totals.P95, u), format.In(totals.P99, u), sum.Calls.Brief(where))
	if verbose() {
		t.Logf("chain total min %s max %s\ncalls:\n%s\ndisclosure:\n%s", format.Duration(totals.Min), format.Duration(totals.Max), sum.Calls, cr.Disclosure)
	}
	return cr
}

// Measure runs the open loop under t, as Batch.Measure does: the
// environment fills the unset fields (Load.FromEnv), the deadline
// comes from t.Deadline() (outside a synctest bubble), the raw records
// (with their schedule: scheduled_ns, start_delay_ns, from_schedule_ns)
// and the summary go to t.ArtifactDir(), key figures become t.Attr
// attributes, and a few lines are logged, plus one for the schedule: p50
// and p99 from the schedule and whether the client fell behind. An invalid
// configuration fails the test at once.
func (o OpenLoop) Measure(t testing.TB, p Provider) *Result {
	t.Helper()
	o.Load = loadFromEnv(t, o.Load)
	ctx, cancel := runContext(t)
	defer cancel()
	n, _ := o.normalized()
	ctx, _ = withRecordStream(ctx, artifactDir(t), n.Label, o.KeepContent) // compact records stream to the file
	r, err := o.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	report(t, r, "", n.Label, o.KeepContent)
	fs, tf := r.FromSchedule(), r.TTFTFromSchedule()
	late, most := r.Lag()
	u := format.UnitFor(fs.Quantile(0.5), fs.Quantile(0.99), tf.Quantile(0.5), tf.Quantile(0.99))
	t.Attr("tailguard.from_schedule.p50", format.Duration(fs.Quantile(0.5)))
	t.Attr("tailguard.from_schedule.p99", format.Duration(fs.Quantile(0.99)))
	t.Attr("tailguard.late_starts", fmt.Sprint(late))
	t.Logf("  from schedule: ttft p50 %s p99 %s; total p50 %s p99 %s; %d of %d started late (max start delay %s)",
		format.In(tf.Quantile(0.5), u), format.In(tf.Quantile(0.99), u), format.In(fs.Quantile(0.5), u), format.In(fs.Quantile(0.99), u),
		late, r.Len(), format.Duration(most))
	return r
}
