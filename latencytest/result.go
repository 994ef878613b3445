package latencytest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/latencytest/internal/summary"
	"github.com/tailguard/tailguard/sample"
	"github.com/tailguard/tailguard/servermetrics"
)

// Sample is a set of latencies, one per measured request (or per
// inter-token gap), failed ones as Failed: package sample's type, with
// its quantiles, mean, spread and Summary.
type Sample = sample.Sample

// Run is what a result says about the run that measured it, shared by
// Result and ChainResult (whose fields it is).
type Run struct {
	// Planned is how many requests (for a ChainResult, chains) the run
	// meant to send.
	Planned int `json:"planned"`
	// Partial is set when the run stopped before sending everything;
	// PartialReason says why.
	Partial       bool   `json:"partial,omitempty"`
	PartialReason string `json:"partial_reason,omitempty"`
	// Start and End bound the run (wall clock).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// CPUPerWall is the client's CPU seconds per wall second over the run
	// (NaN when unknown). Above 0.7 the client is part of the tail.
	CPUPerWall float64 `json:"cpu_per_wall"`
	// Machine is what other processes did to the client's timings over
	// the run (PSI, load, timer lateness; see MachineLoad); for a merge,
	// every source's figures (MachineLoad.Sources); nil when not measured
	// (a baseline read from records).
	Machine *MachineLoad `json:"machine,omitempty"`
	// Disclosure says how it was measured.
	Disclosure Disclosure `json:"disclosure"`
	// Shard is the part of a split run (see Shard) this result measured:
	// set by a runner under TAILGUARD_SHARD or a Shard field, zero for a
	// whole run and for what records.Merge joins. sloassert fails every
	// objective on a shard ("merge the shards, then judge") unless it
	// allows one (sloassert.AllowShard).
	Shard Shard `json:"shard,omitzero"`
}

// Result is what a batch measured: every record, warm-up included, in
// submission order. A run of more than 100,000 planned requests (or
// RecordMode RecordsCompact) keeps compact records instead (see RecordsCompact):
// Records is then nil, and All, Len and Record read them; every method
// gives the same figures either way, ITL within 1%.
type Result struct {
	// Records holds full records (nil for compact ones: use All).
	Records []Record `json:"records"`
	Run
	// RepeatGaps holds the run-to-run gaps when the batch was repeated.
	RepeatGaps []disclosure.RepeatGap  `json:"repeat_gaps,omitempty"`
	Server     *servermetrics.Interval `json:"server,omitempty"` // the server's own metrics over the run (Batch.ServerMetrics), or nil

	compact *compactStore // compact records (Records nil): see RecordsCompact
	stream  *recordStream // where a compact run streams its records
}

// Measured returns copies of the non-warm-up records.
func (r *Result) Measured() []Record {
	out := make([]Record, 0, r.Len())
	for _, rec := range r.All() {
		if !rec.Warmup {
			out = append(out, *rec)
		}
	}
	return out
}

// sample collects one value per measured record; failed records give
// Failed, and a value that was not observed gives Failed too.
func (r *Result) sample(get func(*Record) time.Duration) Sample {
	s := make(Sample, 0, r.Len())
	for _, rec := range r.All() {
		if rec.Warmup {
			continue
		}
		v := get(rec)
		if !rec.OK() && !cancelled(rec) || v < 0 { // a cancel's: what it saw (cancel.go)
			v = Failed
		}
		s = append(s, v)
	}
	return s
}

// TTFT is the time to first token of each measured request (Failed for a
// failed request, and for one that never observed a token: see
// Record.TokensUnobserved).
func (r *Result) TTFT() Sample {
	return r.sample(func(x *Record) time.Duration {
		if x.TokensUnobserved() {
			return NotObserved
		}
		return x.TTFT
	})
}

// FirstAnswer is the time to the first answer token of each measured
// request (Failed for a failed request, and for one that never observed a
// token).
func (r *Result) FirstAnswer() Sample {
	return r.sample(func(x *Record) time.Duration {
		if x.TokensUnobserved() {
			return NotObserved
		}
		return x.FirstAnswer
	})
}

// Total is the total time of each measured request (Failed for a failed
// request, and for one the client cancelled: it never ended).
func (r *Result) Total() Sample {
	return r.sample(func(x *Record) time.Duration { return ended(x, x.Total) })
}

// MaxGap is the longest inter-token silence of each measured request
// (Failed for a failed request, and for one with no token event: a
// provider that does not observe tokens cannot vouch for its silences).
func (r *Result) MaxGap() Sample {
	return r.sample(func(x *Record) time.Duration {
		if x.TokenEvents == 0 {
			return NotObserved
		}
		return x.MaxGap
	})
}

