package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/shard"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// A quote is one figure the docs print: the README that prints it, and
// the function that produces the text from a run, formatted as the README
// prints it. TestREADMEFigures fails when the README no longer contains
// what the run produces, so a refitted preset or a changed report line
// cannot leave a stale figure behind.
type quote struct {
	file    string                    // from the repository root
	produce func(t *testing.T) string // the quoted text, from a run
}

// quotes lists every figure from a run that README.md and the examples'
// READMEs quote in prose (the dozen-lines output block has its own test,
// TestREADMEDozenLines).
var quotes = []quote{
	// README.md, "Chains compound it."
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("For q = 1%% and n = 10 that is %s; for n = 20, %s (`sloassert.TailProbability`)",
			pct1(sloassert.TailProbability(0.01, 10)), pct1(sloassert.TailProbability(0.01, 20)))
	}},
	// README.md, "The fastest model can lose the task": the study's raw
	// records (fit/testdata/serverless-tail-study).
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf("%d chains of %d calls per model", s.chains, s.callsPerChain)
	}},
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf("llama-4-maverick reached its first answer token %.0fx sooner than gpt-oss-120b (median %s ms against %s ms: gpt-oss reasons first)",
			s.gptTTFT50/s.mavTTFT50, thousands(s.mavTTFT50), thousands(s.gptTTFT50))
	}},
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf(`gpt-oss-120b "won" the 10-call chain: median %.1f s against %.1f s.`, s.gptChain50/1000, s.mavChain50/1000)
	}},
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf("But %d of its %d chain calls returned no content at all", s.gptChainEmpty, s.gptChainCalls)
	}},
	// README.md, after the first command: its curl stream, served by the
	// same preset in memory.
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("the stream itself lasts about %.0f s", curlStream(t).Seconds())
	}},
	// README.md, the first command's comment and the presets table.
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf("(llama-4-maverick: %s ms median TTFT, %.1f s p99)", thousands(s.mavTTFT50), s.mavTTFT99/1000)
	}},
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf("the maverick chain preset has the stalled %.1f-minute stream", s.mavLongestCall/60000)
	}},
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		return fmt.Sprintf("the same study's bounded follow-up (%d requests: a cold path, ~%.1f tokens/s)", s.boundedN, s.boundedRate)
	}},
	// README.md, under the dozen-lines output.
	{"README.md", func(t *testing.T) string {
		_, upper := sloassert.MinBoundSamples(0.99, 0.95)
		return fmt.Sprintf("(the upper bound of a p99 needs n >= %d: `?`)", upper)
	}},
	// README.md: the gpt-oss-120b-chain preset's chains.
	{"README.md", func(t *testing.T) string {
		c := ossChainPreset(t)
		return fmt.Sprintf("%d of %d calls come back empty, %d of %d chains are unfinished", c.empty, c.calls, c.failedChains, c.chains)
	}},
	{"README.md", func(t *testing.T) string {
		c := ossChainPreset(t)
		return "chain verdict is `chain total p50 ... failed ... FAIL " + c.why + "` whatever the budget"
	}},
	// README.md: examples/chains, on the single-call gpt-oss-120b preset.
	{"README.md", func(t *testing.T) string {
		s := loadStudy(t)
		c := chainsExample(t)
		return fmt.Sprintf("empty answers are rarer (%.0f%% at c=1, as in the study's c=1 cell; %s of the chain calls here)",
			100*float64(s.gptC1Empty)/float64(s.gptC1Records), pct1(c.gptCallFail))
	}},
	{"README.md", func(t *testing.T) string {
		c := chainsExample(t)
		return fmt.Sprintf("gpt-oss still wins the median chain (%s against maverick's %s)", secs(c.gptChain50), secs(c.mavChain50))
	}},
	{"README.md", func(t *testing.T) string {
		c := chainsExample(t)
		return fmt.Sprintf("%d of its %d chains contain an empty answer (%.0f%%; a %s per-call rate predicts 1-(1-%.4f)^10 = %s)",
			c.gptChainsFailed, c.chains, 100*float64(c.gptChainsFailed)/float64(c.chains),
			pct1(c.gptCallFail), c.gptCallFail, pct1(sloassert.TailProbability(c.gptCallFail, 10)))
	}},
	{"README.md", func(t *testing.T) string {
		c := chainsExample(t)
		return fmt.Sprintf("that maverick meets (p95 %s)", secs(c.mavChain95))
	}},
	// README.md, the second command's comment: examples/coldstart's
	// "20 without warm-up" row.
	{"README.md", func(t *testing.T) string {
		c := coldstartRun(t, latencytest.Batch{NoWarmup: true, Requests: 20})
		return fmt.Sprintf("%d requests, no warm-up: TTFT p95 %.1f s against a 1 s budget, CV %.0f%%, and %d requests too few to judge a 2%% error rate",
			c.n, c.ttft95.Seconds(), c.cv, c.n)
	}},
	// README.md, after the dozen-lines output block.
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("the run covers %.0f s of virtual time", dozenLines(t).virtual.Seconds())
	}},
	{"README.md", func(t *testing.T) string {
		c := coldstartRun(t, latencytest.Batch{NoWarmup: true, Requests: 75})
		return "Too few samples fail and say so (`" + c.p99Note + "`)"
	}},

	// README.md, "Against a real endpoint" and "How it measures": the
	// defaults, as the dozen-lines run (a Batch with only Requests and
	// Concurrency set) discloses them.
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("`Batch.HardCap` is %.0f s by default", dozenLines(t).hardCap.Seconds())
	}},
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("Warm-up requests (%d by default) are discarded", dozenLines(t).warmup)
	}},
	{"README.md", func(t *testing.T) string {
		return "The default prompt mix is " + dozenLines(t).mix + "."
	}},
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("Every result carries a disclosure of %d boxes", dozenLines(t).boxes)
	}},
	{"README.md", func(t *testing.T) string {
		return fmt.Sprintf("all %d disclosure boxes are printed", dozenLines(t).boxes)
	}},
	// README.md, "Distributed runs", and examples/distributed/README.md,
	// "Rules": four shards of one run at concurrency 4, merged without one.
	{"README.md", func(t *testing.T) string {
		return `a shard judged on its own fails with "` + shardRun(t).judged + `"`
	}},
	{"examples/distributed/README.md", func(t *testing.T) string {
		return `fail with "` + shardRun(t).judged + `" (the report's first line names the shard)`
	}},
	{"examples/distributed/README.md", func(t *testing.T) string {
		return `a shard with no records file ("` + shardRun(t).missing + `")`
	}},
	{"examples/distributed/README.md", func(t *testing.T) string {
		_, err := shard.Parse("4/4")
		if err == nil || !strings.Contains(err.Error(), "the last of 4 is 3/4") {
			return fmt.Sprintf("`4/4` is an error: %v", err)
		}
		return "`4/4` is an error that names the last shard"
	}},
	{"examples/distributed/README.md", func(t *testing.T) string {
		minutes := func(d time.Duration) string {
			if d == time.Minute {
				return "a minute"
			}
			return fmt.Sprintf("%.0f minutes", d.Minutes())
		}
		return fmt.Sprintf("More than %s ahead, or more than %s past, is an error.", minutes(defaults.MaxStartWait), minutes(defaults.MaxStartLate))
	}},

	{"examples/distributed/README.md", func(t *testing.T) string {
		return "each file ends with a count, `" + shardRun(t).endLine + "`"
	}},

	// examples/chains/README.md: its own test's run.
	{"examples/chains/README.md", func(t *testing.T) string {
		c := chainsExample(t)
		return fmt.Sprintf("`llama-4-maverick` reaches its first answer token about %.0fx sooner than `gpt-oss-120b`, yet needs %s for the median 10-call task against gpt-oss's %s.",
			float64(c.gptFirstAnswer50)/float64(c.mavFirstAnswer50), secs(c.mavChain50), secs(c.gptChain50))
	}},
	{"examples/chains/README.md", func(t *testing.T) string {
		c := chainsExample(t)
		return fmt.Sprintf("%d of gpt-oss's %d tasks contain an empty answer and never finish.", c.gptChainsFailed, c.chains)
	}},

	// examples/coldstart/README.md: its own test's rows.
	{"examples/coldstart/README.md", func(t *testing.T) string {
		c := coldstartRun(t, latencytest.Batch{NoWarmup: true, Requests: 20})
		return fmt.Sprintf("(%v to load the model)", wholeSecs(c.load))
	}},
	{"examples/coldstart/README.md", func(t *testing.T) string {
		c20 := coldstartRun(t, latencytest.Batch{NoWarmup: true, Requests: 20})
		c75 := coldstartRun(t, latencytest.Batch{NoWarmup: true, Requests: 75})
		if c20.coldStarts != 1 || c75.coldStarts != 2 || c20.cv <= 100 || c75.cv <= 100 {
			return fmt.Sprintf("20 requests meet %d cold starts (CV %.0f%%), 75 meet %d (CV %.0f%%)", c20.coldStarts, c20.cv, c75.coldStarts, c75.cv)
		}
		return "too few requests (20 miss the mid-run cold start, 75 reach it)"
	}},
	{"examples/coldstart/README.md", func(t *testing.T) string {
		c := coldstartRun(t, latencytest.Batch{Warmup: 3, Requests: 20})
		m := regexp.MustCompile(`an error rate of (\S+) needs n >= (\d+) measured requests \(have (\d+)\)`).FindStringSubmatch(c.report)
		if m == nil {
			t.Fatalf("the 20-after-warm-up report does not refuse the error rate:\n%s", c.report)
		}
		return fmt.Sprintf("too few to judge a %s error rate (that takes %s)", m[1], m[2])
	}},
}

