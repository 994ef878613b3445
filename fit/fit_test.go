package fit_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
)

const studyDir = "testdata/serverless-tail-study/"

func loadStudy(t *testing.T, file string) *fit.Study {
	t.Helper()
	st, err := fit.LoadStudy(studyDir + file)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestWriteProfileRoundTrip: what WriteProfile writes, ParseProfile reads
// back to the same profile, for each fitted model (c=1 alone, every cell
// with its load levels, and the chains with their conversation).
func TestWriteProfileRoundTrip(t *testing.T) {
	for _, file := range []string{"results_mistral-3-14B.json", "results_llama-4-maverick.json", "results_openai-gpt-oss-120b.json", "bounded_llama3.3-70b-instruct.jsonl"} {
		st := loadStudy(t, file)
		cells := slices.Concat(st.Sweep[1], st.Sweep[5], st.Sweep[20]) // load levels, where there are cells
		for name, recs := range map[string][]latencytest.Record{"c=1": st.Sweep[1], "cells": cells, "chains": st.Chains} {
			if len(recs) == 0 {
				continue
			}
			p, rep, err := fit.Fit(recs, fit.WithDraws(2000))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := fit.WriteProfile(&buf, p, rep); err != nil {
				t.Fatal(err)
			}
			back, err := fakeprovider.ParseProfile(buf.Bytes())
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", file, name, err, buf.String())
			}
			if !reflect.DeepEqual(back, p) {
				t.Errorf("%s %s: round trip changed the profile:\nwrote %+v\nread  %+v", file, name, p, back)
			}
		}
	}
}

// TestFitRecoversAKnownProfile: records drawn from a known profile (through
// the replay, i.e. exactly what the fake serves) are fitted back: medians
// and p99 of TTFT, ITL-driven total and answer length within 5%, fault
// rates within 3 binomial standard errors, stall share too.
func TestFitRecoversAKnownProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("draws 20,000 records and replays the fit (-short)")
	}
	if os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the fits' calibration runs in its own step, without -race")
	}
	known := fakeprovider.Profile{
		Model:         "known",
		Seed:          11,
		TTFT:          fakeprovider.Mixture(fakeprovider.Weighted(0.9, fakeprovider.LogNormal(300*time.Millisecond, 900*time.Millisecond)), fakeprovider.Weighted(0.1, fakeprovider.LogNormal(2*time.Second, 6*time.Second))),
		ITL:           fakeprovider.LogNormal(20*time.Millisecond, 60*time.Millisecond),
		ITLPerRequest: true,
		OutputTokens:  fakeprovider.Mixture(fakeprovider.Weighted(0.5, fakeprovider.Fixed(40)), fakeprovider.Weighted(0.5, fakeprovider.Fixed(120))),
		Stall:         fakeprovider.Stall{Probability: 0.01, AfterToken: 1, Duration: fakeprovider.Fixed(30 * time.Second)},
		Faults:        fakeprovider.Faults{HTTP529: 0.02, HTTP429: 0.01, Empty: 0.005},
	}
	src := make([]latencytest.Record, 20_000)
	for i := range src {
		src[i] = latencytest.Record{ID: fmt.Sprintf("src-%05d", i), PromptTokens: 50, MaxTokens: 1000}
	}
	recs, err := fit.Replay(known, src, len(src))
	if err != nil {
		t.Fatal(err)
	}
	p, rep, err := fit.Fit(recs, fit.WithSeed(5))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	for _, name := range []string{"ttft p50", "ttft p99", "total p50", "total p99"} {
		s, ok := rep.Stat(name)
		if !ok || math.Abs(s.Replay/s.Records-1) > 0.05 {
			t.Errorf("%s: records %v, fitted profile %v (want within 5%%)", name, time.Duration(s.Records), time.Duration(s.Replay))
		}
	}
	n := float64(len(recs))
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"http_529", p.Faults.HTTP529, 0.02}, {"http_429", p.Faults.HTTP429, 0.01},
		{"empty", p.Faults.Empty, 0.005}, {"stall", p.Stall.Probability, 0.01},
	} {
		se := math.Sqrt(c.want * (1 - c.want) / n)
		if math.Abs(c.got-c.want) > 3*se {
			t.Errorf("%s rate: fitted %.4f, true %.4f (3 standard errors: %.4f)", c.name, c.got, c.want, 3*se)
		}
	}
	if d := p.Stall.Duration; d.Kind != "empirical" || math.Abs(float64(d.Values[len(d.Values)/2])/float64(30*time.Second)-1) > 0.05 {
		t.Errorf("stall length %v, true 30s", d)
	}
}

