package latencytest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

const ms = time.Millisecond

// stallProfile is one replica with one slot: 50 ms to the first token,
// then 3 more tokens 10 ms apart (80 ms a request), and request ol-0020
// silent for 5 s after its first token.
func stallProfile() fakeprovider.Profile {
	prof := fixed(50*ms, 10*ms, 4)
	prof.Replicas, prof.SlotsPerReplica = 1, 1
	prof.Script = []fakeprovider.ScriptEntry{{ID: "ol-0020", Stall: &fakeprovider.ScriptStall{AfterToken: 1, Duration: 5 * time.Second}}}
	return prof
}

// queueModel is the arithmetic of stallProfile under arrivals every
// 100 ms: request k is due at k×100ms, starts when the slot frees (the
// previous one's end) or when due, and takes 80 ms (5.08 s for k=20).
// It returns each request's end, as an offset from the start.
func queueModel(n int) []time.Duration {
	ends := make([]time.Duration, n)
	free := time.Duration(0)
	for k := range n {
		service := 80 * ms
		if k == 20 {
			service = 5080 * ms // 50 ms, the 5 s stall, then 3 tokens at 10 ms
		}
		ends[k] = max(time.Duration(k)*100*ms, free) + service
		free = ends[k]
	}
	return ends
}

// The key test of open loops: an open loop at 10/s meets a 5 s stall of the
// single replica. Requests due during the stall carry their wait in
// FromSchedule, whether the provider queued them (unbounded in flight) or
// the client did (MaxInFlight 1); a closed loop on the same schedule
// hides the wait: its per-request totals are all 80 ms but one.
func TestOpenLoopStallShowsFromSchedule(t *testing.T) {
	const n = 300
	ends := queueModel(n)
	// Request 21 is due at 2.1 s and ends at 7.16 s: 5.06 s from its
	// schedule. The backlog drains 20 ms a request (80 ms of work every
	// 100 ms): request 269 is the last one to wait
	// (admitted when 268 ends, at 7.08 s + 248×80 ms = 26.92 s;
	// due at 26.9 s).
	if got := ends[21] - 2100*ms; got != 5060*ms {
		t.Fatalf("model: request 21 from schedule %v, want 5.06s", got)
	}
	waited := 0
	for k := 21; k < n; k++ {
		if ends[k]-time.Duration(k)*100*ms > 80*ms {
			waited++
		}
	}
	if waited != 249 { // requests 21..269
		t.Fatalf("model: %d requests waited, want 249", waited)
	}

	for _, maxInFlight := range []int{0, 1} {
		t.Run(fmt.Sprintf("max_in_flight=%d", maxInFlight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, p := fake(t, stallProfile())
				r, err := latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: n, MaxInFlight: maxInFlight, Load: latencytest.Load{MaxTokens: 4}}.Run(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				if c := r.Counts(); c.Sent != n || c.Kept != n {
					t.Fatalf("counts %+v", c)
				}
				fs := r.FromSchedule()
				late := 0
				for k, rec := range r.Records {
					due := time.Duration(k) * 100 * ms
					want := ends[k] - due
					if rec.ID != fmt.Sprintf("ol-%04d", k) || rec.Scheduled != due || rec.FromSchedule != want || fs[k] != want {
						t.Fatalf("%s: scheduled %v, from schedule %v (sample %v), want %v", rec.ID, rec.Scheduled, rec.FromSchedule, fs[k], want)
					}
					if maxInFlight == 1 {
						// The client waited for its one slot: the request
						// itself took 80 ms, and the wait is StartDelay.
						if k != 20 && (rec.Total != 80*ms || rec.StartDelay != want-80*ms) {
							t.Fatalf("%s: total %v start delay %v, want 80ms and %v", rec.ID, rec.Total, rec.StartDelay, want-80*ms)
						}
					} else if rec.StartDelay != 0 || rec.Total != want {
						// Sent on time; the provider queued it.
						t.Fatalf("%s: start delay %v total %v, want 0 and %v", rec.ID, rec.StartDelay, rec.Total, want)
					}
					if rec.StartDelay > 0 {
						late++
					}
				}
				// p99 from the schedule: rank 0.99×299 = 296.01 of the
				// sorted sample, still in the backlog: far above 80 ms.
				if q := fs.Quantile(0.99); q < 4*time.Second {
					t.Errorf("from schedule p99 %v: the stall is hidden", q)
				}
				if q := r.TTFTFromSchedule()[21]; q != 5060*ms-30*ms {
					t.Errorf("ol-0021 TTFT from schedule %v, want 5.03s", q)
				}
				gotLate, gotMax := r.Lag()
				box := r.Disclosure.Box(13).Answer
				if maxInFlight == 1 {
					// Request 21 is the latest: due 2.1 s, started 7.08 s.
					if gotLate != waited || gotMax != 4980*ms || late != waited {
						t.Errorf("lag %d, %v; want %d, 4.98s", gotLate, gotMax, waited)
					}
					if want := fmt.Sprintf("fell behind its schedule: %d of %d requests started late, by up to 4.98s (MaxInFlight 1 full for", waited, n); !strings.Contains(box, want) {
						t.Errorf("box 13 %q, want %q", box, want)
					}
				} else if gotLate != 0 || gotMax != 0 || !strings.Contains(box, "kept its schedule") {
					t.Errorf("lag %d, %v; box 13 %q", gotLate, gotMax, box)
				}
			})
		})
	}

	t.Run("closed loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, p := fake(t, stallProfile())
			r, err := latencytest.Batch{NoWarmup: true, Requests: n, Concurrency: 1, Interval: 100 * ms, Load: latencytest.Load{MaxTokens: 4, Label: "ol"}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			for k, rec := range r.Records {
				want := 80 * ms
				if k == 20 {
					want = 5080 * ms
				}
				if rec.Total != want {
					t.Fatalf("%s: total %v, want %v", rec.ID, rec.Total, want)
				}
			}
			// The same 249 requests waited, up to 4.98 s, but the closed
			// loop's figures show one slow request: p99 is 80 ms.
			if q := r.Total().Quantile(0.99); q != 80*ms {
				t.Errorf("closed-loop total p99 %v, want 80ms", q)
			}
			if started := r.Records[21].Start.Sub(r.Start); started != 7080*ms {
				t.Errorf("ol-0021 started at %v, want 7.08s", started)
			}
			// It has no schedule to be measured from: no false pass.
			if fs := r.FromSchedule(); fs.Failures() != n {
				t.Errorf("a closed loop's FromSchedule has %d failures of %d, want all", fs.Failures(), n)
			}
			if late, most := r.Lag(); late != 0 || most != 0 {
				t.Errorf("closed loop lag %d %v", late, most)
			}
		})
	})
}

