package fit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// Option configures Fit and Compare.
type Option func(*options)

type options struct {
	seed  uint64
	draws int
	model string
	tail  bool
	mix   *latencytest.Mix
}

// WithSeed sets the fitted profile's seed (default 1), which also seeds
// the replay.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithDraws sets how many requests the replay draws (default 20,000;
// chains are drawn to about the same number of calls). Below 1 is the
// default.
func WithDraws(n int) Option { return func(o *options) { o.draws = n } }

// WithModel names the fitted profile's model (default: the model most
// records name, else "fitted-model").
func WithModel(name string) Option { return func(o *options) { o.model = name } }

// WithTail fits a generalised Pareto tail (fakeprovider.Tail) to the top
// of each fitted TTFT and ITL distribution (the profile's and each load
// level's) that has 30 or more values, so the fake draws past the
// largest measured value at the rate the tail says. The threshold is the
// values' (1-k/n)-quantile with k = max(10, n/10) exceedances; the shape
// and scale are fitted to the k exceedances by probability-weighted
// moments (Hosking and Wallis 1987, plotting positions (j-0.35)/k), the
// shape clamped to [0, 0.9] (unbounded: the tail passes the largest value). The profile's comments give the
// parameters and k. Default off: published presets never have one (a
// tail is an extrapolation, not a measurement).
func WithTail(on bool) Option { return func(o *options) { o.tail = on } }

func collect(opts []Option) options {
	o := options{seed: 1, draws: 20_000}
	for _, f := range opts {
		f(&o)
	}
	if o.draws < 1 {
		o.draws = 20_000
	}
	return o
}

// Stat is one statistic of the records next to the replay's.
type Stat struct {
	// Name says what is measured ("total p99", "error rate http_529").
	Name string
	// Records and Replay are the values: nanoseconds for latencies
	// (Unit "duration"), else a fraction (Unit "fraction"); NaN when
	// there is nothing to compute it from.
	Records, Replay float64
	Unit            string
	// N is the number of record values behind Records.
	N int
}

// Test is one two-sample Kolmogorov-Smirnov test, records against replay.
type Test struct {
	// Name is the distribution: "ttft", "first_answer", "total",
	// "chain_total".
	Name string
	KS
}

// FitReport says where a fitted profile's numbers came from and how well
// the profile reproduces the records.
type FitReport struct {
	// Records is how many measured records were read (warm-up excluded).
	Records int
	// Stats are the records' statistics next to the replay's.
	Stats []Stat
	// Tests are the KS tests of each distribution, records against replay.
	Tests []Test
	// Sources tells, per profile key ("ttft", "faults.http_529",
	// "conversation.icc", ...), where its value came from; the YAML
	// writer puts them in comments.
	Sources map[string]string
	// Notes are what was not fitted, and why.
	Notes []string
}

// Test returns the named KS test and whether it was run.
func (r FitReport) Test(name string) (Test, bool) {
	for _, t := range r.Tests {
		if t.Name == name {
			return t, true
		}
	}
	return Test{}, false
}

// Check judges the report's KS tests at alpha (0 or less, or NaN:
// DefaultCheckAlpha). A test whose p-value is NaN fails.
func (r FitReport) Check(alpha float64) Check {
	if !(alpha > 0) {
		alpha = DefaultCheckAlpha
	}
	c := Check{Alpha: alpha, Tests: append([]Test(nil), r.Tests...)}
	for _, t := range r.Tests {
		if math.IsNaN(t.P) || t.P < alpha {
			c.Failed = append(c.Failed, t)
		}
	}
	return c
}

// Stat returns the named statistic and whether it is in the report.
func (r FitReport) Stat(name string) (Stat, bool) {
	for _, s := range r.Stats {
		if s.Name == name {
			return s, true
		}
	}
	return Stat{}, false
}

