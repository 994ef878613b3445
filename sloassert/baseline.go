package sloassert

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"maps"

	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// The two switches that make Regression rewrite its baseline from the
// current run instead of comparing.
const (
	// EnvUpdateBaselines names the environment variable that rewrites
	// baselines when set to a true value ("1", "true"; see
	// strconv.ParseBool). Any other non-empty value is an error.
	EnvUpdateBaselines = "TAILGUARD_UPDATE_BASELINES"
	// UpdateFlag is the name of the test binary flag (-update) that
	// rewrites baselines, as golden files are rewritten. sloassert
	// registers no flag itself (a library that did would clash with the
	// packages that do): it looks the flag up by name when Regression runs
	// and obeys it when some package of the test binary defines it as a
	// boolean. Without such a flag, use EnvUpdateBaselines.
	UpdateFlag = "update"
)

// SaveBaseline writes r's records to path as JSONL (latencytest.WriteRecords),
// creating the directories it needs and replacing the file atomically. Every
// record is kept, warm-up included, with its inter-token gaps, but without
// its answer text (Record.Content): a baseline needs timings, not a
// provider's answers, which can be large or private. A result with no
// measured request, or whose measured requests all failed, is an error: it
// is no baseline.
func SaveBaseline(path string, r *latencytest.Result) error {
	if r == nil || measuredRequests(r) == 0 {
		return fmt.Errorf("sloassert: baseline %s: no measured request: an empty run is no baseline", path)
	}
	if r.Shard.Count > 1 {
		return fmt.Errorf("sloassert: baseline %s: the run is %s: merge the shards, then save the merged result", path, shardText(r.Shard))
	}
	if r.Partial {
		return fmt.Errorf("sloassert: baseline %s: the run was cut short (%s): a partial run is no baseline", path,
			partialText(r.Counts().Sent, r.Planned, "requests", r.PartialReason))
	}
	if c := r.Counts(); c.Kept == 0 {
		var classes []string
		for _, k := range slices.Sorted(maps.Keys(r.Errors())) {
			classes = append(classes, fmt.Sprintf("%s %d", k, r.Errors()[k]))
		}
		return fmt.Errorf("sloassert: baseline %s: every measured request failed (%s): a baseline of failures cannot judge a change", path, strings.Join(classes, ", "))
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
	if err := r.WriteRecords(f, false); err != nil {
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
	return &latencytest.Result{Run: latencytest.Run{Planned: len(recs), CPUPerWall: math.NaN()}, Records: recs}, nil
}

// Compare says how a current run is compared with a baseline. The zero
// value of every field is its documented default.
//
// Three questions are asked, and a yes to any of them is a regression:
//
// Did a quantile move? For each quantile q, the ratio current/baseline of
// the q-quantiles gets a bootstrap confidence interval: Resamples times,
// both samples are resampled with replacement (math/rand/v2's PCG seeded
// with (Seed, 0), so the same data and seed give the same interval) and
// the ratio of the resamples' quantiles is taken. The interval is
// two-sided, from the k-th smallest to the k-th largest ratio, k =
// floor(Resamples×(1-Confidence)/2)+1 (2000 resamples at 0.95: the 51st of
// each end); requiring its lower end above a threshold is a one-sided test
// at (1+Confidence)/2. The quantile regressed when both hold:
//   - the interval's lower end exceeds 1+MaxIncrease, or 1+gap when the
//     baseline holds repeated runs (Batch.Repeat) whose run-to-run gap of
//     that quantile, (max-min)/min, is larger: a change smaller than the
//     noise floor is not a finding;
//   - current exceeds baseline by more than Floor (the point estimates).
//
// Did the tail grow? A quantile near the top of a sample of a few hundred
// rests on a handful of values, so its interval is wide: doubling the
// slowest 5% of 300 requests moves the p99 interval clear of +20% in only
// 53% to 80% of runs on the presets, and 43% on heavy synthetic tails
// (lognormal sigma 1.0, Pareto 2.5; 95-100% on light ones:
// TestCompareOnUntunedDistributions). The tail test counts
// instead. Among the successful
// requests, let V be the baseline's j-th slowest value, j the number of
// its values above its q-quantile (n = 300: j = 3 for p99, 15 for p95).
// A current request counts when it is slower than V even after the
// allowance: slower than V×(1+max(MaxIncrease, gap)) and than V+Floor. If
// both samples came from one distribution, the number of current values
// above the baseline's j-th slowest has a known distribution, whatever
// the distribution (the exceedance test: see TailTest), which carries the
// baseline's own sampling noise: V is estimated, not known. The tail
// regressed when that count is improbably high, p < 1-Confidence.
// Because the allowance is applied first, a change the quantile rule
// allows (+20%, or less than Floor) does not trigger it.
//
// Did more requests fail? Failed requests are compared on their own, per
// request, with Fisher's exact test (one-sided: the current share of
// failures is greater). The failure rate regressed when p < 1-Confidence
// and the current share exceeds the baseline's by more than FailureFloor.
//
// Failed requests stay in the quantile comparison as latencytest.Failed
// (infinitely slow), treated alike on both sides: in the point estimates
// and in every resample, two failed quantiles are no change (ratio 1), a
// current failed quantile against a finite baseline is infinitely slower
// (ratio +Inf: a regression once the interval's lower end is infinite), a
// baseline failed quantile against a finite current is faster (ratio 0).
// So two runs of a provider that fails 4% of its requests, whose p99s are
// both failed requests, compare equal at p99 and are judged on their
// failure rates and their successful requests' tails. A baseline whose
// every value failed cannot judge a change.
//
// The Mann-Whitney U test of the whole distributions is reported but does
// not enter the verdict: a tail regression moves a few percent of the
// requests, which a rank test of the whole distribution barely notices
// (doubling the slowest 5% of a sample moves U by about 0.1%), so gating
// on it would hide exactly the regressions a baseline is for. It tells a
// shift of the whole distribution from a tail-only change.
//
// Error rates, measured by seeded simulation on runs of 300 requests: of
// the fake provider's presets (mistral-3-14b, llama-4-maverick,
// gpt-oss-120b; 200 pairs each; TestBaselineSimulation) and of six
// synthetic shapes the defaults were not tuned on (lognormal sigma 0.3 and
// 1.0, Pareto alpha 2.5, exponential, a 5% slow path, uniform; 100 pairs
// each; TestCompareOnUntunedDistributions), and of four heavy tails
// (lognormal sigma 1 and 2, Pareto alpha 2.5 and 1.5; 400 pairs each;
// TestComparePowerOnHeavyTails). Two runs of one distribution are flagged
// 0% to 4.5% of the time. A current run whose slowest 5% doubled is
// flagged 21% to 100% of the time, by the shape of the tail: 98-100% on
// light tails and a separate slow path, about 70% on the presets' smooth
// heavy tails, 57% on lognormal sigma 1 and Pareto alpha 2.5, and only
// 21% on lognormal sigma 2 and 27.5% on Pareto alpha 1.5 (95% intervals
// about ±4 points): where the slowest values lie several times apart,
// doubling them moves few past the baseline's own spread, so a baseline
// of 300 cannot show it; more requests, or a check of the tail quantile
// against a budget (Q), can. A
// current run with exactly 2% of its requests failed (6 of 300) against a
// clean baseline is flagged every time (Fisher p = 0.015); one whose every
// request fails with probability 2% (a binomial count, often fewer than
// 6) is flagged 67% to 76% of the time.
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
	// FailureFloor is the smallest increase of the share of failed
	// requests that can be a regression, a fraction (0.005 for half a
	// percentage point). Default (0) 0.005; for practically none, give
	// 1e-9.
	FailureFloor float64
	// Confidence is the two-sided confidence of the bootstrap interval, in
	// (0,1); the exact one-sided tests (tail, failures) flag at p <
	// 1-Confidence. Default 0.95.
	Confidence float64
	// Resamples is the number of bootstrap resamples. Default 2000; it
	// must leave at least one resample outside each end of the interval.
	Resamples int
	// Seed seeds the bootstrap. Default 1.
	Seed uint64
}

// defaultCompareQuantiles are the quantiles Compare judges by default.
var defaultCompareQuantiles = []float64{0.5, 0.95, 0.99}

// normalized fills the defaults and checks the settings.
func (c Compare) normalized() (Compare, error) {
	c.Metric = cmp.Or(c.Metric, TTFT)
	if len(c.Quantiles) == 0 {
		c.Quantiles = defaultCompareQuantiles
	}
	c.Quantiles = slices.Clone(c.Quantiles)
	// A zero setting takes its default (cmp.Or: the first non-zero).
	c.MaxIncrease = cmp.Or(c.MaxIncrease, 0.20)
	c.Floor = cmp.Or(c.Floor, 50*time.Millisecond)
	c.FailureFloor = cmp.Or(c.FailureFloor, 0.005)
	c.Confidence = cmp.Or(c.Confidence, 0.95)
	c.Resamples = cmp.Or(c.Resamples, 2000)
	c.Seed = cmp.Or(c.Seed, 1)
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
	if !(c.FailureFloor > 0 && c.FailureFloor < 1) {
		errs = append(errs, fmt.Errorf("failure floor %v is outside (0,1) (a fraction: 0.005 for half a percentage point)", c.FailureFloor))
	}
	if !(c.Confidence > 0 && c.Confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence %v is outside (0,1)", c.Confidence))
	} else if c.Resamples < 0 || c.tailCount() < 1 {
		need := int(math.Ceil(math.Round(2/(1-c.Confidence)*1e9) / 1e9))
		errs = append(errs, fmt.Errorf("resamples %d leave no resample outside a %s interval (need >= %d)", c.Resamples, percent(c.Confidence), need))
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

// alpha is the level of the exact one-sided tests: 1-Confidence.
func (c Compare) alpha() float64 { return 1 - c.Confidence }

// QuantileChange is the comparison of one quantile.
type QuantileChange struct {
	Q float64
	// Base and Cur are the quantiles of the baseline and the current run
	// (latencytest.Failed when they reach a failed request).
	Base, Cur time.Duration
	// Ratio is Cur/Base; Lo and Hi bound it (the bootstrap interval). It
	// is +Inf when only the current quantile failed, 0 when only the
	// baseline's did, 1 when both did.
	Ratio, Lo, Hi float64
	// Gap is the baseline's run-to-run gap of this quantile, (max-min)/min
	// over its runs, a fraction; NaN without repeated runs, 0 when every
	// run's quantile failed, +Inf when some did and some did not.
	Gap float64
	// Threshold is what Lo must exceed: 1+max(MaxIncrease, Gap).
	Threshold float64
	// Interval is the interval's verdict: Lo > Threshold and Cur-Base >
	// Floor (a failed Cur against a finite Base exceeds any floor).
	Interval bool
	// Tail is the tail test at this quantile.
	Tail TailTest
	// Regression is the verdict: Interval or Tail.Regression.
	Regression bool
	// Problem says why this quantile cannot be judged (too few samples,
	// an undefined run-to-run gap); such a quantile fails the comparison,
	// and its Ratio, Lo, Hi and Tail.P are NaN (Tail not run).
	Problem string
}

// TailTest is the exceedance test at one quantile q: are more current
// requests beyond the baseline's q-quantile than chance allows? Only
// successful requests take part (failures are compared on their own, in
// FailureChange). With the baseline's NBase successful values sorted,
// X(1) <= … <= X(NBase), J is the number of them above its q-quantile
// (NBase-1-floor((NBase-1)q)) and Value is X(NBase-J+1), the J-th slowest.
// Beyond counts the current values above Limit, Value with the allowance:
// max(Value×Threshold, Value+Floor). If both samples came from one
// continuous distribution, the number A of current values above the
// baseline's J-th slowest is distribution-free:
//
//	P(A = x) = C(x+J-1, x)·C(NCur-x+NBase-J, NCur-x) / C(NBase+NCur, NCur)
//
// and P is P(A >= Beyond), computed exactly. Counting above Limit rather
// than Value only lowers the count, so P is conservative for a change
// within the allowance.
type TailTest struct {
	// Value is the baseline's J-th slowest successful value; Limit is
	// Value with the allowance.
	Value, Limit time.Duration
	// J is the number of successful baseline values at or above Value.
	J int
	// Beyond is the number of successful current values above Limit.
	Beyond int
	// NBase and NCur are the successful requests compared.
	NBase, NCur int
	// P is the one-sided p-value; NaN when the test was not run.
	P float64
	// Regression is P < 1-Confidence.
	Regression bool
	// Skipped says why the test was not run ("" when it ran): too few
	// successful requests, or an unbounded run-to-run gap.
	Skipped string
}

// FailureChange compares the shares of failed measured requests with
// Fisher's exact test, one-sided (the current share is greater).
type FailureChange struct {
	// Base and Cur count the failed measured requests; NBase and NCur
	// the measured requests.
	Base, Cur   int
	NBase, NCur int
	// P is the one-sided p-value; 1 when the current run has no failure.
	P float64
	// Regression is P < 1-Confidence and CurShare()-BaseShare() >
	// FailureFloor.
	Regression bool
}

// BaseShare is the share of the baseline's measured requests that failed,
// a fraction; NaN without requests.
func (f FailureChange) BaseShare() float64 { return float64(f.Base) / float64(f.NBase) }

// CurShare is the share of the current run's measured requests that
// failed, a fraction; NaN without requests.
func (f FailureChange) CurShare() float64 { return float64(f.Cur) / float64(f.NCur) }

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

// mannWhitneyU tests whether cur is stochastically larger than base.
// Failed values take part as the largest values (ties among themselves).
// The samples are not modified.
func mannWhitneyU(base, cur latencytest.Sample) MannWhitney {
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
	slices.SortFunc(all, func(a, b obs) int { return cmp.Compare(a.v, b.v) })
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
// No data, bad settings, a baseline whose every value failed, or too few
// samples for a quantile is a failing report.
//
// A run its deadline cut short (Result.Partial) or one shard of a split
// run (Result.Shard), on either side, cannot judge a change: the report
// says so and fails, unless opts hold AllowPartial (compare what ran) or
// AllowShard (compare the shards as if each were the whole run), the
// options objectives take. Any other option does not apply to a
// comparison: the report names it and fails.
func (c Compare) Evaluate(base, cur *latencytest.Result, opts ...Option) BaselineReport {
	o := collect(opts)
	nc, err := c.normalized()
	if err == nil {
		err = o.compareProblem()
	}
	rep := BaselineReport{Compare: nc, MannWhitney: MannWhitney{U: math.NaN(), Z: math.NaN(), P: math.NaN()}, Failures: FailureChange{P: math.NaN()}}
	if err != nil {
		rep.Problem = err.Error()
		return rep
	}
	c = nc
	switch {
	case base == nil || measuredRequests(base) == 0:
		rep.Problem = "the baseline has no measured request"
		return rep
	case cur == nil || measuredRequests(cur) == 0:
		rep.Problem = "the current run has no measured request"
		return rep
	case cur.Partial && !o.allowPartial:
		rep.Problem = "the current run was cut short: " + partialText(cur.Counts().Sent, cur.Planned, "requests", cur.PartialReason) + "; AllowPartial() compares what ran"
		return rep
	case base.Partial && !o.allowPartial:
		rep.Problem = "the baseline run was cut short: " + partialText(base.Counts().Sent, base.Planned, "requests", base.PartialReason) + "; re-record it, or AllowPartial()"
		return rep
	case cur.Shard.Count > 1 && !o.allowShard:
		rep.Problem = "the current run is " + shardText(cur.Shard) + ": merge the shards, then compare (or AllowShard())"
		return rep
	case base.Shard.Count > 1 && !o.allowShard:
		rep.Problem = "the baseline is " + shardText(base.Shard) + ": merge the shards, then save the baseline (or AllowShard())"
		return rep
	}
	bs, _ := c.Metric.Sample(base) // the metric was checked by normalized
	cs, _ := c.Metric.Sample(cur)
	rep.NBase, rep.NCur = len(bs), len(cs)
	rep.FailedBase, rep.FailedCur = bs.Failures(), cs.Failures()
	rep.Failures = c.compareFailures(base, cur)
	if len(bs) == 0 || len(cs) == 0 {
		// ITL of requests that streamed at most one token
		rep.Problem = fmt.Sprintf("no %s values (baseline %d, current %d)", c.Metric, len(bs), len(cs))
		return rep
	}
	runs := splitRuns(base)
	rep.Runs = len(runs)
	if rep.FailedBase == len(bs) {
		rep.Problem = fmt.Sprintf("every baseline %s value is a failed request (%d of %d): a baseline of failures cannot judge a change (re-record the baseline)", c.Metric, rep.FailedBase, len(bs))
		return rep
	}
	rep.MannWhitney = mannWhitneyU(bs, cs)
	rep.Notes = compareNotes(base, cur)
	lo, hi := c.bootstrap(bs, cs)
	fb := slices.Sorted(slices.Values(bs.Finite()))
	fc := cs.Finite()
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
		case len(runs) > 1 && math.IsNaN(ch.Gap):
			ch.Problem = fmt.Sprintf("the baseline's run-to-run gap of %s is undefined (a run's %s is 0): it cannot judge a change", name, name)
		default:
			ch.Interval = ch.Lo > ch.Threshold && exceedsFloor(ch.Base, ch.Cur, c.Floor)
			ch.Tail = c.tailTest(fb, fc, q, ch.Threshold)
			ch.Regression = ch.Interval || ch.Tail.Regression
		}
		if ch.Problem != "" { // shown as n/a: nothing was judged
			ch.Ratio, ch.Lo, ch.Hi = math.NaN(), math.NaN(), math.NaN()
			ch.Tail = TailTest{P: math.NaN(), Skipped: ch.Problem, Value: latencytest.Failed, Limit: latencytest.Failed}
		}
		rep.Changes = append(rep.Changes, ch)
	}
	return rep
}

// compareFailures compares the shares of failed measured requests.
func (c Compare) compareFailures(base, cur *latencytest.Result) FailureChange {
	count := func(r *latencytest.Result) (failed, n int) {
		for _, rec := range r.Measured() {
			n++
			if !rec.OK() {
				failed++
			}
		}
		return failed, n
	}
	var f FailureChange
	f.Base, f.NBase = count(base)
	f.Cur, f.NCur = count(cur)
	f.P = stats.FisherGreater(f.Cur, f.NCur-f.Cur, f.Base, f.NBase-f.Base)
	f.Regression = f.P < c.alpha() && f.CurShare()-f.BaseShare() > c.FailureFloor
	return f
}

// tailTest runs the exceedance test at q on the successful values: fb,
// the baseline's, sorted, and fc, the current run's. threshold is the
// quantile's 1+max(MaxIncrease, gap).
func (c Compare) tailTest(fb, fc latencytest.Sample, q, threshold float64) TailTest {
	tt := TailTest{NBase: len(fb), NCur: len(fc), P: math.NaN(), Value: latencytest.Failed, Limit: latencytest.Failed}
	switch need := MinSamples(q); {
	case len(fb) < need || len(fc) < need:
		tt.Skipped = fmt.Sprintf("%d baseline and %d current requests succeeded; it needs %d on both sides", len(fb), len(fc), need)
		return tt
	case math.IsInf(threshold, 1):
		tt.Skipped = "the baseline's runs disagree on whether this quantile is a failed request: the run-to-run gap is unbounded"
		return tt
	}
	n := len(fb)
	tt.J = n - 1 - int(math.Floor(float64(n-1)*q))
	tt.Value = fb[n-tt.J]
	// Value×threshold, and Value+Floor: a current value counts when it is
	// above both (v > x·t for an integer v is v > floor(x·t)).
	scaled := math.Floor(float64(tt.Value) * threshold)
	tt.Limit = max(time.Duration(math.Min(scaled, float64(latencytest.Failed-1))), tt.Value+c.Floor)
	for _, v := range fc {
		if v > tt.Limit {
			tt.Beyond++
		}
	}
	tt.P = stats.ExceedanceGreater(tt.Beyond, tt.J, len(fb), len(fc))
	tt.Regression = tt.P < c.alpha()
	return tt
}

// exceedsFloor reports whether cur is more than floor slower than base; a
// failed cur against a finite base always is, and a failed base never is
// exceeded.
func exceedsFloor(base, cur, floor time.Duration) bool {
	switch {
	case base == latencytest.Failed:
		return false
	case cur == latencytest.Failed:
		return true
	}
	return cur-base > floor
}

// durationRatio is cur/base with Failed as infinitely slow: +Inf when only
// cur failed, 0 when only base did, and 1 when they are equal (both
// failed, or 0/0): two failed quantiles are no change.
func durationRatio(cur, base time.Duration) float64 {
	switch {
	case cur == base:
		return 1
	case cur == latencytest.Failed:
		return math.Inf(1)
	case base == latencytest.Failed:
		return 0
	}
	return float64(cur) / float64(base)
}

// bootstrap returns, per quantile, the interval of the ratio cur/base
// (resampleRatio of the resamples' quantiles). It draws from one PCG
// seeded (Seed, 0), base then current in every resample, each draw an
// index of the sorted sample (rand.IntN).
func (c Compare) bootstrap(bs, cs latencytest.Sample) (lo, hi []float64) {
	rng := rand.New(rand.NewPCG(c.Seed, 0))
	xb, xc := slices.Sorted(slices.Values(bs)), slices.Sorted(slices.Values(cs))
	counts := make([]int, max(len(xb), len(xc)))
	qb, qc := make([]time.Duration, len(c.Quantiles)), make([]time.Duration, len(c.Quantiles))
	ratios := make([][]float64, len(c.Quantiles))
	for range c.Resamples {
		resampleQuantiles(qb, xb, c.Quantiles, counts, rng)
		resampleQuantiles(qc, xc, c.Quantiles, counts, rng)
		for i := range c.Quantiles {
			ratios[i] = append(ratios[i], durationRatio(qc[i], qb[i]))
		}
	}
	k := c.tailCount()
	lo, hi = make([]float64, len(c.Quantiles)), make([]float64, len(c.Quantiles))
	for i, rs := range ratios {
		slices.Sort(rs)
		lo[i], hi[i] = rs[k], rs[len(rs)-1-k]
	}
	return lo, hi
}

// resampleQuantiles draws len(x) values of the sorted x with replacement
// and writes the resample's quantiles qs into dst, as Sample.Quantile would
// compute them on the sorted resample. It counts the draws of each index,
// then walks the counts to the ranks the quantiles need: linear time, no
// resample is built.
func resampleQuantiles(dst []time.Duration, x latencytest.Sample, qs []float64, counts []int, rng *rand.Rand) {
	n := len(x)
	counts = counts[:n]
	clear(counts)
	for range n {
		counts[rng.IntN(n)]++
	}
	// at returns the value of rank r (from 0) of the resample; ranks are
	// asked in any order, so it walks from the start each time it must go
	// back (a handful of quantiles: cheap).
	idx, seen := 0, counts[0] // ranks < seen hold x[idx]
	at := func(r int) time.Duration {
		if r < seen-counts[idx] {
			idx, seen = 0, counts[0]
		}
		for r >= seen {
			idx++
			seen += counts[idx]
		}
		return x[idx]
	}
	for i, q := range qs {
		// latencytest's interpolation (R type 7): between the ranks r and
		// r+1 at the fraction f.
		r, f := stats.Rank(n, q)
		if f == 0 {
			dst[i] = at(r)
			continue
		}
		a, b := at(r), at(r+1)
		// The same interpolation as Sample.Quantile on the whole resample:
		// a two-value sample at the fraction f gives a + (b-a)f, rounded
		// alike, and Failed when b failed.
		dst[i] = latencytest.Sample{a, b}.Quantile(f)
	}
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

// Regression compares cur with the baseline at path (Compare.Evaluate,
// with opts: AllowPartial, AllowShard),
// reports the whole comparison with t.Errorf when a quantile regressed or
// could not be judged, logs it when t has Logf and it passed, and returns
// whether it passed.
//
// When EnvUpdateBaselines is true or the test binary's -update flag
// (UpdateFlag) is set, it rewrites the baseline from cur instead
// (SaveBaseline) and passes, with a note when t has Logf. A missing
// baseline fails and says how to record it: it is never created silently,
// so a CI run without a baseline cannot pass by writing one.
func Regression(t TestingT, path string, cur *latencytest.Result, c Compare, opts ...Option) bool {
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
		baselineLogf(t, "sloassert: baseline %s rewritten from this run (%d measured requests): review it and commit it", path, measuredRequests(cur))
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
	rep := c.Evaluate(base, cur, opts...)
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
