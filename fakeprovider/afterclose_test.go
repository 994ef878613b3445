package fakeprovider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// afterCloseProfile streams 50 tokens at 100 ms + 10 ms apart (the last
// at 590 ms) from one slot.
const afterCloseProfile = "model: m\nttft: 100ms\nitl: 10ms\noutput_tokens: 50\nslots_per_replica: 1\n"

// With after_close: {keep_generating: true} the fake goes on generating a
// cancelled request to its planned end for nobody, holding its slot:
// Served counts the 46 tokens after the close (4 seen by the client at
// 100-130 ms, the close at 135 ms, 50 in all), and the next request,
// sent at the cancel, waits for the slot until 590 ms. By default the
// fake stops within the event: nothing after the close, nothing queued.
func TestAfterCloseKeepGenerating(t *testing.T) {
	for _, tc := range []struct {
		yaml         string
		after, total int
		queued       time.Duration
	}{
		{"", 0, 4, 0},
		{"after_close: {keep_generating: false}\n", 0, 4, 0},
		{"after_close: {keep_generating: true}\n", 46, 50, 590*time.Millisecond - 135*time.Millisecond},
		{"after_close: {keep_generating: 100%}\n", 46, 50, 590*time.Millisecond - 135*time.Millisecond},
	} {
		t.Run(strings.TrimSpace(tc.yaml), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				prof, err := fakeprovider.ParseProfile([]byte(afterCloseProfile + tc.yaml))
				if err != nil {
					t.Fatal(err)
				}
				f := fakeprovider.New(prof)
				defer f.Close()
				p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
				msgs := []latencytest.Message{{Role: "user", Content: "hi"}}
				x := p.Call(context.Background(), latencytest.Request{ID: "x", Messages: msgs, CancelAfter: 135 * time.Millisecond})
				y := p.Call(context.Background(), latencytest.Request{ID: "y", Messages: msgs, MaxTokens: 1})
				time.Sleep(time.Second) // virtual: past x's planned end
				synctest.Wait()
				byID := map[string]fakeprovider.Served{}
				for _, sv := range f.Served() {
					byID[sv.ID] = sv
				}
				sx, sy := byID["x"], byID["y"]
				if x.Err != "cancelled" || !sx.ClientClosed || !sx.Canceled || sx.AfterClose != tc.after || sx.Tokens != tc.total {
					t.Errorf("x: client %s; fake closed %v canceled %v, %d tokens, %d after the close; want %d, %d after",
						x.Err, sx.ClientClosed, sx.Canceled, sx.Tokens, sx.AfterClose, tc.total, tc.after)
				}
				if !y.OK() || sy.Queued != tc.queued || y.TTFT != tc.queued+100*time.Millisecond {
					t.Errorf("y: %s, queued %v, ttft %v; want queued %v", y.Err, sy.Queued, y.TTFT, tc.queued)
				}
			})
		})
	}
}

// A share keeps generating for the requests its seeded draw picks: the
// same requests for the same seed, about that share of them.
func TestAfterCloseShare(t *testing.T) {
	kept := func(seed int) []string {
		var ids []string
		synctest.Test(t, func(t *testing.T) {
			prof, err := fakeprovider.ParseProfile([]byte(fmt.Sprintf("%sslots_per_replica: 64\nseed: %d\nafter_close: {keep_generating: 30%%}\n",
				strings.Replace(afterCloseProfile, "slots_per_replica: 1\n", "", 1), seed)))
			if err != nil {
				t.Fatal(err)
			}
			f := fakeprovider.New(prof)
			defer f.Close()
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
			r, err := latencytest.Batch{Requests: 200, Concurrency: 20, NoWarmup: true, Load: latencytest.Load{Label: "k",
				Cancel: latencytest.Cancel{AfterTokens: 2}}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			for _, sv := range f.Served() {
				switch {
				case !sv.ClientClosed:
					t.Errorf("%s: the fake did not see the close", sv.ID)
				case sv.AfterClose == 48: // 2 read, 48 generated for nobody
					ids = append(ids, sv.ID)
				case sv.AfterClose != 0:
					t.Errorf("%s: %d tokens after the close, want 0 or 48", sv.ID, sv.AfterClose)
				}
			}
			if len(r.Records) != 200 {
				t.Errorf("%d records", len(r.Records))
			}
		})
		return ids
	}
	a, b := kept(3), kept(3)
	t.Logf("seed 3: %d of 200 kept generating", len(a))
	// 200 draws at 30%: 60 expected, sd 6.5; 40..80 is beyond 3 sd
	if len(a) < 40 || len(a) > 80 || strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("seed 3 kept generating %d then %d of 200 (want 40..80, the same ones)", len(a), len(b))
	}
	if c := kept(4); strings.Join(c, " ") == strings.Join(a, " ") {
		t.Errorf("seeds 3 and 4 kept the same requests generating")
	}
}

// Bad after_close values are errors naming the key.
func TestAfterCloseBadInput(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"after_close: {keep_generating: 2}\n", "keep_generating"},
		{"after_close: {keep_generating: 120%}\n", "120%"},
		{"after_close: {keep_generating: yes please}\n", "share of requests (or true)"},
		{"after_close: {keep: true}\n", "keep"},
		{"after_close: true\n", "after_close: want a map"},
	} {
		_, err := fakeprovider.ParseProfile([]byte(afterCloseProfile + tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.yaml, err, tc.want)
		}
	}
	if err := (fakeprovider.Profile{AfterClose: fakeprovider.AfterClose{KeepGenerating: -0.1}}).Validate(); err == nil || !strings.Contains(err.Error(), "after_close.keep_generating") {
		t.Errorf("Validate: %v", err)
	}
}