// String renders the report as a table.
func (r FitReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d records\n%-28s %14s %14s %6s\n", r.Records, "statistic", "records", "replay", "n")
	for _, s := range r.Stats {
		f := func(v float64) string {
			if math.IsNaN(v) {
				return "—"
			}
			if s.Unit == "duration" {
				return format.Duration(time.Duration(v))
			}
			return fmt.Sprintf("%.4f", v)
		}
		fmt.Fprintf(&b, "%-28s %14s %14s %6d\n", s.Name, f(s.Records), f(s.Replay), s.N)
	}
	for _, t := range r.Tests {
		fmt.Fprintf(&b, "KS %-25s D %.3f  p %.3f  (n %d vs %d)\n", t.Name, t.D, t.P, t.N, t.M)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// timing is what one record says about timing, fitted or replayed.
type timing struct {
	rec       *latencytest.Record
	ttft      time.Duration // first token of any kind, else first answer; -1 when none
	tokens    int           // streamed tokens (reasoning included); 0 when unknown
	reasoning int
	itl       time.Duration // per-request ITL; -1 when it cannot be computed
	stall     time.Duration // excess silence; 0 for none
	stallAt   int
	chain     string // chain key; "" outside chains
}

// streamed reports whether the record got a 200 stream that Fit times: a
// success, or an empty answer (the reasoning used the cap).
func streamed(r *latencytest.Record) bool {
	return r.OK() || r.Err == latencytest.ClassEmptyAnswer
}

// timings reads every streamed record; stalls are found against the
// median per-request ITL of the records.
func timings(recs []latencytest.Record) []timing {
	var out []timing
	var counts []int
	for i := range recs {
		r := &recs[i]
		if !streamed(r) || r.TokensUnobserved() {
			continue
		}
		t := timing{rec: r, ttft: r.TTFT, itl: -1, reasoning: r.ReasoningTokens}
		if t.ttft < 0 {
			t.ttft = r.FirstAnswer
		}
		if r.UsageReported && r.CompletionTokens > 0 {
			t.tokens = r.CompletionTokens
		} else {
			t.tokens = r.TokenEvents
		}
		if r.Err == latencytest.ClassEmptyAnswer && t.reasoning == 0 {
			t.reasoning = t.tokens
		}
		if k, ok := fakeprovider.ChainKey(r.ID); ok {
			t.chain = k
		}
		if t.tokens > 0 {
			counts = append(counts, t.tokens)
		}
		out = append(out, t)
	}
	modal := mode(counts)
	var itls []float64
	for i := range out {
		t := &out[i]
		if t.tokens == 0 && !t.rec.UsageReported {
			t.tokens = modal // the study's stalled stream reported no usage
		}
		if t.ttft >= 0 && t.tokens >= 2 {
			end := t.rec.LastToken
			if end <= 0 {
				end = t.rec.Total
			}
			if span := end - t.ttft; span >= 0 {
				t.itl = span / time.Duration(t.tokens-1)
				itls = append(itls, float64(t.itl))
			}
		}
	}
	med := time.Duration(quantile(itls, 0.5))
	for i := range out {
		t := &out[i]
		if g := t.rec.Gaps; g.Len() > 0 {
			gaps := g.All()
			gm := time.Duration(quantile(durFloats(gaps), 0.5))
			k := slices.Index(gaps, slices.Max(gaps))
			if gaps[k] > max(time.Second, 20*gm) {
				t.stall, t.stallAt = gaps[k]-gm, k+1
				t.itl = gm
			}
			continue
		}
		// Without gaps: a stall is a request whose decode took over 10x
		// what the median ITL gives, and over 1 s more.
		if med > 0 && t.itl > 10*med {
			if excess := time.Duration(t.tokens-1) * (t.itl - med); excess > time.Second {
				t.stall, t.stallAt, t.itl = excess, 1, med
			}
		}
	}
	return out
}

// Fit fits a profile to records (warm-up records are left out) and
// reports how a replay of the profile compares with them (see Compare and
// the package documentation). It fails when no measured record streamed.
func Fit(records []latencytest.Record, opts ...Option) (fakeprovider.Profile, FitReport, error) {
	o := collect(opts)
	recs := measured(records)
	rep := FitReport{Records: len(recs), Sources: map[string]string{}}
	ts := timings(recs)
	var withTTFT []timing
	for _, t := range ts {
		if t.ttft >= 0 {
			withTTFT = append(withTTFT, t)
		}
	}
	if len(withTTFT) == 0 {
		return fakeprovider.Profile{}, rep, errors.New("fit: no measured record streamed a token (need at least one success)")
	}
	n := len(recs)
	p := fakeprovider.Profile{Model: o.model, Seed: o.seed, ITLPerRequest: true}
	if p.Model == "" {
		var names []string
		for _, r := range recs {
			if r.Model != "" {
				names = append(names, r.Model)
			}
		}
		p.Model = cmp.Or(mode(names), "fitted-model")
	}

	// Conversation: the ICC of log call totals; per-call values are then
	// taken relative to their chain's estimated speed.
	speed := map[string]float64{} // chain key -> factor to divide by
	icc, chains, calls := chainICC(ts)
	if chains >= 5 {
		p.Conversation.ICC = min(max(icc.icc, 0), 0.95)
		rep.Sources["conversation.icc"] = fmt.Sprintf("one-way ANOVA of log call totals over %d chains (%d calls, stalled calls left out): ICC %.3f", chains, calls, icc.icc)
		if p.Conversation.ICC > 0 {
			for k, m := range icc.chainMean {
				shrink := icc.between / (icc.between + icc.within/float64(icc.chainN[k]))
				speed[k] = math.Exp(shrink * (m - icc.grand))
			}
			rep.Sources["conversation.icc"] += "; ITL values are divided by their chain's estimated speed (the chain's mean log total, shrunk), so the factor is not counted twice"
			var shape []float64
			for _, k := range slices.Sorted(maps.Keys(icc.chainMean)) {
				shape = append(shape, math.Round(math.Exp(icc.chainMean[k]-icc.grand)*1000)/1000)
			}
			slices.Sort(shape)
			if len(shape) >= 3 && shape[0] < shape[len(shape)-1] { // a shape needs a spread (see Conversation.Shape)
				p.Conversation.Shape = shape
				rep.Sources["conversation.icc"] += fmt.Sprintf("; shape: each chain's exp(mean log total - grand mean), %d chains, so the factor spreads as the chains did", len(shape))
			}
		}
	}
	norm := func(t timing, d time.Duration) time.Duration {
		if f, ok := speed[t.chain]; ok {
			return time.Duration(float64(d) / f)
		}
		return d
	}

	// Prefill: kept when the linear slope of TTFT on prompt size is
	// significant; then the curve is chosen by held-out error (fitCurve),
	// in the engine's own prompt tokens (fitUnit).
	pf := prefillSlope(withTTFT)
	var curve curveFit
	if pf.keep() {
		unit := fitUnit(recs, o.mix)
		var why string
		if curve, why = fitCurve(withTTFT); why == "" {
			curve.c.CharsPerToken, curve.c.TemplateTokens = unit.cpt, unit.template
			p.Prefill = curve.c
			rep.Sources["prefill"] = pf.String() + "; curve: " + curve.desc + "; tokens: " + unit.desc
			if unit.template == 0 && unit.cpt == 4 && strings.Contains(unit.desc, "prompt characters unknown") {
				rep.Notes = append(rep.Notes, "prefill unit: "+unit.desc)
			}
		} else {
			rep.Notes = append(rep.Notes, "prefill: not modelled: "+pf.String()+"; "+why)
		}
	} else {
		rep.Notes = append(rep.Notes, "prefill: not modelled: "+pf.String())
	}
	var stalls []time.Duration
	ttftAt, itlAt := map[int][]time.Duration{}, map[int][]time.Duration{} // by concurrency
	pairAt := map[int][][2]float64{}                                      // (TTFT, ITL) of requests with both, by concurrency
	var outputs, reasoning, stallAt []int
	reasoningAt := map[int][]int{}
	stalled := 0
	stalledAt, streamedAt := map[int]int{}, map[int]int{} // by concurrency
	for _, t := range ts {
		c := max(t.rec.Concurrency, 1)
		streamedAt[c]++
		if t.ttft >= 0 {
			ttftAt[c] = append(ttftAt[c], curve.base(t)) // never below 0 (fitCurve)
		}
		if t.itl >= 0 {
			itlAt[c] = append(itlAt[c], norm(t, t.itl))
			if t.ttft >= 0 && t.chain == "" {
				pairAt[c] = append(pairAt[c], [2]float64{float64(ttftAt[c][len(ttftAt[c])-1]), float64(norm(t, t.itl))})
			}
		}
		if t.stall > 0 {
			stalled++
			stalledAt[c]++
			stalls = append(stalls, t.stall)
			stallAt = append(stallAt, t.stallAt)
		}
		if t.tokens > 0 {
			reasoning = append(reasoning, t.reasoning)
			reasoningAt[c] = append(reasoningAt[c], t.reasoning)
			if t.rec.OK() {
				outputs = append(outputs, t.tokens-t.reasoning)
			}
		}
	}
	// Load levels: one per concurrency in the records with enough
	// values; the lowest is the profile's own TTFT and ITL.
	levels := loadLevels(ttftAt)
	base := func(m map[int][]time.Duration) []time.Duration {
		if len(levels) == 0 {
			var all []time.Duration
			for _, c := range slices.Sorted(maps.Keys(m)) {
				all = append(all, m[c]...)
			}
			return all
		}
		return m[levels[0]]
	}
	ttfts, itls := base(ttftAt), base(itlAt)
	at := ""
	if len(levels) > 0 {
		at = fmt.Sprintf(" at concurrency %d (the lowest; the others are load levels)", levels[0])
	}
	p.TTFT = fakeprovider.Interpolated(roundAll(ttfts)...)
	prefillPart := "each with the fitted prefill taken out (see prefill), which the fake adds back per request"
	if !curve.c.IsSet() {
		prefillPart = "as measured: prefill is not modelled (see the note below), so the prompt-size effect stays in this spread"
	}
	rep.Sources["ttft"] = fmt.Sprintf("interpolated empirical distribution of %d TTFTs%s (first token of any kind; the first answer where no first token was recorded), %s", len(ttfts), at, prefillPart)
	if len(itls) > 0 {
		p.ITL = fakeprovider.Interpolated(roundAll(itls)...)
		rep.Sources["itl"] = fmt.Sprintf("per request: (last token - first token) / (tokens - 1) of %d requests%s, stalls removed", len(itls), at)
	} else {
		rep.Notes = append(rep.Notes, "no request streamed 2 tokens: ITL left at the default")
	}
	if len(levels) > 0 {
		var desc []string
		for _, c := range levels[1:] {
			lv := fakeprovider.LoadLevel{InFlight: c, TTFT: fakeprovider.Interpolated(roundAll(ttftAt[c])...)}
			if len(itlAt[c]) > 0 {
				lv.ITL = fakeprovider.Interpolated(roundAll(itlAt[c])...)
			}
			p.Load = append(p.Load, lv)
			desc = append(desc, fmt.Sprintf("%d (%d TTFTs, %d ITLs)", c, len(ttftAt[c]), len(itlAt[c])))
		}
		rep.Sources["load"] = "one level per concurrency in the records, from that concurrency's requests alone, as for ttft and itl: in flight " + strings.Join(desc, ", ") +
			"; a closed loop at concurrency c keeps c requests in flight"
	}
	rep.Sources["itl_per_request"] = "one ITL per request, as measured (a slow request is slow throughout)"
	// Chain calls: TTFT and ITL relative to their chain's means of logs,
	// so that the chain factor (Conversation) is not counted again.
	pairAt[-1] = withinChains(ts, curve, norm)
	baseGroups := pairAt
	if len(levels) > 0 {
		// By load level, as TTFT and ITL: the coupling moved with load.
		baseGroups = map[int][][2]float64{levels[0]: pairAt[levels[0]], -1: pairAt[-1]}
		for i := range p.Load {
			if rho, pairs := pooledSpearman(map[int][][2]float64{0: pairAt[p.Load[i].InFlight]}); pairs >= minLevelValues {
				r := math.Round(rho*1000) / 1000
				p.Load[i].TTFTITLCorrelation = &r
			}
		}
	}
	if rho, pairs := pooledSpearman(baseGroups); pairs >= minLevelValues {
		p.TTFTITLCorrelation = math.Round(rho*1000) / 1000
		rep.Sources["ttft_itl_correlation"] = fmt.Sprintf("Spearman rank correlation of TTFT and per-request ITL over %d requests with both%s (within each concurrency, and within each chain for chain calls; averaged by count)", pairs, at)
	}
	if len(outputs) > 0 {
		p.OutputTokens = categorical(outputs)
		rep.Sources["output_tokens"] = fmt.Sprintf("answer tokens (completion less reasoning) of %d successes, as observed (capped by their max_tokens)", len(outputs))
	}
	if slices.Max(append(reasoning, 0)) > 0 {
		if len(levels) > 0 && len(reasoningAt[levels[0]]) > 0 {
			// By load level, as TTFT and ITL: the share that reasons to
			// the cap (an empty answer) moved with load in the study.
			reasoning = reasoningAt[levels[0]]
			for i := range p.Load {
				if rs := reasoningAt[p.Load[i].InFlight]; len(rs) > 0 {
					p.Load[i].ReasoningTokens = categorical(rs)
				}
			}
		}
		p.ReasoningTokens = categorical(reasoning)
		rep.Sources["reasoning_tokens"] = fmt.Sprintf("reasoning tokens of %d streamed requests%s (usage; an empty answer counts all its tokens as reasoning)", len(reasoning), at)
	}
	if stalled > 0 {
		st := fakeprovider.Stall{Probability: float64(stalled) / float64(len(ts)), AfterToken: mode(stallAt)}
		if len(stalls) == 1 {
			st.Duration = fakeprovider.Fixed(stalls[0].Round(time.Microsecond))
		} else {
			st.Duration = fakeprovider.Interpolated(roundAll(stalls)...)
		}
		how := "one silence over 1 s and 20x their median gap (with no gaps recorded: a decode over 1 s longer and 10x slower than the median ITL gives); length is the excess over the median pace"
		if len(levels) == 0 {
			p.Stall = st
			rep.Sources["stall"] = fmt.Sprintf("%d of %d streamed requests had %s", stalled, len(ts), how)
		} else {
			// By load level: stalls seen at one concurrency only are
			// served at that load only. Lengths and position are pooled.
			var desc []string
			rate := func(c int) float64 { return float64(stalledAt[c]) / float64(streamedAt[c]) }
			for _, c := range levels {
				desc = append(desc, fmt.Sprintf("%d of %d at concurrency %d", stalledAt[c], streamedAt[c], c))
			}
			if r := rate(levels[0]); r > 0 {
				p.Stall = st
				p.Stall.Probability = r
			}
			for i := range p.Load {
				ls := st
				ls.Probability = rate(p.Load[i].InFlight)
				p.Load[i].Stall = &ls
			}
			rep.Sources["stall"] = fmt.Sprintf("by load level (the load levels carry their own): %s streamed requests had %s; %d lengths pooled over the levels", strings.Join(desc, ", "), how, len(stalls))
			rep.Sources["load"] += "; stall probability per level from that concurrency's streamed requests (" + strings.Join(desc, ", ") + ")"
		}
	}
	fitFaults(&p, recs, &rep, n, levels)
	if maxConc := slices.MaxFunc(recs, func(a, b latencytest.Record) int { return cmp.Compare(a.Concurrency, b.Concurrency) }).Concurrency; maxConc > 0 {
		p.SlotsPerReplica = max(32, maxConc)
	} else {
		p.SlotsPerReplica = 32
	}
	rep.Sources["slots_per_replica"] = "room for every request at the records' concurrency: nothing queues (load shows in the load levels, not in a queue)"
	rep.Notes = append(rep.Notes, "cold starts are not fitted as cold_start (that needs idle times); slow first tokens stay in the TTFT distribution")
	if len(levels) == 0 && len(ttftAt) > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("no load levels: fewer than %d first tokens at some concurrency; TTFT and ITL are pooled over every concurrency in the records", minLevelValues))
	}
	if o.tail {
		addTails(&p, &rep)
	}
	p, err := fitInSize(p, &rep)
	if err != nil {
		return fakeprovider.Profile{}, rep, err
	}
	if err := p.Validate(); err != nil {
		return fakeprovider.Profile{}, rep, fmt.Errorf("fit: the fitted profile is invalid: %w", err)
	}
	cmpRep, err := Compare(p, records, opts...)
	if err != nil {
		return p, rep, err
	}
	rep.Stats, rep.Tests = cmpRep.Stats, cmpRep.Tests
	return p, rep, nil
}

