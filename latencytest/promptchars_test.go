package latencytest_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/tailguard/tailguard/latencytest"
)

// sentChars is a Func provider that notes, by trace ID, the characters
// of the prompt text each request carried (every message's content).
type sentChars struct {
	mu   sync.Mutex
	seen map[string]int
}

func (s *sentChars) provider() latencytest.Provider {
	s.seen = map[string]int{}
	return latencytest.Func(func(_ context.Context, req latencytest.Request) error {
		n := 0
		for _, m := range req.Messages {
			n += utf8.RuneCountInString(m.Content)
		}
		s.mu.Lock()
		s.seen[req.ID] = n
		s.mu.Unlock()
		return nil
	})
}

// check compares each record's PromptChars with what its request sent.
func (s *sentChars) check(t *testing.T, what string, recs []latencytest.Record) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatalf("%s: no records", what)
	}
	for _, r := range recs {
		want, ok := s.seen[r.ID]
		if !ok || want == 0 || r.PromptChars != want {
			t.Errorf("%s: %s PromptChars %d, sent %d characters (seen %v)", what, r.ID, r.PromptChars, want, ok)
		}
	}
}

// TestRunnersRecordPromptChars: Batch (the mix with its nonce, no nonce,
// a prompt of its own in several scripts), OpenLoop (a replayed trace
// whose sizes repeat, so some prompts are templated and some not) and
// Chain (the opening prompt, then a growing history) record the
// characters of the prompt text each request sent.
func TestRunnersRecordPromptChars(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var s sentChars

		r, err := latencytest.Batch{Requests: 12, Warmup: 2}.Run(ctx, s.provider())
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, "mix", r.Records)
		var file bytes.Buffer
		if err := latencytest.WriteRecords(&file, r.Records); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(file.String(), `"prompt_chars":`) {
			t.Errorf("records file lacks prompt_chars:\n%s", file.String())
		}
		back, err := latencytest.ReadRecords(&file)
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, "records file", back)
		classes := map[string]int{}
		for _, rec := range r.Records {
			classes[rec.PromptClass] = rec.PromptChars
		}
		if classes["short"] >= classes["medium"] || classes["medium"] >= classes["long"] {
			t.Errorf("class sizes %v: not short < medium < long", classes)
		}

		r, err = latencytest.Batch{Requests: 3, NoWarmup: true, Load: latencytest.Load{NoNonce: true}}.Run(ctx, s.provider())
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, "no nonce", r.Records)

		own := "Résumé: naïve café, 東京, ß → ok"
		r, err = latencytest.Batch{Requests: 3, NoWarmup: true, Load: latencytest.Load{Prompt: own, NoNonce: true}}.Run(ctx, s.provider())
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, "own prompt", r.Records)
		if got, want := r.Records[0].PromptChars, utf8.RuneCountInString(own); got != want || want == len(own) {
			t.Errorf("own prompt: %d characters, want %d (bytes %d)", got, want, len(own))
		}

		trace := []latencytest.Arrival{{At: 0, PromptTokens: 50}, {At: time.Millisecond, PromptTokens: 50}, {At: 2 * time.Millisecond, PromptTokens: 7}, {At: 3 * time.Millisecond}}
		r, err = latencytest.OpenLoop{Replay: trace}.Run(ctx, s.provider())
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, "replay", r.Records)

		cr, err := latencytest.Chain{Chains: 2, Length: 3}.Run(ctx, s.provider())
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range cr.Chains {
			s.check(t, "chain", run.Calls)
			if len(run.Calls) == 3 && run.Calls[2].PromptChars <= run.Calls[0].PromptChars {
				t.Errorf("chain %s: history did not grow: %d then %d characters", run.ID, run.Calls[0].PromptChars, run.Calls[2].PromptChars)
			}
		}
	})
}