// Constant arrivals start exactly on time: request i at i/Rate.
func TestOpenLoopConstantArrivalsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(100*ms, 10*ms, 8))
		r, err := latencytest.OpenLoop{Rate: 4, Arrivals: "constant", Requests: 12, Load: latencytest.Load{MaxTokens: 8, Label: "k"}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) != 12 || r.Planned != 12 || r.Partial {
			t.Fatalf("%d records, planned %d, partial %v", len(r.Records), r.Planned, r.Partial)
		}
		for i, rec := range r.Records {
			due := time.Duration(i) * 250 * ms
			// 100 ms to the first token, 7 more at 10 ms: 170 ms.
			if rec.ID != fmt.Sprintf("k-%04d", i) || !rec.OpenLoop || rec.Scheduled != due || rec.Start.Sub(r.Start) != due ||
				rec.StartDelay != 0 || rec.Total != 170*ms || rec.FromSchedule != 170*ms {
				t.Errorf("%s: open %v scheduled %v started %v delay %v total %v from schedule %v", rec.ID, rec.OpenLoop,
					rec.Scheduled, rec.Start.Sub(r.Start), rec.StartDelay, rec.Total, rec.FromSchedule)
			}
		}
		// The last is due at 11×250 ms and takes 170 ms.
		if d := r.End.Sub(r.Start); d != 2750*ms+170*ms {
			t.Errorf("run took %v, want 2.92s", d)
		}
		if box := r.Disclosure.Box(7).Answer; box != "open loop: constant arrivals at 4/s, at most 10000 in flight (the default safety cap)" {
			t.Errorf("box 7 %q", box)
		}
	})
}

