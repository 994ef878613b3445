package latencytest

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/machine"
)

// Disclosure says how a result was measured, one box per item of a
// published 15-box benchmarking checklist (docs/sources.md), filled
// automatically: Boxes, Box(n), Missing() and String(). A box that cannot
// be filled is marked Missing: an empty box means "trust me".
type Disclosure = disclosure.Disclosure

// setRawRecords names the raw records file (path) in d.Records and fills
// box 3 with where it was written.
func setRawRecords(d *Disclosure, path, where string) {
	d.Records = path
	d.Set(3, where, where == "")
}

// setLocation fills box 14.
func setLocation(d *Disclosure, where string) {
	d.Set(14, where, where == "")
	if where == "" {
		d.Set(14, "no location label (set "+EnvLocation+" or Batch.Location)", true)
	}
}

// setLevels fills box 8 from a sweep's levels.
func setLevels(d *Disclosure, levels []int) {
	s := fmt.Sprint(levels)
	if len(levels) >= 3 {
		d.Set(8, "concurrency "+s+", side by side", false)
	} else {
		d.Set(8, "only concurrency "+s+" tested (fewer than three load levels)", true)
	}
}

// noteUsage adds to boxes 1 and 5 what the server's usage reports allow:
// decode rates are event rates for the measured successes that reported
// no usage, and cached tokens that were never reported prove nothing. Box
// 1 also counts the requests resent without stream_options after the
// server refused it (see OpenAI), and the successes left out of decode
// rates (see Record.DecodeRate). It also notes retries in box 2 (see
// noteRetries).
func noteUsage(d *Disclosure, r *Result) {
	noteRetries(d, r)
	noteConnections(d, r)
	n, noUsage, cached, resent, noRate := 0, 0, 0, 0, 0
	for _, rec := range r.All() {
		if len(rec.Notes) > 0 && strings.HasPrefix(rec.Notes[0], streamOptionsNote) {
			resent++
		}
		if rec.Warmup || !rec.OK() {
			continue
		}
		n++
		if math.IsNaN(rec.DecodeRate()) {
			noRate++
		}
		if rec.decodeRateUnit() == unitEventsPerSecond {
			noUsage++
		}
		if rec.CachedReported {
			cached++
		}
	}
	if resent > 0 {
		b1 := d.Box(1)
		d.Set(1, b1.Answer+fmt.Sprintf("; the server refused stream_options: %d request(s) were resent once without it, each timed on the resent request (the refused one noted in its record), and later requests were sent without it, so usage came only where the server sends it unasked", resent), b1.Missing)
	}
	if n == 0 {
		return
	}
	if noRate > 0 {
		b1 := d.Box(1)
		d.Set(1, b1.Answer+fmt.Sprintf("; %d of %d successes have no decode rate (one token, or every token in one event) and are left out of decode-rate figures", noRate, n), b1.Missing)
	}
	b1, b5 := d.Box(1), d.Box(5)
	switch {
	case noUsage == n:
		d.Set(1, b1.Answer+"; decode rates are token events per second (events/s), not tokens/s: no request reported usage", b1.Missing)
	case noUsage > 0:
		d.Set(1, b1.Answer+fmt.Sprintf("; decode rates of %d of %d requests are token events per second (events/s, no usage reported), the rest tokens/s", noUsage, n), b1.Missing)
	}
	switch {
	case cached == 0: // the count the box quotes is "not reported", never 0
		a := strings.Replace(b5.Answer, "0 cached prompt tokens reported", "cached prompt tokens not reported", 1)
		d.Set(5, a+"; the server reported no cached-token count, so cache hits are not ruled out", b5.Missing)
	case cached < n:
		d.Set(5, b5.Answer+fmt.Sprintf(" (cached-token counts reported by %d of %d requests)", cached, n), b5.Missing)
	}
}

// noteConnections adds to box 7 how many requests opened a connection
// (DNS, connect or TLS time recorded), when any did: "; 50 new
// connection(s), 0 of them during measured requests". A measured request
// on a new connection has the setup inside its TTFB and TTFT.
func noteConnections(d *Disclosure, res *Result) {
	opened, measured := 0, 0
	for _, r := range res.All() {
		if r.DNS > 0 || r.Connect > 0 || r.TLS > 0 {
			opened++
			if !r.Warmup {
				measured++
			}
		}
	}
	if opened > 0 {
		b := d.Box(7)
		d.Set(7, b.Answer+fmt.Sprintf("; %d new connection(s), %d of them during measured requests (setup inside their TTFB and TTFT)", opened, measured), b.Missing)
	}
}

