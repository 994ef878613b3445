package latencytest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// sleeper is a Func provider that sleeps 10ms and appends each trace ID
// it is called with to ids, in call order.
func sleeper(ids *[]string) latencytest.Provider {
	var mu sync.Mutex
	return latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
		mu.Lock()
		*ids = append(*ids, req.ID)
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		return nil
	})
}

// Every request of the whole run is sent exactly once across n shards,
// with the whole run's trace IDs and warm-up marks, and each shard sends
// its own in order: request i goes to shard i mod n.
func TestShardsSendEveryBatchRequestOnce(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		synctest.Test(t, func(t *testing.T) {
			b := latencytest.Batch{Requests: 23, Warmup: 5, Repeat: 2, Concurrency: 2 * n, Load: latencytest.Load{Label: "b"}}
			whole, err := b.Run(context.Background(), latencytest.Func(func(context.Context, latencytest.Request) error { return nil }))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{} // ID -> warm-up
			for _, rec := range whole.Records {
				want[rec.ID] = rec.Warmup
			}
			got := map[string]bool{}
			for i := range n {
				var calls []string
				b.Shard = latencytest.Shard{Index: i, Count: n}
				r, err := b.Run(context.Background(), sleeper(&calls))
				if err != nil {
					t.Fatal(err)
				}
				if r.Planned != len(r.Records) || len(calls) != len(r.Records) {
					t.Errorf("shard %d/%d: planned %d, sent %d, called %d", i, n, r.Planned, len(r.Records), len(calls))
				}
				for k, rec := range r.Records {
					if _, dup := got[rec.ID]; dup {
						t.Errorf("shard %d/%d sent %s again", i, n, rec.ID)
					}
					got[rec.ID] = rec.Warmup
					if rec.Concurrency != 2*n {
						t.Errorf("%s: concurrency %d, want the whole run's %d", rec.ID, rec.Concurrency, 2*n)
					}
					// "b-0007" or "b-r1-0007": index 7 of its run
					var idx int
					fmt.Sscanf(rec.ID[len(rec.ID)-4:], "%d", &idx)
					if idx%n != i {
						t.Errorf("shard %d/%d sent %s (index %d)", i, n, rec.ID, idx)
					}
					if k > 0 && rec.Run == r.Records[k-1].Run && idx <= mustIndex(r.Records[k-1].ID) {
						t.Errorf("shard %d/%d sent %s after %s", i, n, rec.ID, r.Records[k-1].ID)
					}
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d shards sent %d requests, the whole run %d", n, len(got), len(want))
			}
			for id, warm := range want {
				if g, ok := got[id]; !ok || g != warm {
					t.Errorf("%d shards: %s sent %v warm-up %v; whole run: warm-up %v", n, id, ok, g, warm)
				}
			}
		})
	}
}

func mustIndex(id string) int {
	var idx int
	fmt.Sscanf(id[len(id)-4:], "%d", &idx)
	return idx
}

// Whole chains go to shards: chain i to shard i mod n, every call of it.
func TestShardsRunEveryChainOnce(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		synctest.Test(t, func(t *testing.T) {
			c := latencytest.Chain{Chains: 11, Length: 3, Concurrency: n}
			var all []string
			whole, err := c.Run(context.Background(), sleeper(&all))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range n {
				var calls []string
				c.Shard = latencytest.Shard{Index: i, Count: n}
				cr, err := c.Run(context.Background(), sleeper(&calls))
				if err != nil {
					t.Fatal(err)
				}
				if cr.Planned != len(cr.Chains) || cr.Planned != (11-i+n-1)/n {
					t.Errorf("shard %d/%d: planned %d, ran %d", i, n, cr.Planned, len(cr.Chains))
				}
				for _, ch := range cr.Chains {
					var k int
					fmt.Sscanf(strings.TrimPrefix(ch.ID, "chain"), "%d", &k)
					if k%n != i || len(ch.Calls) != 3 {
						t.Errorf("shard %d/%d ran %s with %d calls", i, n, ch.ID, len(ch.Calls))
					}
				}
				got = append(got, calls...)
			}
			slices.Sort(got)
			slices.Sort(all)
			if !slices.Equal(got, all) || len(whole.Chains) != 11 {
				t.Errorf("%d shards called %v\nwhole run %v", n, got, all)
			}
		})
	}
}

