package slospec_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
	"github.com/tailguard/tailguard/slospec"
)

const convSpec = `
target: {profile: conv.yaml}
conversation:
  sessions: 20
  turns: 4
  concurrency: 4
  think_time: {median: 2s, p99: 10s}
  max_tokens: 8
  cancel: {after_tokens: 4, share: 25%, seed: 3}
objectives:
  ttft: {p50: 1s}
  error_rate: 5%
  turn:
    4: {ttft: {p95: 1s}, error_rate: 10%}
`

// convProfile is a fixed-latency fake whose prefill grows with the
// history and whose prefix cache serves the earlier turns.
const convProfile = `
model: m
ttft: 100ms
itl: 10ms
output_tokens: 8
prefill_per_1k_tokens: 1s
slots_per_replica: 64
prefix_cache: {scope: prefill, ttft_factor: 0.5}
`

// The conversation and cancel keys and the turn kind parse into the
// runner's fields and objectives on one turn.
func TestConversationSpecParses(t *testing.T) {
	s, err := slospec.ParseSpec([]byte(strings.Replace(convSpec, "{profile: conv.yaml}", "{preset: mistral-3-14b}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Conversation
	if c == nil || c.Sessions != 20 || c.Turns != 4 || c.Concurrency != 4 || c.ThinkTime != (agent.ThinkTime{Median: 2 * time.Second, P99: 10 * time.Second}) ||
		c.Cancel != (latencytest.Cancel{AfterTokens: 4, Share: 0.25, Seed: 3}) {
		t.Fatalf("conversation %+v", c)
	}
	var keys []string
	for _, o := range s.Objectives {
		keys = append(keys, o.Key)
	}
	if got := strings.Join(keys, " "); got != "ttft_p50 error_rate turn4_ttft_p95 turn4_error_rate" {
		t.Errorf("objectives %s", got)
	}
	if o := s.Objectives[2]; o.Turn != 4 || o.Objective().Name != "turn 4: ttft p95 <= 1000.0ms" {
		t.Errorf("turn objective %+v: %s", o, o.Objective().Name)
	}
}

// Bad conversation, cancel and turn keys are errors with their line.
func TestConversationSpecBadInput(t *testing.T) {
	base := "target: {preset: mistral-3-14b}\n"
	for _, tc := range []struct{ spec, want string }{
		{base + "load: {requests: 100}\nconversation: {turns: 3}\nobjectives: {ttft: {p50: 1s}}\n", "conflicting: load and conversation"},
		{base + "conversation: {turns: 3, cancel: {share: 10%}}\nobjectives: {ttft: {p50: 1s}}\n", "want after or after_tokens"},
		{base + "conversation: {think_time: {median: 2s, p99: 1s}}\nobjectives: {ttft: {p50: 1s}}\n", "p99 1s is below the median 2s"},
		{base + "conversation: {turns: 3}\nobjectives: {turn: {0: {ttft: {p50: 1s}}}}\n", "turn.0"},
		{base + "conversation: {turns: 3}\nobjectives: {turn: {2: {turn: {1: {ttft: {p50: 1s}}}}}}\n", "hold no turn key"},
		{base + "conversation: {sessions: 20}\nobjectives: {turn: {2: {ttft: {p99: 1s}}}}\n", "p99 needs n >= 100 (conversation.sessions gives turn 2 20 requests"},
		{base + "load: {requests: 100, cancel: {after: -1s}}\nobjectives: {ttft: {p50: 1s}}\n", "cancel.after"},
		{"target: {records: x.jsonl}\nconversation: {turns: 3}\nobjectives: {ttft: {p50: 1s}}\n", "not run with a records target"},
		{base + "load: {requests: 100}\nobjectives: {turn: {2: {ttft: {p50: 1s}}}}\n", "add a conversation section"},
		// the plan counts the turn's requests: none when no session reaches it
		{base + "conversation: {turns: 3}\nobjectives: {turn: {4: {error_rate: 5%}}}\n", "line 3: objectives.turn4_error_rate: turn 4: no session reaches it (conversation.turns is 3)"},
		{base + "conversation: {}\nobjectives: {turn: {11: {ttft: {p50: 1s}}}}\n", "turn 11: no session reaches it (conversation.turns is 10)"},
	} {
		_, err := slospec.ParseSpec([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.spec, err, tc.want)
		}
	}
}

// RunFile runs the conversation in virtual time against the fake and
// judges its turns, turn 4 on its own.
func TestConversationSpecRuns(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "conv.yaml"), []byte(convProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "conv-spec.yaml")
	if err := os.WriteFile(spec, []byte(convSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	slospec.RunFile(t, spec)
}

// tailguard judge (slospec.Judge) reads a conversation's records: its
// turn objective judges the records of that turn, which a whole-run
// objective cannot tell apart.
func TestJudgeReadsConversationRecords(t *testing.T) {
	dir := t.TempDir()
	path := writeConversation(t, dir, 20)
	// Turn 1's TTFT is 300 ms (200 prompt tokens); turn 4's prompt holds
	// three 400-token messages more, half of it cached: far over 500 ms.
	for _, tc := range []struct {
		objectives string
		verdict    sloassert.Verdict
	}{
		{"turn: {1: {ttft: {p95: 500ms}}}", sloassert.Pass},
		{"turn: {4: {ttft: {p95: 500ms}}}", sloassert.Fail},
		{"ttft: {p50: 500ms}", sloassert.Fail},
	} {
		spec := writeSpec(t, dir, "objectives: {"+tc.objectives+"}\n")
		reps, err := slospec.JudgeFile(spec, "", path)
		if err != nil || len(reps) != 1 || reps[0].Verdict() != tc.verdict {
			t.Errorf("%s: %v; want %s\n%v", tc.objectives, err, tc.verdict, reps)
		}
	}
}

// writeConversation writes the records of sessions sessions of 4 turns
// against convProfile into dir, and returns their path.
func writeConversation(t *testing.T, dir string, sessions int) string {
	t.Helper()
	path := filepath.Join(dir, "conv.jsonl")
	synctest.Test(t, func(t *testing.T) {
		prof, err := fakeprovider.ParseProfile([]byte(convProfile))
		if err != nil {
			t.Fatal(err)
		}
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
		r, err := agent.Conversation{Sessions: sessions, Turns: 4, MaxTokens: 8, TurnTokens: 400}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Turns().WriteRecords(w, false); err != nil {
			t.Fatal(err)
		}
		w.Close()
	})
	return path
}

// A turn objective's sample is its turn's requests: p99 of turn 1 from
// 30 sessions (30 requests, of 120) cannot be judged (n >= 100), so the
// level is inconclusive (tailguard judge: exit 2), not failed; the same
// p99 over all 120 requests is judged.
func TestJudgeTurnSampleIsTheTurns(t *testing.T) {
	dir := t.TempDir()
	path := writeConversation(t, dir, 30)
	for _, tc := range []struct {
		objectives, undecided string
		verdict               sloassert.Verdict
	}{
		{"turn: {1: {ttft: {p99: 1s}}}", "turn1_ttft_p99: p99 needs n >= 100 (the records hold 30 of turn 1 at c1)", sloassert.Inconclusive},
		{"turn: {5: {ttft: {p99: 1s}}}", "turn5_ttft_p99: p99 needs n >= 100 (the records hold 0 of turn 5 at c1)", sloassert.Inconclusive},
		{"ttft: {p99: 5s}", "", sloassert.Pass},
		// turn 1 is 300 ms: its lower bound proves p99 over 100 ms on any n
		{"turn: {1: {ttft: {p99: 100ms}}}", "", sloassert.Fail},
	} {
		reps, err := slospec.JudgeFile(writeSpec(t, dir, "objectives: {"+tc.objectives+"}\n"), "", path)
		if err != nil || len(reps) != 1 {
			t.Fatalf("%s: %v %v", tc.objectives, err, reps)
		}
		got := strings.Join(reps[0].Undecided, "; ")
		if v := reps[0].Verdict(); v != tc.verdict || got != tc.undecided {
			t.Errorf("%s: verdict %s, undecided %q; want %s, %q\n%s", tc.objectives, v, got, tc.verdict, tc.undecided, reps[0].Report)
		}
	}
}

// Against an endpoint (the fake served over loopback), the conversation
// runs in real time and its turns are judged the same way.
func TestConversationSpecRunsAgainstAnEndpoint(t *testing.T) {
	f := fakeprovider.New(fakeprovider.Profile{Model: "m", TTFT: fakeprovider.Fixed(time.Millisecond),
		ITL: fakeprovider.Fixed(time.Duration(0)), OutputTokens: fakeprovider.Fixed(4)})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("OPENAI_MODEL", "m")
	dir := t.TempDir()
	spec := filepath.Join(dir, "endpoint.yaml")
	// Generous budgets: a real clock on a loaded machine; what is checked
	// is that the turns were run and judged, turn 3 on its own.
	text := "target: {endpoint: {}}\nconversation: {sessions: 4, turns: 3, concurrency: 2, max_tokens: 4}\n" +
		"objectives:\n  ttft: {p50: 10s}\n  turn: {3: {ttft: {p50: 10s}}}\n"
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	slospec.RunFile(t, spec)
	if n := len(f.Served()); n != 12 {
		t.Errorf("the fake served %d requests, want 4 sessions × 3 turns", n)
	}
}
