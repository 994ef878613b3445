package sloassert_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// Turn judges the requests of one turn alone: 20 sessions whose turn 1
// takes 100 ms and turn 2 takes 900 ms to its first token.
func TestTurnJudgesOneTurn(t *testing.T) {
	var recs []latencytest.Record
	for s := range 20 {
		for turn, ttft := range []time.Duration{100 * time.Millisecond, 900 * time.Millisecond} {
			recs = append(recs, latencytest.Record{ID: fmt.Sprintf("conv%03d-turn%02d", s, turn+1), Session: s, Turn: turn + 1,
				TTFT: ttft, FirstAnswer: ttft, LastToken: ttft, Total: ttft, TokenEvents: 1, Status: 200})
		}
	}
	r := &latencytest.Result{Records: recs, Run: latencytest.Run{Planned: len(recs)}}
	for _, tc := range []struct {
		obj  sloassert.Objective
		pass bool
		want string
	}{
		{sloassert.Turn(1, sloassert.Q(sloassert.TTFT, 0.95, 200*time.Millisecond)), true, "turn 1: ttft p95 <= 200.0ms"},
		{sloassert.Turn(2, sloassert.Q(sloassert.TTFT, 0.95, 200*time.Millisecond)), false, "900.0ms"},
		{sloassert.Turn(2, sloassert.Q(sloassert.TTFT, 0.95, time.Second)), true, "turn 2: ttft p95 <= 1000.0ms"},
		// The whole run's p95 is 900 ms too; turn 1's alone passes 200 ms.
		{sloassert.Q(sloassert.TTFT, 0.95, 200*time.Millisecond), false, "ttft p95"},
		{sloassert.Turn(3, sloassert.Q(sloassert.TTFT, 0.95, time.Second)), false, "no request of turn 3"},
		{sloassert.Turn(0, sloassert.Q(sloassert.TTFT, 0.95, time.Second)), false, "turns count from 1"},
		{sloassert.Turn(1, sloassert.ChainQ(0.5, time.Second)), false, "judges a result's requests"},
		{sloassert.Turn(2, sloassert.Q(sloassert.TTFT, 0.99, time.Second)), false, "p99 needs n >= 100 (have 20)"},
	} {
		rep := sloassert.Evaluate(r, tc.obj)
		if rep.OK() != tc.pass || !strings.Contains(rep.String(), tc.want) {
			t.Errorf("%s: pass %v (want %v), report lacks %q:\n%s", tc.obj.Name, rep.OK(), tc.pass, tc.want, rep)
		}
	}
}
