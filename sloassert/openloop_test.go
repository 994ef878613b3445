package sloassert_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"

	"github.com/tailguard/tailguard/internal/defaults"
)

// runOpenLoop runs ol against a fake with this profile, in virtual time.
func runOpenLoop(t *testing.T, profile string, ol latencytest.OpenLoop) *latencytest.Result {
	t.Helper()
	return runOnFake(t, profile, ol.Run)
}

// runOnFake runs a runner's Run against a fake with this profile, inside
// a synctest bubble (virtual time), and returns its result.
func runOnFake(t *testing.T, profile string, run func(context.Context, latencytest.Provider) (*latencytest.Result, error)) *latencytest.Result {
	t.Helper()
	prof, err := fakeprovider.ParseProfile([]byte(profile))
	if err != nil {
		t.Fatal(err)
	}
	var r *latencytest.Result
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
		var err error
		if r, err = run(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	})
	return r
}

// TestFromScheduleCatchesCoordinatedOmission: an open loop at 10/s whose
// client may keep one request in flight meets a 5 s stall of request 20.
// Measured from each request's send, every later request looks fast (the
// wait happened before it was sent); measured from its schedule, the
// requests queued behind the stall carry their wait.
func TestFromScheduleCatchesCoordinatedOmission(t *testing.T) {
	r := runOpenLoop(t, "model: m\nttft: 20ms\nitl: 10ms\noutput_tokens: 7\nreplicas: 1\nslots_per_replica: 1\n"+
		"script:\n  - {request: 20, stall: {after_token: 1, duration: 5s}}\n",
		latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: 300, MaxInFlight: 1, Load: latencytest.Load{Prompt: "hi", MaxTokens: 7}})
	fromSend := sloassert.Q(sloassert.Total, 0.9, time.Second)
	fromSchedule := sloassert.Q(sloassert.FromSchedule, 0.9, time.Second)
	rep := sloassert.Evaluate(r, fromSend, fromSchedule)
	if !rep.Outcomes[0].OK {
		t.Errorf("from send, the stall should hide in all but one request:\n%s", rep)
	}
	if rep.Outcomes[1].OK || !strings.Contains(rep.String(), "from_schedule") {
		t.Errorf("from the schedule, the queued requests must show their wait:\n%s", rep)
	}
	if late, most := r.Lag(); late < 40 || most < 4*time.Second {
		t.Errorf("lag: %d late, by up to %v", late, most)
	}
	// A closed-loop batch has no schedule: its from_schedule never passes.
	if o := judge(streamed(300), fromSchedule); o.OK {
		t.Errorf("from_schedule passed a closed loop: %+v", o)
	}
}

// TestScaleToZeroColdStartsJudgedOnTheirOwn: a deployment that scales to
// zero after 3 idle minutes, at one request per 2 minutes on average
// (Poisson): the fake goes cold between arrivals on its own. MaxColdStart
// fails with the cold starts it saw; the steady-state objectives pass.
func TestScaleToZeroColdStartsJudgedOnTheirOwn(t *testing.T) {
	r := runOpenLoop(t, "model: m\nseed: 3\nttft: 300ms\nitl: 10ms\noutput_tokens: 8\ncold_start: {after_idle: 3m, duration: 20s}\n",
		latencytest.OpenLoop{Rate: 1.0 / 120, Requests: 300, Load: latencytest.Load{Prompt: "hi", MaxTokens: 8}, Seed: 11})
	if d := r.End.Sub(r.Start); d < 8*time.Hour {
		t.Fatalf("the run lasted %v: want about 10 hours at one request per 2 minutes", d)
	}
	rep := sloassert.Evaluate(r,
		sloassert.MaxColdStart(5*time.Second),
		sloassert.Q(sloassert.TTFT, 0.5, time.Second),
		sloassert.MaxErrorRate(0.01),
	)
	cold, steady := rep.Outcomes[0], rep.Outcomes[1:]
	if cold.OK || !strings.Contains(cold.Note, "over budget") {
		t.Errorf("cold starts passed:\n%s", rep)
	}
	for _, o := range steady {
		if !o.OK {
			t.Errorf("steady state failed:\n%s", rep)
		}
	}
	// The client-side candidates include every request that woke the
	// deployment (a whole 20 s load); a request sent while that load was
	// still running waits for part of it, and counts in steady state.
	ids := map[string]bool{}
	for _, id := range coldStartIDs(r, defaults.IdleGap) {
		ids[id] = true
	}
	coldSeen := 0
	for _, rec := range r.Records {
		if strings.Contains(rec.Injected, "cold_start=20s") {
			coldSeen++
			if !ids[rec.ID] {
				t.Errorf("%s met a cold start (%s) but is not a candidate", rec.ID, rec.Injected)
			}
		}
	}
	if coldSeen < 20 {
		t.Errorf("only %d cold starts: the profile should go cold on its own", coldSeen)
	}
	t.Logf("%d cold starts among %d candidates\n%s", coldSeen, len(ids), rep)
}