// noteRetries adds to box 2, when any measured call made its HTTP requests
// through Instrument, how many calls retried and the first-attempt and
// with-retry p99 side by side: "retries: 3 of 100 calls retried, 104
// attempts in all; first-attempt p99 failed vs with-retry p99 1210.0ms".
func noteRetries(d *Disclosure, r *Result) {
	instrumented := false
	for _, rec := range r.All() {
		if !rec.Warmup && len(rec.Attempts) > 0 {
			instrumented = true
		}
	}
	if !instrumented {
		return
	}
	calls, attempts := r.Attempts()
	first, with := r.FirstAttempt().Quantile(0.99), r.Total().Quantile(0.99)
	unit := format.UnitFor(first, with)
	b := d.Box(2)
	d.Set(2, b.Answer+fmt.Sprintf("; retries: %d of %d calls retried, %d attempts in all; first-attempt p99 %s vs with-retry p99 %s",
		r.Retried(), calls, attempts, format.In(first, unit), format.In(with, unit)), b.Missing)
}

// common fills the boxes every runner shares.
func common(d *Disclosure, desc Description, models []string, start, end time.Time, cpu float64, location string, al alignment) {
	d.Set(1, disclosure.Measurement, false)
	if desc.Client != "" {
		d.Set(1, disclosure.Measurement+"; client: "+desc.Client, false)
	}
	d.Set(3, "not written (run through a testing.TB wrapper to keep JSONL records)", true)
	d.Set(9, fmt.Sprintf("%s to %s (%v)", start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), end.Sub(start).Round(time.Millisecond))+al.note(), false)
	switch {
	case len(models) > 0:
		d.Set(12, fmt.Sprintf("%s (as the API named it; requested %q from %s)", strings.Join(models, ", "), desc.Model, orUnknown(desc.Endpoint)), false)
	case desc.Model != "":
		d.Set(12, fmt.Sprintf("requested %q from %s; no response named a model", desc.Model, orUnknown(desc.Endpoint)), true)
	default:
		d.Set(12, "unknown: the provider does not describe itself", true)
	}
	if machine.VirtualClock(start) {
		d.Set(9, d.Box(9).Answer+", virtual time", false)
	}
	switch {
	case machine.VirtualClock(start):
		d.Set(13, "not meaningful: the run used synctest's fake clock (virtual time)", false)
	case math.IsNaN(cpu):
		d.Set(13, "not measured", true)
	case cpu > defaults.BusyClient:
		d.Set(13, fmt.Sprintf("%.2f: above %.1f, the client is part of the tail", cpu, defaults.BusyClient), false)
	default:
		d.Set(13, fmt.Sprintf("%.2f", cpu), false)
	}
	setLocation(d, location)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed endpoint"
	}
	return s
}

// modelsOf lists the model IDs the responses named (Record.Model: the
// providers leave it empty when no response named one, so that a model
// only the request named is never shown as the API's).
func modelsOf(recs []Record) []string {
	var out []string
	for i := range recs {
		if m := recs[i].Model; m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// shardIDs says, for box 2, which part of the whole run a shard sent:
// "; shard 1/4 (TAILGUARD_SHARD): request 1, 5, 9 … of the whole run's
// 85 (trace IDs of the whole run)"; "" unsharded.
func shardIDs(sh Shard, source string, whole int, unit, ids string) string {
	if !sh.Sharded() {
		return ""
	}
	return fmt.Sprintf("; shard %s (%s): %s %d, %d, %d … of the whole run's %d (%s of the whole run; records.Merge joins the shards)",
		sh, source, unit, sh.Index, sh.Index+sh.Count, sh.Index+2*sh.Count, whole, ids)
}

// shardSlots says, for box 7, how a sharded run shares its in-flight
// requests; the same words in every shard, so merged disclosures agree.
func shardSlots(sh Shard, slots int) string {
	if !sh.Sharded() {
		return ""
	}
	return fmt.Sprintf(", shared by %d shards: %d each", sh.Count, slots)
}

// gapSummary renders the TTFT gaps: "p50 3%, p99 26%".
func gapSummary(gaps []disclosure.RepeatGap) string {
	var parts []string
	for _, g := range gaps {
		if g.Metric == "ttft" {
			parts = append(parts, fmt.Sprintf("TTFT p%g %.0f%%", g.Q*100, g.Gap*100))
		}
	}
	return strings.Join(parts, ", ")
}

func lookupEnv(k string) string { return os.Getenv(k) }

func lookupEnvOK(k string) (string, bool) { return os.LookupEnv(k) }

// noteMachine adds the machine's figures to box 13 and, when they say the
// timings may include scheduling delay of the client, a warning there.
func noteMachine(d *Disclosure, m *MachineLoad) {
	if m == nil {
		return
	}
	b := d.Box(13)
	answer := b.Answer + "; " + m.String()
	if w := m.Warning(); w != "" {
		answer += "; WARNING: " + w
	}
	d.Set(13, answer, b.Missing)
}

// partialNote is "; PARTIAL: <reason>" for a result cut short, to end
// box 2's counts; "" for a whole one.
func partialNote(partial bool, reason string) string {
	if partial {
		return "; PARTIAL: " + reason
	}
	return ""
}