// Poisson arrivals are deterministic: the same seed gives the same
// records to the nanosecond, another seed another schedule.
func TestOpenLoopDeterministic(t *testing.T) {
	run := func(seed uint64) *latencytest.Result {
		var r *latencytest.Result
		synctest.Test(t, func(t *testing.T) {
			prof := fixed(0, 0, 16)
			prof.TTFT = fakeprovider.LogNormal(200*ms, time.Second)
			prof.ITL = fakeprovider.LogNormal(10*ms, 50*ms)
			prof.Replicas, prof.SlotsPerReplica = 1, 4
			prof.Faults.HTTP529 = 0.02
			_, p := fake(t, prof)
			var err error
			r, err = latencytest.OpenLoop{Rate: 20, Requests: 200, MaxInFlight: 6, Load: latencytest.Load{MaxTokens: 16}, Seed: seed}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
		})
		return r
	}
	a, b, c := run(0), run(0), run(99)
	if !reflect.DeepEqual(a.Records, b.Records) {
		t.Errorf("the same seed gave different records")
	}
	if a.Records[1].Scheduled == c.Records[1].Scheduled {
		t.Errorf("seeds 0 and 99 gave the same schedule")
	}
	// The default seed is 7.
	if box := a.Disclosure.Box(7).Answer; box != "open loop: poisson arrivals at 20/s (seed 7), at most 6 in flight" {
		t.Errorf("box 7 %q", box)
	}
	// Arrivals are not evenly spaced, and 4 slots at 20/s fall behind now
	// and then.
	if late, most := a.Lag(); late == 0 || most <= 0 {
		t.Errorf("lag %d %v: expected some late starts", late, most)
	}
}

// Duration ends the run at the first arrival due at or after it;
// Requests caps it; whichever comes first wins.
func TestOpenLoopDurationCutoff(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    latencytest.OpenLoop
		want int
	}{
		{"duration only", latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Duration: time.Second}, 10}, // 0..900 ms; 1 s is out
		{"requests first", latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Duration: time.Second, Requests: 4}, 4},
		{"duration first", latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Duration: 550 * ms, Requests: 100}, 6},
		{"schedule cut by duration", latencytest.OpenLoop{Schedule: []time.Duration{0, ms, 2 * time.Second}, Duration: time.Second}, 2},
		{"poisson", latencytest.OpenLoop{Rate: 50, Duration: 3 * time.Second}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, p := fake(t, fixed(20*ms, ms, 2))
				tc.o.MaxTokens = 2
				r, err := tc.o.Run(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				if tc.want >= 0 && len(r.Records) != tc.want {
					t.Errorf("sent %d, want %d", len(r.Records), tc.want)
				}
				if r.Planned != len(r.Records) || r.Partial {
					t.Errorf("planned %d, sent %d, partial %v", r.Planned, len(r.Records), r.Partial)
				}
				for _, rec := range r.Records {
					if tc.o.Duration > 0 && rec.Scheduled >= tc.o.Duration {
						t.Errorf("%s due at %v, after the duration %v", rec.ID, rec.Scheduled, tc.o.Duration)
					}
				}
				if tc.want < 0 && (len(r.Records) < 100 || len(r.Records) > 200) { // about 150
					t.Errorf("poisson at 50/s for 3 s sent %d", len(r.Records))
				}
			})
		})
	}
}

