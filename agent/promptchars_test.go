package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/latencytest"
)

// sent is a Func provider that notes, by trace ID, the characters of the
// prompt text each request carried (every message's content).
type sent struct {
	mu    sync.Mutex
	chars map[string]int
}

func (s *sent) provider() latencytest.Provider {
	s.chars = map[string]int{}
	return latencytest.Func(func(_ context.Context, req latencytest.Request) error {
		n := 0
		for _, m := range req.Messages {
			n += utf8.RuneCountInString(m.Content)
		}
		s.mu.Lock()
		s.chars[req.ID] = n
		s.mu.Unlock()
		return nil
	})
}

// check compares each record's PromptChars with what its request sent.
func (s *sent) check(t *testing.T, what string, recs []latencytest.Record) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatalf("%s: no records", what)
	}
	for _, r := range recs {
		want, ok := s.chars[r.ID]
		if !ok || want == 0 || r.PromptChars != want {
			t.Errorf("%s: %s PromptChars %d, sent %d characters (seen %v)", what, r.ID, r.PromptChars, want, ok)
		}
	}
}

// Graph runs (a fan-out after a plan, whose copies carry the plan's
// answer; a sub-agent; a prompt in several scripts, with and without the
// nonce) and conversations (a history that grows turn by turn) record the
// characters of the prompt text each call sent, nonce included.
func TestRunnersRecordPromptChars(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g := agent.Graph{Steps: []agent.Step{
			{Name: "plan", Prompt: "Planifiez : étape 1 — 計画"},
			{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 2}},
			{Name: "research", After: []string{"plan"}, Agent: &agent.Graph{Steps: []agent.Step{{Name: "read"}}}},
		}}
		plan := map[bool]int{}
		for _, noNonce := range []bool{false, true} {
			var s sent
			res, err := agent.Runner{Graph: g, Tasks: 2, NoNonce: noNonce, Prompt: "Ünïcödé opening, 開始"}.Run(ctx, s.provider())
			if err != nil {
				t.Fatal(err)
			}
			calls := res.Calls().Records
			if len(calls) != 2*4 { // plan, 2 searches, read
				t.Fatalf("%d calls, want 8", len(calls))
			}
			s.check(t, "graph", calls)
			for _, r := range calls {
				if strings.HasSuffix(r.ID, "-plan") {
					plan[noNonce] = r.PromptChars
				}
			}
		}
		// without a nonce: the opening and the plan's own prompt, in runes
		if got, want := plan[true], utf8.RuneCountInString("Ünïcödé opening, 開始Planifiez : étape 1 — 計画"); got != want {
			t.Errorf("plan without a nonce: %d characters, want %d", got, want)
		}
		// "[nonce " + 12 hex + "-" + 16 hex + "] ": 38 characters more
		if got, want := plan[false], plan[true]+38; got != want {
			t.Errorf("plan with a nonce: %d characters, want %d", got, want)
		}

		var s sent
		cr, err := agent.Conversation{Sessions: 2, Turns: 3}.Run(ctx, s.provider())
		if err != nil {
			t.Fatal(err)
		}
		turns := cr.Turns().Records
		s.check(t, "conversation", turns)
		for _, run := range cr.Sessions.Chains {
			if len(run.Calls) != 3 || run.Calls[2].PromptChars <= run.Calls[0].PromptChars {
				t.Errorf("session %s: history did not grow: %v", run.ID, run.Calls)
			}
		}
	})
}
