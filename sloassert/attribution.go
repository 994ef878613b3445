package sloassert

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
)

// Attribution: when a run scraped its server's metrics (Result.Server),
// each failed latency quantile of TTFT, first answer or total says how
// the server's own histograms split the same quantile over the same
// interval (Outcome.Server); when the responses carry the server's own
// latency (Record.ServerLatency, Bedrock's), the split is per request
// instead, with no metrics endpoint. The report's notes say what those
// figures can and cannot show. The verdict never changes.

// serverParts are, for each client clock, the server's stages that make
// it up, and the stage that spans them (the rest is the client's value
// less it).
var serverParts = map[Metric]struct {
	parts []servermetrics.Stage
	whole servermetrics.Stage
}{
	TTFT:        {[]servermetrics.Stage{servermetrics.Queue, servermetrics.Prefill}, servermetrics.TTFT},
	FirstAnswer: {[]servermetrics.Stage{servermetrics.Queue, servermetrics.Prefill}, servermetrics.TTFT},
	Total:       {[]servermetrics.Stage{servermetrics.Queue, servermetrics.Prefill, servermetrics.Decode, servermetrics.Inference}, servermetrics.E2E},
}

// attribute fills the Server line of rep's failed latency quantiles and
// adds the server's notes (its limits and problems) to rep.
func attribute(rep *Report, r *latencytest.Result) {
	iv, per := r.Server, ownLatencies(r)
	if iv == nil && per.n == 0 {
		return
	}
	for i := range rep.Outcomes {
		out := &rep.Outcomes[i]
		if out.OK || out.metric == "" || out.q == 0 {
			continue
		}
		if _, ok := serverParts[out.metric]; !ok {
			continue
		}
		if per.n > 0 { // exact per request: better than any bucket
			out.Server = per.attribution(out.metric, out.q, r)
		} else {
			out.Server = attribution(out.metric, out.q, r, iv)
		}
	}
	if iv != nil {
		rep.Notes = append(rep.Notes, serverNotes(r, iv)...)
	}
	if per.n > 0 {
		line := fmt.Sprintf("server latency per response (the server's own, as Bedrock's metrics.latencyMs): %d of %d measured requests carry it; it is exact per request, on the server's clock from when it started timing, so total less it is the network and the client, request by request", per.n, per.of)
		if per.over > 0 {
			line += fmt.Sprintf("; %d report more than the client's total (the server's clock, or its rounding)", per.over)
		}
		rep.Notes = append(rep.Notes, line)
	}
}

// ownLatency is the measured successful requests that carry the
// server's own latency (Record.ServerLatency): their totals, and total
// less that latency (the rest: network and client), index by index.
type ownLatency struct {
	total, server, rest latencytest.Sample
	n, of, over         int
}

// ownLatencies collects r's requests with a server latency.
func ownLatencies(r *latencytest.Result) ownLatency {
	recs := r.Measured()
	o := ownLatency{of: len(recs)}
	for _, rec := range recs {
		if rec.Err != "" || rec.ServerLatency <= 0 {
			continue
		}
		o.total, o.server = append(o.total, rec.Total), append(o.server, rec.ServerLatency)
		o.rest = append(o.rest, rec.Total-rec.ServerLatency)
		if rec.ServerLatency > rec.Total {
			o.over++
		}
	}
	o.n = len(o.total)
	return o
}

// attribution is a failed quantile's line from the per-request server
// latency: its quantile, the rest's quantiles, and, for total, the
// median share of the server in the requests at or over the client's
// quantile (at least half: inside the server). The server latency spans
// the whole answer, so a first-token clock is not split.
func (o ownLatency) attribution(m Metric, q float64, r *latencytest.Result) string {
	s, err := m.Sample(r)
	if err != nil || len(s) == 0 {
		return ""
	}
	qn := QuantileName(q)
	client := s.Quantile(q)
	var sb strings.Builder
	if client == latencytest.Failed {
		fmt.Fprintf(&sb, "client %s %s failed (failed requests rank last)", m, qn)
	} else {
		fmt.Fprintf(&sb, "client %s %s %s", m, qn, format.Duration(client))
	}
	fmt.Fprintf(&sb, "; server latency per response (%d of %d requests) %s %s", o.n, o.of, qn, format.Duration(o.server.Quantile(q)))
	rest := fmt.Sprintf("p50 %s, %s %s, max %s", format.Duration(o.rest.Quantile(0.5)), qn, format.Duration(o.rest.Quantile(q)), format.Duration(o.rest.Max()))
	if m != Total {
		fmt.Fprintf(&sb, "; it spans the whole answer, not split at the first token: the rest of each whole request (client + network) %s", rest)
		return sb.String()
	}
	fmt.Fprintf(&sb, "; the rest (client + network) per request %s", rest)
	if client == latencytest.Failed {
		return sb.String()
	}
	var shares []float64
	for i, t := range o.total {
		if t >= client && t > 0 {
			shares = append(shares, float64(o.server[i])/float64(t))
		}
	}
	if len(shares) == 0 {
		fmt.Fprintf(&sb, "; no request at or over the client's %s reports a server latency", qn)
		return sb.String()
	}
	slices.Sort(shares)
	share := stats.Quantile(shares, 0.5)
	label := "outside the server (client + network)"
	if share >= 0.5 {
		label = "inside the server (its own latency)"
	}
	fmt.Fprintf(&sb, "; in the %d requests at or over the client's %s, the server's part is %.0f%% of the total (median): %s", len(shares), qn, 100*share, label)
	return sb.String()
}