// A schedule replays exact offsets; a trace replays its prompt sizes and
// caps too.
func TestOpenLoopScheduleReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(30*ms, ms, 500))
		sched := []time.Duration{0, 10 * ms, 10 * ms, 1500 * ms}
		r, err := latencytest.OpenLoop{Schedule: sched, Load: latencytest.Load{MaxTokens: 5, Label: "s"}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) != 4 {
			t.Fatalf("%d records", len(r.Records))
		}
		for i, rec := range r.Records {
			if rec.Scheduled != sched[i] || rec.Start.Sub(r.Start) != sched[i] || rec.StartDelay != 0 || rec.CompletionTokens != 5 {
				t.Errorf("%s: scheduled %v started %v delay %v tokens %d", rec.ID, rec.Scheduled, rec.Start.Sub(r.Start), rec.StartDelay, rec.CompletionTokens)
			}
		}
		if box := r.Disclosure.Box(7).Answer; !strings.HasPrefix(box, "open loop: a replayed schedule of 4 arrivals over 1.5s (2/s on average)") {
			t.Errorf("box 7 %q", box)
		}

		trace, err := latencytest.LoadSchedule(filepath.Join("testdata", "schedule.txt"))
		if err != nil {
			t.Fatal(err)
		}
		r, err = latencytest.OpenLoop{Replay: trace, Load: latencytest.Load{MaxTokens: 7, NoNonce: true}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) != len(trace) {
			t.Fatalf("%d records for %d arrivals", len(r.Records), len(trace))
		}
		for i, rec := range r.Records {
			a := trace[i]
			wantCap, wantPrompt, class := 7, 0, "replay"
			if a.MaxTokens > 0 {
				wantCap = a.MaxTokens
			}
			if a.PromptTokens > 0 {
				wantPrompt = a.PromptTokens // characters/4, no nonce
			} else {
				class = ""
			}
			if rec.Scheduled != a.At || rec.MaxTokens != wantCap || rec.CompletionTokens != wantCap ||
				(wantPrompt > 0 && rec.PromptTokens != wantPrompt) || (class != "" && rec.PromptClass != class) {
				t.Errorf("%s: scheduled %v cap %d completion %d prompt %d class %q; want %v, %d, %d, %q",
					rec.ID, rec.Scheduled, rec.MaxTokens, rec.CompletionTokens, rec.PromptTokens, rec.PromptClass, a.At, wantCap, wantPrompt, class)
			}
		}
		if box := r.Disclosure.Box(10).Answer; !strings.HasPrefix(box, "prompt sizes from the trace for") {
			t.Errorf("box 10 %q", box)
		}
	})
}

// Every request is counted: sent = kept + failed, and a failure is
// Failed from the schedule too.
func TestOpenLoopCountsEveryRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(40*ms, 5*ms, 4)
		prof.Script = []fakeprovider.ScriptEntry{{ID: "ol-0003", Status: 529}, {ID: "ol-0007", Fault: "disconnect", AfterToken: 2}}
		_, p := fake(t, prof)
		r, err := latencytest.OpenLoop{Rate: 5, Requests: 40, Load: latencytest.Load{MaxTokens: 4}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		c := r.Counts()
		if c.Planned != 40 || c.Sent != 40 || c.Kept+c.Failed != c.Sent || c.Failed != 2 || c.Discarded != 0 {
			t.Errorf("counts %+v", c)
		}
		fs, tf := r.FromSchedule(), r.TTFTFromSchedule()
		if fs.Len() != 40 || fs.Failures() != 2 || fs[3] != latencytest.Failed || tf[7] != latencytest.Failed {
			t.Errorf("from schedule: %d values, %d failures", fs.Len(), fs.Failures())
		}
		if got := r.Errors(); got["http_529"] != 1 || got["truncated"] != 1 {
			t.Errorf("errors %v", got)
		}
	})
}