// withinChains pairs each chain call's log TTFT (prefill removed) and log
// ITL (norm applied), each less its chain's mean, for chains of 3 or more
// calls with both.
func withinChains(ts []timing, curve curveFit, norm func(timing, time.Duration) time.Duration) [][2]float64 {
	byChain := map[string][][2]float64{}
	for _, t := range ts {
		if t.chain == "" || t.ttft < 0 || t.itl <= 0 {
			continue
		}
		base := max(curve.base(t), 1)
		byChain[t.chain] = append(byChain[t.chain], [2]float64{math.Log(float64(base)), math.Log(float64(norm(t, t.itl)))})
	}
	var out [][2]float64
	for _, k := range slices.Sorted(maps.Keys(byChain)) {
		cs := byChain[k]
		if len(cs) < 3 {
			continue
		}
		var m0, m1 float64
		for _, c := range cs {
			m0 += c[0] / float64(len(cs))
			m1 += c[1] / float64(len(cs))
		}
		for _, c := range cs {
			out = append(out, [2]float64{c[0] - m0, c[1] - m1})
		}
	}
	return out
}

// pooledSpearman is the Spearman rank correlation within each group,
// averaged weighted by the group's size, and the pairs it used; groups
// under 3 pairs are left out.
func pooledSpearman(groups map[int][][2]float64) (rho float64, pairs int) {
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		if len(g) < 3 {
			continue
		}
		xs, ys := make([]float64, len(g)), make([]float64, len(g))
		for i, pr := range g {
			xs[i], ys[i] = pr[0], pr[1]
		}
		if r := stats.Spearman(xs, ys); !math.IsNaN(r) {
			rho += r * float64(len(g))
			pairs += len(g)
		}
	}
	if pairs == 0 {
		return 0, 0
	}
	return min(max(rho/float64(pairs), -0.99), 0.99), pairs
}

