package fit

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Replay draws records from p shaped like recs: single requests for the
// records outside chains and chains for the chain calls (chains of the
// records' most common length, each call with the median prompt size of
// its position), in the same proportion, about draws requests in all.
// Prompt sizes, classes and max_tokens cycle through the records' (a
// record's usage prompt_tokens is the fake's count of characters/4 unless
// p.Prefill says how the engine counted them: see
// fakeprovider.Prefill.FakeTokens). Each replayed
// request is what a quiet fake serves for its trace ID ("replay-000017",
// "replay00003-call04"; see fakeprovider.Predictor): no queueing, cold
// start from idle time or cache hit; a single request is predicted at its
// record's concurrency in flight (fakeprovider.Predictor.PredictAt), so
// load levels apply as a closed loop at that concurrency meets them.
// When the records hold inter-token gaps, so do the replayed records
// (fakeprovider.Predictor.PredictGaps), and stalls are found in both the
// same way. Warm-up records are left out.
func Replay(p fakeprovider.Profile, recs []latencytest.Record, draws int) ([]latencytest.Record, error) {
	pr, err := fakeprovider.NewPredictor(p)
	if err != nil {
		return nil, err
	}
	recs = measured(recs)
	if len(recs) == 0 || draws < 1 {
		return nil, nil
	}
	var single []latencytest.Record
	byChain := map[string][]latencytest.Record{}
	for _, r := range recs {
		if k, ok := fakeprovider.ChainKey(r.ID); ok {
			byChain[k] = append(byChain[k], r)
		} else {
			single = append(single, r)
		}
	}
	// Gaps are replayed when the records have them, so that stalls are
	// found in the replay as they are in the records (timings).
	withGaps := slices.ContainsFunc(recs, func(r latencytest.Record) bool { return r.Gaps.Len() > 0 })
	predict := func(id string, prompt, maxTokens, inFlight int) latencytest.Record {
		if p.Prefill.IsSet() && prompt > 0 {
			prompt = p.Prefill.FakeTokens(prompt)
		}
		pd, gaps := pr.PredictGaps(id, prompt, maxTokens, inFlight)
		r := toRecord(id, pd, inFlight)
		if withGaps && pd.Status == 200 {
			for _, g := range gaps {
				r.Gaps.Add(g)
			}
		}
		return r
	}
	var out []latencytest.Record
	nSingle := draws * len(single) / len(recs)
	for i := range nSingle {
		src := single[i%len(single)]
		r := predict(fmt.Sprintf("replay-%06d", i), src.PromptTokens, src.MaxTokens, src.Concurrency)
		r.PromptClass = src.PromptClass
		out = append(out, r)
	}
	if len(byChain) == 0 {
		return out, nil
	}
	var lengths []int
	prompts := map[int][]float64{}
	maxTokens := map[int][]float64{}
	for _, calls := range byChain {
		lengths = append(lengths, len(calls))
		slices.SortFunc(calls, func(a, b latencytest.Record) int { return cmp.Compare(a.Call, b.Call) })
		for k, c := range calls {
			prompts[k] = append(prompts[k], float64(c.PromptTokens))
			maxTokens[k] = append(maxTokens[k], float64(c.MaxTokens))
		}
	}
	L := mode(lengths)
	nCalls := draws - nSingle
	for j := range max(1, nCalls/L) {
		for k := range L {
			id := fmt.Sprintf("replay%05d-call%02d", j, k)
			r := predict(id, int(quantile(prompts[k], 0.5)), int(quantile(maxTokens[k], 0.5)), 1)
			r.Chain, r.Call = j, k
			out = append(out, r)
		}
	}
	return out, nil
}

// toRecord is a prediction as a client would record it.
func toRecord(id string, pd fakeprovider.Prediction, concurrency int) latencytest.Record {
	r := latencytest.Record{ID: id, Concurrency: concurrency, Status: pd.Status, TTFT: pd.TTFT, FirstAnswer: pd.FirstAnswer,
		Total: pd.Total, LastToken: pd.Total, CompletionTokens: pd.Tokens, ReasoningTokens: pd.ReasoningTokens,
		TokenEvents: pd.Tokens, UsageReported: pd.Status == 200, FinishReason: pd.Finish, Injected: pd.Fault}
	switch {
	case pd.Status != 200:
		r.Err = latencytest.HTTPClass(pd.Status)
		r.TTFT, r.FirstAnswer, r.UsageReported = latencytest.NotObserved, latencytest.NotObserved, false
	case pd.Finish == "" && pd.Fault != "":
		r.Err = latencytest.ClassTruncated
		for _, f := range []string{fakeprovider.FaultMalformed, fakeprovider.FaultErrorEvent} {
			if containsFault(pd.Fault, f) {
				r.Err = latencytest.ClassBadStream
			}
		}
	case pd.Tokens == 0:
		r.Err = latencytest.ClassEmptyStream
	case pd.FirstAnswer < 0:
		r.Err = latencytest.ClassEmptyAnswer
	}
	return r
}

func containsFault(list, f string) bool {
	return slices.Contains(splitPlus(list), f)
}