// An open loop's arrivals go to shards by index: the shards together send
// the whole run's schedule, each arrival once, at its offset and with its
// trace ID; each shard sends at rate/n on average.
func TestShardsSendEveryArrivalOnce(t *testing.T) {
	for _, o := range []latencytest.OpenLoop{
		{Rate: 40, Requests: 37},
		{Rate: 40, Duration: 2 * time.Second},
		{Rate: 40, Arrivals: "constant", Requests: 30},
		{Schedule: []time.Duration{0, 10 * time.Millisecond, 10 * time.Millisecond, time.Second, 1500 * time.Millisecond}},
	} {
		for _, n := range []int{1, 2, 3, 7} {
			synctest.Test(t, func(t *testing.T) {
				type arrival struct {
					id string
					at time.Duration
				}
				nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
				whole, err := o.Run(context.Background(), nop)
				if err != nil {
					t.Fatal(err)
				}
				var want, got []arrival
				for _, rec := range whole.Records {
					want = append(want, arrival{rec.ID, rec.Scheduled})
				}
				for i := range n {
					o := o
					o.Shard = latencytest.Shard{Index: i, Count: n}
					r, err := o.Run(context.Background(), nop)
					if err != nil {
						t.Fatal(err)
					}
					if r.Planned != len(r.Records) {
						t.Errorf("shard %d/%d: planned %d, sent %d", i, n, r.Planned, len(r.Records))
					}
					for _, rec := range r.Records {
						if mustIndex(rec.ID)%n != i {
							t.Errorf("shard %d/%d sent %s", i, n, rec.ID)
						}
						got = append(got, arrival{rec.ID, rec.Scheduled})
					}
					if n > 1 && !strings.Contains(r.Disclosure.Box(7).Answer, fmt.Sprintf("shared by %d shards", n)) {
						t.Errorf("box 7 %q", r.Disclosure.Box(7).Answer)
					}
				}
				slices.SortFunc(got, func(a, b arrival) int { return strings.Compare(a.id, b.id) })
				if !slices.Equal(got, want) {
					t.Errorf("%+v, %d shards sent\n%v\nwhole run\n%v", o, n, got, want)
				}
			})
		}
	}
}

// Run reads no environment variable: under TAILGUARD_SHARD it runs the
// whole batch. Load.FromEnv (which Measure calls) takes the shard from the
// variable when the field is zero; the field wins over it.
func TestShardFromEnvironment(t *testing.T) {
	t.Setenv(latencytest.EnvShard, "1/3")
	synctest.Test(t, func(t *testing.T) {
		var ids []string
		b := latencytest.Batch{Requests: 7, NoWarmup: true, Concurrency: 3}
		r, err := b.Run(context.Background(), sleeper(&ids))
		if err != nil || len(ids) != 7 || r.Shard.Count > 1 {
			t.Errorf("Run under TAILGUARD_SHARD=1/3 sent %v, shard %v, %v: want the whole run", ids, r.Shard, err)
		}
		ids = nil
		b.Load = fromEnv(t, b.Load)
		r, err = b.Run(context.Background(), sleeper(&ids))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"c3-0001", "c3-0004"}; !slices.Equal(ids, want) {
			t.Errorf("sent %v, want %v", ids, want)
		}
		if b := r.Disclosure.Box(2).Answer; !strings.Contains(b, "shard 1/3 (TAILGUARD_SHARD): request 1, 4, 7 … of the whole run's 7") {
			t.Errorf("box 2 %q", b)
		}
		if b := r.Disclosure.Box(7).Answer; b != "3 request(s) in flight (closed loop), shared by 3 shards: 1 each" {
			t.Errorf("box 7 %q", b)
		}
		ids = nil
		whole := latencytest.Batch{Requests: 7, NoWarmup: true, Concurrency: 3, Load: latencytest.Load{Shard: latencytest.Shard{Index: 0, Count: 1}}}
		whole.Load = fromEnv(t, whole.Load)
		if _, err := whole.Run(context.Background(), sleeper(&ids)); err != nil || len(ids) != 7 {
			t.Errorf("Shard{0, 1} is the whole run whatever the variable says: sent %d, %v", len(ids), err)
		}
		// Measure reads the variable: it sends shard 1/3's share.
		ids = nil
		r = latencytest.Batch{Requests: 7, NoWarmup: true, Concurrency: 3}.Measure(t, sleeper(&ids))
		if want := []string{"c3-0001", "c3-0004"}; !slices.Equal(ids, want) || r.Shard != (latencytest.Shard{Index: 1, Count: 3}) {
			t.Errorf("Measure sent %v, shard %v; want %v, 1/3", ids, r.Shard, want)
		}
	})
}