// ITL pools every inter-token gap of the measured requests. A failed
// request adds its gaps and one Failed value (its last silence never
// ended), so failures can only make the figure worse. For compact records
// (see RecordsCompact) it is their sketch expanded (each value within 1%, 8
// bytes a gap: for very large runs use ITLQuantile).
func (r *Result) ITL() Sample {
	if r.compact != nil {
		return r.compact.ITL().Sample()
	}
	var s Sample
	for _, rec := range r.All() {
		if !rec.Warmup {
			s = rec.Gaps.AppendTo(s)
			if !rec.OK() && !cancelled(rec) {
				s = append(s, Failed)
			}
		}
	}
	return s
}

// itlSummary is ITL().Summarize(), from the sketch for compact records.
func (r *Result) itlSummary() sample.Summary {
	if r.compact != nil {
		return sample.Summary(r.compact.ITL().Summarize())
	}
	return r.ITL().Summarize()
}

// decodeRateUnit is the unit of DecodeRates: unitEventsPerSecond when any
// measured success reported no usage (its rate counts token events), else
// unitTokensPerSecond; "" when no measured request succeeded.
func (r *Result) decodeRateUnit() string {
	unit := ""
	for _, rec := range r.All() {
		if !rec.Warmup && rec.OK() {
			if unit = rec.decodeRateUnit(); unit == unitEventsPerSecond {
				return unit
			}
		}
	}
	return unit
}

// Counts accounts for every request sent.
func (r *Result) Counts() Counts {
	c := Counts{Planned: r.Planned, Sent: r.Len()}
	for _, rec := range r.All() {
		switch {
		case rec.Warmup:
			c.Discarded++
		case rec.OK():
			c.Kept++
		case cancelled(rec):
			c.Cancelled++
		default:
			c.Failed++
		}
	}
	return c
}

// ErrorRate is the fraction of measured requests that failed (a cancel is
// in neither part: see Cancel); NaN when no request was measured.
func (r *Result) ErrorRate() float64 {
	c := r.Counts()
	if c.Kept+c.Failed == 0 {
		return math.NaN()
	}
	return float64(c.Failed) / float64(c.Kept+c.Failed)
}

// Errors counts the measured failures by class (a cancel is none).
func (r *Result) Errors() map[string]int {
	m := map[string]int{}
	for _, rec := range r.All() {
		if !rec.Warmup && !rec.OK() && !cancelled(rec) {
			m[rec.Err]++
		}
	}
	return m
}

// errorExamples lists the measured failures by class, most frequent
// first (ties by class), each with its first request as an example; nil
// when nothing failed.
func (r *Result) errorExamples() []ErrorExample {
	var out []ErrorExample
	at := map[string]int{}
	for _, rec := range r.All() {
		if rec.Warmup || rec.OK() || cancelled(rec) {
			continue
		}
		k, ok := at[rec.Err]
		if !ok {
			k = len(out)
			at[rec.Err] = k
			out = append(out, ErrorExample{Class: rec.Err, ID: rec.ID, Detail: rec.Detail})
		}
		out[k].Count++
	}
	slices.SortStableFunc(out, func(a, b ErrorExample) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Class, b.Class)
	})
	return out
}

// cachedTokens sums usage.prompt_tokens_details.cached_tokens over the
// measured requests: 0 proves the prompts missed the provider's cache.
func (r *Result) cachedTokens() int {
	n := 0
	for _, rec := range r.All() {
		if !rec.Warmup {
			n += rec.CachedTokens
		}
	}
	return n
}

// FirstAttempt is the first attempt's total time of each measured call,
// Failed when it failed: the latency without retries, to set beside
// Total (the latency with them). A call with one attempt or none counts
// as Total does, so that without retries the two samples agree; a call
// with several counts its first attempt's Total (Attempt.Total), Failed
// when that attempt failed.
func (r *Result) FirstAttempt() Sample {
	return r.sample(func(x *Record) time.Duration {
		if len(x.Attempts) < 2 {
			return x.Total
		}
		if a := x.Attempts[0]; a.OK() {
			return a.Total
		}
		return Failed
	})
}

// Attempts counts the measured calls and the attempts they made in all: a
// call made through Instrument counts its HTTP requests (retries and tool
// calls alike), any other call counts one.
func (r *Result) Attempts() (calls, attempts int) {
	for _, rec := range r.All() {
		if !rec.Warmup {
			calls++
			attempts += max(1, len(rec.Attempts))
		}
	}
	return calls, attempts
}

