package slospec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/slospec"
)

// TestSpecColdStart: cold_start is MaxColdStart, with its idle gap as a
// key (after_idle), in either form; bad values name the line and key.
func TestSpecColdStart(t *testing.T) {
	const target = "target: {preset: mistral-3-14b}\n"
	for _, tc := range []struct {
		spec       string
		budget     time.Duration
		idle       time.Duration
		wantErrors string
	}{
		{spec: "objectives:\n  cold_start: 10s\n", budget: 10 * time.Second},
		{spec: "objectives:\n  cold_start: {max: 5s, after_idle: 2s}\n", budget: 5 * time.Second, idle: 2 * time.Second},
		{spec: "objectives:\n  cold_start: {after_idle: 2s}\n", wantErrors: "line 3: objectives.cold_start: no max"},
		{spec: "objectives:\n  cold_start: {max: 5s, after_idle: 0s}\n", wantErrors: "line 3: objectives.cold_start.after_idle: a budget must be positive"},
		{spec: "objectives:\n  cold_start: {max: 5s, idle: 2s}\n", wantErrors: `line 3: objectives.cold_start.idle: unknown key "idle"`},
		{spec: "objectives:\n  cold_start: 10\n", wantErrors: "line 3: objectives.cold_start: 10 is not a duration"},
	} {
		s, err := slospec.ParseSpec([]byte(target + tc.spec))
		if tc.wantErrors != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrors) {
				t.Errorf("%q: error %v, want %q", tc.spec, err, tc.wantErrors)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		so := s.Objectives[0]
		if so.Kind != "cold_start" || so.Budget != tc.budget || so.AfterIdle != tc.idle || so.Key != "cold_start" {
			t.Errorf("%q: %+v", tc.spec, so)
		}
		want := "cold start ttft <= " + format.Duration(tc.budget)
		if tc.idle > 0 {
			want += " (after " + tc.idle.String() + " idle)"
		}
		if name := so.Objective().Name; name != want {
			t.Errorf("%q: objective %q, want %q", tc.spec, name, want)
		}
	}
}