// A deadline in ctx stops the sends in time: the result is Partial and
// says why, and what was sent is all there.
func TestOpenLoopDeadlinePartial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(100*ms, 10*ms, 4))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Due every 100 ms; each may take up to the 1 s hard cap, so the
		// last one sent is due at 4 s at the latest: 0..4 s is 41
		// requests.
		r, err := latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: 100, Load: latencytest.Load{HardCap: time.Second, MaxTokens: 4}}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		c := r.Counts()
		if !r.Partial || c.Planned != 100 || c.Sent != 41 || c.Kept != 41 {
			t.Errorf("partial %v, counts %+v", r.Partial, c)
		}
		if !strings.Contains(r.PartialReason, "sent 41 of 100 planned requests: the deadline leaves less than one request's limit (1s) after request 41 is due (4.1s after the start)") || !strings.Contains(r.Disclosure.Box(2).Answer, "PARTIAL") {
			t.Errorf("reason %q; box 2 %q", r.PartialReason, r.Disclosure.Box(2).Answer)
		}
		if now := time.Since(r.Start); now > 5*time.Second {
			t.Errorf("ran %v past a 5 s deadline", now)
		}
	})
	// A cancelled context stops it too.
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(100*ms, 10*ms, 4))
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(1050*ms, func() { cancel(errors.New("enough")) })
		r, err := latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: 100, Load: latencytest.Load{MaxTokens: 4}}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Partial || len(r.Records) != 11 || !strings.Contains(r.PartialReason, "enough") {
			t.Errorf("partial %v, %d records, reason %q", r.Partial, len(r.Records), r.PartialReason)
		}
	})
}