// Retried counts the measured calls that made more than one attempt.
func (r *Result) Retried() int {
	n := 0
	for _, rec := range r.All() {
		if !rec.Warmup && len(rec.Attempts) > 1 {
			n++
		}
	}
	return n
}

// Windows splits the run into consecutive windows of length d from its
// Start to its last request's start (a 48-hour soak in 6-hour windows
// gives 8), for drift over time: each window holds the records that
// started in it, in submission order. A window with no request is kept,
// empty, so the indexes stay regular. A Result cut short (Partial) passes
// that on to its last window. It panics when d is not positive or would
// make more than 100,000 windows (CheckWindows says why).
func (r *Result) Windows(d time.Duration) []Window {
	return windowsOf(r, d)
}

// windowCount is how many windows of length d Windows cuts the run into:
// 1 + the last request's start offset / d (0 for a run with no record or
// a d that is not positive). It allocates nothing.
func (r *Result) windowCount(d time.Duration) int {
	if d <= 0 || r.Len() == 0 {
		return 0
	}
	return int(min(uint64(r.lastStart()/d)+1, math.MaxInt))
}

// lastStart is the latest start of a record, from the run's Start.
func (r *Result) lastStart() time.Duration {
	last := time.Duration(0)
	for _, rec := range r.All() {
		last = max(last, rec.Start.Sub(r.Start))
	}
	return last
}

// CheckWindows returns an error unless Windows can cut r into windows of
// length d: d must be positive and make at most 100,000 windows. The
// error says why: "a 34s run in windows of 6ns makes 5666666667 windows
// (more than 100000): 6ns is 6 nanoseconds, a bare number where a duration
// belongs (write 6*time.Hour or 6*time.Minute)", naming a bare count of
// nanoseconds as the likely typo.
func (r *Result) CheckWindows(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("latencytest: window length %v is not positive", d)
	}
	if r.Len() == 0 {
		return nil
	}
	last := r.lastStart()
	n := uint64(last/d) + 1
	if n <= maxWindows {
		return nil
	}
	s := fmt.Sprintf("a %v run in windows of %v makes %d windows (more than %d)", last, d, n, maxWindows)
	if d < time.Microsecond {
		s += fmt.Sprintf(": %v is %d nanoseconds, a bare number where a duration belongs (write %d*time.Hour or %d*time.Minute)", d, int64(d), int64(d), int64(d))
	} else {
		s += ": choose a longer window"
	}
	return fmt.Errorf("latencytest: %s", s)
}

// ColdStarts is the TTFT of every request that may have met a cold start,
// judged on its own (sloassert.MaxColdStart) rather than hidden with the
// warm-up or averaged into steady state: the run's first request, each
// request sent after an idle minute with nothing of this run in flight,
// and each request the fake provider says it cold-started
// (Record.Injected holds "cold_start="), whatever the gap. A warm-up
// request is one only for one of those reasons. A failed or unobserved
// TTFT is Failed. The measured ones stay in the steady-state figures too:
// nothing is hidden.
func (r *Result) ColdStarts() Sample { return r.coldStartsAfter(defaultIdleGap) }

// coldStartsAfter is ColdStarts with another idle gap.
func (r *Result) coldStartsAfter(idle time.Duration) Sample {
	cs := r.ColdStartCandidates(idle)
	s := make(Sample, len(cs))
	for i, c := range cs {
		s[i] = c.TTFT
	}
	return s
}

// ColdStartCandidates returns every cold-start candidate with the gap
// idle (see ColdStarts), in Records order, each with what the warm
// requests of its prompt class reach (ColdStart.WarmReach, a quantile of
// their distribution, not a shift of its median), so a candidate is
// compared like with like whatever its class's prefill and spread.
func (r *Result) ColdStartCandidates(idle time.Duration) []ColdStart {
	return coldStartsOf(r, idle)
}

// fromSchedule collects one value per measured open-loop record; failed
// records give Failed, and so does a record sent without a schedule (a
// closed loop cannot vouch for the waits it imposed on itself).
func (r *Result) fromSchedule(get func(*Record) time.Duration) Sample {
	return r.sample(func(x *Record) time.Duration {
		if !x.OpenLoop {
			return NotObserved
		}
		return get(x)
	})
}

// FromSchedule is the time from each measured request's scheduled send to
// the end of its response (Record.FromSchedule: StartDelay + Total), so a
// request that waited to start (MaxInFlight full, a busy client) counts
// its wait. Failed for a failed request, and for a request not sent on a
// schedule (not an OpenLoop's: a closed loop hides its waits, so it cannot
// give this figure).
func (r *Result) FromSchedule() Sample {
	return r.fromSchedule(func(x *Record) time.Duration { return ended(x, x.StartDelay+x.Total) })
}

