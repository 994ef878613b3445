package fakeprovider_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// toolChains runs n chains of two calls (one tool step each) against a
// fake whose profile states toolLatency, with Fake.Tool as the tool step,
// and returns each chain's ToolTime in chain order.
func toolChains(t *testing.T, seed uint64, toolLatency fakeprovider.Dist[time.Duration], n, concurrency int) []time.Duration {
	t.Helper()
	var out []time.Duration
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{Seed: seed, TTFT: fakeprovider.Fixed(50 * time.Millisecond),
			ITL: fakeprovider.Fixed(time.Millisecond), OutputTokens: fakeprovider.Fixed(4), ToolLatency: toolLatency})
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(f.Profile().Model))
		cr, err := latencytest.Chain{Chains: n, Length: 2, Concurrency: concurrency, Tool: f.Tool,
			Load: latencytest.Load{Shard: latencytest.Shard{Count: 1}}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(cr.Chains) != n {
			t.Fatalf("%d chains ran, want %d", len(cr.Chains), n)
		}
		for i, ch := range cr.Chains {
			if !ch.OK() || ch.ToolSteps != 1 {
				t.Fatalf("chain %d: err %q, %d tool steps", i, ch.Err, ch.ToolSteps)
			}
			out = append(out, ch.ToolTime)
		}
	})
	return out
}

// orderCI is the ranks (from 0) of the sorted sample of n whose values
// bound the true q-quantile with probability at least 1-alpha, whatever
// the distribution: X(l) <= x_q <= X(u) fails only when fewer than l+1
// or at least u+1 of the n draws fall at or below x_q.
func orderCI(n int, q, alpha float64) (l, u int) {
	l, u = 0, n-1
	for k := 0; k < n; k++ {
		if stats.BinomCDF(k, n, q) <= alpha/2 {
			l = k + 1
		}
	}
	for k := n - 1; k >= 0; k-- {
		if stats.BinomCDF(k, n, q) >= 1-alpha/2 {
			u = k
		}
	}
	return l, u
}

// TestChainToolTimeFollowsProfile: a chain run with Fake.Tool spends, per
// tool step, exactly the draw ToolSteps gives for (seed, chain, call),
// whatever the concurrency; over 20 seeds of 200 chains the ToolTimes'
// p50 and p90 bound the profile's lognormal quantiles in distribution-free
// 99% intervals (expected misses 0.4 of 40; at most 2 allowed, a chance of
// 0.8% with independent draws), and their mean is the distribution's
// mean (Expected) within 4 standard errors.
func TestChainToolTimeFollowsProfile(t *testing.T) {
	d := fakeprovider.LogNormal(200*time.Millisecond, 2*time.Second)
	sigma := math.Log(10) / 2.3263478740408408
	want := map[float64]float64{0.5: 200e6, 0.9: 200e6 * math.Exp(sigma*1.2815515655446004)}
	seeds, n := 20, 200
	if testing.Short() {
		seeds = 5
	}
	misses, checks := 0, 0
	var all []float64
	for seed := range uint64(seeds) {
		steps := fakeprovider.ToolSteps{Latency: d, Seed: seed}
		got := toolChains(t, seed, d, n, 20)
		for i, tt := range got {
			if tt != steps.Draw(i, 0) {
				t.Fatalf("seed %d chain %d: ToolTime %v, want the draw %v exactly", seed, i, tt, steps.Draw(i, 0))
			}
			all = append(all, float64(tt))
		}
		if seed == 0 {
			if again := toolChains(t, seed, d, n, 1); !slices.Equal(again, got) {
				t.Fatal("concurrency 1 and 20 drew different tool times: the draws depend on the order chains run in")
			}
		}
		sorted := slices.Sorted(slices.Values(got))
		for q, x := range want {
			l, u := orderCI(n, q, 0.01)
			checks++
			if !(float64(sorted[l]) <= x && x <= float64(sorted[u])) {
				misses++
				t.Logf("seed %d: p%.0f interval [%v, %v] misses %v", seed, q*100, sorted[l], sorted[u], time.Duration(x))
			}
		}
	}
	t.Logf("quantile intervals missed: %d of %d (99%% intervals)", misses, checks)
	if misses > 2 {
		t.Errorf("%d of %d 99%% quantile intervals miss the profile's quantiles", misses, checks)
	}
	m, sd := meanSD(all)
	exp := float64(fakeprovider.ToolSteps{Latency: d}.Expected())
	se := sd / math.Sqrt(float64(len(all)))
	t.Logf("mean tool time %v, Expected %v, %.2f standard errors apart", time.Duration(m), time.Duration(exp), (m-exp)/se)
	if math.Abs(m-exp) > 4*se {
		t.Errorf("mean tool time %v is %.1f standard errors from Expected %v", time.Duration(m), math.Abs(m-exp)/se, time.Duration(exp))
	}
}

func meanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)-1))
}

// TestToolStepsExpected: Expected is each kind's mean: closed forms for
// fixed, uniform, lognormal and a mixture, and, for a normal clipped at
// zero and an interpolated empirical distribution, within 4 standard
// errors of the mean of 200,000 draws.
func TestToolStepsExpected(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		d    fakeprovider.Dist[time.Duration]
		want time.Duration // 0: measure it
	}{
		{fakeprovider.Fixed(300 * ms), 300 * ms},
		{fakeprovider.Uniform(100*ms, 300*ms), 200 * ms},
		{fakeprovider.LogNormal(100*ms, 100*ms), 100 * ms},
		{fakeprovider.Mixture(fakeprovider.Weighted(0.25, fakeprovider.Fixed(400*ms)), fakeprovider.Weighted(0.75, fakeprovider.Uniform(0, 400*ms))), 250 * ms},
		{fakeprovider.Normal(50*ms, 100*ms), 0},
		{fakeprovider.Interpolated(10*ms, 20*ms, 200*ms, 50*ms), 0},
		{fakeprovider.Empirical(10*ms, 20*ms, 200*ms), 0},
		{fakeprovider.LogNormal(200*ms, 2*time.Second), 0},
	} {
		s := fakeprovider.ToolSteps{Latency: tc.d}
		got := s.Expected()
		if tc.want != 0 {
			if got != tc.want {
				t.Errorf("%v: Expected %v, want %v", tc.d, got, tc.want)
			}
			continue
		}
		r := rand.New(rand.NewPCG(1, 2))
		xs := make([]float64, 200000)
		for i := range xs {
			xs[i] = float64(tc.d.Sample(r))
		}
		m, sd := meanSD(xs)
		if se := sd / math.Sqrt(float64(len(xs))); math.Abs(float64(got)-m) > 4*se {
			t.Errorf("%v: Expected %v, draws' mean %v (%.1f standard errors)", tc.d, got, time.Duration(m), math.Abs(float64(got)-m)/se)
		}
	}
}

// TestToolStepsWait: an unset latency waits nothing, a wait ends early
// with ctx's error, and an invalid latency is refused by name.
func TestToolStepsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		if err := (fakeprovider.ToolSteps{}).Wait(context.Background(), 1, 2); err != nil || time.Since(t0) != 0 {
			t.Errorf("unset: %v after %v", err, time.Since(t0))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s := fakeprovider.ToolSteps{Latency: fakeprovider.Fixed(time.Minute)}
		if err := s.Wait(ctx, 0, 0); err != context.DeadlineExceeded || time.Since(t0) != time.Second {
			t.Errorf("canceled wait: %v after %v", err, time.Since(t0))
		}
	})
	err := fakeprovider.ToolSteps{Latency: fakeprovider.LogNormal(time.Second, time.Millisecond)}.Validate()
	if err == nil || err.Error() != "fakeprovider: tool steps: latency: lognormal p99 1ms is below the median 1s" {
		t.Errorf("Validate: %v", err)
	}
	if _, err := fakeprovider.ParseProfile([]byte("tool_latency: {dist: lognormal, median: 1s, p99: 1ms}\n")); err == nil {
		t.Error("ParseProfile took a lognormal p99 below its median")
	}
	p, err := fakeprovider.ParseProfile([]byte("tool_latency: {dist: lognormal, median: 200ms, p99: 2s}\n"))
	if err != nil || p.ToolLatency.String() != fakeprovider.LogNormal(200*time.Millisecond, 2*time.Second).String() {
		t.Errorf("tool_latency parsed to %v, %v", p.ToolLatency, err)
	}
}