// attribution is one failed quantile's line: the client's value, the
// bucket that holds each server stage's value at the same quantile, the
// rest (client + network) as the range those buckets leave, and the part
// known, bucket bounds and all, to be at least half the client's value.
func attribution(m Metric, q float64, r *latencytest.Result, iv *servermetrics.Interval) string {
	s, err := m.Sample(r)
	if err != nil || len(s) == 0 || len(iv.Stages) == 0 {
		return ""
	}
	qn := QuantileName(q)
	client := s.Quantile(q)
	var sb strings.Builder
	if client == latencytest.Failed {
		fmt.Fprintf(&sb, "client %s %s failed (failed requests rank last)", m, qn)
	} else {
		fmt.Fprintf(&sb, "client %s %s %s", m, qn, format.Duration(client))
	}
	sp := serverParts[m]
	var parts []string
	label := ""
	for _, st := range append(slices.Clone(sp.parts), sp.whole) {
		d, ok := iv.Stage(st)
		if !ok || d.N == 0 {
			continue
		}
		e := d.Quantile(q)
		parts = append(parts, fmt.Sprintf("%s %s %s", st, qn, bucketText(e)))
		if label == "" && st != sp.whole && st != servermetrics.Inference && client != latencytest.Failed && 2*e.Lo >= client {
			label = map[servermetrics.Stage]string{servermetrics.Queue: "queueing", servermetrics.Prefill: "prefill", servermetrics.Decode: "decoding"}[st]
		}
	}
	if len(parts) == 0 {
		fmt.Fprintf(&sb, "; server (%s): no stage of %s observed over the interval", iv.Server, m)
		return sb.String()
	}
	fmt.Fprintf(&sb, "; server (%s) %s over the same interval", iv.Server, strings.Join(parts, ", "))
	if client == latencytest.Failed {
		return sb.String()
	}
	if m == FirstAnswer {
		// The first answer token follows any reasoning tokens, which the
		// server decodes after its TTFT: the difference is not outside it.
		sb.WriteString("; the rest is not split out (reasoning before the first answer is the server's decoding)")
	} else if whole, ok := iv.Stage(sp.whole); ok && whole.N > 0 {
		if e := whole.Quantile(q); !e.Above {
			lo, hi := max(client-e.Hi, 0), max(client-e.Lo, 0)
			fmt.Fprintf(&sb, "; the rest (client + network) %s-%s", format.Duration(lo), format.Duration(hi))
			if label == "" && 2*lo >= client {
				label = "outside the server (client + network)"
			}
		}
	}
	if label == "" {
		label = "no part known to be half of it (at this bucket resolution)"
	}
	sb.WriteString(": " + label)
	return sb.String()
}

// noteAndServer is an outcome's note and its attribution, for a table
// cell.
func noteAndServer(o Outcome) string {
	switch {
	case o.Server == "":
		return o.Note
	case o.Note == "":
		return "where the time went: " + o.Server
	}
	return o.Note + "; where the time went: " + o.Server
}

// bucketText is the bucket that holds a stage's quantile.
func bucketText(e servermetrics.Estimate) string {
	switch {
	case !e.OK:
		return "-"
	case e.Above:
		return "> " + e.Lo.String()
	}
	return "in " + e.Lo.String() + "-" + e.Hi.String()
}