// TTFTFromSchedule is the time from each measured request's scheduled
// send to its first token (StartDelay + TTFT). Failed as in FromSchedule,
// and for a request that never observed a token (Record.TokensUnobserved).
func (r *Result) TTFTFromSchedule() Sample {
	return r.fromSchedule(func(x *Record) time.Duration {
		if x.TokensUnobserved() || x.TTFT < 0 {
			return NotObserved
		}
		return x.StartDelay + x.TTFT
	})
}

// Lag says whether the client fell behind its schedule: late is how many
// open-loop records (warm-up included: every request was due) started
// 1ms or more after their scheduled send, and max is the
// largest StartDelay of all. Both are 0 for a closed loop.
func (r *Result) Lag() (late int, max time.Duration) {
	for _, rec := range r.All() {
		if !rec.OpenLoop {
			continue
		}
		if rec.StartDelay >= lateStart {
			late++
		}
		if rec.StartDelay > max {
			max = rec.StartDelay
		}
	}
	return late, max
}

// lagNote renders Lag for the disclosure's box 13.
func (r *Result) lagNote(o OpenLoop, st loopStats) string {
	late, most := r.Lag()
	if late == 0 {
		return fmt.Sprintf("kept its schedule: no request started %v or more late (longest start delay %v)", lateStart, most)
	}
	why := "the client itself was slow to start them"
	if st.fullFor > 0 {
		why = fmt.Sprintf("MaxInFlight %d full for %v in all", o.MaxInFlight, st.fullFor.Round(time.Millisecond))
	}
	return fmt.Sprintf("fell behind its schedule: %d of %d requests started late, by up to %v (%s); their waits count in FromSchedule",
		late, r.Len(), most.Round(time.Millisecond), why)
}

// openLoop reports whether any record was sent on an open loop's schedule.
func (r *Result) openLoop() bool {
	for _, rec := range r.All() {
		if rec.OpenLoop {
			return true
		}
	}
	return false
}

// Summarize computes the ResultSummary (Test and Label are left empty).
func (r *Result) Summarize() ResultSummary {
	s := ResultSummary{
		Counts: r.Counts(), ErrorRate: r.ErrorRate(), Errors: r.Errors(), ErrorExamples: r.errorExamples(),
		TTFT: r.TTFT().Summarize(), FirstAnswer: r.FirstAnswer().Summarize(), Total: r.Total().Summarize(),
		MaxGap: r.MaxGap().Summarize(), ITL: r.itlSummary(), CPUPerWall: r.CPUPerWall,
		Partial: r.PartialReason, RepeatGaps: r.RepeatGaps, Disclosure: r.Disclosure,
		Model: strings.Join(r.models(), ", "), DecodeRateUnit: r.decodeRateUnit(), Shard: r.Shard.String(),
	}
	s.Machine = r.Machine
	if r.openLoop() {
		fs, tf := r.FromSchedule().Summarize(), r.TTFTFromSchedule().Summarize()
		s.FromSchedule, s.TTFTFromSchedule = &fs, &tf
		s.LateStarts, s.MaxStartDelay = r.Lag()
	}
	for i, rec := range r.All() {
		switch c := rec.Concurrency; {
		case i == 0:
			s.Concurrency = c
		case c != s.Concurrency:
			s.Concurrency = 0 // mixed (merged records)
		}
	}
	return s
}

// MarshalJSON writes a NaN CPU/wall as null, and compact records as
// records (without gaps or answers: see RecordsCompact).
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		*plain
		Records    recordsJSON `json:"records"`
		CPUPerWall *float64    `json:"cpu_per_wall"`
	}{(*plain)(r), recordsJSON{r}, summary.Finite(r.CPUPerWall)})
}

// recordsJSON writes a result's records, full or compact, as an array.
type recordsJSON struct{ r *Result }

func (j recordsJSON) MarshalJSON() ([]byte, error) {
	if j.r.compact == nil && j.r.Records == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, rec := range j.r.All() {
		if i > 0 {
			b = append(b, ',')
		}
		e, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		b = append(b, e...)
	}
	return append(b, ']'), nil
}

// snapshot is the result so far, for a sequential batch's Until: the
// records are copied, so Until may keep it.
func (r *Result) snapshot() *Result {
	var c *compactStore
	if r.compact != nil {
		c = r.compact.clone()
	}
	return &Result{
		Run:     Run{Planned: r.Planned, Partial: r.Partial, PartialReason: r.PartialReason, Start: r.Start, End: time.Now(), CPUPerWall: math.NaN()},
		Records: slices.Clone(r.Records),
		compact: c,
	}
}