// An invalid configuration is an error naming the field.
func TestOpenLoopInvalid(t *testing.T) {
	hot := 3.0
	for _, tc := range []struct {
		name string
		o    latencytest.OpenLoop
		want string
	}{
		{"no rate", latencytest.OpenLoop{Requests: 10}, "rate 0"},
		{"negative rate", latencytest.OpenLoop{Rate: -1, Requests: 10}, "rate -1"},
		{"NaN rate", latencytest.OpenLoop{Rate: math.NaN(), Requests: 10}, "rate NaN"},
		{"infinite rate", latencytest.OpenLoop{Rate: math.Inf(1), Requests: 10}, "rate +Inf"},
		{"unknown arrivals", latencytest.OpenLoop{Rate: 1, Requests: 10, Arrivals: "uniform"}, `arrivals "uniform"`},
		{"no end", latencytest.OpenLoop{Rate: 1}, "requests and duration are both 0"},
		{"negative requests", latencytest.OpenLoop{Rate: 1, Requests: -1, Duration: time.Second}, "requests -1 < 0"},
		{"negative duration", latencytest.OpenLoop{Rate: 1, Requests: 1, Duration: -time.Second}, "duration -1s < 0"},
		{"negative max in flight", latencytest.OpenLoop{Rate: 1, Requests: 1, MaxInFlight: -2}, "max_in_flight -2 < 0"},
		{"negative offset", latencytest.OpenLoop{Schedule: []time.Duration{-ms}}, "schedule[0] -1ms < 0"},
		{"unsorted schedule", latencytest.OpenLoop{Schedule: []time.Duration{0, 2 * ms, ms}}, "schedule[2] 1ms is before schedule[1] 2ms"},
		{"empty schedule", latencytest.OpenLoop{Schedule: []time.Duration{}}, "schedule is empty"},
		{"rate with schedule", latencytest.OpenLoop{Rate: 5, Schedule: []time.Duration{0}}, "rate 5 is set with a schedule"},
		{"schedule and replay", latencytest.OpenLoop{Schedule: []time.Duration{0}, Replay: []latencytest.Arrival{{}}}, "schedule and replay are both set"},
		{"unsorted replay", latencytest.OpenLoop{Replay: []latencytest.Arrival{{At: ms}, {At: 0}}}, "replay[1]: at 0s is before"},
		{"negative replay tokens", latencytest.OpenLoop{Replay: []latencytest.Arrival{{PromptTokens: -1}}}, "replay[0]: prompt_tokens -1 < 0"},
		{"temperature", latencytest.OpenLoop{Rate: 1, Requests: 1, Load: latencytest.Load{Temperature: &hot}}, "temperature 3 outside [0,2]"},
		{"label", latencytest.OpenLoop{Rate: 1, Requests: 1, Load: latencytest.Load{Label: "a b"}}, `label "a b"`},
		{"negative max tokens", latencytest.OpenLoop{Rate: 1, Requests: 1, Load: latencytest.Load{MaxTokens: -1}}, "max_tokens -1 < 0"},
		{"too many", latencytest.OpenLoop{Rate: 1e4, Arrivals: "constant", Duration: time.Hour}, "plan more than 10000000 requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.Run(context.Background(), nil)
			if err == nil || !strings.HasPrefix(err.Error(), "latencytest: open loop: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// Measure writes the records with their schedule and logs the figures
// from the schedule.
func TestOpenLoopMeasure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, stallProfile())
		r := latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: 40, MaxInFlight: 1, Load: latencytest.Load{MaxTokens: 4}}.Measure(t, p)
		recs, err := latencytest.LoadRecords(filepath.Join(artifactDir(t), "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		back := &latencytest.Result{Records: recs}
		if !reflect.DeepEqual(back.FromSchedule(), r.FromSchedule()) || !reflect.DeepEqual(back.TTFTFromSchedule(), r.TTFTFromSchedule()) {
			t.Errorf("figures from the schedule differ when recomputed from records.jsonl")
		}
		l1, m1 := back.Lag()
		l2, m2 := r.Lag()
		if l1 != l2 || m1 != m2 || l1 == 0 {
			t.Errorf("lag read back %d %v, in memory %d %v", l1, m1, l2, m2)
		}
		if recs[21].Scheduled != 2100*ms || recs[21].StartDelay != 4980*ms || recs[21].FromSchedule != 5060*ms {
			t.Errorf("ol-0021 read back: %+v", recs[21])
		}
		// summary.json has the distributions from the schedule and the lag.
		var sum struct {
			FromSchedule struct {
				Max int64 `json:"max_ns"`
			} `json:"from_schedule"`
			TTFTFromSchedule struct {
				N int `json:"n"`
			} `json:"ttft_from_schedule"`
			LateStarts    int   `json:"late_starts"`
			MaxStartDelay int64 `json:"max_start_delay_ns"`
		}
		b, err := os.ReadFile(filepath.Join(artifactDir(t), "summary.json"))
		if err != nil || json.Unmarshal(b, &sum) != nil {
			t.Fatalf("summary.json: %v", err)
		}
		// ol-0020 stalls 5 s and ends at 7.08 s, 5.08 s after it was due.
		if sum.FromSchedule.Max != int64(5080*ms) || sum.TTFTFromSchedule.N != 40 || sum.LateStarts != l2 || sum.MaxStartDelay != int64(4980*ms) {
			t.Errorf("summary %+v", sum)
		}
		if s := r.Summarize().String(); !strings.Contains(s, "sched. total") {
			t.Errorf("the summary screen has no row from the schedule:\n%s", s)
		}
	})
}

// An open loop reuses its workers: requests that do not overlap all run
// on one goroutine, and requests that do run on at most MaxInFlight
// goroutines, each starting on time.
func TestOpenLoopReusesWorkers(t *testing.T) {
	for _, c := range []struct {
		took        time.Duration // each request's time (arrivals 100 ms apart)
		maxInFlight int
		want        int // goroutines at most
	}{{50 * ms, 0, 1}, {1000 * ms, 4, 4}} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]bool{}
			p := latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
				buf := make([]byte, 64)
				g := strings.Fields(string(buf[:runtime.Stack(buf, false)]))[1]
				mu.Lock()
				seen[g] = true
				mu.Unlock()
				time.Sleep(c.took)
				return nil
			})
			r, err := latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: 40, MaxInFlight: c.maxInFlight}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if cn := r.Counts(); cn.Kept != 40 || cn.Failed != 0 {
				t.Fatalf("counts %+v", cn)
			}
			if len(seen) > c.want || len(seen) == 0 {
				t.Errorf("requests of %v ran on %d goroutines, want at most %d", c.took, len(seen), c.want)
			}
			for i, rec := range r.Records {
				// Four in flight, each 1 s, one due every 100 ms: the
				// fifth waits for the first, and so on.
				want := time.Duration(0)
				if c.maxInFlight > 0 && i >= c.maxInFlight {
					want = time.Duration(i/c.maxInFlight)*c.took - time.Duration(i-i%c.maxInFlight)*100*ms
				}
				if rec.StartDelay != max(want, 0) || rec.Total != c.took {
					t.Errorf("%s: started %v late, took %v; want %v, %v", rec.ID, rec.StartDelay, rec.Total, max(want, 0), c.took)
				}
			}
		})
	}
}