// serverNotes are the report's lines on the server's metrics: what they
// cover, their limits, and what could not be read.
func serverNotes(r *latencytest.Result, iv *servermetrics.Interval) []string {
	var notes []string
	for _, p := range iv.Problems {
		notes = append(notes, "server metrics: "+p+" (the verdict does not depend on them)")
	}
	if len(iv.Stages) == 0 {
		return notes
	}
	n := 0
	for _, d := range iv.Stages {
		n = max(n, d.N)
	}
	sent := r.Counts().Sent
	line := fmt.Sprintf("server metrics (%s, %d scrapes over %s): the server finished %d requests, this run sent %d (warm-up included)",
		iv.Server, len(iv.Points), format.Duration(iv.End.Sub(iv.Start)), n, sent)
	switch {
	case n > sent:
		line += ": other clients' requests are in the server's figures"
	case n < sent:
		line += ": requests still in flight at the last scrape are not in them"
	}
	if w, ok := iv.Peak(servermetrics.Waiting); ok {
		line += fmt.Sprintf("; peak waiting %g", w)
	}
	if ru, ok := iv.Peak(servermetrics.Running); ok {
		line += fmt.Sprintf(", running %g", ru)
	}
	if kv, ok := iv.Peak(servermetrics.KVCache); ok {
		line += fmt.Sprintf(", KV cache %.0f%%", kv*100)
	}
	if iv.Series != "" {
		line += "; series read: " + iv.Series
	}
	notes = append(notes, line,
		"server metrics limits: each server figure is known to its histogram bucket only; the server times on its own clock from when it received the request; its histograms count every client of the server; quantiles of parts do not add up to the quantile of their sum")
	return notes
}

// ServerQueue is the objective "the server's own queue time, at its
// q-quantile over the run, is within budget", for teams that own the
// server: it reads the queue histogram of the server's metrics scraped
// around the run (latencytest.Result.Server; Batch.ServerMetrics), not
// the client's clocks. The quantile is known to its histogram bucket
// only: it passes when the whole bucket is within budget, fails when
// the whole bucket is over it, and is inconclusive when the budget lies
// inside the bucket (then the point policy gates on the interpolated
// estimate, Demonstrate fails and Refute passes). It fails, saying why,
// without server metrics, without a queue histogram (SGLang before its
// queue_time_seconds, TGI's fixtures), with no request the server
// finished, or with fewer than MinSamples(q) of them (unless
// AllowSmallSample). The server's counts include its other clients.
func ServerQueue(q float64, budget time.Duration, opts ...Option) Objective {
	name := fmt.Sprintf("server queue %s <= %s", QuantileName(q), format.Duration(budget))
	return Objective{Name: name, opts: collect(opts), judge: func(r *latencytest.Result, o options) Outcome {
		out := Outcome{Objective: name, Observed: "-", Budget: format.Duration(budget), severity: math.Inf(1)}
		iv := r.Server
		d, ok := iv.Stage(servermetrics.Queue)
		switch {
		case !(q > 0 && q < 1):
			out.Note = fmt.Sprintf("quantile %v is not in (0,1)", q)
		case budget <= 0:
			out.Note = "a budget of " + format.Duration(budget) + " judges nothing"
		case iv == nil:
			out.Note = "no server metrics: the run named no metrics endpoint (Batch.ServerMetrics; a spec's server_metrics)"
		case !ok:
			out.Note = fmt.Sprintf("the server's metrics (%s) hold no queue histogram", iv.Server)
			if len(iv.Problems) > 0 {
				out.Note += ": " + strings.Join(iv.Problems, "; ")
			}
		case d.N == 0:
			out.Note = "no request finished on the server over the run"
		case d.N < MinSamples(q) && !o.allowSmall:
			out.Note = fmt.Sprintf("%s needs n >= %d (have %d on the server)", QuantileName(q), MinSamples(q), d.N)
		}
		if out.Note != "" {
			out.Verdict = Fail
			return out
		}
		e := d.Quantile(q)
		out.Observed = format.Duration(e.Value)
		out.Margin = margin(e.Value, budget)
		out.severity = ratioOf(e.Value, budget)
		out.Note = fmt.Sprintf("bucket %s-%s, n = %d on the server (every client's)", e.Lo, e.Hi, d.N)
		switch {
		case e.Lo >= budget:
			out.Verdict, out.OK = Fail, false
		case !e.Above && e.Hi <= budget:
			out.Verdict, out.OK = Pass, true
		default:
			out.Verdict = Inconclusive
			out.OK = !e.Above && e.Value <= budget
			switch o.mode {
			case modeDemonstrate:
				out.OK = false
			case modeRefute:
				out.OK = true
			}
			out.addNote("the budget lies inside the bucket")
		}
		if e.Above {
			out.Note = fmt.Sprintf("above the last bucket (%s), n = %d on the server (every client's)", e.Lo, d.N)
			if out.Verdict == Inconclusive {
				out.addNote("the budget lies above the last bucket's bound")
			}
		}
		return out
	}}
}
