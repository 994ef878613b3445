package latencytest

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/format"
)

// Disclosure says how a result was measured, one box per item of a
// published 15-box benchmarking checklist (docs/sources.md), filled
// automatically. A box that cannot be
// filled is marked Missing: an empty box means "trust me".
type Disclosure struct {
	Boxes []Box `json:"boxes"`
	// Warnings are problems with how the result was put together that no
	// box holds whole, one sentence each: records.Merge warns when the
	// sources' run windows do not overlap. Nil for a single run.
	Warnings []string `json:"warnings,omitempty"`
	// Sources are the records files a merged result was joined from
	// (records.Merge), each with its counts, run window, client CPU/wall
	// and location. Nil for a single run.
	Sources []MergeSource `json:"sources,omitempty"`
	// Format names the format of records another tool measured, as
	// package records imported them ("vllm"); "" for this package's own.
	Format string `json:"format,omitempty"`
}

// Box is one checklist item.
type Box struct {
	N        int    `json:"n"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Missing  bool   `json:"missing,omitempty"`
}

// The checklist's questions, by box number.
var boxQuestions = [16]string{
	1:  "what was timed, and where",
	2:  "requests sent, kept, discarded",
	3:  "raw records",
	4:  "slow first calls dropped",
	5:  "cache",
	6:  "cold first request",
	7:  "concurrency",
	8:  "load levels",
	9:  "run window",
	10: "prompt mix and seed",
	11: "temperature and token caps",
	12: "model ID",
	13: "client CPU/wall",
	14: "client location",
	15: "runs kept",
}

// Box returns box n (1-15).
func (d Disclosure) Box(n int) Box {
	for _, b := range d.Boxes {
		if b.N == n {
			return b
		}
	}
	return Box{N: n, Question: boxQuestions[n], Answer: "not recorded", Missing: true}
}

// Missing returns the boxes left empty.
func (d Disclosure) Missing() []Box {
	var out []Box
	for _, b := range d.Boxes {
		if b.Missing {
			out = append(out, b)
		}
	}
	return out
}

// String renders one line per box (empty boxes say MISSING), then one
// line per warning.
func (d Disclosure) String() string {
	var sb strings.Builder
	for _, b := range d.Boxes {
		mark := ""
		if b.Missing {
			mark = "MISSING: "
		}
		fmt.Fprintf(&sb, "%2d. %s: %s%s\n", b.N, b.Question, mark, b.Answer)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&sb, "WARNING: %s\n", w)
	}
	return sb.String()
}

func (d *Disclosure) set(n int, answer string, missing bool) {
	b := Box{N: n, Question: boxQuestions[n], Answer: answer, Missing: missing}
	for i := range d.Boxes {
		if d.Boxes[i].N == n {
			d.Boxes[i] = b
			return
		}
	}
	d.Boxes = append(d.Boxes, b)
	slices.SortFunc(d.Boxes, func(a, b Box) int { return a.N - b.N })
}

// setRawRecords fills box 3 with where the raw records were written.
func (d *Disclosure) setRawRecords(where string) { d.set(3, where, where == "") }

// setLocation fills box 14.
func (d *Disclosure) setLocation(where string) {
	d.set(14, where, where == "")
	if where == "" {
		d.set(14, "no location label (set "+EnvLocation+" or Batch.Location)", true)
	}
}

// setLevels fills box 8 from a sweep's levels.
func (d *Disclosure) setLevels(levels []int) {
	s := fmt.Sprint(levels)
	if len(levels) >= 3 {
		d.set(8, "concurrency "+s+", side by side", false)
	} else {
		d.set(8, "only concurrency "+s+" tested (fewer than three load levels)", true)
	}
}

// noteUsage adds to boxes 1 and 5 what the server's usage reports allow:
// decode rates are event rates for the measured successes that reported
// no usage, and cached tokens that were never reported prove nothing. Box
// 1 also counts the requests resent without stream_options after the
// server refused it (see OpenAI), and the successes left out of decode
// rates (see Record.DecodeRate). It also notes retries in box 2 (see
// noteRetries).
func (d *Disclosure) noteUsage(r *Result) {
	d.noteRetries(r)
	d.noteConnections(r)
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
		d.set(1, b1.Answer+fmt.Sprintf("; the server refused stream_options: %d request(s) were resent once without it, each timed on the resent request (the refused one noted in its record), and later requests were sent without it, so usage came only where the server sends it unasked", resent), b1.Missing)
	}
	if n == 0 {
		return
	}
	if noRate > 0 {
		b1 := d.Box(1)
		d.set(1, b1.Answer+fmt.Sprintf("; %d of %d successes have no decode rate (one token, or every token in one event) and are left out of decode-rate figures", noRate, n), b1.Missing)
	}
	b1, b5 := d.Box(1), d.Box(5)
	switch {
	case noUsage == n:
		d.set(1, b1.Answer+"; decode rates are token events per second (events/s), not tokens/s: no request reported usage", b1.Missing)
	case noUsage > 0:
		d.set(1, b1.Answer+fmt.Sprintf("; decode rates of %d of %d requests are token events per second (events/s, no usage reported), the rest tokens/s", noUsage, n), b1.Missing)
	}
	switch {
	case cached == 0: // the count the box quotes is "not reported", never 0
		a := strings.Replace(b5.Answer, "0 cached prompt tokens reported", "cached prompt tokens not reported", 1)
		d.set(5, a+"; the server reported no cached-token count, so cache hits are not ruled out", b5.Missing)
	case cached < n:
		d.set(5, b5.Answer+fmt.Sprintf(" (cached-token counts reported by %d of %d requests)", cached, n), b5.Missing)
	}
}

// noteConnections adds to box 7 how many requests opened a connection
// (DNS, connect or TLS time recorded), when any did: "; 50 new
// connection(s), 0 of them during measured requests". A measured request
// on a new connection has the setup inside its TTFB and TTFT.
func (d *Disclosure) noteConnections(res *Result) {
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
		d.set(7, b.Answer+fmt.Sprintf("; %d new connection(s), %d of them during measured requests (setup inside their TTFB and TTFT)", opened, measured), b.Missing)
	}
}

// noteRetries adds to box 2, when any measured call made its HTTP requests
// through Instrument, how many calls retried and the first-attempt and
// with-retry p99 side by side: "retries: 3 of 100 calls retried, 104
// attempts in all; first-attempt p99 failed vs with-retry p99 1210.0ms".
func (d *Disclosure) noteRetries(r *Result) {
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
	d.set(2, b.Answer+fmt.Sprintf("; retries: %d of %d calls retried, %d attempts in all; first-attempt p99 %s vs with-retry p99 %s",
		r.Retried(), calls, attempts, format.In(first, unit), format.In(with, unit)), b.Missing)
}

// measurementBox is box 1, common to every runner.
const measurementBox = "on the client, monotonic clock: TTFT = first token of any kind (reasoning included), " +
	"first answer = first non-empty content, total = end of stream; failed requests count as infinitely slow"

// common fills the boxes every runner shares.
func (d *Disclosure) common(desc Description, models []string, start, end time.Time, cpu float64, location string, al alignment) {
	d.set(1, measurementBox, false)
	if desc.Client != "" {
		d.set(1, measurementBox+"; client: "+desc.Client, false)
	}
	d.set(3, "not written (run through a testing.TB wrapper to keep JSONL records)", true)
	d.set(9, fmt.Sprintf("%s to %s (%v)", start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), end.Sub(start).Round(time.Millisecond))+al.note(), false)
	switch {
	case len(models) > 0:
		d.set(12, fmt.Sprintf("%s (as the API named it; requested %q from %s)", strings.Join(models, ", "), desc.Model, orUnknown(desc.Endpoint)), false)
	case desc.Model != "":
		d.set(12, fmt.Sprintf("requested %q from %s; no response named a model", desc.Model, orUnknown(desc.Endpoint)), true)
	default:
		d.set(12, "unknown: the provider does not describe itself", true)
	}
	if virtualClock(start) {
		d.set(9, d.Box(9).Answer+", virtual time", false)
	}
	switch {
	case virtualClock(start):
		d.set(13, "not meaningful: the run used synctest's fake clock (virtual time)", false)
	case math.IsNaN(cpu):
		d.set(13, "not measured", true)
	case cpu > defaults.BusyClient:
		d.set(13, fmt.Sprintf("%.2f: above %.1f, the client is part of the tail", cpu, defaults.BusyClient), false)
	default:
		d.set(13, fmt.Sprintf("%.2f", cpu), false)
	}
	d.setLocation(location)
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
	if !sh.sharded() {
		return ""
	}
	return fmt.Sprintf("; shard %s (%s): %s %d, %d, %d … of the whole run's %d (%s of the whole run; records.Merge joins the shards)",
		sh, source, unit, sh.Index, sh.Index+sh.Count, sh.Index+2*sh.Count, whole, ids)
}

// shardSlots says, for box 7, how a sharded run shares its in-flight
// requests; the same words in every shard, so merged disclosures agree.
func shardSlots(sh Shard, slots int) string {
	if !sh.sharded() {
		return ""
	}
	return fmt.Sprintf(", shared by %d shards: %d each", sh.Count, slots)
}

// gapSummary renders the TTFT gaps: "p50 3%, p99 26%".
func gapSummary(gaps []RepeatGap) string {
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
func (d *Disclosure) noteMachine(m *MachineLoad) {
	if m == nil {
		return
	}
	b := d.Box(13)
	answer := b.Answer + "; " + m.String()
	if w := m.Warning(); w != "" {
		answer += "; WARNING: " + w
	}
	d.set(13, answer, b.Missing)
}

// partialNote is "; PARTIAL: <reason>" for a result cut short, to end
// box 2's counts; "" for a whole one.
func partialNote(partial bool, reason string) string {
	if partial {
		return "; PARTIAL: " + reason
	}
	return ""
}