// minLevelValues is the fewest first tokens a concurrency needs to be
// fitted as a load level of its own.
const minLevelValues = 20

// loadLevels lists the records' concurrencies, lowest first, when there
// are two or more and each has minLevelValues first tokens; nil otherwise
// (one pooled level).
func loadLevels(ttftAt map[int][]time.Duration) []int {
	if len(ttftAt) < 2 {
		return nil
	}
	cs := slices.Sorted(maps.Keys(ttftAt))
	for _, c := range cs {
		if len(ttftAt[c]) < minLevelValues {
			return nil
		}
	}
	return cs
}

// fitFaults sets the fault rates from the error classes.
// With load levels, the profile's rates are the lowest concurrency's and
// each level gets its own (LoadLevel.Faults), from the requests at its
// concurrency.
func fitFaults(p *fakeprovider.Profile, recs []latencytest.Record, rep *FitReport, n int, levels []int) {
	counts := map[string]int{}
	countsAt := map[int]map[string]int{}
	nAt := map[int]int{}
	for _, r := range recs {
		c := max(r.Concurrency, 1)
		nAt[c]++
		if countsAt[c] == nil {
			countsAt[c] = map[string]int{}
		}
		if !r.OK() {
			counts[r.Err]++
			countsAt[c][r.Err]++
		}
	}
	modelled := []struct{ key, class string }{
		{"http_529", "http_529"}, {"http_429", "http_429"}, {"http_500", "http_500"}, {"http_503", "http_503"},
		{"empty", latencytest.ClassEmptyStream}, {"disconnect", latencytest.ClassTruncated}, {"error_event", latencytest.ClassBadStream},
	}
	fill := func(f *fakeprovider.Faults, counts map[string]int, n int) {
		v := map[string]*float64{"http_529": &f.HTTP529, "http_429": &f.HTTP429, "http_500": &f.HTTP500, "http_503": &f.HTTP503,
			"empty": &f.Empty, "disconnect": &f.Disconnect, "error_event": &f.ErrorEvent}
		for _, m := range modelled {
			if counts[m.class] > 0 {
				*v[m.key] = float64(counts[m.class]) / float64(n)
			}
		}
	}
	seen := false
	for _, m := range modelled {
		seen = seen || counts[m.class] > 0
	}
	if len(levels) == 0 || !seen {
		fill(&p.Faults, counts, n)
	} else {
		fill(&p.Faults, countsAt[levels[0]], nAt[levels[0]])
		for i := range p.Load {
			c := p.Load[i].InFlight
			lf := fakeprovider.Faults{}
			fill(&lf, countsAt[c], nAt[c])
			p.Load[i].Faults = &lf
		}
		rep.Sources["load"] += "; fault rates per level from that concurrency's requests"
	}
	for _, m := range modelled {
		if counts[m.class] == 0 {
			continue
		}
		src := fmt.Sprintf("%d of %d requests failed with %s", counts[m.class], n, m.class)
		if len(levels) > 0 {
			var by []string
			for _, c := range levels {
				by = append(by, fmt.Sprintf("%d of %d at concurrency %d", countsAt[c][m.class], nAt[c], c))
			}
			src += " (by load level, each level its own rate: " + strings.Join(by, ", ") + ")"
		}
		rep.Sources["faults."+m.key] = src
	}
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		switch c {
		case "http_529", "http_429", "http_500", "http_503", latencytest.ClassEmptyStream,
			latencytest.ClassTruncated, latencytest.ClassBadStream, latencytest.ClassEmptyAnswer:
		default:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d requests failed with %s: not modelled", counts[c], c))
		}
	}
}

