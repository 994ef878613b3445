package sloassert

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// EnvUpdateBaselines names the environment variable that makes Regression
// rewrite its baseline from the current run when set to a true value
// ("1", "true"; see strconv.ParseBool). Any other non-empty value is an
// error.
const EnvUpdateBaselines = "TAILGUARD_UPDATE_BASELINES"

// UpdateFlag is the name of the test binary flag (-update) that makes
// Regression rewrite its baseline, as golden files are rewritten. sloassert
// registers no flag itself (a library that did would clash with the
// packages that do): it looks the flag up by name when Regression runs and
// obeys it when some package of the test binary defines it as a boolean.
// Without such a flag, use EnvUpdateBaselines.
const UpdateFlag = "update"

// SaveBaseline writes r's records to path as JSONL (latencytest.WriteRecords),
// creating the directories it needs and replacing the file atomically. Every
// record is kept, warm-up included, with its inter-token gaps, but without
// its answer text (Record.Content): a baseline needs timings, not a
// provider's answers, which can be large or private. A result with no
// measured request, or whose measured requests all failed, is an error: it
// is no baseline.
func SaveBaseline(path string, r *latencytest.Result) error {
	if r == nil || len(r.Measured()) == 0 {
		return fmt.Errorf("sloassert: baseline %s: no measured request: an empty run is no baseline", path)
	}
	if c := r.Counts(); c.Kept == 0 {
		var classes []string
		for _, k := range r.ErrorClasses() {
			classes = append(classes, fmt.Sprintf("%s %d", k, r.Errors()[k]))
		}
		return fmt.Errorf("sloassert: baseline %s: every measured request failed (%s): a baseline of failures cannot judge a change", path, strings.Join(classes, ", "))
	}
	recs := slices.Clone(r.Records)
	for i := range recs {
		recs[i].Content = ""
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sloassert: baseline: %w", err)
	}
	f, err := os.CreateTemp(dir, ".baseline-*.jsonl")
	if err != nil {
		return fmt.Errorf("sloassert: baseline: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename, there is nothing left to remove
	if err := latencytest.WriteRecords(f, recs); err != nil {
		f.Close()
		return fmt.Errorf("sloassert: baseline %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("sloassert: baseline: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sloassert: baseline: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("sloassert: baseline: %w", err)
	}
	return nil
}

// LoadBaseline reads a baseline written by SaveBaseline (or any JSONL of
// records, such as a run's records.jsonl artifact) into a Result holding
// only the records (Planned is their number; CPUPerWall is NaN). A missing
// file's error wraps fs.ErrNotExist; a file without records is an error.
func LoadBaseline(path string) (*latencytest.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sloassert: baseline: %w", err)
	}
	defer f.Close()
	recs, err := latencytest.ReadRecords(f)
	if err != nil {
		return nil, fmt.Errorf("sloassert: baseline %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("sloassert: baseline %s holds no records", path)
	}
	return &latencytest.Result{Records: recs, Planned: len(recs), CPUPerWall: math.NaN()}, nil
}

// Compare says how a current run is compared with a baseline. The zero
// value of every field is its documented default.
//
// For each quantile q, the ratio current/baseline of the q-quantiles gets a
// bootstrap confidence interval: Resamples times, both samples are resampled
// with replacement (math/rand/v2's PCG seeded with (Seed, 0), so the same
// data and seed give the same interval) and the ratio of the resamples'
// quantiles is taken. The interval is two-sided, from the k-th smallest to
// the k-th largest ratio, k = floor(Resamples×(1-Confidence)/2)+1 (2000
// resamples at 0.95: the 51st of each end); requiring its lower end above a
// threshold is a one-sided test at (1+Confidence)/2.
//
// A quantile regressed when both hold:
//   - the interval's lower end exceeds 1+MaxIncrease, or 1+gap when the
//     baseline holds repeated runs (Batch.Repeat) whose run-to-run gap of
//     that quantile, (max-min)/min, is larger: a change smaller than the
//     noise floor is not a finding;
//   - current exceeds baseline by more than Floor (the point estimates).
//
// A Mann-Whitney U test of the whole distributions is reported beside the
// quantiles but does not enter the verdict: a tail regression moves a few
// percent of the requests, which a rank test of the whole distribution
// barely notices (doubling the slowest 5% of a sample moves U by about
// 0.1%), so gating on it would hide exactly the regressions a baseline is
// for. It tells a shift of the whole distribution from a tail-only change.
//
// Failed requests stay in both samples as latencytest.Failed (infinitely
// slow): a current quantile that reaches one has an infinite ratio and is a
// regression; a baseline quantile that reaches one cannot judge a change,
// and the comparison fails.
type Compare struct {
	// Metric is the clock compared. Default TTFT.
	Metric Metric
	// Quantiles are the quantiles compared, fractions in (0,1). Default
	// 0.5, 0.95, 0.99. Each needs n >= MinSamples(q) on both sides.
	Quantiles []float64
	// MaxIncrease is the allowed increase of a quantile, a fraction (0.20
	// for +20%). Default (0) 0.20; to allow no increase, give a tiny
	// fraction such as 1e-9.
	MaxIncrease float64
	// Floor is the smallest absolute increase that can be a regression.
	// Default (0) 50ms; for practically none, give 1ns.
	Floor time.Duration
	// Confidence is the two-sided confidence of the bootstrap interval, in
	// (0,1). Default 0.95.
	Confidence float64
	// Resamples is the number of bootstrap resamples. Default 2000; it
	// must leave at least one resample outside each end of the interval.
	Resamples int
	// Seed seeds the bootstrap. Default 1.
	Seed uint64
}

// DefaultCompareQuantiles are the quantiles Compare judges by default.
var DefaultCompareQuantiles = []float64{0.5, 0.95, 0.99}

// normalized fills the defaults and checks the settings.
func (c Compare) normalized() (Compare, error) {
	if c.Metric == "" {
		c.Metric = TTFT
	}
	if len(c.Quantiles) == 0 {
		c.Quantiles = DefaultCompareQuantiles
	}
	c.Quantiles = slices.Clone(c.Quantiles)
	if c.MaxIncrease == 0 {
		c.MaxIncrease = 0.20
	}
	if c.Floor == 0 {
		c.Floor = 50 * time.Millisecond
	}
	if c.Confidence == 0 {
		c.Confidence = 0.95
	}
	if c.Resamples == 0 {
		c.Resamples = 2000
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	var errs []error
	if _, err := c.Metric.Sample(&latencytest.Result{}); err != nil {
		errs = append(errs, errors.New(strings.TrimPrefix(err.Error(), "sloassert: ")))
	}
	for _, q := range c.Quantiles {
		if !(q > 0 && q < 1) {
			errs = append(errs, fmt.Errorf("quantile %v is outside (0,1) (quantiles are fractions: 0.99 for p99)", q))
		}
	}
	if !(c.MaxIncrease > 0) || math.IsInf(c.MaxIncrease, 0) {
		errs = append(errs, fmt.Errorf("max increase %v is not a positive fraction (0.20 for +20%%)", c.MaxIncrease))
	}
	if c.Floor < 0 {
		errs = append(errs, fmt.Errorf("floor %v < 0", c.Floor))
	}
	if !(c.Confidence > 0 && c.Confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence %v is outside (0,1)", c.Confidence))
	} else if c.Resamples < 0 || c.tailCount() < 1 {
		need := int(math.Ceil(math.Round(2/(1-c.Confidence)*1e9) / 1e9))
		errs = append(errs, fmt.Errorf("resamples %d leave no resample outside a %g%% interval (need >= %d)", c.Resamples, c.Confidence*100, need))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("sloassert: compare: %w", errors.Join(errs...))
	}
	return c, nil
}

// tailCount is how many bootstrap ratios lie below the interval (and
// above it): floor(Resamples×(1-Confidence)/2).
func (c Compare) tailCount() int {
	// 2000×(1-0.95)/2 is 50.000000000000004 or 49.99999999999999
	// depending on rounding: round before the floor.
	return int(math.Floor(math.Round(float64(c.Resamples)*(1-c.Confidence)/2*1e9) / 1e9))
}

// BaselineReport is the verdict of comparing a run with its baseline: one
// QuantileChange per quantile, the Mann-Whitney U test and the context.
type BaselineReport struct {
	// Baseline says where the baseline came from (its path, from
	// Regression; "" from Evaluate).
	Baseline string
	// Compare holds the settings used, defaults filled in.
	Compare Compare
	// Changes holds one entry per quantile, in the order asked.
	Changes []QuantileChange
	// MannWhitney tests whether the current distribution as a whole is
	// slower (reported, not part of the verdict).
	MannWhitney MannWhitney
	// NBase and NCur are the sample sizes, failed requests included;
	// FailedBase and FailedCur count the failed ones.
	NBase, NCur           int
	FailedBase, FailedCur int
	// Runs is the number of repeated runs in the baseline (1 without
	// Batch.Repeat).
	Runs int
	// Notes flag what makes the two runs hard to compare (another model,
	// another concurrency); they do not change the verdict.
	Notes []string
	// Problem is set when nothing could be judged: bad settings, no data.
	Problem string
}

// QuantileChange is the comparison of one quantile.
type QuantileChange struct {
	Q float64
	// Base and Cur are the quantiles of the baseline and the current run
	// (latencytest.Failed when they reach a failed request).
	Base, Cur time.Duration
	// Ratio is Cur/Base; Lo and Hi bound it (the bootstrap interval). +Inf
	// when the current quantile failed.
	Ratio, Lo, Hi float64
	// Gap is the baseline's run-to-run gap of this quantile, (max-min)/min
	// over its runs, a fraction; NaN without repeated runs.
	Gap float64
	// Threshold is what Lo must exceed: 1+max(MaxIncrease, Gap).
	Threshold float64
	// Regression is the verdict: Lo > Threshold and Cur-Base > Floor.
	Regression bool
	// Problem says why this quantile cannot be judged (too few samples, a
	// failed baseline quantile); such a quantile fails the comparison.
	Problem string
}

// MannWhitney is a one-sided Mann-Whitney U test that the current sample
// is stochastically larger (slower) than the baseline, with the normal
// approximation, the tie correction and a continuity correction of 1/2.
type MannWhitney struct {
	// U counts the pairs (current, baseline) where current is slower, a
	// tie counting 1/2. U/(NBase×NCur) is P(current > baseline).
	U float64
	// Z is (U - NBase×NCur/2 - 1/2)/σ, σ² = NBase×NCur/12×((N+1) -
	// Σ(t³-t)/(N(N-1))) over the groups of t tied values; NaN when σ is 0
	// (every value equal) or a side is empty.
	Z float64
	// P is the one-sided p-value 1-Φ(Z); NaN with Z.
	P           float64
	NBase, NCur int
}

// MannWhitneyU tests whether cur is stochastically larger than base.
// Failed values take part as the largest values (ties among themselves).
// The samples are not modified.
func MannWhitneyU(base, cur latencytest.Sample) MannWhitney {
	mw := MannWhitney{NBase: len(base), NCur: len(cur), U: math.NaN(), Z: math.NaN(), P: math.NaN()}
	if len(base) == 0 || len(cur) == 0 {
		return mw
	}
	type obs struct {
		v   time.Duration
		cur bool
	}
	all := make([]obs, 0, len(base)+len(cur))
	for _, v := range base {
		all = append(all, obs{v, false})
	}
	for _, v := range cur {
		all = append(all, obs{v, true})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	n := float64(len(all))
	var rankSum, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// ranks i+1..j share their mean, (i+1+j)/2
		mean := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			if all[k].cur {
				rankSum += mean
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	nb, nc := float64(len(base)), float64(len(cur))
	mw.U = rankSum - nc*(nc+1)/2
	variance := nb * nc / 12 * ((n + 1) - ties/(n*(n-1)))
	if len(all) < 2 || !(variance > 0) {
		return mw
	}
	mw.Z = (mw.U - nb*nc/2 - 0.5) / math.Sqrt(variance)
	mw.P = 0.5 * math.Erfc(mw.Z/math.Sqrt2)
	return mw
}

// Evaluate compares cur with base (pure: it neither reads nor writes a
// file). Both are judged on their measured records, repeated runs pooled.
// No data, bad settings, too few samples for a quantile, or a baseline
// quantile that reaches a failed request is a failing report.
func (c Compare) Evaluate(base, cur *latencytest.Result) BaselineReport {
	nc, err := c.normalized()
	rep := BaselineReport{Compare: nc, MannWhitney: MannWhitney{U: math.NaN(), Z: math.NaN(), P: math.NaN()}}
	if err != nil {
		rep.Problem = err.Error()
		return rep
	}
	c = nc
	switch {
	case base == nil || len(base.Measured()) == 0:
		rep.Problem = "the baseline has no measured request"
		return rep
	case cur == nil || len(cur.Measured()) == 0:
		rep.Problem = "the current run has no measured request"
		return rep
	}
	bs, _ := c.Metric.Sample(base) // the metric was checked by normalized
	cs, _ := c.Metric.Sample(cur)
	rep.NBase, rep.NCur = len(bs), len(cs)
	rep.FailedBase, rep.FailedCur = bs.Failures(), cs.Failures()
	if len(bs) == 0 || len(cs) == 0 {
		// ITL of requests that streamed at most one token
		rep.Problem = fmt.Sprintf("no %s values (baseline %d, current %d)", c.Metric, len(bs), len(cs))
		return rep
	}
	rep.MannWhitney = MannWhitneyU(bs, cs)
	rep.Notes = compareNotes(base, cur)
	runs := splitRuns(base)
	rep.Runs = len(runs)
	lo, hi, undefined := c.bootstrap(bs, cs)
	for i, q := range c.Quantiles {
		ch := QuantileChange{Q: q, Base: bs.Quantile(q), Cur: cs.Quantile(q), Lo: lo[i], Hi: hi[i], Gap: math.NaN()}
		ch.Ratio = durationRatio(ch.Cur, ch.Base)
		if len(runs) > 1 {
			ch.Gap = runGap(runs, c.Metric, q)
		}
		ch.Threshold = 1 + c.MaxIncrease
		if ch.Gap > c.MaxIncrease {
			ch.Threshold = 1 + ch.Gap
		}
		name := QuantileName(q)
		switch need := MinSamples(q); {
		case len(bs) < need || len(cs) < need:
			ch.Problem = fmt.Sprintf("%s needs n >= %d on both sides (have %d baseline, %d current)", name, need, len(bs), len(cs))
		case ch.Base == latencytest.Failed:
			ch.Problem = fmt.Sprintf("the baseline's %s reaches a failed request: it cannot judge a change (re-record the baseline)", name)
		case undefined[i] > 0:
			ch.Problem = fmt.Sprintf("in %d of %d resamples both %ss reach a failed request: the ratio is undefined", undefined[i], c.Resamples, name)
		case math.IsInf(ch.Gap, 1) || (len(runs) > 1 && math.IsNaN(ch.Gap)):
			ch.Problem = fmt.Sprintf("the baseline's run-to-run gap of %s is unbounded (a run's %s fails or is 0): it cannot judge a change", name, name)
		default:
			ch.Regression = ch.Lo > ch.Threshold && increase(ch.Base, ch.Cur) > c.Floor
		}
		rep.Changes = append(rep.Changes, ch)
	}
	return rep
}

// increase is cur-base, infinite when cur failed.
func increase(base, cur time.Duration) time.Duration {
	if cur == latencytest.Failed {
		return latencytest.Failed
	}
	return cur - base
}

// durationRatio is cur/base with Failed as +Inf: +Inf when only cur
// failed, 0 when only base did, NaN when both did; 1 when they are equal
// and finite (0/0 included).
func durationRatio(cur, base time.Duration) float64 {
	if cur == base && cur != latencytest.Failed {
		return 1
	}
	f := func(d time.Duration) float64 {
		if d == latencytest.Failed {
			return math.Inf(1)
		}
		return float64(d)
	}
	return f(cur) / f(base)
}

// bootstrap returns, per quantile, the interval of the ratio cur/base and
// the number of resamples whose ratio was undefined (both quantiles
// failed). It draws from one PCG seeded (Seed, 0), base then current in
// every resample.
func (c Compare) bootstrap(bs, cs latencytest.Sample) (lo, hi []float64, undefined []int) {
	rng := rand.New(rand.NewPCG(c.Seed, 0))
	xb, xc := slices.Sorted(slices.Values(bs)), slices.Sorted(slices.Values(cs))
	rb, rc := make(latencytest.Sample, 0, len(xb)), make(latencytest.Sample, 0, len(xc))
	counts := make([]int, max(len(xb), len(xc)))
	ratios := make([][]float64, len(c.Quantiles))
	for range c.Resamples {
		rb = resampleSorted(rb, xb, counts, rng)
		rc = resampleSorted(rc, xc, counts, rng)
		for i, q := range c.Quantiles {
			// Sample.Quantile sorts a copy; the resample is already sorted,
			// which the sort notices in linear time.
			ratios[i] = append(ratios[i], durationRatio(rc.Quantile(q), rb.Quantile(q)))
		}
	}
	k := c.tailCount()
	lo, hi, undefined = make([]float64, len(c.Quantiles)), make([]float64, len(c.Quantiles)), make([]int, len(c.Quantiles))
	for i, rs := range ratios {
		for _, r := range rs {
			if math.IsNaN(r) {
				undefined[i]++
			}
		}
		if undefined[i] > 0 {
			lo[i], hi[i] = math.NaN(), math.NaN()
			continue
		}
		slices.Sort(rs)
		lo[i], hi[i] = rs[k], rs[len(rs)-1-k]
	}
	return lo, hi, undefined
}

// resampleSorted draws len(x) values of the sorted x with replacement and
// returns them sorted, in dst: it counts the draws of each index, then
// writes each value as often as it was drawn (linear time, no sort).
func resampleSorted(dst, x latencytest.Sample, counts []int, rng *rand.Rand) latencytest.Sample {
	counts = counts[:len(x)]
	clear(counts)
	for range len(x) {
		counts[rng.IntN(len(x))]++
	}
	dst = dst[:0]
	for i, n := range counts {
		for range n {
			dst = append(dst, x[i])
		}
	}
	return dst
}

// splitRuns returns the baseline's measured records as one Result per
// repeated run (Record.Run), in run order.
func splitRuns(r *latencytest.Result) []*latencytest.Result {
	byRun := map[int]*latencytest.Result{}
	for _, rec := range r.Measured() {
		if byRun[rec.Run] == nil {
			byRun[rec.Run] = &latencytest.Result{}
		}
		byRun[rec.Run].Records = append(byRun[rec.Run].Records, rec)
	}
	var out []*latencytest.Result
	for _, k := range slices.Sorted(maps.Keys(byRun)) {
		out = append(out, byRun[k])
	}
	return out
}

// runGap is (max-min)/min of the q-quantile over the runs, as
// latencytest's RepeatGap: +Inf when a run's quantile failed, NaN when the
// smallest is 0.
func runGap(runs []*latencytest.Result, m Metric, q float64) float64 {
	lo, hi := latencytest.Failed, time.Duration(0)
	for _, r := range runs {
		s, _ := m.Sample(r)
		v := s.Quantile(q)
		lo, hi = min(lo, v), max(hi, v)
	}
	switch {
	case hi == latencytest.Failed:
		return math.Inf(1)
	case lo > 0:
		return float64(hi-lo) / float64(lo)
	}
	return math.NaN()
}

// compareNotes flags differences that make two runs hard to compare: the
// model served and the concurrency.
func compareNotes(base, cur *latencytest.Result) []string {
	var notes []string
	set := func(r *latencytest.Result, get func(latencytest.Record) string) []string {
		var out []string
		for _, rec := range r.Measured() {
			if v := get(rec); v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		slices.Sort(out)
		return out
	}
	model := func(rec latencytest.Record) string { return rec.Model }
	conc := func(rec latencytest.Record) string {
		if rec.Concurrency == 0 {
			return ""
		}
		return strconv.Itoa(rec.Concurrency)
	}
	if b, c := set(base, model), set(cur, model); len(b) > 0 && len(c) > 0 && !slices.Equal(b, c) {
		notes = append(notes, fmt.Sprintf("the baseline served model %s, the current run %s", strings.Join(b, ", "), strings.Join(c, ", ")))
	}
	if b, c := set(base, conc), set(cur, conc); len(b) > 0 && len(c) > 0 && !slices.Equal(b, c) {
		notes = append(notes, fmt.Sprintf("the baseline ran at concurrency %s, the current run at %s", strings.Join(b, ", "), strings.Join(c, ", ")))
	}
	return notes
}

// OK reports whether the comparison passed: something was judged, every
// quantile could be judged and none regressed. Empty input never passes.
func (r BaselineReport) OK() bool {
	if r.Problem != "" || len(r.Changes) == 0 {
		return false
	}
	for _, ch := range r.Changes {
		if ch.Problem != "" || ch.Regression {
			return false
		}
	}
	return true
}

// Regressions returns the quantiles that regressed.
func (r BaselineReport) Regressions() []QuantileChange {
	var out []QuantileChange
	for _, ch := range r.Changes {
		if ch.Regression {
			out = append(out, ch)
		}
	}
	return out
}

// changeVerdict is the quantile's verdict as the report prints it: "~" (no
// change shown), "+104.2% REGRESSION", "+8.0% within +20.0%", "+30.0%
// under the 50.0ms floor", "-25.0% faster", or "cannot judge: …".
func changeVerdict(ch QuantileChange, c Compare) string {
	delta := deltaPercent(ch.Ratio)
	switch {
	case ch.Problem != "":
		return "cannot judge: " + ch.Problem
	case ch.Regression:
		return delta + " REGRESSION"
	case ch.Lo > ch.Threshold:
		return fmt.Sprintf("%s under the %s floor", delta, latencytest.FormatDuration(c.Floor))
	case ch.Lo > 1:
		return fmt.Sprintf("%s within %s", delta, deltaPercent(ch.Threshold))
	case ch.Hi < 1:
		return delta + " faster"
	}
	return "~"
}

// deltaPercent renders a ratio as a signed percent change: 1.5 is "+50.0%".
func deltaPercent(ratio float64) string {
	switch {
	case math.IsNaN(ratio):
		return "n/a"
	case math.IsInf(ratio, 1):
		return "+inf%"
	}
	return fmt.Sprintf("%+.1f%%", (ratio-1)*100)
}

func ratioText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "n/a"
	case math.IsInf(f, 1):
		return "inf"
	}
	return fmt.Sprintf("%.2f", f)
}

// String renders the comparison benchstat-style: per quantile the baseline,
// the current value, the change, the interval of the ratio and the verdict;
// then the rule, the U test, the sample sizes, the settings and the notes.
func (r BaselineReport) String() string {
	var sb strings.Builder
	c := r.Compare
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
		var names []string
		for _, ch := range r.Regressions() {
			names = append(names, QuantileName(ch.Q))
		}
		if len(names) > 0 {
			verdict += " (regression at " + strings.Join(names, ", ") + ")"
		}
	}
	from := r.Baseline
	if from == "" {
		from = "baseline"
	}
	fmt.Fprintf(&sb, "%s vs %s: %s\n", c.Metric, from, verdict)
	if r.Problem != "" {
		fmt.Fprintf(&sb, "  %s\n", r.Problem)
	}
	if len(r.Changes) > 0 {
		ci := fmt.Sprintf("%g%% CI of ratio", c.Confidence*100)
		gap := r.Runs > 1
		fmt.Fprintf(&sb, "  %-6s %10s %10s %8s  %-16s", "", "baseline", "current", "delta", ci)
		if gap {
			fmt.Fprintf(&sb, "  %-8s", "run gap")
		}
		sb.WriteString("  verdict\n")
		for _, ch := range r.Changes {
			fmt.Fprintf(&sb, "  %-6s %10s %10s %8s  %-16s", QuantileName(ch.Q), latencytest.FormatDuration(ch.Base),
				latencytest.FormatDuration(ch.Cur), deltaPercent(ch.Ratio), "["+ratioText(ch.Lo)+", "+ratioText(ch.Hi)+"]")
			if gap {
				fmt.Fprintf(&sb, "  %-8s", strings.TrimPrefix(deltaPercent(1+ch.Gap), "+"))
			}
			fmt.Fprintf(&sb, "  %s\n", changeVerdict(ch, c))
		}
		fmt.Fprintf(&sb, "  regression: the interval's lower end > 1+max(%s, run gap) and current - baseline > %s\n",
			percent(c.MaxIncrease), latencytest.FormatDuration(c.Floor))
	}
	if mw := r.MannWhitney; !math.IsNaN(mw.U) {
		shift := "the distribution as a whole did not shift"
		if mw.P < 1-c.Confidence {
			shift = "the distribution as a whole is slower"
		}
		fmt.Fprintf(&sb, "  Mann-Whitney U (current slower?): U = %.1f, z = %s, p = %s, P(current > baseline) = %.3f: %s\n",
			mw.U, ratioText(mw.Z), pValue(mw.P), mw.U/float64(mw.NBase)/float64(mw.NCur), shift)
	}
	if r.NBase+r.NCur > 0 {
		runs := "1 run"
		if r.Runs != 1 {
			runs = fmt.Sprintf("%d runs", r.Runs)
		}
		fmt.Fprintf(&sb, "  n = %d baseline (%d failed, %s) vs %d current (%d failed); %d bootstrap resamples, seed %d\n",
			r.NBase, r.FailedBase, runs, r.NCur, r.FailedCur, c.Resamples, c.Seed)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&sb, "  note: %s\n", n)
	}
	return sb.String()
}

func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p < 0.0001:
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}

// updateRequested reports whether Regression must rewrite its baseline:
// EnvUpdateBaselines is true, or the test binary's -update flag is.
func updateRequested() (bool, error) {
	if v := os.Getenv(EnvUpdateBaselines); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("sloassert: %s=%q is not a boolean (want 1 or 0)", EnvUpdateBaselines, v)
		}
		if b {
			return true, nil
		}
	}
	if f := flag.Lookup(UpdateFlag); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if b, ok := g.Get().(bool); ok {
				return b, nil
			}
		}
	}
	return false, nil
}

