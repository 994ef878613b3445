package fit_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
)

// bigRecords makes n synthetic streamed records, seeded: four
// concurrencies, every TTFT and ITL distinct to the microsecond, answers
// of 1 to 3000 tokens, and a fifth of them in chains of 10 calls.
func bigRecords(n int) []latencytest.Record {
	rng := rand.New(rand.NewPCG(17, 18))
	recs := make([]latencytest.Record, n)
	for i := range recs {
		ttft := time.Duration(100_000+rng.IntN(5_000_000)) * time.Microsecond / 1000 * 10
		itl := time.Duration(5_000+rng.IntN(50_000)) * time.Microsecond / 1000
		tokens := 1 + rng.IntN(3000)
		id := fmt.Sprintf("r%06d", i)
		if i%5 == 0 {
			id = fmt.Sprintf("chain%06d-call%02d", i/50, i/5%10)
		}
		recs[i] = latencytest.Record{ID: id, Concurrency: []int{1, 4, 16, 64}[i%4], PromptTokens: 50, MaxTokens: 4000,
			TTFT: ttft, FirstAnswer: ttft, LastToken: ttft + time.Duration(tokens-1)*itl, Total: ttft + time.Duration(tokens)*itl,
			TokenEvents: tokens, CompletionTokens: tokens, UsageReported: true, Status: 200}
	}
	return recs
}

// Fit writes a profile that its own loader reads back, whatever the
// number of records: at 200,000 (4 load levels, 3000 distinct answer
// lengths, 4,000 chains) the values it would keep come to several MiB,
// above the loader's 1 MiB limit. The kept quantile points still give the
// records' quantiles.
func TestFitWritesALoadableProfileAtAnySize(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 60_000 // already above the limit without the cap
	}
	recs := bigRecords(n)
	p, rep, err := fit.Fit(recs, fit.WithDraws(500))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fit.WriteProfile(&buf, p, rep); err != nil {
		t.Fatal(err)
	}
	back, err := fakeprovider.ParseProfile(buf.Bytes())
	if err != nil {
		t.Fatalf("%d records: the written profile (%d bytes) does not load: %v", n, buf.Len(), err)
	}
	t.Logf("%d records: profile of %d bytes, %d TTFT points, %d output-token parts, %d load levels",
		n, buf.Len(), len(back.TTFT.Values), len(back.OutputTokens.Parts)+len(back.OutputTokens.Values), len(back.Load))
	// The fitted TTFT's quantiles are the records' (concurrency 1).
	var ttfts []time.Duration
	for _, r := range recs {
		if r.Concurrency == 1 {
			ttfts = append(ttfts, r.TTFT.Round(time.Microsecond))
		}
	}
	slices.Sort(ttfts)
	for _, q := range []float64{0.5, 0.99, 0.999} {
		want := ttfts[int(q*float64(len(ttfts)-1))]
		got := interpolate(back.TTFT.Values, q)
		if d := got - want; d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("TTFT p%v: fitted %v, records %v", q*100, got, want)
		}
	}
}

// interpolate is the linear-interpolation quantile of sorted values, as
// an interpolated empirical distribution draws them.
func interpolate(v []time.Duration, q float64) time.Duration {
	h := q * float64(len(v)-1)
	i := int(h)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + time.Duration(float64(v[i+1]-v[i])*(h-float64(i)))
}