// iccFit is a one-way ANOVA of log call totals by chain.
type iccFit struct {
	icc, between, within, grand float64
	chainMean                   map[string]float64
	chainN                      map[string]int
}

// chainICC estimates the intraclass correlation of log call totals
// (stalled calls left out) over chains of at least 2 calls: (MSB - MSW) /
// (MSB + (k0-1) MSW), k0 the unbalanced-design group size.
func chainICC(ts []timing) (f iccFit, chains, calls int) {
	groups := map[string][]float64{}
	for _, t := range ts {
		if t.chain != "" && t.stall == 0 && t.rec.Total > 0 {
			groups[t.chain] = append(groups[t.chain], math.Log(float64(t.rec.Total)))
		}
	}
	f.chainMean, f.chainN = map[string]float64{}, map[string]int{}
	var all []float64
	keys := slices.Sorted(maps.Keys(groups)) // sums in one order: the fit is the same every run
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		f.chainMean[k], f.chainN[k] = mean(g), len(g)
		all = append(all, g...)
	}
	a := len(f.chainMean)
	N := len(all)
	if a < 2 {
		return f, a, N
	}
	f.grand = mean(all)
	var ssb, ssw, sumN2 float64
	for _, k := range keys {
		g := groups[k]
		m, ok := f.chainMean[k]
		if !ok {
			continue
		}
		ssb += float64(len(g)) * (m - f.grand) * (m - f.grand)
		for _, x := range g {
			ssw += (x - m) * (x - m)
		}
		sumN2 += float64(len(g) * len(g))
	}
	msb, msw := ssb/float64(a-1), ssw/float64(N-a)
	k0 := (float64(N) - sumN2/float64(N)) / float64(a-1)
	f.within = msw
	f.between = max(0, (msb-msw)/k0)
	if msb+(k0-1)*msw > 0 {
		f.icc = (msb - msw) / (msb + (k0-1)*msw)
	}
	return f, a, N
}

func measured(recs []latencytest.Record) []latencytest.Record {
	out := make([]latencytest.Record, 0, len(recs))
	for _, r := range recs {
		if !r.Warmup {
			out = append(out, r)
		}
	}
	return out
}

// roundAll rounds to the microsecond: the profile stays short, and no
// measurement is finer.
func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Microsecond)
	}
	return out
}

func durFloats(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d)
	}
	return out
}

// quantile is the linear-interpolation quantile (R type 7) of xs, sorted
// into a copy; NaN when empty.
func quantile(xs []float64, q float64) float64 {
	return stats.Quantile(slices.Sorted(slices.Values(xs)), q)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// mode is the most frequent value (the smallest on a tie); the zero value
// (0, "") when empty.
func mode[T cmp.Ordered](xs []T) T {
	counts := map[T]int{}
	var best T
	bestN := 0
	for _, x := range xs {
		counts[x]++
	}
	for _, x := range slices.Sorted(maps.Keys(counts)) {
		if counts[x] > bestN {
			best, bestN = x, counts[x]
		}
	}
	return best
}