// TestREADMEFigures checks every quote: the README, with its line breaks,
// indentation and "# " comment marks folded into single spaces, contains
// the text the run produces. A failure prints the text to put in the
// README; go test -run TestREADMEFigures -update puts it there (the
// quote's words unchanged, only its numbers rewritten, line breaks kept).
// The runs are on synctest's fake clock: exact, and a second or two in
// all, so they run under -short too.
func TestREADMEFigures(t *testing.T) {
	raw := map[string]string{}
	for _, q := range quotes {
		if _, ok := raw[q.file]; !ok {
			b, err := os.ReadFile("../../" + q.file)
			if err != nil {
				t.Fatal(err)
			}
			raw[q.file] = string(b)
		}
	}
	changed := map[string]bool{}
	for i, q := range quotes {
		want := q.produce(t)
		if strings.Contains(fold(raw[q.file]), fold(want)) {
			continue
		}
		if *update {
			if doc, ok := renumber(raw[q.file], want); ok {
				raw[q.file], changed[q.file] = doc, true
				t.Logf("%s: now says %s", q.file, want)
				continue
			}
			t.Errorf("%s (quote %d): -update found no single sentence that differs only in its numbers from:\n\t%s", q.file, i, want)
			continue
		}
		t.Errorf("%s (quote %d) does not say what the run produces (-update rewrites its numbers); it should say:\n\t%s", q.file, i, want)
	}
	for file := range changed {
		if err := os.WriteFile("../../"+file, []byte(raw[file]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var numRE = regexp.MustCompile(`\d(?:[\d.,]*\d)?`)

// renumber finds the one place in doc that says want with other numbers
// (and any line wrapping) and puts want's numbers there.
func renumber(doc, want string) (string, bool) {
	locs := numRE.FindAllStringIndex(want, -1)
	var pat strings.Builder
	prev := 0
	for _, l := range locs {
		pat.WriteString(wrapped(want[prev:l[0]]))
		pat.WriteString(`(\d(?:[\d.,]*\d)?)`)
		prev = l[1]
	}
	pat.WriteString(wrapped(want[prev:]))
	ms := regexp.MustCompile(pat.String()).FindAllStringSubmatchIndex(doc, -1)
	if len(ms) != 1 {
		return doc, false
	}
	m := ms[0]
	for i := len(locs) - 1; i >= 0; i-- {
		doc = doc[:m[2+2*i]] + want[locs[i][0]:locs[i][1]] + doc[m[3+2*i]:]
	}
	return doc, true
}

// wrapped is a pattern for literal text that the README may have wrapped:
// each run of spaces may be a line break with indentation and a "# " or
// "- " mark.
func wrapped(s string) string {
	words := regexp.MustCompile(`\s+`).Split(s, -1)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(words, `\s+(?:(?:# |- )\s*)?`)
}

var foldRE = regexp.MustCompile(`[ \t]*\n[ \t]*(?:# |- )?[ \t]*`)

// fold joins wrapped lines: a line break and the indentation, list dash or
// shell comment mark that follows it become one space.
func fold(s string) string { return foldRE.ReplaceAllString(s, " ") }

func pct1(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// wholeSecs prints a duration of whole seconds as the README does
// ("30 s"), and any other with its fraction.
func wholeSecs(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return secs(d)
}

// thousands prints a millisecond figure rounded to a whole number with a
// thousands comma, as the README does ("1,202").
func thousands(ms float64) string {
	n := int(math.Round(ms))
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d,%03d", n/1000, n%1000)
}

// memo runs f once per key for the whole test binary, so that quotes that
// share a run share it.
var memo sync.Map

func once[T any](key string, f func() T) T {
	type cell struct {
		once sync.Once
		v    T
	}
	c, _ := memo.LoadOrStore(key, &cell{})
	cl := c.(*cell)
	cl.once.Do(func() { cl.v = f() })
	return cl.v
}

// mirrors fails unless the example's source contains each line verbatim:
// the runs below copy the examples' (an example is an external test
// package and cannot be imported), and this keeps the copies equal.
func mirrors(t *testing.T, file string, lines ...string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !strings.Contains(string(b), l) {
			t.Fatalf("%s no longer contains %q: update the run in figures_test.go to match it", file, l)
		}
	}
}

// study holds the figures of the serverless tail-latency study's raw
// records (fit/testdata/serverless-tail-study) that README.md quotes.
type study struct {
	chains, callsPerChain        int
	mavTTFT50, gptTTFT50         float64 // ms, c=1 cell, non-null TTFTs
	mavChain50, gptChain50       float64 // ms, chain totals
	gptChainEmpty, gptChainCalls int     // calls with no content
	gptC1Empty, gptC1Records     int
	mavTTFT99                    float64 // ms, c=1 cell
	mavLongestCall               float64 // ms, the stalled stream
	boundedN                     int     // llama3.3-70b's bounded follow-up
	boundedRate                  float64 // its median tokens/s after the first token
}

type studyFile struct {
	BaselineSweep struct {
		C1 struct {
			Records []studyCall `json:"records"`
		} `json:"concurrency_1"`
	} `json:"baseline_sweep"`
	ChainedSession struct {
		Chains []struct {
			Total float64     `json:"total_chain_ms"`
			Calls []studyCall `json:"calls"`
		} `json:"chains"`
	} `json:"chained_session"`
}

type studyCall struct {
	TTFT    *float64 `json:"ttft_ms"`
	Total   float64  `json:"total_ms"`
	Content string   `json:"content"`
}

func loadStudy(t *testing.T) study {
	t.Helper()
	read := func(model string) studyFile {
		var f studyFile
		b, err := os.ReadFile("../../fit/testdata/serverless-tail-study/results_" + model + ".json")
		if err == nil {
			err = json.Unmarshal(b, &f)
		}
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	mav, gpt := read("llama-4-maverick"), read("openai-gpt-oss-120b")
	ttft := func(f studyFile, q float64) float64 {
		var v []float64
		for _, r := range f.BaselineSweep.C1.Records {
			if r.TTFT != nil {
				v = append(v, *r.TTFT)
			}
		}
		return percentile(v, q)
	}
	ttft50 := func(f studyFile) float64 { return ttft(f, 0.5) }
	chain50 := func(f studyFile) float64 {
		var v []float64
		for _, c := range f.ChainedSession.Chains {
			v = append(v, c.Total)
		}
		return percentile(v, 0.5)
	}
	s := study{
		chains: len(gpt.ChainedSession.Chains), callsPerChain: len(gpt.ChainedSession.Chains[0].Calls),
		mavTTFT50: ttft50(mav), gptTTFT50: ttft50(gpt), mavChain50: chain50(mav), gptChain50: chain50(gpt),
	}
	if len(mav.ChainedSession.Chains) != s.chains {
		t.Fatalf("maverick has %d chains, gpt-oss %d", len(mav.ChainedSession.Chains), s.chains)
	}
	for _, c := range gpt.ChainedSession.Chains {
		for _, call := range c.Calls {
			s.gptChainCalls++
			if call.TTFT == nil && call.Content == "" {
				s.gptChainEmpty++
			}
		}
	}
	s.mavTTFT99 = ttft(mav, 0.99)
	for _, c := range mav.ChainedSession.Chains {
		for _, call := range c.Calls {
			s.mavLongestCall = max(s.mavLongestCall, call.Total)
		}
	}
	b, err := os.ReadFile("../../fit/testdata/serverless-tail-study/bounded_llama3.3-70b-instruct.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			TTFT   float64 `json:"ttft_ms"`
			Total  float64 `json:"total_ms"`
			Tokens float64 `json:"completion_tokens"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rates = append(rates, r.Tokens/((r.Total-r.TTFT)/1000))
	}
	s.boundedN, s.boundedRate = len(rates), percentile(rates, 0.5)
	for _, r := range gpt.BaselineSweep.C1.Records {
		s.gptC1Records++
		if r.TTFT == nil {
			s.gptC1Empty++
		}
	}
	return s
}

// percentile is numpy's default (linear) percentile, as the study's
// summaries and tailguard compute it.
func percentile(v []float64, q float64) float64 {
	sort.Float64s(v)
	h := q * float64(len(v)-1)
	lo := math.Floor(h)
	if int(lo)+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[int(lo)] + (h-lo)*(v[int(lo)+1]-v[int(lo)])
}

// ossChain is sloassert's TestEmptyAnswersLoseTheChain run: the
// gpt-oss-120b-chain preset, 30 chains of 10 calls capped at 64 tokens.
type ossChain struct {
	empty, calls, failedChains, chains int
	why                                string // the verdict's reason, "(p50 is a failed request: ...)"
}

func ossChainPreset(t *testing.T) ossChain {
	return once("ossChain", func() (c ossChain) {
		synctest.Test(t, func(t *testing.T) {
			prof, err := fakeprovider.Preset("gpt-oss-120b-chain")
			if err != nil {
				t.Fatal(err)
			}
			f := fakeprovider.New(prof)
			defer f.Close()
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
			cr := latencytest.Chain{Chains: 30, Length: 10, Load: latencytest.Load{MaxTokens: 64}}.Measure(t, p)
			calls := cr.Calls()
			c.empty, c.calls = calls.Errors()["empty_answer"], len(calls.Records)
			c.failedChains, c.chains = int(math.Round(cr.ErrorRate()*30)), 30
			rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour)).String()
			m := regexp.MustCompile(`chain total p50 .*failed.*FAIL\s+(\(p50 is a failed request: [^)]*\([^)]*\)[^)]*\))`).FindStringSubmatch(rep)
			if m == nil {
				t.Fatalf("the 1 h chain verdict does not fail on its failed p50:\n%s", rep)
			}
			c.why = m[1]
		})
		mirrors(t, "../../sloassert/preset_test.go", `latencytest.Chain{Chains: 30, Length: 10, Load: latencytest.Load{MaxTokens: 64}}`, `Preset("gpt-oss-120b-chain")`)
		return c
	})
}

// chains is examples/chains' run (its measure function): each model's 200
// single calls and 30 chains of 10 calls.
type chains struct {
	chains                             int
	mavFirstAnswer50, gptFirstAnswer50 time.Duration
	mavChain50, mavChain95, gptChain50 time.Duration
	gptChainsFailed                    int
	gptCallFail                        float64
}

const examplePrompt = "Reply with a two-sentence summary of why caching matters for LLM inference."

func chainsExample(t *testing.T) chains {
	return once("chains", func() (c chains) {
		mirrors(t, "../chains/chains_test.go",
			"const prompt = "+fmt.Sprintf("%q", examplePrompt),
			"latencytest.Batch{Requests: 200, Load: latencytest.Load{Prompt: prompt, MaxTokens: 64}}.Measure(t, p)",
			"latencytest.Chain{Chains: 30, Length: 10}.Measure(t, p)")
		measure := func(preset string) (single *latencytest.Result, cr *latencytest.ChainResult) {
			synctest.Test(t, func(t *testing.T) {
				prof, err := fakeprovider.Preset(preset)
				if err != nil {
					t.Fatal(err)
				}
				fake := fakeprovider.New(prof)
				t.Cleanup(fake.Close)
				p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
				single = latencytest.Batch{Requests: 200, Load: latencytest.Load{Prompt: examplePrompt, MaxTokens: 64}}.Measure(t, p)
				cr = latencytest.Chain{Chains: 30, Length: 10}.Measure(t, p)
			})
			return single, cr
		}
		ms, mc := measure("llama-4-maverick")
		gs, gc := measure("gpt-oss-120b")
		c.chains = len(gc.Chains)
		c.mavFirstAnswer50, c.gptFirstAnswer50 = ms.FirstAnswer().Quantile(0.5), gs.FirstAnswer().Quantile(0.5)
		c.mavChain50, c.mavChain95, c.gptChain50 = mc.Totals().Quantile(0.5), mc.Totals().Quantile(0.95), gc.Totals().Quantile(0.5)
		c.gptChainsFailed = int(math.Round(gc.ErrorRate() * float64(c.chains)))
		c.gptCallFail = gc.Calls().ErrorRate()
		if errs := gc.Calls().Errors(); len(errs) != 1 || errs["empty_answer"] == 0 {
			t.Fatalf("gpt-oss's chain calls failed with %v, not only empty answers", errs)
		}
		return c
	})
}

// coldstart is one row of examples/coldstart's test: lowtraffic.yaml,
// measured by the row's batch, judged by its SLO.
type coldstart struct {
	n          int
	ttft95     time.Duration
	cv         float64
	coldStarts int           // requests the fake made wait for a model load
	load       time.Duration // the profile's cold start
	report     string
	p99Note    string // a p99 objective's note on this sample
}

func coldstartRun(t *testing.T, b latencytest.Batch) coldstart {
	return once(fmt.Sprintf("coldstart %+v", b), func() (c coldstart) {
		mirrors(t, "../coldstart/coldstart_test.go",
			"sloassert.Q(sloassert.TTFT, 0.95, time.Second),\n\tsloassert.MaxCV(sloassert.TTFT, sloassert.CVTolerable.MaxPercent()),\n\tsloassert.MaxErrorRate(0.02),",
			fmt.Sprintf("latencytest.Batch{Warmup: %d, Requests: %d}", 3, 20),
			fmt.Sprintf("latencytest.Batch{NoWarmup: true, Requests: %d}", 20),
			fmt.Sprintf("latencytest.Batch{NoWarmup: true, Requests: %d}", 75))
		prof, err := fakeprovider.LoadProfile("../coldstart/lowtraffic.yaml")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Test(t, func(t *testing.T) {
			fake := fakeprovider.New(prof)
			t.Cleanup(fake.Close)
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
			r := b.Measure(t, p)
			for _, s := range fake.Served() {
				if s.ColdStart > 0 {
					c.coldStarts++
					c.load = s.ColdStart
				}
			}
			c.n, c.ttft95, c.cv = len(r.Measured()), r.TTFT().Quantile(0.95), r.TTFT().CV()
			c.report = sloassert.Evaluate(r,
				sloassert.Q(sloassert.TTFT, 0.95, time.Second),
				sloassert.MaxCV(sloassert.TTFT, sloassert.CVTolerable.MaxPercent()),
				sloassert.MaxErrorRate(0.02)).String()
			p99 := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.99, time.Minute))
			c.p99Note = p99.Outcomes[0].Note
		})
		return c
	})
}

// dozenLinesRun is the README's dozen-lines test's run (slo_test.go): its
// virtual duration.
type dozenLinesRun struct {
	virtual time.Duration
	hardCap time.Duration // box 11's hard cap per request
	warmup  int           // requests discarded as warm-up
	mix     string        // box 10's prompt mix, "70% short, 20% medium, 10% long"
	boxes   int           // disclosure boxes
}

func dozenLines(t *testing.T) dozenLinesRun {
	return once("dozen", func() (d dozenLinesRun) {
		mirrors(t, "slo_test.go", `fakeprovider.Preset("mistral-3-14b")`, "latencytest.Batch{Requests: 200, Concurrency: 4}.Measure(t, p)")
		synctest.Test(t, func(t *testing.T) {
			prof, _ := fakeprovider.Preset("mistral-3-14b")
			fake := fakeprovider.New(prof)
			t.Cleanup(fake.Close)
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
			r := latencytest.Batch{Requests: 200, Concurrency: 4}.Measure(t, p)
			d.virtual = r.End.Sub(r.Start)
			d.warmup, d.boxes = r.Counts().Discarded, len(r.Disclosure.Boxes)
			box11 := r.Disclosure.Box(11).Answer
			m := regexp.MustCompile(`hard cap (\S+) per request`).FindStringSubmatch(box11)
			if m == nil {
				t.Fatalf("box 11 names no hard cap: %q", box11)
			}
			var err error
			if d.hardCap, err = time.ParseDuration(m[1]); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, m := range regexp.MustCompile(`(\d+% \w+) \(`).FindAllStringSubmatch(r.Disclosure.Box(10).Answer, -1) {
				parts = append(parts, m[1])
			}
			if len(parts) < 2 {
				t.Fatalf("box 10 names no prompt mix: %q", r.Disclosure.Box(10).Answer)
			}
			d.mix = strings.Join(parts, ", ")
		})
		return d
	})
}

// shards is a distributed run's messages: a shard judged alone, a merge
// missing shard 2 of 4, and a records file's end line (its count as N,
// its shard as i/n).
type shards struct{ judged, missing, endLine string }

func shardRun(t *testing.T) shards {
	return once("shards", func() (s shards) {
		root := t.TempDir()
		nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
		var shard0 *latencytest.Result
		for i := range 4 {
			t.Run(fmt.Sprintf("shard-%d", i), func(t *testing.T) {
				b := latencytest.Batch{Requests: 8, Warmup: 4, Concurrency: 4, Load: latencytest.Load{Shard: latencytest.Shard{Index: i, Count: 4}}}
				r := b.Measure(t, nop)
				if i == 0 {
					shard0 = r
				}
				if err := os.CopyFS(filepath.Join(root, fmt.Sprintf("shard-%d", i)), os.DirFS(t.ArtifactDir())); err != nil {
					t.Fatal(err)
				}
			})
		}
		if shard0 == nil {
			t.Fatal("shard 0 measured nothing")
		}
		rep := sloassert.Evaluate(shard0, sloassert.Q(sloassert.TTFT, 0.5, time.Hour)).String()
		m := regexp.MustCompile(`shard \d+ of \d+: merge the shards, then judge`).FindString(rep)
		if m == "" {
			t.Fatalf("a shard judged alone does not say to merge first:\n%s", rep)
		}
		if first, _, _ := strings.Cut(rep, "\n"); !strings.Contains(first, "shard 0 of 4") {
			t.Fatalf("the report's first line does not name the shard: %q", first)
		}
		s.judged = regexp.MustCompile(`shard \d+ of \d+`).ReplaceAllString(m, "shard i of n")

		recs, err := filepath.Glob(filepath.Join(root, "shard-0", "**", "records*.jsonl"))
		if err == nil && len(recs) == 0 {
			recs, err = filepath.Glob(filepath.Join(root, "shard-0", "records*.jsonl"))
		}
		if err != nil || len(recs) != 1 {
			t.Fatalf("shard 0's records: %v, %v", recs, err)
		}
		b, err := os.ReadFile(recs[0])
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		end := regexp.MustCompile(`"end_of_records":\d+`).ReplaceAllString(lines[len(lines)-1], `"end_of_records":N`)
		s.endLine = regexp.MustCompile(`"shard":"\d+/\d+"`).ReplaceAllString(end, `"shard":"i/n"`)

		if err := os.RemoveAll(filepath.Join(root, "shard-2")); err != nil {
			t.Fatal(err)
		}
		levels, err := records.MergeLevels(filepath.Join(root, "**", "records*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		r := levels[4]
		if r == nil || !r.Partial {
			t.Fatalf("a merge missing shard 2 of 4 is not partial: %+v", r)
		}
		s.missing = regexp.MustCompile(`shards? [\d/, ]+ of c\d+ missing`).FindString(r.PartialReason)
		return s
	})
}

// curlStream is how long the README's first command's curl request takes
// against fakellm serve -preset llama-4-maverick: the same body, sent to
// the same preset in memory, read to the end of the stream.
func curlStream(t *testing.T) time.Duration {
	return once("curl", func() (d time.Duration) {
		b, err := os.ReadFile("../../README.md")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`\./fakellm serve -preset (\S+) & curl .* (http://\S+) -d '([^']*)'`).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatal("README.md's first command no longer serves a preset to curl")
		}
		synctest.Test(t, func(t *testing.T) {
			prof, err := fakeprovider.Preset(m[1])
			if err != nil {
				t.Fatal(err)
			}
			fake := fakeprovider.New(prof)
			t.Cleanup(fake.Close)
			start := time.Now()
			resp, err := fake.Client().Post(m[2], "application/json", strings.NewReader(m[3]))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), "[DONE]") {
				t.Fatalf("the README's curl request: %v %v\n%s", resp.Status, err, body)
			}
			d = time.Since(start)
		})
		return d
	})
}
