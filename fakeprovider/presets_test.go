package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
)

// Every preset against the published numbers it was built from. Each
// preset's subtest drives fresh in-memory fakes the way its study drove the
// real endpoint (same prompt size, token cap and TTFT definition;
// sequential requests, split over two clients that never make anything
// queue; a unique leading nonce so the prefix cache misses; an X-Request-ID
// per request), computes each published statistic (numpy's linear
// percentiles; CV% = sample sd (n-1) / mean × 100) and requires it within
// 15% of the published value. What 2,000 requests cannot pin within 15%
// (rates of a few percent or less: errors, stalls, empty answers, waits
// over 60 s; a p95 or p99 or CV in a flat or few-per-mille tail) and TTFTs
// at other prompt sizes are measured on 200,000 plans drawn directly from
// the profile, exactly as the fake draws them, and marked "draws" in the
// table. A comment at each such row gives the standard error at n = 2,000.
//
// Everything runs on synctest's clock: a 20-minute stall costs nothing. The
// cost is the streamed events (GLM-5.3 alone streams ~3.8M tokens), so the
// requests are read by streamCall, a reader that classifies each SSE event
// by its bytes instead of decoding its JSON (5x cheaper under -race);
// TestPresetStreamCallMatchesDo checks it against do.

const (
	presetRequests = 2000    // requests per preset
	presetChains   = 300     // chains of chainCalls calls, unless a row needs more
	chainCalls     = 10      // calls per chain, as in source 000
	directDraws    = 200_000 // plans drawn directly, for rare events
	tolerance      = 0.15    // |measured/published - 1|
)

// ms is a published latency given in (fractional) milliseconds.
func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// study is how a seed drove the real endpoint.
type study struct {
	base         string // the prompt after the nonce
	maxTokens    int
	maxField     string // "max_tokens" or "max_completion_tokens"
	temperature  float64
	promptTokens int // what the fake counts for nonce+base (characters/4)
}

// nonceLen is the length of every nonce: the prompt's first 64-character
// cache block is unique, so the prefix cache misses.
const nonceLen = 16

func nonce(i int) string { return fmt.Sprintf("nonce %09d ", i) }

// The short fixed prompt of sources 000 and 004: with the nonce 91 characters,
// 22 tokens (the endpoints counted 20 / 83 / 25 for mistral / gpt-oss /
// maverick).
const shortPrompt = "Reply with a two-sentence summary of why caching matters for LLM inference."

// mediumPrompt is source 002's medium prompt: 1,100 tokens (4,400 characters
// with the nonce; 002's were 1,035-1,133 tokens).
var mediumPrompt = func() string {
	const sentence = "Summarise this incident log and name the three most likely causes of the latency spike. "
	s := strings.Repeat(sentence, 4400/len(sentence)+1)
	return s[:4400-nonceLen]
}()

var (
	// study000 is source 000: streaming, temperature 0, max_tokens 64, the
	// short prompt; TTFT is the first content token.
	study000 = study{base: shortPrompt, maxTokens: 64, maxField: "max_tokens", promptTokens: (nonceLen + len(shortPrompt)) / 4}
	// study002 is source 002's medium prompt: temperature 0.2,
	// max_completion_tokens 2000; TTFT is the first token of any kind.
	study002 = study{base: mediumPrompt, maxTokens: 2000, maxField: "max_completion_tokens", temperature: 0.2, promptTokens: 1100}
	// study004 is source 004: the short fixed prompt, temperature 0, TTFT
	// only. 004 does not give its token cap; 1 keeps the test cheap and
	// cannot change a TTFT.
	study004 = study{base: shortPrompt, maxTokens: 1, maxField: "max_tokens", promptTokens: (nonceLen + len(shortPrompt)) / 4}
)

// chainFollowUp is appended to the history after each answer, as source 000's
// harness appended its next instruction (the history grew ~80 tokens a call).
const chainFollowUp = "Continue: add one more sentence on the same point."

func (s study) body(model, prompt string) []byte {
	b, err := json.Marshal(map[string]any{
		"model":          model,
		"messages":       []map[string]string{{"role": "user", "content": prompt}},
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
		"temperature":    s.temperature,
		s.maxField:       s.maxTokens,
	})
	if err != nil {
		panic(err)
	}
	return b
}

// call is what streamCall saw of one request; times are since it was sent.
type call struct {
	id          string
	status      int
	firstTok    time.Duration // first token of any kind; -1 when none
	firstAnswer time.Duration // first non-empty delta.content; -1 when none
	lastTok     time.Duration // -1 when none
	end         time.Duration // when the body ended
	events      int           // SSE events that carried tokens
	completion  int           // usage.completion_tokens; -1 when absent
	finish      string
	done        bool   // saw data: [DONE]
	answer      string // the content
	stall       time.Duration
}

var (
	deltaKey     = []byte(`"delta":{`)
	contentKey   = []byte(`"content":"`)
	reasoningKey = []byte(`"reasoning_content":"`)
	finishKey    = []byte(`"finish_reason":"`)
)