// Regression compares cur with the baseline at path (Compare.Evaluate),
// reports the whole comparison with t.Errorf when a quantile regressed or
// could not be judged, logs it when t has Logf and it passed, and returns
// whether it passed.
//
// When EnvUpdateBaselines is true or the test binary's -update flag
// (UpdateFlag) is set, it rewrites the baseline from cur instead
// (SaveBaseline) and passes, with a note when t has Logf. A missing
// baseline fails and says how to record it: it is never created silently,
// so a CI run without a baseline cannot pass by writing one.
func Regression(t TestingT, path string, cur *latencytest.Result, c Compare) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	update, err := updateRequested()
	if err != nil {
		t.Errorf("%v", err)
		return false
	}
	if update {
		if err := SaveBaseline(path, cur); err != nil {
			t.Errorf("%v", err)
			return false
		}
		baselineLogf(t, "sloassert: baseline %s rewritten from this run (%d measured requests): review it and commit it", path, len(cur.Measured()))
		return true
	}
	base, err := LoadBaseline(path)
	if errors.Is(err, fs.ErrNotExist) {
		run := ""
		if n, ok := t.(interface{ Name() string }); ok {
			run = fmt.Sprintf(" -run '^%s$'", strings.SplitN(n.Name(), "/", 2)[0])
		}
		t.Errorf("sloassert: baseline %s does not exist: record it with %s=1 go test%s (or -update, when the test binary defines that flag), then review it and commit it",
			path, EnvUpdateBaselines, run)
		return false
	}
	if err != nil {
		t.Errorf("%v", err)
		return false
	}
	rep := c.Evaluate(base, cur)
	rep.Baseline = path
	if !rep.OK() {
		t.Errorf("%s", rep)
	} else {
		baselineLogf(t, "%s", rep)
	}
	return rep.OK()
}

func baselineLogf(t TestingT, format string, args ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if l, ok := t.(interface{ Logf(string, ...any) }); ok {
		l.Logf(format, args...)
	}
}