// TestFitRecoversLoadAndCorrelation: records drawn from a known profile
// with a TTFT-ITL correlation and two load levels (each with its own
// TTFT, ITL and correlation), 6,000 at each concurrency, fit back to the
// same levels: each level's TTFT and ITL median within 5% and each
// correlation within 0.05 of the truth.
func TestFitRecoversLoadAndCorrelation(t *testing.T) {
	if testing.Short() {
		t.Skip("draws 18,000 records and replays the fit (-short)")
	}
	if os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the fits' calibration runs in its own step, without -race")
	}
	ln := fakeprovider.LogNormal[time.Duration]
	rho5, rho20 := 0.3, -0.2
	known := fakeprovider.Profile{
		Model: "known-load", Seed: 3,
		TTFT: ln(300*time.Millisecond, 900*time.Millisecond), ITL: ln(20*time.Millisecond, 50*time.Millisecond),
		ITLPerRequest: true, TTFTITLCorrelation: -0.5, OutputTokens: fakeprovider.Fixed(64),
		Load: []fakeprovider.LoadLevel{
			{InFlight: 5, TTFT: ln(450*time.Millisecond, 2*time.Second), ITL: ln(40*time.Millisecond, 90*time.Millisecond), TTFTITLCorrelation: &rho5},
			{InFlight: 20, TTFT: ln(time.Second, 3*time.Second), TTFTITLCorrelation: &rho20},
		},
	}
	var src []latencytest.Record
	for _, c := range []int{1, 5, 20} {
		for i := range 6000 {
			src = append(src, latencytest.Record{ID: fmt.Sprintf("c%d-%05d", c, i), Concurrency: c, PromptTokens: 20, MaxTokens: 64})
		}
	}
	recs, err := fit.Replay(known, src, len(src))
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := fit.Fit(recs, fit.WithSeed(5), fit.WithDraws(2000))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Load) != 2 || p.Load[0].InFlight != 5 || p.Load[1].InFlight != 20 {
		t.Fatalf("fitted load levels %+v, want in flight 5 and 20", p.Load)
	}
	median := func(d fakeprovider.Dist[time.Duration]) float64 {
		vals := slices.Clone(d.Values)
		slices.Sort(vals)
		return float64(vals[len(vals)/2])
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"c=1 ttft", median(p.TTFT), float64(300 * time.Millisecond)},
		{"c=1 itl", median(p.ITL), float64(20 * time.Millisecond)},
		{"c=5 ttft", median(p.Load[0].TTFT), float64(450 * time.Millisecond)},
		{"c=5 itl", median(p.Load[0].ITL), float64(40 * time.Millisecond)},
		{"c=20 ttft", median(p.Load[1].TTFT), float64(time.Second)},
		{"c=20 itl (level 5's)", median(p.Load[1].ITL), float64(40 * time.Millisecond)},
	} {
		if math.Abs(c.got/c.want-1) > 0.05 {
			t.Errorf("%s median: fitted %v, true %v", c.name, time.Duration(c.got), time.Duration(c.want))
		}
	}
	for _, c := range []struct {
		name string
		got  *float64
		want float64
	}{{"c=1", &p.TTFTITLCorrelation, -0.5}, {"c=5", p.Load[0].TTFTITLCorrelation, rho5}, {"c=20", p.Load[1].TTFTITLCorrelation, rho20}} {
		if c.got == nil {
			t.Errorf("%s correlation: not fitted, true %v", c.name, c.want)
		} else if math.Abs(*c.got-c.want) > 0.05 {
			t.Errorf("%s correlation: fitted %v, true %v", c.name, *c.got, c.want)
		}
	}
}
