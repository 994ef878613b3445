package sloassert_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// busyMachine is what a run sees while other processes take the cores.
func busyMachine() *latencytest.MachineLoad {
	return &latencytest.MachineLoad{Wall: 10 * time.Second, PSISome: 0.9, Load: math.NaN(), Runnable: 34.4, Cores: 2, Wakeups: 4000,
		LateP50: 2 * time.Millisecond, LateP99: 50 * time.Millisecond, LateMax: 406 * time.Millisecond}
}

func TestReportWarnsOfABusyMachine(t *testing.T) {
	want := "the machine was busy: timings may include scheduling delay of the client (the probe woke up to 406.00ms late): " +
		"timer lateness p99 50.00ms (above 2.00ms); PSI cpu some 90% of the run (above 10%); 34.4 runnable tasks on 2 cores"
	r := resultOf(ramp(200))
	r.Machine = busyMachine()
	rep := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.99, time.Hour))
	if rep.Machine != want {
		t.Errorf("Report.Machine:\n got %q\nwant %q", rep.Machine, want)
	}
	if s := rep.String(); !strings.Contains(s, "\n  WARNING: "+want+"\n") {
		t.Errorf("text report lacks the warning:\n%s", s)
	}
	if md := sloassert.Markdown(rep); !strings.Contains(md, "> **Warning:** the machine was busy: timings may include scheduling delay of the client") ||
		!strings.Contains(md, "406.00ms late") {
		t.Errorf("markdown lacks the warning:\n%s", md)
	}
	// The verdict is the figures' verdict: the warning does not fail it.
	if !rep.OK() {
		t.Errorf("a busy machine failed the report: %s", rep)
	}

	cr := &latencytest.ChainResult{
		Run:    latencytest.Run{Planned: 1, CPUPerWall: math.NaN(), Machine: busyMachine()},
		Chains: []latencytest.ChainRun{{ID: "c-0", Total: time.Second, Calls: []latencytest.Record{{ID: "c-0-0", TTFT: time.Millisecond, Total: time.Second}}}},
	}
	if got := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour)).Machine; got != want {
		t.Errorf("chain report: %q", got)
	}

	for _, tc := range []struct {
		name string
		m    *latencytest.MachineLoad
	}{
		{"not measured (a merge, a baseline)", nil},
		{"virtual time", &latencytest.MachineLoad{Virtual: true, PSISome: math.NaN(), Load: math.NaN(), Runnable: math.NaN()}},
		{"quiet", &latencytest.MachineLoad{Wall: time.Second, PSISome: 0.01, Load: 0.3, Runnable: 1, Cores: 2, Wakeups: 500,
			LateP50: 60 * time.Microsecond, LateP99: 400 * time.Microsecond, LateMax: time.Millisecond}},
		{"nothing available", &latencytest.MachineLoad{Wall: time.Second, PSISome: math.NaN(), Load: math.NaN(), Runnable: math.NaN(), Cores: 2}},
	} {
		r := resultOf(ramp(200))
		r.Machine = tc.m
		rep := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.99, time.Hour))
		if rep.Machine != "" || strings.Contains(rep.String(), "machine was busy") || strings.Contains(sloassert.Markdown(rep), "machine was busy") {
			t.Errorf("%s: warned: %q", tc.name, rep.Machine)
		}
	}
}
