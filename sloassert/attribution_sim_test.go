package sloassert_test

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
	"github.com/tailguard/tailguard/sloassert"
)

// rankQuantile is the smallest value with at least the fraction q of
// the values at or below it: the order statistic a histogram's rank q·N
// picks, which its bucket bounds.
func rankQuantile(vs []time.Duration, q float64) time.Duration {
	s := slices.Clone(vs)
	slices.Sort(s)
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(k, 0)]
}

// TestAttributionLabelsHold: over seeded runs of random shapes (TTFT
// lognormal, 1-3 slots, 2-8 clients, 0-2s before the server), the part
// a failed TTFT p90 row names is, by the fake's own records, at least
// half the client's value: the label is never wrong, however coarse
// vLLM's buckets. The share of rows that name a part (rather than "no
// part known") is the price of the buckets' resolution.
func TestAttributionLabelsHold(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 20
	}
	labeled, wrong := map[string]int{}, 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 31))
		slots := 1 + r.IntN(3)
		clients := 2 + r.IntN(7)
		delay := []time.Duration{0, 0, 300 * time.Millisecond, 2 * time.Second}[r.IntN(4)]
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(fakeprovider.Profile{
				Seed:            uint64(seed),
				TTFT:            fakeprovider.LogNormal(200*time.Millisecond, time.Second),
				ITL:             fakeprovider.Fixed(10 * time.Millisecond),
				OutputTokens:    fakeprovider.Fixed(30),
				SlotsPerReplica: slots,
			})
			defer f.Close()
			client := &http.Client{Transport: delayed{next: f.Transport(), d: delay}}
			b := latencytest.Batch{Requests: 40, NoWarmup: true, Concurrency: clients,
				ServerMetrics: servermetrics.Source{URL: "http://fake/metrics", Client: f.Client(), Every: -1}}
			res, err := b.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(client)))
			if err != nil || res.ErrorRate() != 0 {
				t.Fatalf("seed %d: %v, error rate %v", seed, err, res.ErrorRate())
			}
			rep := sloassert.Evaluate(res, sloassert.Q(sloassert.TTFT, 0.9, time.Millisecond, sloassert.AllowSmallSample()))
			line := rep.Outcomes[0].Server
			label := line[strings.LastIndex(line, ": ")+2:]
			labeled[label]++
			clientQ := res.TTFT().Quantile(0.9)
			var queue, prefill, ttft []time.Duration
			for _, sv := range f.Served() {
				queue = append(queue, sv.Queued+sv.ColdStart)
				prefill = append(prefill, sv.TTFT-sv.Queued-sv.ColdStart)
				ttft = append(ttft, sv.TTFT)
			}
			var truth time.Duration
			switch label {
			case "queueing":
				truth = rankQuantile(queue, 0.9)
			case "prefill":
				truth = rankQuantile(prefill, 0.9)
			case "outside the server (client + network)":
				truth = clientQ - rankQuantile(ttft, 0.9)
			default:
				return
			}
			if 2*truth < clientQ {
				wrong++
				t.Errorf("seed %d (%d slots, %d clients, delay %s): %q, but the part is %s of %s: %s", seed, slots, clients, delay, label, truth, clientQ, line)
			}
		})
	}
	named := seeds - labeled["no part known to be half of it (at this bucket resolution)"]
	t.Logf("%d runs: %d name a part (%v), %d wrong", seeds, named, labeled, wrong)
}
