package latencytest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// fromEnv is l.FromEnv(), failing t on an error: what Measure does
// before Run.
func fromEnv(t testing.TB, l latencytest.Load) latencytest.Load {
	t.Helper()
	l, err := l.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A result measured as a shard says so (Result.Shard, its summary's
// "shard" and its records' end line), whether the shard came from the
// field or TAILGUARD_SHARD, for each runner; a whole run carries none.
func TestShardIsMarkedOnTheResult(t *testing.T) {
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	half := latencytest.Shard{Index: 1, Count: 2}
	runs := map[string]func() (*latencytest.Result, error){
		"batch": func() (*latencytest.Result, error) {
			b := latencytest.Batch{Requests: 4, Concurrency: 2}
			b.Load = fromEnv(t, b.Load)
			return b.Run(context.Background(), nop)
		},
		"open loop": func() (*latencytest.Result, error) {
			o := latencytest.OpenLoop{Rate: 100, Requests: 4}
			o.Load = fromEnv(t, o.Load)
			return o.Run(context.Background(), nop)
		},
		"chain": func() (*latencytest.Result, error) {
			c := latencytest.Chain{Chains: 4, Length: 2, Concurrency: 2}
			c.Load = fromEnv(t, c.Load)
			cr, err := c.Run(context.Background(), nop)
			if err != nil {
				return nil, err
			}
			if cr.Shard != cr.Calls().Shard {
				t.Errorf("chain: Shard %v, its calls' %v", cr.Shard, cr.Calls().Shard)
			}
			return cr.Calls(), nil
		},
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, err := run()
				if err != nil || r.Shard != (latencytest.Shard{}) || r.Shard.Count > 1 {
					t.Errorf("whole run: shard %v, %v", r.Shard, err)
				}
				// A whole run's summary names no shard, with the key
				// written: records.Merge tells it from an older summary.
				if b, err := json.Marshal(r.Summarize()); err != nil || !bytes.Contains(b, []byte(`"shard":""`)) {
					t.Errorf("whole run's summary JSON: %v %.300s", err, b)
				}
			})
			t.Setenv(latencytest.EnvShard, "1/2")
			synctest.Test(t, func(t *testing.T) {
				r, err := run()
				if err != nil || r.Shard != half || r.Shard.Count <= 1 {
					t.Errorf("under TAILGUARD_SHARD=1/2: shard %v, %v", r.Shard, err)
				}
				if s := r.Summarize(); s.Shard != "1/2" || !strings.HasPrefix(s.Brief(""), "latency batch (shard 1/2: one part of the run; merge the shards to judge it): ") {
					t.Errorf("summary shard %q; log:\n%s", s.Shard, s.Brief(""))
				}
				b, err := json.Marshal(r)
				if err != nil || !bytes.Contains(b, []byte(`"shard":{"index":1,"count":2}`)) {
					t.Errorf("result JSON: %v %.300s", err, b)
				}
			})
		})
	}
	// Measure's records end with the shard and label; its summary names the shard.
	t.Setenv(latencytest.EnvShard, "0/2")
	latencytest.Batch{Requests: 4, NoWarmup: true, Concurrency: 2}.Measure(t, nop)
	ad, ok := any(t).(interface{ ArtifactDir() string })
	if !ok {
		t.Skip("no t.ArtifactDir before Go 1.26")
	}
	recs, err := os.ReadFile(filepath.Join(ad.ArtifactDir(), "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(recs, []byte(`{"end_of_records":2,"shard":"0/2","label":"c2"}`+"\n")) {
		t.Errorf("records end:\n%s", recs)
	}
	sum, err := os.ReadFile(filepath.Join(ad.ArtifactDir(), "summary.json"))
	if err != nil || !bytes.Contains(sum, []byte(`"shard": "0/2"`)) {
		t.Errorf("summary: %v\n%s", err, sum)
	}
}

// TAILGUARD_START_AT set to a real instant (for the shards of a
// distributed run) is ignored inside a synctest bubble, with one log line
// per process and a note in box 9: virtual-time tests of the same process
// run as usual instead of all failing with "235962h away".
func TestStartAtRealInstantIgnoredInVirtualTime(t *testing.T) {
	real := time.Now().Add(30 * time.Second).UTC().Format(time.RFC3339Nano)
	t.Setenv(latencytest.EnvStartAt, real)
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	for range 2 {
		synctest.Test(t, func(t *testing.T) {
			r, err := latencytest.Batch{Requests: 2, NoWarmup: true, Load: fromEnv(t, latencytest.Load{})}.Run(context.Background(), nop)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Start.Equal(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("started at %v: waited", r.Start)
			}
			if b := r.Disclosure.Box(9).Answer; !strings.Contains(b, "TAILGUARD_START_AT "+real+" ignored: a real instant, and this run is in virtual time") {
				t.Errorf("box 9 %q", b)
			}
			if _, err := (latencytest.OpenLoop{Rate: 1, Requests: 1, Load: fromEnv(t, latencytest.Load{})}).Run(context.Background(), nop); err != nil {
				t.Errorf("open loop: %v", err)
			}
			if _, err := (latencytest.Chain{Chains: 1, Load: fromEnv(t, latencytest.Load{})}).Run(context.Background(), nop); err != nil {
				t.Errorf("chain: %v", err)
			}
		})
	}
	if n := strings.Count(logged.String(), "\n"); n != 1 || !strings.Contains(logged.String(), "latencytest: TAILGUARD_START_AT="+real+" ignored in virtual time") {
		t.Errorf("want one log line, got %d:\n%s", n, logged.String())
	}
	// Outside a bubble the instant is waited for as before: too far is an error.
	t.Setenv(latencytest.EnvStartAt, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if _, err := (latencytest.Batch{Requests: 1, Load: fromEnv(t, latencytest.Load{})}).Run(context.Background(), nop); err == nil || !strings.Contains(err.Error(), "more than 10m0s (the most a start instant may be ahead)") {
		t.Errorf("real time, an hour ahead: %v", err)
	}
}
