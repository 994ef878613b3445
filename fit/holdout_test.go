package fit_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
)

// holdoutCase is one set of raw records: fitted on half, tested on the
// other half; and the hand-made preset tested on all of them.
type holdoutCase struct {
	name, file, set, preset string
	// pass lists the KS tests that pass at 5% for the hold-out fit and for
	// the preset (what fails is in the table in docs/fit.md, with why); a
	// test here that stops passing is a regression.
	fitPass, presetPass []string
}

var holdoutCases = []holdoutCase{
	{"mistral-3-14b c=1", "results_mistral-3-14B.json", "c1", "mistral-3-14b",
		[]string{"first_answer", "total"}, []string{"first_answer", "total"}},
	{"mistral-3-14b chains", "results_mistral-3-14B.json", "chains", "mistral-3-14b-chain",
		[]string{"total", "chain_total"}, []string{"first_answer", "chain_total"}},
	{"gpt-oss-120b c=1", "results_openai-gpt-oss-120b.json", "c1", "gpt-oss-120b",
		[]string{"first_answer"}, []string{"first_answer"}},
	{"gpt-oss-120b chains", "results_openai-gpt-oss-120b.json", "chains", "gpt-oss-120b-chain",
		nil, []string{"chain_total"}},
	{"llama-4-maverick c=1", "results_llama-4-maverick.json", "c1", "llama-4-maverick",
		[]string{"total"}, nil},
	{"llama-4-maverick chains", "results_llama-4-maverick.json", "chains", "llama-4-maverick-chain",
		[]string{"first_answer", "total", "chain_total"}, []string{"first_answer"}},
	{"llama-3.3-70b (15 bounded)", "bounded_llama3.3-70b-instruct.jsonl", "c1", "llama-3.3-70b",
		[]string{"total"}, []string{"first_answer", "total"}},
}

// split halves records: even and odd requests, or even and odd chains.
func split(recs []latencytest.Record) (fitHalf, testHalf []latencytest.Record) {
	for i, r := range recs {
		k := i
		if r.ID[:5] == "chain" {
			k = r.Chain
		}
		if k%2 == 0 {
			fitHalf = append(fitHalf, r)
		} else {
			testHalf = append(testHalf, r)
		}
	}
	return fitHalf, testHalf
}

// TestHoldout fits each model's raw records on one half and tests the fit
// against the other half with two-sample KS tests at 5% (first answer,
// total, chain total); it also tests each hand-made preset against all the
// records. It logs the p-value table of docs/fit.md.
func TestHoldout(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 14 fits of 20,000 requests (-short)")
	}
	if os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the fits' calibration runs in its own step, without -race")
	}
	var table strings.Builder
	table.WriteString("| records | tested | first answer p | total p | chain total p |\n| --- | --- | --- | --- | --- |\n")
	cell := func(rep fit.FitReport, name string) string {
		if ks, ok := rep.Test(name); ok && !math.IsNaN(ks.P) {
			mark := "pass"
			if ks.P < 0.05 {
				mark = "FAIL"
			}
			return fmt.Sprintf("%.3f %s (n %d)", ks.P, mark, ks.N)
		}
		return "—"
	}
	for _, c := range holdoutCases {
		st := loadStudy(t, c.file)
		recs := st.Sweep[1]
		if c.set == "chains" {
			recs = st.Chains
		}
		fitHalf, testHalf := split(recs)
		p, _, err := fit.Fit(fitHalf)
		if err != nil {
			t.Fatal(err)
		}
		fitRep, err := fit.Compare(p, testHalf)
		if err != nil {
			t.Fatal(err)
		}
		pre, err := fakeprovider.Preset(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		preRep, err := fit.Compare(pre, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range []struct {
			what string
			rep  fit.FitReport
			want []string
		}{{"Fit on half, other half", fitRep, c.fitPass}, {"preset " + c.preset + ", all", preRep, c.presetPass}} {
			fmt.Fprintf(&table, "| %s | %s | %s | %s | %s |\n", c.name, row.what,
				cell(row.rep, "first_answer"), cell(row.rep, "total"), cell(row.rep, "chain_total"))
			for _, name := range row.want {
				if ks, ok := row.rep.Test(name); !ok || !(ks.P >= 0.05) {
					t.Errorf("%s, %s: KS %s p = %.4f, expected to pass at 5%%", c.name, row.what, name, ks.P)
				}
			}
		}
	}
	t.Log("\n" + table.String())
}