// streamCall sends one streamed chat request with trace ID id and reads it
// to the end. It reads the fake's SSE events by their bytes (the fake writes
// each event on one line, content first in its delta, text without escapes)
// and decodes JSON only for the usage event and for any event it does not
// recognise.
func streamCall(t testing.TB, c *http.Client, id string, body []byte) call {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://fake/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Request-ID", id)
	r := call{id: id, firstTok: -1, firstAnswer: -1, lastTok: -1, completion: -1}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	if r.status != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		r.end = time.Since(start)
		return r
	}
	var answer []byte
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: reading the stream: %v", id, err)
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
		if !ok {
			continue
		}
		at := time.Since(start)
		if string(data) == "[DONE]" {
			r.done = true
			continue
		}
		tokens, content, known := false, []byte(nil), false
		if i := bytes.Index(data, deltaKey); i >= 0 {
			rest := data[i+len(deltaKey):]
			switch {
			case bytes.HasPrefix(rest, contentKey):
				text, _, _ := bytes.Cut(rest[len(contentKey):], []byte(`"`))
				known = !bytes.ContainsRune(text, '\\')
				tokens, content = len(text) > 0, text
			case bytes.HasPrefix(rest, reasoningKey):
				text, _, _ := bytes.Cut(rest[len(reasoningKey):], []byte(`"`))
				known = !bytes.ContainsRune(text, '\\')
				tokens = len(text) > 0
			case bytes.HasPrefix(rest, []byte(`"role":"assistant","content":""}`)), bytes.HasPrefix(rest, []byte(`}`)):
				known = true
			}
			if j := bytes.Index(rest, finishKey); j >= 0 {
				f, _, _ := bytes.Cut(rest[j+len(finishKey):], []byte(`"`))
				r.finish = string(f)
			}
		}
		if !known {
			// The usage event, or anything unexpected: decode it.
			tokens, content = false, nil
			var ev struct {
				Choices []struct {
					Delta struct {
						Content          string `json:"content"`
						ReasoningContent string `json:"reasoning_content"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage *struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Fatalf("%s: bad event %q: %v", id, data, err)
			}
			if ev.Usage != nil {
				r.completion = ev.Usage.CompletionTokens
			}
			for _, ch := range ev.Choices {
				tokens = tokens || ch.Delta.Content != "" || ch.Delta.ReasoningContent != ""
				if ch.Delta.Content != "" {
					content = append(content, ch.Delta.Content...)
				}
				if ch.FinishReason != nil {
					r.finish = *ch.FinishReason
				}
			}
		}
		if len(content) > 0 {
			if r.firstAnswer < 0 {
				r.firstAnswer = at
			}
			answer = append(answer, content...)
		}
		if tokens {
			if r.firstTok < 0 {
				r.firstTok = at
			}
			r.lastTok = at
			r.events++
		}
	}
	r.end = time.Since(start)
	r.answer = string(answer)
	return r
}

// shards is how many clients share a preset's requests: each runs its part
// sequentially against its own fake in its own synctest bubble. Outcomes
// depend only on the preset, the seed and the trace IDs (nothing queues,
// the cache always misses), so the split changes no measurement.
//
// A bubble is bound by goroutine hand-offs (every event wakes the fake's
// stream and then the client), not by CPU: one keeps about half a CPU
// busy. So the shards of a preset run at once, beyond -parallel (which
// only limits how many presets run together), to keep the CPUs busy.
const shards = 4

// sharded runs fn(t, lo, hi) for shards parts of [0, n) in concurrent
// subtests and returns when all have finished.
func sharded(t *testing.T, n int, fn func(t *testing.T, lo, hi int)) {
	t.Run("clients", func(t *testing.T) {
		var wg sync.WaitGroup
		for k := range shards {
			lo, hi := k*n/shards, (k+1)*n/shards
			wg.Go(func() {
				// Not t.Parallel: subtests started from goroutines run
				// at once, not in turn with the -parallel budget.
				t.Run(strconv.Itoa(k), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) { fn(t, lo, hi) })
				})
			})
		}
		wg.Wait()
	})
	if t.Failed() {
		t.FailNow()
	}
}

// runRequests sends n requests as study s did (c=1 per client, see shards)
// to fresh fakes serving p, on synctest's clock.
func runRequests(t *testing.T, p Profile, s study, n int) []call {
	out := make([]call, n)
	sharded(t, n, func(t *testing.T, lo, hi int) {
		f := mustNew(t, p)
		c := f.Client()
		for i := lo; i < hi; i++ {
			id := fmt.Sprintf("%s-%05d", p.Model, i)
			out[i] = streamCall(t, c, id, s.body(p.Model, nonce(i)+s.base))
		}
		markStalls(f, out[lo:hi])
	})
	return out
}

// runChains runs chains of chainCalls sequential calls as source 000 did: each
// call's prompt is the conversation so far (the first prompt, then each
// answer, "ok" for an empty one as 000's harness did, and a follow-up), with
// a fresh nonce in front. It returns every call, chain by chain, and each
// chain's total: the sum of its calls' times (000's chain totals exceed that
// sum by at most 1.3 ms).
func runChains(t *testing.T, p Profile, s study, chains int) (calls []call, totals []time.Duration) {
	calls = make([]call, chains*chainCalls)
	totals = make([]time.Duration, chains)
	sharded(t, chains, func(t *testing.T, lo, hi int) {
		f := mustNew(t, p)
		c := f.Client()
		for j := lo; j < hi; j++ {
			history := s.base
			for k := range chainCalls {
				i := j*chainCalls + k
				id := fmt.Sprintf("%s-chain%04d-call%d", p.Model, j, k)
				r := streamCall(t, c, id, s.body(p.Model, nonce(i)+history))
				calls[i] = r
				totals[j] += r.end
				answer := r.answer
				if answer == "" {
					answer = "ok"
				}
				history += "\n" + answer + "\n" + chainFollowUp
			}
		}
		markStalls(f, calls[lo*chainCalls:hi*chainCalls])
	})
	return calls, totals
}

// markStalls copies the stall the fake injected into each call.
func markStalls(f *Fake, calls []call) {
	stalls := map[string]time.Duration{}
	for _, s := range f.Served() {
		stalls[s.ID] = s.Stall
	}
	for i := range calls {
		calls[i].stall = stalls[calls[i].id]
	}
}

// eachDraw draws n plans of p as the fake draws them (trace IDs
// "draw-0".."draw-<n-1>") and hands each to fn.
func eachDraw(p Profile, n int, fn func(pl *plan)) {
	p = p.withDefaults()
	for i := range n {
		fn(newPlan(&p, "draw-"+strconv.Itoa(i)))
	}
}

// planTTFT is the TTFT the fake gives pl at promptTokens on a cache miss with
// nothing else in flight (see session.run).
func planTTFT(pl *plan, promptTokens int) time.Duration {
	return pl.ttft + time.Duration(float64(pl.prefill)*float64(promptTokens)/1000)
}

// planLastToken is when pl's last token arrives, for a profile with a
// per-request ITL, no reasoning and chunks of k tokens: the first event
// carries min(k, n) tokens at the TTFT, every later token adds one ITL, and a
// stall adds its length.
func planLastToken(pl *plan, promptTokens, k int) time.Duration {
	return planTTFT(pl, promptTokens) + time.Duration(pl.output-min(k, pl.output))*pl.itl + pl.stall
}

// Samples of one measured quantity, each knowing how to make a table row.

type durs []time.Duration

type nums struct {
	xs   []float64
	unit string
}

// quantile is numpy's default (linear) percentile of xs, q in [0,1],
// sorted into a copy; NaN when empty.
func quantile(xs []float64, q float64) float64 {
	return stats.Quantile(slices.Sorted(slices.Values(xs)), q)
}

// cvPercent is the sample standard deviation (n-1) over the mean, in percent.
func cvPercent(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / mean * 100
}

func (d durs) floats() []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = float64(x)
	}
	return out
}

// p is the row for the q-quantile.
func (d durs) p(stat string, q float64, want time.Duration, source string) row {
	return row{stat: stat, want: float64(want), got: quantile(d.floats(), q), unit: "duration", source: source, n: len(d)}
}

// cv is the row for the CV in percent.
func (d durs) cv(stat string, wantPercent float64, source string) row {
	return row{stat: stat, want: wantPercent, got: cvPercent(d.floats()), unit: "%", source: source, n: len(d)}
}

// ratio is the row for p99:p50.
func (d durs) ratio(stat string, want float64, source string) row {
	f := d.floats()
	return row{stat: stat, want: want, got: quantile(f, .99) / quantile(f, .50), unit: "x", source: source, n: len(d)}
}

func (s nums) p(stat string, q, want float64, source string) row {
	return row{stat: stat, want: want, got: quantile(s.xs, q), unit: s.unit, source: source, n: len(s.xs)}
}

// rate is the row for k of n, in percent.
func rate(stat string, k, n int, wantPercent float64, source string) row {
	return row{stat: stat, want: wantPercent, got: 100 * float64(k) / float64(n), unit: "%", source: source, n: n}
}

// drawn marks a row as measured on direct draws.
func (r row) drawn() row { r.direct = true; return r }

// atLeast makes a row one-sided: it passes when got >= want.
func (r row) atLeast() row { r.oneSided = true; return r }

// ofCount makes a rate published as k of a small n pass when k of n is
// consistent with the measured rate: neither tail of Binomial(n, got) at
// k is below 2.5%. Two of 15 is anything from 1.7% to 40% at 95%; a 15%
// band around 13.3% would demand what 15 requests cannot show.
func (r row) ofCount(k, n int) row { r.count, r.countN = k, n; return r }

// ofSample makes a quantile published from a small sample pass when the
// measured value lies in the sample's distribution-free 95% interval for
// that quantile (order statistics; unbounded above when the sample cannot
// bound it from above: the p95 of 29 chains is bounded only from below).
// neff is the sample's effective size: len(xs) for independent values,
// less for clustered ones (n / (1 + (m-1)·ICC) for clusters of m, Kish's
// design effect); the interval's ranks are taken at neff and read off xs
// as quantiles.
func (r row) ofSample(xs []float64, q, neff float64) row {
	n := int(math.Floor(neff))
	r.lo, r.hi = math.Inf(-1), math.Inf(1)
	for l := n; l >= 1; l-- { // P(X(l) > quantile) = P(Bin(n,q) <= l-1)
		if stats.BinomCDF(l-1, n, q) <= 0.025 {
			r.lo = quantile(xs, float64(l-1)/float64(n-1))
			break
		}
	}
	for u := 1; u <= n; u++ { // P(X(u) < quantile) = P(Bin(n,q) >= u)
		if 1-stats.BinomCDF(u-1, n, q) <= 0.025 {
			r.hi = quantile(xs, float64(u-1)/float64(n-1))
			break
		}
	}
	r.interval = true
	return r
}

// row is one published statistic: the value published, where, and what the
// preset gives.
type row struct {
	stat     string
	want     float64 // published, in unit
	got      float64 // measured, in unit
	unit     string  // "duration" (nanoseconds), "%", "x", "tok/s", "tokens"
	source   string
	n        int  // sample size behind got
	direct   bool // got is from plans drawn directly, not from requests
	oneSided bool // the publication says "at least"

	count, countN int     // ofCount: published as count of countN
	interval      bool    // ofSample: got must lie in [lo, hi]
	lo, hi        float64 // ofSample's interval, in unit
}

// ok reports whether the row holds: within the tolerance (or at least want),
// on a sample of at least 100 (a p99 of 10 samples is no measurement), never
// NaN. A published 0 must be measured as 0.
func (r row) ok() bool {
	switch {
	case r.n < 100 || math.IsNaN(r.got) || math.IsInf(r.got, 0):
		return false
	case r.oneSided:
		return r.got >= r.want
	case r.interval:
		return r.got >= r.lo && r.got <= r.hi
	case r.countN > 0:
		p := r.got / 100
		return stats.BinomCDF(r.count, r.countN, p) >= 0.025 && (r.count == 0 || 1-stats.BinomCDF(r.count-1, r.countN, p) >= 0.025)
	case r.want == 0:
		return r.got == 0
	}
	return math.Abs(r.got/r.want-1) <= tolerance
}

func (r row) format(v float64) string {
	if math.IsInf(v, 0) {
		return map[bool]string{true: "+inf", false: "-inf"}[v > 0]
	}
	switch r.unit {
	case "duration":
		return time.Duration(v).Round(100 * time.Microsecond).String()
	case "%":
		return strconv.FormatFloat(v, 'f', 3, 64) + "%"
	case "x":
		return strconv.FormatFloat(v, 'f', 2, 64) + "x"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + r.unit
}

// judge returns the names of the rows that fail and the whole table.
func judge(rows []row) (failed []string, table string) {
	var b strings.Builder
	fmt.Fprintf(&b, "   %-34s %14s %14s %8s %12s  %s\n", "statistic", "published", "measured", "diff", "n", "source")
	for _, r := range rows {
		mark, diff := "ok", "—"
		if !r.ok() {
			mark = "XX"
			failed = append(failed, r.stat)
		}
		if r.want != 0 {
			diff = fmt.Sprintf("%+.1f%%", (r.got/r.want-1)*100)
		}
		switch {
		case r.oneSided:
			diff = ">= " + r.format(r.want)
		case r.interval:
			diff = "in [" + r.format(r.lo) + ", " + r.format(r.hi) + "]"
		case r.countN > 0:
			diff = fmt.Sprintf("~%d of %d", r.count, r.countN)
		}
		n := strconv.Itoa(r.n)
		if r.direct {
			n += " draws"
		}
		fmt.Fprintf(&b, "%s %-34s %14s %14s %8s %12s  %s\n", mark, r.stat, r.format(r.want), r.format(r.got), diff, n, r.source)
	}
	return failed, b.String()
}

// checkRows fails t with the whole table when any row is off.
func checkRows(t *testing.T, p Profile, rows []row) {
	t.Helper()
	failed, table := judge(rows)
	if len(failed) > 0 {
		t.Errorf("preset %s (seed %d): %d of %d statistics off by more than %.0f%% (XX):\n%s",
			p.Model, p.Seed, len(failed), len(rows), tolerance*100, table)
		return
	}
	t.Logf("preset %s (seed %d): %d statistics within %.0f%%:\n%s", p.Model, p.Seed, len(rows), tolerance*100, table)
}

// What to read from the calls.

// ok200 are the calls answered with a 200 stream that ended with [DONE].
func ok200(cs []call) []call {
	var out []call
	for _, c := range cs {
		if c.status == http.StatusOK && c.done {
			out = append(out, c)
		}
	}
	return out
}

func firstTokens(cs []call) durs {
	var out durs
	for _, c := range cs {
		if c.firstTok >= 0 {
			out = append(out, c.firstTok)
		}
	}
	return out
}

func firstAnswers(cs []call) durs {
	var out durs
	for _, c := range cs {
		if c.firstAnswer >= 0 {
			out = append(out, c.firstAnswer)
		}
	}
	return out
}

func totals(cs []call) durs {
	out := make(durs, len(cs))
	for i, c := range cs {
		out[i] = c.end
	}
	return out
}

// genSpeed000 is source 000's "generation speed": completion_tokens /
// (total - TTFT), TTFT being the first content token; calls without an
// answer, or whose only content token is the last, have none.
func genSpeed000(cs []call) nums {
	s := nums{unit: "tok/s"}
	for _, c := range cs {
		if c.firstAnswer >= 0 && c.end > c.firstAnswer {
			s.xs = append(s.xs, float64(c.completion)/(c.end-c.firstAnswer).Seconds())
		}
	}
	return s
}

// tokPerSec002 is source 002's decode speed: (completion_tokens - 1) /
// (t_last - t_first).
func tokPerSec002(cs []call) nums {
	s := nums{unit: "tok/s"}
	for _, c := range cs {
		if c.completion > 1 && c.lastTok > c.firstTok {
			s.xs = append(s.xs, float64(c.completion-1)/(c.lastTok-c.firstTok).Seconds())
		}
	}
	return s
}

// completions are the usage.completion_tokens of the calls that streamed a
// token.
func completions(cs []call) nums {
	s := nums{unit: "tokens"}
	for _, c := range cs {
		if c.events > 0 {
			s.xs = append(s.xs, float64(c.completion))
		}
	}
	return s
}

func count(cs []call, pred func(call) bool) int {
	n := 0
	for _, c := range cs {
		if pred(c) {
			n++
		}
	}
	return n
}

// rawChains reads source 000's raw chains of one model (the fit package's
// copy of serverless-tail-study/): each chain's call totals, in
// nanoseconds.
func rawChains(t *testing.T, file string) (calls [][]float64) {
	t.Helper()
	data, err := os.ReadFile("../fit/testdata/serverless-tail-study/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Chained struct {
			Chains []struct {
				Calls []struct {
					Total float64 `json:"total_ms"`
				} `json:"calls"`
			} `json:"chains"`
		} `json:"chained_session"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, ch := range raw.Chained.Chains {
		var cs []float64
		for _, c := range ch.Calls {
			cs = append(cs, float64(ms(c.Total)))
		}
		calls = append(calls, cs)
	}
	return calls
}

// presetCase is one preset's experiment: it runs the preset as its study
// did and returns the table of published statistics.
type presetCase struct {
	name string
	rows func(t *testing.T, p Profile) []row
}

var presetCases = []presetCase{
	{"mistral-3-14b", func(t *testing.T, p Profile) []row {
		cs := ok200(runRequests(t, p, study000, presetRequests))
		ttft, total := firstAnswers(cs), totals(cs)
		// The fitted TTFT's top 1.4% spreads between the cell's two
		// slowest values (598 and 1,007 ms): a p99 of 2,000 requests
		// swings by ±15% there, so p99 and the CV are drawn.
		drawn := drawTTFTs(p, study000.promptTokens)
		var drawnTotal durs
		eachDraw(p, directDraws, func(pl *plan) { drawnTotal = append(drawnTotal, planLastToken(pl, study000.promptTokens, 1)) })
		const cell, readme = "000 c=1 cell summary (75 req)", "000 README c=1 table"
		return []row{
			ttft.p("TTFT p50", .50, ms(178.9), cell),
			ttft.p("TTFT p95", .95, ms(288.1), cell),
			drawn.p("TTFT p99", .99, ms(598.0), cell).drawn(),
			drawn.ratio("TTFT p99:p50", 3.34, cell).drawn(),
			total.p("total p50", .50, ms(495), readme),
			total.p("total p95", .95, ms(1153), readme),
			total.p("total p99", .99, ms(1839), readme),
			total.ratio("total p99:p50", 3.72, readme),
			drawnTotal.cv("total CV%", 50, readme).drawn(),
			genSpeed000(cs).p("gen speed p50", .50, 202, readme),
		}
	}},
	{"mistral-3-14b-chain", func(t *testing.T, p Profile) []row {
		// The calls' TTFT p95 and p99 come from a wide 8% path: at 3,000
		// calls they swing by ±15%, at 6,000 by ±10%.
		calls, chains := runChains(t, p, study000, 600)
		calls = ok200(calls)
		ttft, total, chain := firstAnswers(calls), totals(calls), durs(chains)
		const raw, sum = "000 raw: 300 chain calls", "000 chain_summary (30 chains)"
		rawByChain := rawChains(t, "results_mistral-3-14B.json")
		rawCalls := slices.Concat(rawByChain...)
		neff := 300 / (1 + 9*0.025) // 30 chains of 10, ICC 0.025 (Kish)
		return []row{
			ttft.p("call TTFT p50", .50, ms(176.9), raw),
			ttft.p("call TTFT p95", .95, ms(425.8), raw),
			ttft.p("call TTFT p99", .99, ms(1201.6), raw),
			total.p("call total p50", .50, ms(544.0), raw),
			total.p("call total p95", .95, ms(1581.3), raw),
			// The raw p99 of 300 calls is their 3rd slowest: checked
			// against the sample's 95% interval.
			total.p("call total p99", .99, ms(2301.1), raw).ofSample(rawCalls, .99, neff),
			chain.p("chain total p50", .50, ms(6463.1), sum),
			chain.p("chain total p95", .95, ms(10180.7), sum),
			chain.p("chain total p99", .99, ms(11865.6), sum),
		}
	}},
	{"gpt-oss-120b", func(t *testing.T, p Profile) []row {
		cs := ok200(runRequests(t, p, study000, presetRequests))
		_, chains := runChains(t, p, study000, presetChains)
		// 000's TTFT is the first content token; empty answers have none.
		ttft, total, chain := firstAnswers(cs), totals(cs), durs(chains)
		drawnEmpty := 0
		eachDraw(p, directDraws, func(pl *plan) {
			if pl.reasoning >= study000.maxTokens {
				drawnEmpty++
			}
		})
		const cell, readme = "000 c=1 cell summary (72 answered)", "000 README c=1 table"
		return []row{
			ttft.p("TTFT (first content) p50", .50, ms(1202.0), cell),
			ttft.p("TTFT (first content) p95", .95, ms(2028.1), cell),
			ttft.p("TTFT (first content) p99", .99, ms(2108.4), cell),
			ttft.ratio("TTFT (first content) p99:p50", 1.75, cell),
			ttft.cv("TTFT (first content) CV%", 27, "000 article: GPT-OSS 120B为27%"),
			total.p("total p50", .50, ms(1933), readme),
			total.p("total p95", .95, ms(2689), readme),
			total.p("total p99", .99, ms(2932), readme),
			total.ratio("total p99:p50", 1.52, readme),
			total.cv("total CV%", 15, readme),
			genSpeed000(cs).p("gen speed p50 (64 tok incl. reasoning)", .50, 86, readme),
			// 4% of 2,000 has a standard error of 11%: only draws pin it.
			// The fit pools the cells' empty answers (3, 10 and 1 of 75).
			rate("empty answers", drawnEmpty, directDraws, 4.0, "000: 3 of 75 at c=1").drawn().ofCount(3, 75),
			chain.p("10-call chain p50", .50, 20900*time.Millisecond, "000: GPT-OSS 120B … 20.9秒"),
		}
	}},
	{"gpt-oss-120b-chain", func(t *testing.T, p Profile) []row {
		// The chain p99 rests on the 7% slow path: at 300 chains it swings
		// by ±15%, at 600 by ±10%.
		calls, chains := runChains(t, p, study000, 600)
		calls = ok200(calls)
		total, chain := totals(calls), durs(chains)
		empty := func(c call) bool { return c.answer == "" }
		const raw, sum = "000 raw: 300 chain calls", "000 chain_summary (30 chains)"
		return []row{
			total.p("call total p50", .50, ms(1961.1), raw),
			total.p("call total p95", .95, ms(3168.7), raw),
			total.p("call total p99", .99, ms(5384.6), raw),
			rate("empty answers", count(calls, empty), len(calls), 98.7, "000 README: 296 of 300 chain calls"),
			chain.p("chain total p50", .50, ms(20884.4), sum),
			chain.p("chain total p95", .95, ms(28775.8), sum),
			chain.p("chain total p99", .99, ms(31709.9), sum),
		}
	}},
	{"llama-4-maverick", func(t *testing.T, p Profile) []row {
		// No chain row: the 26.7 s chain median is llama-4-maverick-chain's.
		// The raw c=1 calls were slower than the chain calls (total p50
		// 3.25 s against 2.61 s), so ten calls of this fit take ~36 s.
		cs := ok200(runRequests(t, p, study000, presetRequests))
		ttft, total := firstAnswers(cs), totals(cs)
		stalls := 0
		eachDraw(p, directDraws, func(pl *plan) {
			if pl.stall > 0 {
				stalls++
			}
		})
		const cell = "000 c=1 cell summary (75 req)"
		return []row{
			ttft.p("TTFT p50", .50, ms(299.8), cell),
			ttft.p("TTFT p95", .95, ms(1286.0), cell),
			ttft.p("TTFT p99", .99, ms(1508.9), cell),
			ttft.ratio("TTFT p99:p50", 5.03, cell),
			ttft.cv("TTFT CV%", 75, "000 article: 变异系数为75%"),
			total.p("total p50", .50, ms(3249), "000 README c=1 table"),
			rate("stalled streams", stalls, directDraws, 100.0/525, "000: 1 stalled stream in 525 requests").drawn(),
		}
	}},
	{"llama-4-maverick-chain", func(t *testing.T, p Profile) []row {
		// The chain p95 here rests on the ~8% of chains that hold one of
		// the preset's rare slow streams (0.8% of calls): at 300 chains it
		// swings by ±20%, at 1,000 by ±8% (90% of seeds).
		calls, chains := runChains(t, p, study000, 1000)
		var stallFree durs
		for j, tot := range chains {
			if !slices.ContainsFunc(calls[j*chainCalls:(j+1)*chainCalls], func(c call) bool { return c.stall > 0 }) {
				stallFree = append(stallFree, tot)
			}
		}
		calls = ok200(calls)
		ttft, total, chain := firstAnswers(calls), totals(calls), durs(chains)
		var stalled durs // totals of the stalled calls
		eachDraw(p, directDraws, func(pl *plan) {
			if pl.stall > 0 {
				stalled = append(stalled, planLastToken(pl, study000.promptTokens, 1))
			}
		})
		const raw, sum = "000 raw: 300 chain calls", "000 chain_summary (30 chains)"
		const free = "000: without the stalled chain"
		return []row{
			ttft.p("call TTFT p50", .50, ms(265.6), raw),
			ttft.p("call TTFT p95", .95, ms(707.3), raw),
			ttft.p("call TTFT p99", .99, ms(1197.1), raw),
			total.p("call total p50", .50, ms(2612.1), raw),
			total.p("call total p95", .95, ms(5924.0), raw),
			chain.p("chain total p50", .50, ms(26693.2), sum),
			stallFree.p("stall-free chain p50", .50, 26600*time.Millisecond, free),
			stallFree.p("stall-free chain p95", .95, 47200*time.Millisecond, free),
			rate("stalled calls", len(stalled), directDraws, 100.0/300, "000: 1 of 300 chain calls").drawn(),
			stalled.p("stalled call total p50", .50, ms(1185094.3), "000 raw: chain 11 call 0 (19.8 min)").drawn(),
		}
	}},
	{"llama-3.3-70b", func(t *testing.T, p Profile) []row {
		cs := ok200(runRequests(t, p, study000, presetRequests))
		ttft, total := firstAnswers(cs), totals(cs)
		// The preset's calls are independent and its prompt size does not
		// matter, so 10 consecutive requests are a 10-call chain.
		var chains durs
		for i := 0; i+chainCalls <= len(cs); i += chainCalls {
			var s time.Duration
			for _, c := range cs[i : i+chainCalls] {
				s += c.end
			}
			chains = append(chains, s)
		}
		cold := func(c call) bool { return c.firstAnswer > 30*time.Second }
		warm := func(c call) bool {
			return c.firstAnswer >= 1600*time.Millisecond && c.firstAnswer <= 3400*time.Millisecond
		}
		const run = "000 bounded run (15 req)"
		return []row{
			ttft.p("TTFT p50", .50, ms(2127.6), run+": 2.1 s"),
			total.p("total p50", .50, ms(43537.7), run+": 43.5 s"),
			genSpeed000(cs).p("gen speed p50", .50, 1.6, run+": ~1.6 tokens/s"),
			rate("TTFT > 30 s", count(cs, cold), len(cs), 100*2.0/15, run+": 37 s and 68 s").ofCount(2, 15),
			rate("TTFT within 1.6-3.4 s", count(cs, warm), len(cs), 100*13.0/15, run+": 13 of 15").ofCount(13, 15),
			chains.p("10-call chain p50", .50, 7*time.Minute, "000: more than 7 minutes").atLeast(),
		}
	}},
	{"deepseek-v3.2", func(t *testing.T, p Profile) []row {
		all := runRequests(t, p, study002, presetRequests)
		cs := ok200(all)
		ttft := firstTokens(cs)
		perEvent := nums{unit: "tokens"}
		for _, c := range cs {
			if c.events > 0 {
				perEvent.xs = append(perEvent.xs, float64(c.completion)/float64(c.events))
			}
		}
		var n, e529, empty, over10, over30, over60, long int
		var drawn durs // TTFTs of the successful draws
		drawnSpeed := nums{unit: "tok/s"}
		eachDraw(p, directDraws, func(pl *plan) {
			n++
			switch pl.fault {
			case FaultHTTP529:
				e529++
				return
			case FaultEmpty:
				empty++
				return
			}
			ttft := planTTFT(pl, study002.promptTokens)
			drawn = append(drawn, ttft)
			if pl.output > 2 { // 002's tok/s: 2 tokens come with the first event
				drawnSpeed.xs = append(drawnSpeed.xs, float64(pl.output-1)/(time.Duration(pl.output-2)*pl.itl).Seconds())
			}
			over10 += b2i(ttft > 10*time.Second)
			over30 += b2i(ttft > 30*time.Second)
			over60 += b2i(ttft > 60*time.Second)
			long += b2i(planLastToken(pl, study002.promptTokens, 2) > 60*time.Second)
		})
		ok := n - e529 - empty
		const table, waits = "002 table (medium prompt)", "002: of 857 successes, all prompt sizes"
		return []row{
			ttft.p("TTFT p50", .50, ms(1353), table),
			// The p95 and p99 lie in a wide, flat tail: at n = 2,000 their
			// standard errors are ~6% and ~14%; only draws pin them.
			drawn.p("TTFT p95", .95, ms(5837), table).drawn(),
			drawn.p("TTFT p99", .99, ms(13654), table).drawn(),
			tokPerSec002(cs).p("tok/s p50", .50, 32.6, table),
			// The slow 5% of decode speeds spread widely (5 to 0.5 tok/s):
			// at n = 2,000 the p5 has a standard error of ~7%.
			drawnSpeed.p("tok/s p5", .05, 5.4, table).drawn(),
			completions(cs).p("reply tokens p50", .50, 165, table),
			perEvent.p("tokens per event p50", .50, 2.01, "002: 中位数为 2.01"),
			rate("errors", e529+empty, n, 0.81, table+": 7 of 864").drawn(),
			rate("HTTP 529", e529, n, 100*6.0/864, "002: 6 of 864").drawn(),
			rate("empty 200", empty, n, 100*1.0/864, "002: 1 of 864").drawn(),
			rate("TTFT > 10 s", over10, ok, 100*14.0/857, waits+": 14").drawn(),
			rate("TTFT > 30 s", over30, ok, 100*4.0/857, waits+": 4").drawn(),
			rate("TTFT > 60 s", over60, ok, 100*2.0/857, waits+": 2 (206.5 s, 210.0 s)").drawn(),
			rate("total > 60 s", long, ok, 100*14.0/857, waits+": 14").drawn(),
		}
	}},
	{"glm-5.3", func(t *testing.T, p Profile) []row {
		cs := ok200(runRequests(t, p, study002, presetRequests))
		ttft := firstTokens(cs)
		noAnswer := func(c call) bool { return c.answer == "" }
		capped := func(c call) bool { return c.finish == "length" }
		over30 := func(c call) bool { return c.end > 30*time.Second }
		n, e529 := 0, 0
		eachDraw(p, directDraws, func(pl *plan) {
			n++
			e529 += b2i(pl.fault == FaultHTTP529)
		})
		const table, answers = "002 table (medium prompt)", "002: 863 successes"
		return []row{
			ttft.p("TTFT (first token, reasoning) p50", .50, ms(1049), table),
			ttft.p("TTFT (first token, reasoning) p95", .95, ms(1846), table),
			ttft.p("TTFT (first token, reasoning) p99", .99, ms(2130), table),
			tokPerSec002(cs).p("tok/s p50", .50, 59.4, table),
			tokPerSec002(cs).p("tok/s p5", .05, 52.4, table),
			firstAnswers(cs).p("first answer token p50", .50, 27*time.Second, "002: 中等提示词 27.0 秒"),
			firstAnswers(cs).p("first answer token p95", .95, 35*time.Second, "002: p95 约 34 至 36 秒"),
			rate("no answer token", count(cs, noAnswer), len(cs), 100*277.0/863, answers+": 277 (32%)"),
			rate("stopped at the cap", count(cs, capped), len(cs), 100*373.0/863, answers+": 373 (43%)"),
			rate("total > 30 s", count(cs, over30), len(cs), 100*607.0/863, answers+": 607 (70%)"),
			completions(cs).p("completion_tokens p50", .50, 1911, "002: 中位数 1,911"),
			rate("errors (HTTP 529)", e529, n, 100*1.0/864, table+": 1 of 864").drawn(),
		}
	}},
	{"gemma-4-31b", func(t *testing.T, p Profile) []row {
		all := runRequests(t, p, study002, presetRequests)
		cs := ok200(all)
		ttft := firstTokens(cs)
		var short, long durs
		var stalls, over60, n int
		eachDraw(p, directDraws, func(pl *plan) {
			n++
			short = append(short, planTTFT(pl, 170))
			long = append(long, planTTFT(pl, 10900))
			stalls += b2i(pl.stall > 0)
			over60 += b2i(planLastToken(pl, study002.promptTokens, 1) > 60*time.Second)
		})
		const table = "002 table (medium prompt)"
		return []row{
			ttft.p("TTFT p50", .50, ms(1059), table),
			ttft.p("TTFT p95", .95, ms(1986), table),
			ttft.p("TTFT p99", .99, ms(2225), table),
			tokPerSec002(cs).p("tok/s p50", .50, 43.9, table),
			tokPerSec002(cs).p("tok/s p5", .05, 24.6, table),
			completions(cs).p("reply tokens p50", .50, 224, table),
			rate("errors", len(all)-len(cs), len(all), 0, table+": 0 of 864"),
			short.p("TTFT p50 at 170 prompt tokens", .50, ms(942), "002: 短提示词下 p50 为 942 ms").drawn(),
			long.p("TTFT p50 at 10,900 prompt tokens", .50, ms(2830), "002: 长提示词 2,830 ms").drawn(),
			long.p("TTFT p99 at 10,900 prompt tokens", .99, ms(4308), "002: 长提示词下 p99 为 4,308 ms").drawn(),
			rate("total > 60 s", over60, n, 100*1.0/864, "002: 1 of 864 (89 s)").drawn(),
			rate("stalled streams", stalls, n, 100*1.0/864, "002: 1 of 864 (89 s)").drawn(),
		}
	}},
	{"deepseek-v4-pro-a", func(t *testing.T, p Profile) []row {
		ttft := firstTokens(ok200(runRequests(t, p, study004, presetRequests)))
		const table = "004 table, provider A"
		return []row{
			ttft.p("TTFT p50", .50, ms(390), table),
			ttft.p("TTFT p95", .95, ms(570), table),
			ttft.cv("TTFT CV%", 21, table),
		}
	}},
	{"deepseek-v4-pro-b", func(t *testing.T, p Profile) []row {
		return rows004(t, p, "004 table, provider B", ms(550), ms(6300), 541)
	}},
	{"deepseek-v4-pro-c", func(t *testing.T, p Profile) []row {
		return rows004(t, p, "004 table, provider C", ms(730), ms(6910), 710)
	}},
	{"kimi-k2.6-a", func(t *testing.T, p Profile) []row {
		return rows004(t, p, "004 table, provider A", ms(350), ms(5980), 989)
	}},
	{"kimi-k2.6-b", func(t *testing.T, p Profile) []row {
		ttft := firstTokens(ok200(runRequests(t, p, study004, presetRequests)))
		const table = "004 table, provider B"
		return []row{
			ttft.p("TTFT p50", .50, ms(250), table),
			ttft.p("TTFT p95", .95, ms(1080), table),
			ttft.cv("TTFT CV%", 102, table),
		}
	}},
	{"kimi-k2.6-c", func(t *testing.T, p Profile) []row {
		ttft := firstTokens(ok200(runRequests(t, p, study004, presetRequests)))
		drawn := drawTTFTs(p, study004.promptTokens)
		const table = "004 table, provider C"
		return []row{
			ttft.p("TTFT p50", .50, ms(430), table),
			ttft.p("TTFT p95", .95, ms(1700), table),
			drawn.cv("TTFT CV%", 1266, table).drawn(),
		}
	}},
}

// rows004 is the table of a source 004 preset with a few-per-mille tail: the
// median from requests; the p95 (at the warm/cold boundary) and the CV
// (dominated by a 0.25-0.5% component) from direct draws.
func rows004(t *testing.T, p Profile, source string, p50, p95 time.Duration, cv float64) []row {
	ttft := firstTokens(ok200(runRequests(t, p, study004, presetRequests)))
	drawn := drawTTFTs(p, study004.promptTokens)
	return []row{
		ttft.p("TTFT p50", .50, p50, source),
		drawn.p("TTFT p95", .95, p95, source).drawn(),
		drawn.cv("TTFT CV%", cv, source).drawn(),
	}
}

// drawTTFTs draws directDraws TTFTs of p at promptTokens.
func drawTTFTs(p Profile, promptTokens int) durs {
	out := make(durs, 0, directDraws)
	eachDraw(p, directDraws, func(pl *plan) { out = append(out, planTTFT(pl, promptTokens)) })
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// skipCalibration skips the preset calibration under -short: it streams
// millions of events (tens of seconds; minutes under -race). CI runs it in
// full, in a step of its own without -race (it tests numbers, not
// concurrency): .ci/run sets TAILGUARD_CALIBRATION=separate for its -race
// step, which then skips it.
func skipCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the preset calibration (2,000 requests per preset) runs without -short")
	}
	if os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the preset calibration runs in its own step, without -race")
	}
}

func TestPresets(t *testing.T) {
	skipCalibration(t)
	var stats atomic.Int64
	t.Cleanup(func() { // after the parallel subtests
		if !t.Failed() {
			checkREADMEPresetFigures(t, int(stats.Load()))
		}
	})
	for _, tc := range presetCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Preset(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			rows := tc.rows(t, p)
			stats.Add(int64(len(rows)))
			checkRows(t, p, rows)
		})
	}
}

