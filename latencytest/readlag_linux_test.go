//go:build linux

package latencytest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/machine"
)

// delayReads makes every read that finds bytes waiting take them d later,
// until the test ends.
func delayReads(t *testing.T, d time.Duration) { t.Cleanup(machine.DelayReadsForTest(d)) }

// loopbackRun runs a small Batch over loopback against a fake whose
// events are 20 ms apart (a read that waits 5 ms finds no newer bytes).
func loopbackRun(t *testing.T, opts ...Option) *Result {
	t.Helper()
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT:         fakeprovider.Fixed(5 * time.Millisecond),
		ITL:          fakeprovider.Fixed(20 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(6),
		PrefixCache:  fakeprovider.PrefixCache{Disabled: true},
	})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	p := OpenAI(srv.URL+"/v1", opts...)
	defer p.CloseIdleConnections()
	r, err := Batch{NoWarmup: true, Requests: 6, Concurrency: 2, Load: Load{MaxTokens: 6, Prompt: "Say six words."}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.Records {
		if !rec.OK() {
			t.Fatalf("%s: %s %s", rec.ID, rec.Err, rec.Detail)
		}
	}
	return r
}

// A run whose client reads its events 5 ms after they arrived says so in
// box 13, with the figures; a run that reads them as they come does not
// (unless the machine itself made its reads late: then the test says why
// it cannot tell).
func TestReadLagWarning(t *testing.T) {
	const warn = "the client read its events late against the socket"
	clean := loopbackRun(t)
	t.Logf("clean run: %s", clean.Machine)
	if m := clean.Machine; m.Reads == 0 {
		t.Fatalf("the clean run timed no read: %s", m)
	} else if box := clean.Disclosure.Box(13).Answer; strings.Contains(box, warn) {
		if m.LateP99 < machine.LateReads {
			t.Errorf("a clean run on a quiet machine (timer lateness p99 %v) warns: %s", m.LateP99, box)
		} else {
			t.Logf("the machine made the clean run's reads late (timer lateness p99 %v): %s", m.LateP99, box)
		}
	}
	delayReads(t, 5*time.Millisecond)
	late := loopbackRun(t)
	m := late.Machine
	box := late.Disclosure.Box(13).Answer
	if m.Reads == 0 || m.ReadLagP99 < 5*time.Millisecond || !strings.Contains(box, warn) || !strings.Contains(box, "socket read lag p50") {
		t.Errorf("reads 5 ms late: %d reads, lag p99 %v; box 13: %s", m.Reads, m.ReadLagP99, box)
	}
	if m.ReadLagP50 < 5*time.Millisecond {
		t.Errorf("reads 5 ms late: lag p50 %v", m.ReadLagP50)
	}
	// net/http's transport's connections are timed too.
	nh := loopbackRun(t, WithNetHTTP()).Machine
	if nh.Reads == 0 || nh.ReadLagP50 < 5*time.Millisecond {
		t.Errorf("net/http, reads 5 ms late: %d reads, lag p50 %v", nh.Reads, nh.ReadLagP50)
	}
}