// sink reserves n slots of r's records (r may be nil: full records,
// nowhere else).
func (r *Result) sink(n int) *recordSink {
	s := &recordSink{res: r}
	if r != nil && r.compact != nil {
		s.first = r.compact.Reserve(n)
	} else {
		s.full = make([]Record, n)
	}
	return s
}

// keep sets how r keeps the records of a run of planned requests: compact
// per mode (see RecordMode), and then streamed to the records file that
// Measure put in ctx. The error names an unknown mode.
func (r *Result) keep(ctx context.Context, mode RecordMode) error {
	compact, err := mode.compactFor(r.Planned)
	if err != nil {
		return fmt.Errorf("latencytest: %w", err)
	}
	if compact {
		r.compact = newCompactStore(r.Start)
		if st, ok := ctx.Value(streamKey{}).(*recordStream); ok {
			r.stream = st
		}
	}
	return nil
}

// WriteRecords writes r's records, full or compact, as WriteRecords does
// (JSONL, then the end line), the answer text left out unless
// keepContent. Compact records are written as they are kept: no gaps, no
// answer (see RecordsCompact).
func (r *Result) WriteRecords(w io.Writer, keepContent bool) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	n := 0
	for _, rec := range r.All() {
		out := rec
		if !keepContent && rec.Content != "" {
			c := *rec
			c.Content = ""
			out = &c
		}
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("latencytest: writing record %s: %w", rec.ID, err)
		}
		n++
	}
	if err := enc.Encode(recordsEnd{Records: &n}); err != nil {
		return fmt.Errorf("latencytest: writing the end of records: %w", err)
	}
	return bw.Flush()
}

// compacted reports whether r keeps compact records (see RecordsCompact):
// Records is then nil, and All, Len and Record read them.
func (r *Result) compacted() bool { return r.compact != nil }

// toCompact converts r's records to compact form in place, as a run with
// RecordsCompact keeps them; compacting a compact result does nothing.
func (r *Result) toCompact() {
	if r.compact != nil {
		return
	}
	c := newCompactStore(r.Start)
	for i := range r.Records {
		c.append(&r.Records[i])
	}
	r.compact, r.Records = c, nil
}

// ITLQuantile is ITL().Quantile(q) without expanding the gaps: for
// compact records it comes from their sketch, within 1% (plus the
// nanosecond it is rounded to) of the exact quantile, Failed where that
// is Failed. It panics if q is outside [0,1].
func (r *Result) ITLQuantile(q float64) time.Duration {
	if r.compact != nil {
		return r.compact.ITL().Quantile(q)
	}
	return r.ITL().Quantile(q)
}

// Len is the number of records, warm-up included (len(Records) for full
// records).
func (r *Result) Len() int {
	if r.compact != nil {
		return r.compact.Len()
	}
	return len(r.Records)
}

// Record returns a copy of record i (in submission order), full or
// compact; it panics when i is out of range.
func (r *Result) Record(i int) Record {
	if r.compact == nil {
		return r.Records[i]
	}
	var rec Record
	r.compact.decode(i, &rec)
	return rec
}

// All yields every record with its index, in submission order. For full
// records it yields pointers into Records; for compact records, a record
// decoded into a buffer that the next step reuses: copy it to keep it.
func (r *Result) All() iter.Seq2[int, *Record] {
	return func(yield func(int, *Record) bool) {
		if r.compact == nil {
			for i := range r.Records {
				if !yield(i, &r.Records[i]) {
					return
				}
			}
			return
		}
		var rec Record
		for i := range r.compact.Len() {
			r.compact.decode(i, &rec)
			if !yield(i, &rec) {
				return
			}
		}
	}
}

// models lists the models the records named, sorted (modelsOf for
// either form).
func (r *Result) models() []string {
	if r.compact == nil {
		return modelsOf(r.Records)
	}
	var out []string
	for _, rec := range r.All() {
		if m := rec.Model; m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// retainedBytes is about how much memory r's records hold: for compact
// records their store (chunks, slots, strings, sketch); for full records
// the Record structs, their gaps, strings and answers.
func (r *Result) retainedBytes() int {
	if r.compact != nil {
		return r.compact.Bytes()
	}
	n := 0
	for i := range r.Records {
		rec := &r.Records[i]
		n += recordSize + rec.Gaps.Retained() + len(rec.ID) + len(rec.Content) + len(rec.Detail)
	}
	return n
}