func splitPlus(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '+' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// Compare replays p (see Replay) and compares it with recs: TTFT, first
// answer and total p50 / p95 / p99 (successes; total also counts empty
// answers, which stream to the cap), chain totals (chains whose calls all
// streamed), error rates by class, the stall share and the ICC of log
// call totals, each next to the replay's; and a two-sample KS test per
// distribution. It fails when p is invalid.
func Compare(p fakeprovider.Profile, recs []latencytest.Record, opts ...Option) (FitReport, error) {
	o := collect(opts)
	p.Seed = o.seed
	recs = measured(recs)
	rep := FitReport{Records: len(recs)}
	rp, err := Replay(p, recs, o.draws)
	if err != nil {
		return rep, fmt.Errorf("fit: %w", err)
	}
	type dist struct {
		name string
		get  func([]latencytest.Record) []float64
	}
	for _, d := range []dist{
		{"ttft", func(rs []latencytest.Record) []float64 { return pick(rs, isOK, ttftOf) }},
		{"first_answer", func(rs []latencytest.Record) []float64 {
			return pick(rs, isOK, func(r latencytest.Record) time.Duration { return r.FirstAnswer })
		}},
		{"total", func(rs []latencytest.Record) []float64 {
			return pick(rs, func(r latencytest.Record) bool { return streamed(&r) }, func(r latencytest.Record) time.Duration { return r.Total })
		}},
		{"chain_total", chainTotals},
	} {
		a, b := d.get(recs), d.get(rp)
		if len(a) == 0 {
			continue
		}
		for _, q := range []float64{0.5, 0.95, 0.99} {
			rep.Stats = append(rep.Stats, Stat{Name: fmt.Sprintf("%s p%s", d.name, strconv.Itoa(int(math.Round(q*100)))),
				Records: quantile(a, q), Replay: quantile(b, q), Unit: "duration", N: len(a)})
		}
		rep.Tests = append(rep.Tests, Test{Name: d.name, KS: KolmogorovSmirnov(a, b)})
	}
	rep.Tests = append(rep.Tests, classTests(recs, rp)...)
	classes := map[string]bool{}
	for _, rs := range [][]latencytest.Record{recs, rp} {
		for _, r := range rs {
			if !r.OK() {
				classes[r.Err] = true
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(classes)) {
		rep.Stats = append(rep.Stats, Stat{Name: "error rate " + c, Records: share(recs, c), Replay: share(rp, c), Unit: "fraction", N: len(recs)})
	}
	rt, pt := timings(recs), timings(rp)
	rep.Stats = append(rep.Stats, Stat{Name: "stall share", Records: stallShare(rt), Replay: stallShare(pt), Unit: "fraction", N: len(rt)})
	if ri, n, _ := chainICC(rt); n >= 2 {
		pi, _, _ := chainICC(pt)
		rep.Stats = append(rep.Stats, Stat{Name: "chain ICC of log call totals", Records: ri.icc, Replay: pi.icc, Unit: "fraction", N: n})
	}
	return rep, nil
}

func ttftOf(r latencytest.Record) time.Duration {
	if r.TTFT >= 0 {
		return r.TTFT
	}
	return r.FirstAnswer
}

func pick(rs []latencytest.Record, keep func(latencytest.Record) bool, get func(latencytest.Record) time.Duration) []float64 {
	var out []float64
	for _, r := range rs {
		if v := get(r); keep(r) && v >= 0 && !r.TokensUnobserved() {
			out = append(out, float64(v))
		}
	}
	return out
}

// chainTotals sums the totals of each chain's calls, for chains whose
// calls all streamed (the study's chain totals exceed that sum by at most
// 1.3 ms).
func chainTotals(rs []latencytest.Record) []float64 {
	sums := map[string]float64{}
	bad := map[string]bool{}
	for _, r := range rs {
		k, ok := fakeprovider.ChainKey(r.ID)
		if !ok {
			continue
		}
		if !streamed(&r) {
			bad[k] = true
		}
		sums[k] += float64(r.Total)
	}
	var out []float64
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		if !bad[k] {
			out = append(out, sums[k])
		}
	}
	return out
}

func share(rs []latencytest.Record, class string) float64 {
	if len(rs) == 0 {
		return math.NaN()
	}
	n := 0
	for _, r := range rs {
		if r.Err == class {
			n++
		}
	}
	return float64(n) / float64(len(rs))
}

func stallShare(ts []timing) float64 {
	if len(ts) == 0 {
		return math.NaN()
	}
	n := 0
	for _, t := range ts {
		if t.stall > 0 {
			n++
		}
	}
	return float64(n) / float64(len(ts))
}

func isOK(r latencytest.Record) bool { return r.OK() }

// minClassTTFTs is the fewest first tokens of a prompt class that get a
// KS test of their own.
const minClassTTFTs = 20

// classTests are the KS tests of TTFT per prompt class ("ttft short"),
// outside chains, when the records have two or more classes with
// minClassTTFTs first tokens each: a prefill that fits the pooled TTFT
// can still serve each class wrong.
func classTests(recs, rp []latencytest.Record) []Test {
	byClass := func(rs []latencytest.Record) map[string][]float64 {
		out := map[string][]float64{}
		for _, r := range rs {
			if _, chain := fakeprovider.ChainKey(r.ID); chain || r.PromptClass == "" || !r.OK() || r.TokensUnobserved() {
				continue
			}
			if v := ttftOf(r); v >= 0 {
				out[r.PromptClass] = append(out[r.PromptClass], float64(v))
			}
		}
		return out
	}
	a, b := byClass(recs), byClass(rp)
	var names []string
	for _, name := range slices.Sorted(maps.Keys(a)) {
		if len(a[name]) >= minClassTTFTs && len(b[name]) > 0 {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		return nil
	}
	var out []Test
	for _, name := range names {
		out = append(out, Test{Name: "ttft " + name, KS: KolmogorovSmirnov(a[name], b[name])})
	}
	return out
}