// Location comes from TAILGUARD_LOCATION in FromEnv (and so in Measure),
// never in Run; a field set wins over the variable.
func TestLocationFromEnvironment(t *testing.T) {
	t.Setenv(latencytest.EnvLocation, "rack 7")
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	synctest.Test(t, func(t *testing.T) {
		box := func(r *latencytest.Result) string { return r.Disclosure.Box(14).Answer }
		r, err := latencytest.Batch{Requests: 1}.Run(context.Background(), nop)
		if err != nil || strings.Contains(box(r), "rack 7") {
			t.Errorf("Run read TAILGUARD_LOCATION: box 14 %q, %v", box(r), err)
		}
		if r := (latencytest.Batch{Requests: 1}).Measure(t, nop); !strings.Contains(box(r), "rack 7") {
			t.Errorf("Measure: box 14 %q, want rack 7", box(r))
		}
		if l := fromEnv(t, latencytest.Load{Location: "desk"}); l.Location != "desk" {
			t.Errorf("the field should win: %q", l.Location)
		}
	})
}

// Invalid shards are configuration errors naming the variable (or the
// field) and what to change.
func TestShardErrors(t *testing.T) {
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	for _, c := range []struct {
		env  string
		want string
	}{
		{"2/2", `latencytest: TAILGUARD_SHARD="2/2": index 2 is outside [0, 2): shards are numbered from 0, the last of 2 is 1/2`},
		{"1", `latencytest: TAILGUARD_SHARD="1": want i/n`},
		{"0/0", `latencytest: TAILGUARD_SHARD="0/0": count 0 < 1`},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(latencytest.EnvShard, c.env)
			if _, err := (latencytest.Load{}).FromEnv(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
			if l, err := (latencytest.Load{Shard: latencytest.Shard{Index: 0, Count: 2}}).FromEnv(); err != nil || l.Shard.Count != 2 {
				t.Errorf("a shard set wins over the variable: %v, %v", l.Shard, err)
			}
		})
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"concurrency not a multiple", func() error {
			_, err := latencytest.Batch{Requests: 20, Concurrency: 3, Load: latencytest.Load{Shard: latencytest.Shard{Index: 0, Count: 2}}}.Run(context.Background(), nop)
			return err
		}, "concurrency 3 is not a multiple of the 2 shards (Shard 0/2): each shard keeps concurrency/2 in flight, so make it a multiple of 2"},
		{"chains: concurrency not a multiple", func() error {
			_, err := latencytest.Chain{Load: latencytest.Load{Shard: latencytest.Shard{Index: 1, Count: 2}}}.Run(context.Background(), nop)
			return err
		}, "concurrency 1 is not a multiple of the 2 shards"},
		{"fewer requests than shards", func() error {
			_, err := latencytest.Batch{Requests: 2, NoWarmup: true, Concurrency: 4, Load: latencytest.Load{Shard: latencytest.Shard{Index: 0, Count: 4}}}.Run(context.Background(), nop)
			return err
		}, "2 requests (warm-up included) cannot give each of 4 shards one"},
		{"sequential", func() error {
			_, err := latencytest.Batch{Requests: 20, Concurrency: 2, Until: func(*latencytest.Result) bool { return false },
				Load: latencytest.Load{Shard: latencytest.Shard{Index: 0, Count: 2}}}.Run(context.Background(), nop)
			return err
		}, "a sequential batch (Until) cannot be sharded"},
		{"field out of range", func() error {
			_, err := latencytest.OpenLoop{Rate: 1, Requests: 3, Load: latencytest.Load{Shard: latencytest.Shard{Index: 5, Count: 2}}}.Run(context.Background(), nop)
			return err
		}, "latencytest: open loop: shard 5/2: index 5 is outside [0, 2)"},
	} {
		if err := c.run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TAILGUARD_START_AT makes the runner wait for the instant before its
// first request (synctest's clock starts at 2000-01-01T00:00:00Z); later
// runners of the process start at once.
func TestStartAtAlignsTheFirstRequest(t *testing.T) {
	t.Setenv(latencytest.EnvStartAt, "2000-01-01T00:00:05Z")
	synctest.Test(t, func(t *testing.T) {
		at := time.Date(2000, 1, 1, 0, 0, 5, 0, time.UTC)
		var ids []string
		nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
		if r, err := (latencytest.Batch{Requests: 1, NoWarmup: true}).Run(context.Background(), nop); err != nil || !r.Start.Equal(at.Add(-5*time.Second)) {
			t.Errorf("Run read TAILGUARD_START_AT: started at %v, %v", r.Start, err)
		}
		r, err := latencytest.Batch{Requests: 3, NoWarmup: true, Load: fromEnv(t, latencytest.Load{})}.Run(context.Background(), sleeper(&ids))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Start.Equal(at) || !r.Records[0].Start.Equal(at) {
			t.Errorf("started at %v, first request at %v; want %v", r.Start, r.Records[0].Start, at)
		}
		if b := r.Disclosure.Box(9).Answer; !strings.Contains(b, "started at TAILGUARD_START_AT 2000-01-01T00:00:05Z (waited 5s)") {
			t.Errorf("box 9 %q", b)
		}
		time.Sleep(2 * time.Minute) // past defaults.MaxStartLate: only a runner that has not started yet would mind
		cr, err := latencytest.Chain{Chains: 1, Length: 1, Load: fromEnv(t, latencytest.Load{})}.Run(context.Background(), sleeper(&ids))
		if err != nil {
			t.Fatalf("a second runner of the process: %v", err)
		}
		if b := cr.Disclosure.Box(9).Answer; !strings.Contains(b, "reached by an earlier run of this process") {
			t.Errorf("box 9 %q", b)
		}
	})
}

// Measure reads TAILGUARD_START_AT (Run does not: see
// TestStartAtAlignsTheFirstRequest): its run starts at the instant.
func TestMeasureReadsStartAt(t *testing.T) {
	t.Setenv(latencytest.EnvStartAt, "2000-01-01T00:00:07Z")
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	synctest.Test(t, func(t *testing.T) {
		at := time.Date(2000, 1, 1, 0, 0, 7, 0, time.UTC)
		for name, start := range map[string]func() time.Time{
			"open loop": func() time.Time { return latencytest.OpenLoop{Rate: 1, Requests: 1}.Measure(t, nop).Start },
			"chain":     func() time.Time { return latencytest.Chain{Chains: 1, Length: 1}.Measure(t, nop).Start },
		} {
			if got := start(); !got.Equal(at) {
				t.Errorf("%s: Measure started at %v, want %v", name, got, at)
			}
		}
	})
}

// StartAt set as a field aligns the run as the variable does, and the
// disclosure and errors name the field.
func TestStartAtField(t *testing.T) {
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	synctest.Test(t, func(t *testing.T) {
		at := time.Date(2000, 1, 1, 0, 0, 3, 0, time.UTC)
		r, err := latencytest.OpenLoop{Rate: 1, Requests: 1, Load: latencytest.Load{StartAt: at}}.Run(context.Background(), nop)
		if err != nil || !r.Start.Equal(at) {
			t.Fatalf("started at %v, %v; want %v", r.Start, err, at)
		}
		if b := r.Disclosure.Box(9).Answer; !strings.Contains(b, "started at StartAt 2000-01-01T00:00:03Z (waited 3s)") {
			t.Errorf("box 9 %q", b)
		}
		far := latencytest.Load{StartAt: time.Now().Add(time.Hour)}
		if _, err := (latencytest.Batch{Requests: 1, Load: far}).Run(context.Background(), nop); err == nil ||
			!strings.HasPrefix(err.Error(), "latencytest: StartAt 2000-01-01T01:00:03Z is 1h0m0s away, more than 10m0s (the most a start instant may be ahead)") {
			t.Errorf("error %v", err)
		}
	})
}

func TestStartAtErrors(t *testing.T) {
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	for _, c := range []struct {
		env, want string
	}{
		{"tomorrow", `latencytest: TAILGUARD_START_AT="tomorrow": want an RFC 3339 instant such as 2025-06-01T12:00:00Z`},
		{"2000-01-01 00:00:05", `latencytest: TAILGUARD_START_AT="2000-01-01 00:00:05": want an RFC 3339 instant`},
		{"2000-01-01T00:11:00Z", "latencytest: TAILGUARD_START_AT=2000-01-01T00:11:00Z is 11m0s away, more than 10m0s (the most a start instant may be ahead)"},
		{"1999-12-31T23:58:00Z", "latencytest: TAILGUARD_START_AT=1999-12-31T23:58:00Z passed 2m0s ago, more than 1m0s (the most a start instant may be past)"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(latencytest.EnvStartAt, c.env)
			synctest.Test(t, func(t *testing.T) {
				for _, run := range []func(latencytest.Load) error{
					func(l latencytest.Load) error {
						_, err := latencytest.Batch{Requests: 1, Load: l}.Run(context.Background(), nop)
						return err
					},
					func(l latencytest.Load) error {
						_, err := latencytest.Chain{Chains: 1, Load: l}.Run(context.Background(), nop)
						return err
					},
					func(l latencytest.Load) error {
						_, err := latencytest.OpenLoop{Rate: 1, Requests: 1, Load: l}.Run(context.Background(), nop)
						return err
					},
				} {
					if err := run(latencytest.Load{}); err != nil {
						t.Errorf("Run read TAILGUARD_START_AT: %v", err)
					}
					err := func() error { // unreadable: FromEnv fails; out of bounds: Run does
						l, err := latencytest.Load{}.FromEnv()
						if err != nil {
							return err
						}
						return run(l)
					}()
					if err == nil || !strings.HasPrefix(err.Error(), c.want) {
						t.Errorf("error %v\nwant %s", err, c.want)
					}
				}
			})
		})
	}
	// Past by less than defaults.MaxStartLate: the run starts at once and says so.
	t.Setenv(latencytest.EnvStartAt, "1999-12-31T23:59:30Z")
	synctest.Test(t, func(t *testing.T) {
		r, err := latencytest.OpenLoop{Rate: 1, Requests: 1, Load: fromEnv(t, latencytest.Load{})}.Run(context.Background(), nop)
		if err != nil {
			t.Fatal(err)
		}
		if b := r.Disclosure.Box(9).Answer; !strings.Contains(b, "1999-12-31T23:59:30Z had passed 30s before the run began") {
			t.Errorf("box 9 %q", b)
		}
	})
}