// checkREADMEPresetFigures: README.md says "(`TestPresets`: 2,000
// requests per preset, 118 published statistics, ...)" and "within
// 15%": each figure must be this test's.
func checkREADMEPresetFigures(t *testing.T, stats int) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(`TestPresets`: %d,%03d requests per preset, %d published statistics,", presetRequests/1000, presetRequests%1000, stats)
	readme := strings.Join(strings.Fields(string(b)), " ")
	if !strings.Contains(readme, want) {
		t.Errorf("README.md should say %q", want)
	}
	// "`TestPresets` checks every published statistic it reproduces
	// within 15%": the tolerance.
	if want := fmt.Sprintf("checks every published statistic it reproduces within %.0f%%", 100*tolerance); !strings.Contains(readme, want) {
		t.Errorf("README.md should say %q", want)
	}
}

// The rows must catch a wrong preset: half the TTFT, or twice the ITL.
func TestPresetsCatchAWrongPreset(t *testing.T) {
	skipCalibration(t)
	for _, tc := range []struct {
		name   string
		change string
		mutate func(*Profile)
		// stats that must now fail
		mustFail []string
	}{
		{"mistral-3-14b", "TTFT halved", func(p *Profile) { p.TTFT = scaleDist(p.TTFT, 0.5) },
			[]string{"TTFT p50", "TTFT p95", "TTFT p99"}},
		{"llama-3.3-70b", "ITL doubled", func(p *Profile) { p.ITL = scaleDist(p.ITL, 2) },
			[]string{"total p50", "gen speed p50"}},
	} {
		t.Run(tc.name+" "+tc.change, func(t *testing.T) {
			t.Parallel()
			p, err := Preset(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(&p)
			i := slices.IndexFunc(presetCases, func(c presetCase) bool { return c.name == tc.name })
			failed, table := judge(presetCases[i].rows(t, p))
			for _, stat := range tc.mustFail {
				if !slices.Contains(failed, stat) {
					t.Errorf("%s with %s: %q passed, want it to fail:\n%s", tc.name, tc.change, stat, table)
				}
			}
		})
	}
}

// scaleDist multiplies every value of d by f.
func scaleDist[T Quantity](d Dist[T], f float64) Dist[T] {
	s := func(v T) T { return fromFloat[T](float64(v) * f) }
	d.Value, d.Min, d.Max, d.Mean, d.Stddev, d.Median, d.P99 = s(d.Value), s(d.Min), s(d.Max), s(d.Mean), s(d.Stddev), s(d.Median), s(d.P99)
	d.Values = slices.Clone(d.Values)
	for i := range d.Values {
		d.Values[i] = s(d.Values[i])
	}
	d.Parts = slices.Clone(d.Parts)
	for i := range d.Parts {
		d.Parts[i].Dist = scaleDist(d.Parts[i].Dist, f)
	}
	return d
}

func TestPresetsNames(t *testing.T) {
	want := []string{
		"deepseek-v3.2", "deepseek-v4-pro-a", "deepseek-v4-pro-b", "deepseek-v4-pro-c",
		"gemma-4-31b", "glm-5.3", "gpt-oss-120b", "gpt-oss-120b-chain",
		"kimi-k2.6-a", "kimi-k2.6-b", "kimi-k2.6-c",
		"llama-3.3-70b", "llama-4-maverick", "llama-4-maverick-chain",
		"mistral-3-14b", "mistral-3-14b-chain",
	}
	if got := Presets(); !slices.Equal(got, want) {
		t.Errorf("Presets() = %q\nwant %q", got, want)
	}
	var tested []string
	for _, tc := range presetCases {
		tested = append(tested, tc.name)
	}
	slices.Sort(tested)
	if !slices.Equal(tested, want) {
		t.Errorf("TestPresets covers %q\nwant every preset %q", tested, want)
	}
}

func TestPresetsValidate(t *testing.T) {
	for _, name := range Presets() {
		p, err := Preset(name)
		if err != nil {
			t.Errorf("Preset(%q): %v", name, err)
			continue
		}
		if err := p.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
		if p.Model != name {
			t.Errorf("preset %s serves model %q, want its name", name, p.Model)
		}
		// The studies ran at concurrency <= 20 without the fake queueing.
		if p.withDefaults().Replicas*p.withDefaults().SlotsPerReplica < 20 {
			t.Errorf("preset %s: %d replicas x %d slots queue below concurrency 20", name, p.Replicas, p.SlotsPerReplica)
		}
		if p.PrefixCache.Disabled {
			t.Errorf("preset %s: prefix cache disabled", name)
		}
	}
}

func TestPresetUnknown(t *testing.T) {
	_, err := Preset("nope")
	if err == nil {
		t.Fatal(`Preset("nope") succeeded`)
	}
	want := `fakeprovider: unknown preset "nope" (have ` + strings.Join(Presets(), ", ") + ")"
	if err.Error() != want {
		t.Errorf("error %q\nwant %q", err, want)
	}
}

// streamCall reads what do reads. The same trace ID twice (with nonces of
// the same length, so both miss the cache and cost the same prefill) gives
// the same plan, so both readers must see the same times, token events,
// finish and usage; scripted requests add a 529 and an empty stream.
func TestPresetStreamCallMatchesDo(t *testing.T) {
	for _, name := range Presets() {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := Preset(name)
				p.Script = []ScriptEntry{{ID: "x-529", Status: 529}, {ID: "x-empty", Fault: FaultEmpty}}
				s := study000
				if strings.HasPrefix(name, "deepseek-v3") || strings.HasPrefix(name, "glm") || strings.HasPrefix(name, "gemma") {
					s = study002
				}
				f := mustNew(t, p)
				c := f.Client()
				streamed := 0
				for i, id := range []string{"x-0", "x-1", "x-2", "x-529", "x-empty"} {
					got := streamCall(t, c, id, s.body(p.Model, nonce(2*i)+s.base))
					want := do(t, c, "http://fake", reqOpts{id: id, prompt: nonce(2*i+1) + s.base, maxTokens: s.maxTokens, usage: true, model: p.Model})
					_, completion, _, ok := want.usage()
					if !ok {
						completion = -1
					}
					wantLast := want.lastTok
					if want.tokens == 0 {
						wantLast = -1
					}
					if got.status != want.status || got.firstTok != want.firstTok || got.firstAnswer != want.firstAnswer ||
						got.lastTok != wantLast || got.events != want.tokens || got.finish != want.finish ||
						got.completion != completion || got.answer != want.content || got.done != want.sawDone {
						t.Errorf("%s: streamCall saw status %d first %v answer %v last %v events %d finish %q completion %d done %v\n"+
							"do saw status %d first %v answer %v last %v events %d finish %q completion %d done %v",
							id, got.status, got.firstTok, got.firstAnswer, got.lastTok, got.events, got.finish, got.completion, got.done,
							want.status, want.firstTok, want.firstAnswer, wantLast, want.tokens, want.finish, completion, want.sawDone)
					}
					if got.events > 0 {
						streamed++
					}
				}
				if streamed != 3 {
					t.Errorf("%d of the 3 unscripted requests streamed tokens", streamed)
				}
			})
		})
	}
}
