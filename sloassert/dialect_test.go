package sloassert_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// okRecord is a measured success with n tokens streamed one an event, 10 ms
// apart after a 100 ms TTFT, usage reporting them.
func okRecord(id string, n int) latencytest.Record {
	return latencytest.Record{ID: id, TTFT: 100 * time.Millisecond, FirstAnswer: 100 * time.Millisecond,
		LastToken: 100*time.Millisecond + time.Duration(n-1)*10*time.Millisecond, Total: time.Second,
		TokenEvents: n, CompletionTokens: n, UsageReported: true, FinishReason: "stop"}
}

// A one-token answer has no decode rate: it neither fails a decode-rate
// floor (as a rate of 0 would) nor counts; failures still count as 0; and
// a result with only one-token answers has no data, which never passes.
func TestMinDecodeRateLeavesOutOneTokenAnswers(t *testing.T) {
	var recs []latencytest.Record
	for i := range 20 {
		recs = append(recs, okRecord("ok", 11)) // (11-1)/100 ms = 100 tokens/s
		if i%2 == 0 {
			recs = append(recs, okRecord("one", 1)) // no rate
		}
	}
	res := &latencytest.Result{Run: latencytest.Run{Planned: len(recs)}, Records: recs}
	if got := len(sloassert.DecodeRates(res)); got != 20 {
		t.Fatalf("%d rates, want the 20 answers of more than one token", got)
	}
	if rep := sloassert.Evaluate(res, sloassert.MinDecodeRate(0.05, 90)); !rep.OK() {
		t.Errorf("one-token answers failed the floor:\n%s", rep)
	}
	failed := append([]latencytest.Record(nil), recs...)
	failed[0].Err = latencytest.ClassTruncated
	failed[2].Err = latencytest.ClassTruncated
	res = &latencytest.Result{Run: latencytest.Run{Planned: len(failed)}, Records: failed}
	if rep := sloassert.Evaluate(res, sloassert.MinDecodeRate(0.05, 90)); rep.OK() {
		t.Errorf("failures count as 0 tokens/s: two of 20 must fail a p5 floor:\n%s", rep)
	}
	ones := &latencytest.Result{Run: latencytest.Run{Planned: 2}, Records: []latencytest.Record{okRecord("a", 1), okRecord("b", 1)}}
	if rep := sloassert.Evaluate(ones, sloassert.MinDecodeRate(0.05, 90)); rep.OK() || !strings.Contains(rep.Outcomes[0].Note, "none of the 2 successful requests streamed two token events") {
		t.Errorf("only one-token answers: no rate at all, which must not pass, and the note must say why:\n%s", rep)
	}
}

// The report says a content_filter failure is the provider's filter,
// not latency.
func TestReportExplainsContentFilter(t *testing.T) {
	rec := okRecord("cf-1", 3)
	rec.Err, rec.Detail, rec.FinishReason = latencytest.ClassContentFilter, "the provider's content filter stopped the answer", "content_filter"
	res := &latencytest.Result{Run: latencytest.Run{Planned: 2}, Records: []latencytest.Record{rec, okRecord("ok", 3)}}
	out := sloassert.Evaluate(res, sloassert.MaxErrorRate(0.01)).String()
	if !strings.Contains(out, "content_filter 1") || !strings.Contains(out, "the provider's content filter stopped the answer; a policy outcome, not latency") {
		t.Errorf("report:\n%s", out)
	}
	if out := sloassert.Evaluate(&latencytest.Result{Run: latencytest.Run{Planned: 1}, Records: []latencytest.Record{okRecord("ok", 3)}}, sloassert.MaxErrorRate(0.01)).String(); strings.Contains(out, "policy outcome") {
		t.Errorf("the explanation without a content_filter failure:\n%s", out)
	}
}
